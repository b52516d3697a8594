// eat-keeper (actors/agent/keeper.hpp); built next to eat, which finds it
// there.

#include "actors/agent/keeper.hpp"

int main(int argc, char** argv) {
  return eat::keeper_main(argc, argv);
}
