#include "devices/gpu_runner/gpu_service.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "devices/gpu_runner_protocol.hpp"
#include "devices/runner/runner_pipes.hpp"

namespace eat::devices {

namespace {

constexpr const char* program = "eat-gpu-runner";

int usage(const char* why) {
  std::fprintf(stderr,
    "%s: %s\nusage: %s [--probe | --health INDEX | --bandwidth INDEX]\n"
    "       (no option: one evaluation, its request on fd 3)\n",
    program, why, program);
  return 2;
}

/// The GPU index after the option, or -1 when it is not a number >= 0.
int index_of(const char* text) {
  char* end = nullptr;
  auto value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > 1'000'000)
    return -1;
  return static_cast<int>(value);
}

/// The error's text without its code's name (the parent adds its own).
std::string message_of(const caf::error& err) {
  const auto& ctx = err.context();
  return ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0)
                                           : render(err);
}

} // namespace

bool is_gpu_service_call(int argc) {
  return argc > 1;
}

int serve_gpu_question(gpu_api& api, int argc, char** argv) {
  std::string option = argv[1];
  gpu_service_reply reply;
  reply.backend = api.backend();
  if (option == "--probe" && argc == 2) {
    reply.probe = api.probe();
  } else if (option == "--health" || option == "--bandwidth") {
    if (argc != 3)
      return usage((option + " takes one GPU index").c_str());
    auto index = index_of(argv[2]);
    if (index < 0)
      return usage(("not a GPU index: '" + std::string{argv[2]} + "'").c_str());
    if (option == "--health") {
      reply.health = api.check(index);
    } else if (auto bytes = api.copy_bandwidth(index)) {
      reply.copy_bytes_per_s = *bytes;
    } else {
      reply.error = message_of(bytes.error());
    }
  } else {
    return usage(("unknown option '" + option + "'").c_str());
  }
  write_reply_bytes(program, wire::encode(reply));
  return 0;
}

} // namespace eat::devices
