// What the cli agent's tests share: the fake coding-agent CLIs and an actor
// system set up as eat sets up its own.

#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "actors/agent/cli_process.hpp"
#include "runtime/system_setup.hpp"

namespace eat::test {

/// The path of the fake CLI `name` (tests/actors/agent/fakes, copied into
/// the build tree with execute permission).
inline std::string fake_cli(const std::string& name) {
  return std::string{EAT_CLI_FAKES_DIR} + "/" + name;
}

/// A run of `argv` in `cwd` as the cli agent runs a CLI (under eat-keeper,
/// PATH only), with generous timeouts.
inline cli_run_spec spec_for(
  std::vector<std::string> argv, const std::filesystem::path& cwd) {
  cli_run_spec spec;
  spec.argv = std::move(argv);
  spec.cwd = cwd;
  spec.env = allowed_environment({"PATH"});
  spec.timeout_s = 60;
  spec.idle_timeout_s = 60;
  spec.kill_grace_s = 5;
  spec.keeper = EAT_KEEPER_PATH;
  return spec;
}

/// An actor system for one test, configured by configure_actor_system.
struct actor_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  actor_fixture() {
    configure_actor_system(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

} // namespace eat::test
