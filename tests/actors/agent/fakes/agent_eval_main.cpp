// Stands in for the `eat` executable in tests: `<this> agent-eval <socket>
// <kernel>` runs the same client as `eat agent-eval`.

#include "actors/agent/eval_channel.hpp"

int main(int argc, char** argv) {
  return eat::agent_eval_main(argc - 1, argv + 1);
}
