#include "actors/agent/cli_agent.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <caf/scoped_actor.hpp>

#include "actors/agent/cli_home.hpp"
#include "actors/agent/cli_mounts.hpp"
#include "actors/agent/cli_process.hpp"
#include "actors/agent/eval_channel.hpp"
#include "actors/agent/render.hpp"
#include "actors/agent/workspace.hpp"
#include "actors/artifacts.hpp"
#include "actors/protocol/error.hpp"
#include "actors/protocol/file_read.hpp"

namespace eat {

namespace fs = std::filesystem;

namespace {

/// Names always passed to the CLI's environment.
const std::vector<std::string> base_env = {"PATH", "HOME", "LANG", "TERM"};

/// Largest single argument Linux accepts (MAX_ARG_STRLEN).
constexpr size_t max_arg_bytes = 128 * 1024;

caf::expected<std::string> read_text(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return make_error(error::io_failure, "cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string path_env() {
  const char* p = std::getenv("PATH");
  return p ? p : "";
}

/// A folder-name-safe version of `s`.
std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'
             ? c
             : '_';
  return out.empty() ? std::string{"_"} : out;
}

/// "<team>-<agent>-<serial>": the workspace of an assignment, and the
/// prefix of its candidates' and `./eval`s' ids.
std::string workspace_name(const assignment& a, uint64_t serial) {
  return safe_name(a.team) + "-" + safe_name(a.agent) + "-"
         + std::to_string(serial);
}

/// The role template for `a`: its own role's file if there is one, else
/// the configured default role's.
caf::expected<std::string> role_template(const assignment& a,
                                         const cli_agent_options& opts) {
  std::error_code ec;
  auto own = opts.prompts_dir / (a.role + ".md");
  if (!a.role.empty() && fs::is_regular_file(own, ec))
    return read_text(own);
  return read_text(opts.prompts_dir / (opts.role + ".md"));
}

/// Everything one attempt needs, fixed for the assignment.
struct attempt_plan {
  const assignment* job = nullptr;
  const cli_agent_options* opts = nullptr;
  cli_preset preset;
  fs::path program;
  workspace_spec files;
  fs::path base_dir;
  /// The team's own home (cli_home.hpp).
  fs::path team_home;
  const eval_handler* eval = nullptr;
};

/// What one attempt produced.
struct attempt_outcome {
  fs::path dir;
  token_usage usage;
  std::string transcript;
  std::string failure;
  bool retryable = false;
  std::optional<std::string> kernel;
};

/// The failure text when harness files changed, or "".
std::string rejected_changes(const std::vector<workspace_change>& changes,
                             const cli_preset& preset,
                             const cli_agent_options& opts) {
  auto allowed = preset.allowed_paths;
  allowed.insert(allowed.end(), opts.allowed_paths.begin(),
                 opts.allowed_paths.end());
  for (const auto& c : changes)
    if (!change_allowed(c.path, allowed))
      return "rejected: the agent " + c.what + " " + c.path
             + " (only kernel.cpp and scratch/ may change)";
  return {};
}

std::vector<std::string> build_argv(const attempt_plan& p,
                                    const fs::path& dir) {
  std::map<std::string, std::string> values = {
    {"prompt", p.files.task_md},
    {"prompt_file", "TASK.md"},
    {"workspace", dir.string()},
    {"max_turns", std::to_string(p.opts->max_turns)},
  };
  std::vector<std::string> argv{p.program.string()};
  for (auto& arg : expand_args(p.preset.args, values))
    argv.push_back(std::move(arg));
  return argv;
}

cli_run_spec run_spec(const attempt_plan& p, const fs::path& dir) {
  cli_run_spec spec;
  spec.argv = build_argv(p, dir);
  spec.keeper = p.opts->keeper_program;
  spec.namespaces = p.opts->namespaces;
  if (gets_mounts(*p.opts))
    spec.mounts = cli_mounts(*p.opts, dir, p.team_home, p.program);
  spec.cwd = dir;
  auto names = base_env;
  names.insert(names.end(), p.opts->env_allow.begin(),
               p.opts->env_allow.end());
  spec.env = allowed_environment(names);
  if (!spec.mounts.empty()) // its home is read-only: caches in its /tmp
    for (const char* cache :
      {"XDG_CACHE_HOME=/tmp/.cache", "npm_config_cache=/tmp/.npm"})
      spec.env.emplace_back(cache);
  if (p.preset.prompt_on_stdin)
    spec.stdin_data = p.files.task_md;
  spec.timeout_s = p.opts->timeout_s;
  spec.idle_timeout_s = p.opts->idle_timeout_s;
  spec.kill_grace_s = p.opts->kill_grace_s;
  spec.max_output = p.opts->max_transcript;
  spec.halt = p.opts->halt.get();
  return spec;
}

/// What a finished run means for its attempt.
struct verdict {
  /// "" when the run succeeded.
  std::string failure;
  /// Whether a new attempt may help.
  bool retryable = false;
  /// Whether the proposed kernel stays the attempt's candidate.
  bool keep_kernel = true;
};

/// Judges a run that left no forbidden change behind.
verdict judge_run(const cli_run_result& run, const cli_run_spec& spec,
                  const usage_parser& parser, const std::string& program,
                  bool over_budget, bool has_kernel) {
  if (over_budget)
    return {"over token budget", false, true};
  if (run.end != cli_end::exited)
    return {program + " " + describe_end(run, spec), false, false};
  bool crashed = !run.status.exited || run.status.code != 0;
  if (!crashed && has_kernel)
    return {};
  if (!crashed && parser.error_text().empty())
    return {"no kernel: kernel.cpp is unchanged and the final message has "
            "no fenced code block",
            false, false};
  auto tail = run.output.substr(run.output.size()
                                - std::min<size_t>(run.output.size(), 4096));
  return {program + " "
            + (crashed ? describe_end(run, spec)
                       : "reported an error: " + parser.error_text()),
          is_retryable(parser.error_text() + "\n" + run.errors + "\n" + tail),
          false};
}

/// The kernel an attempt proposes: kernel.cpp if the agent changed it, else
/// the last fenced block of its final message. A kernel.cpp that is no
/// regular file of at most max_eval_request bytes (a named pipe: eat
/// waited on it for ever; /dev/zero: read until memory ran out; a link to
/// a file the agent may not read, which eat, maybe root, read for it) sets
/// `why` instead.
std::optional<std::string> proposed_kernel(const fs::path& dir,
  const std::vector<workspace_change>& changes, const usage_parser& parser,
  std::string& why) {
  for (const auto& c : changes)
    if (c.path == "kernel.cpp" && c.what == "changed") {
      auto file
        = read_regular_file(dir / "kernel.cpp", max_eval_request, false);
      if (file.ok)
        return std::move(file.text);
      why = "rejected: kernel.cpp: " + file.why;
      return std::nullopt;
    }
  return last_cpp_block(parser.final_message());
}

attempt_outcome failed_attempt(fs::path dir, const caf::error& err) {
  attempt_outcome out;
  out.dir = std::move(dir);
  out.failure = render(err);
  return out;
}

/// Runs the CLI in the prepared workspace `dir`, its eval server `server`
/// up, and collects the result.
attempt_outcome run_in_workspace(const attempt_plan& p, const fs::path& dir,
  uint64_t spent_before, eval_server& server) {
  auto before = snapshot_workspace(dir);
  if (!before)
    return failed_attempt(dir, before.error());
  usage_parser parser{p.preset.format};
  auto budget = p.job->token_budget;
  auto over = [&] {
    return budget > 0
           && saturating_add(spent_before, total_tokens(parser.usage()))
                > budget;
  };
  auto spec = run_spec(p, dir);
  // ./eval answers only the processes of this attempt's CLI.
  if (!spec.keeper.empty())
    spec.on_start = [&server](pid_t keeper) {
      server.serve_only_children_of(keeper);
    };
  spec.on_line = [&](std::string_view line) {
    parser.feed_line(line);
    return !over();
  };
  auto run = run_cli_process(spec);
  if (!run)
    return failed_attempt(dir, run.error());
  parser.finish(run->output);
  attempt_outcome out;
  out.dir = dir;
  out.usage = parser.usage();
  out.transcript = run->output;
  if (!run->errors.empty())
    out.transcript += "\n--- stderr ---\n" + run->errors;
  auto after = snapshot_workspace(dir);
  if (!after) {
    out.failure = render(after.error());
    return out;
  }
  auto changes = diff_snapshots(*before, *after);
  out.failure = rejected_changes(changes, p.preset, *p.opts);
  if (!out.failure.empty())
    return out;
  out.kernel = proposed_kernel(dir, changes, parser, out.failure);
  if (!out.failure.empty())
    return out;
  auto v = judge_run(*run, spec, parser, p.program.filename().string(),
                     run->end == cli_end::stopped || over(),
                     out.kernel.has_value());
  out.failure = std::move(v.failure);
  out.retryable = v.retryable;
  if (!v.keep_kernel)
    out.kernel.reset();
  return out;
}

attempt_outcome run_attempt(const attempt_plan& p, uint32_t attempt,
                            uint64_t spent_before) {
  auto base = attempt == 1 ? p.base_dir
                           : fs::path{p.base_dir.string() + "-attempt"
                                      + std::to_string(attempt)};
  auto dir = make_fresh_dir(base);
  if (!dir)
    return failed_attempt({}, dir.error());
  if (auto ok = materialise_workspace(*dir, p.files); !ok)
    return failed_attempt(*dir, ok.error());
  // Under the keeper: no client before the keeper is known (a CLI of
  // another run raced for a new socket: red team).
  auto server = eval_server::start(
    *dir / ".eat" / "eval.sock", *p.eval, !p.opts->keeper_program.empty());
  if (!server)
    return failed_attempt(*dir, server.error());
  auto home = gets_mounts(*p.opts) ? eat_home() : std::nullopt;
  std::string notes;
  if (home) {
    if (auto made = make_team_home(*home, p.opts->home_paths, p.team_home);
        !made)
      return failed_attempt(*dir, made.error());
    notes = give_credentials(*home, p.team_home, p.opts->credentials);
  }
  auto out = run_in_workspace(p, *dir, spent_before, **server);
  if (home)
    notes += take_credentials(*home, p.team_home, p.opts->credentials);
  if (!notes.empty())
    out.transcript += "\n--- eat: credentials ---\n" + notes;
  return out;
}

/// One attempt's part of the transcript.
std::string transcript_part(uint32_t attempt, const attempt_outcome& out) {
  return "=== attempt " + std::to_string(attempt) + " in " + out.dir.string()
         + "\n" + out.transcript + "\n=== "
         + (out.failure.empty() ? std::string{"ok"} : out.failure) + "\n";
}

caf::expected<attempt_plan> make_plan(const assignment& a,
                                      const std::string& kernel,
                                      const cli_agent_options& opts,
                                      uint64_t serial,
                                      const eval_handler& eval) {
  attempt_plan p;
  p.job = &a;
  p.opts = &opts;
  p.eval = &eval;
  auto preset = effective_preset(opts);
  if (!preset)
    return std::move(preset.error());
  p.preset = std::move(*preset);
  auto program = find_program(p.preset.program, path_env());
  if (!program)
    return std::move(program.error());
  p.program = std::move(*program);
  auto tmpl = role_template(a, opts);
  auto rules = read_text(opts.prompts_dir / "AGENTS.md");
  if (!tmpl)
    return std::move(tmpl.error());
  if (!rules)
    return std::move(rules.error());
  p.files.task_md = render_prompt(*tmpl, a);
  p.files.rules_md = render_prompt(*rules, a);
  p.files.kernel = kernel;
  p.files.learnings_md = a.learning;
  p.files.notes_md = render_notes(a);
  p.files.eval_script = make_eval_script(opts.eat_program);
  p.base_dir = opts.work_dir / workspace_name(a, serial);
  p.team_home = team_home_dir(opts.work_dir, safe_name(a.team));
  for (const auto& arg : build_argv(p, p.base_dir))
    if (arg.size() >= max_arg_bytes)
      return make_error(error::agent_failed,
                        "an argument of " + p.preset.name + " is too long ("
                          + std::to_string(arg.size())
                          + " bytes): pass the prompt on stdin or as a file");
  return p;
}

candidate make_candidate(const assignment& a, std::string source,
                         uint64_t tokens) {
  candidate c;
  c.team = a.team;
  c.agent = a.agent;
  c.task = a.task.name;
  c.family = "custom";
  c.parent = a.parent.id;
  c.source = std::move(source);
  c.tokens = tokens;
  return c;
}

} // namespace

caf::expected<cli_preset> effective_preset(const cli_agent_options& opts) {
  auto p = find_preset(opts.preset);
  if (!p)
    return p;
  if (!opts.program.empty())
    p->program = opts.program;
  if (!opts.args.empty())
    p->args = opts.args;
  if (!opts.output_format.empty()) {
    auto f = parse_output_format(opts.output_format);
    if (!f)
      return std::move(f.error());
    p->format = *f;
  }
  if (opts.prompt_input == "stdin" || opts.prompt_input == "none")
    p->prompt_on_stdin = opts.prompt_input == "stdin";
  else if (!opts.prompt_input.empty())
    return make_error(error::invalid_config,
                      "agents.cli: prompt_input must be \"stdin\" or \"none\"");
  if (p->program.empty() || (p->name == "custom" && p->args.empty()))
    return make_error(error::invalid_config,
                      "agents.cli: preset 'custom' needs program and args");
  return p;
}

caf::expected<void> check_cli_agent(const cli_agent_options& opts) {
  auto preset = effective_preset(opts);
  if (!preset)
    return std::move(preset.error());
  auto program = find_program(preset->program, path_env());
  if (!program) {
    auto where = preset->program.find('/') == std::string::npos
                   ? " not found in PATH"
                   : " not found or not executable";
    return make_error(error::invalid_config, "agents.cli: program '"
                                               + preset->program + "'" + where);
  }
  std::error_code ec;
  for (const auto& name : {opts.role + ".md", std::string{"AGENTS.md"}})
    if (!fs::is_regular_file(opts.prompts_dir / name, ec))
      return make_error(error::invalid_config,
                        "agents.cli: prompt template "
                          + (opts.prompts_dir / name).string() + " not found");
  if (opts.work_dir.empty())
    return make_error(error::invalid_config, "agents.cli: no work_dir");
  fs::create_directories(opts.work_dir, ec);
  if (ec)
    return make_error(error::invalid_config,
                      "agents.cli: cannot create work_dir "
                        + opts.work_dir.string() + ": " + ec.message());
  if (!opts.eat_program.empty() && !find_program(opts.eat_program, ""))
    return make_error(error::invalid_config, "agents.cli: eat program '"
                                               + opts.eat_program
                                               + "' not found");
  if (!opts.keeper_program.empty() && !find_program(opts.keeper_program, ""))
    return make_error(
      error::invalid_config, "agents.cli: " + opts.keeper_program
                               + " not found: eat-keeper is built next to eat");
  return {};
}

cli_outcome run_cli_assignment(const assignment& a, const std::string& kernel,
                               const cli_agent_options& opts, uint64_t serial,
                               const eval_handler& eval) {
  cli_outcome result;
  auto plan = make_plan(a, kernel, opts, serial, eval);
  if (!plan) {
    result.reply.failure = render(plan.error());
    return result;
  }
  token_usage spent;
  attempt_outcome last;
  auto halted = [&] {
    return opts.halt != nullptr && opts.halt->load();
  };
  for (uint32_t k = 1; k <= opts.retries + 1; ++k) {
    if (k > 1 && opts.retry_base_s > 0) {
      auto until = std::chrono::steady_clock::now()
                   + std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::duration<double>(
                       opts.retry_base_s * std::pow(2.0, k - 2)));
      while (!halted() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds{100});
    }
    if (k > 1 && halted())
      break;
    last = run_attempt(*plan, k, total_tokens(spent));
    result.attempts = k;
    add_usage(spent, last.usage);
    auto& transcript = result.reply.transcript;
    transcript += transcript_part(k, last);
    if (transcript.size() > opts.max_transcript)
      transcript.erase(0, transcript.size() - opts.max_transcript);
    if (!last.retryable)
      break;
  }
  result.workspace = last.dir;
  result.reply.usage = spent;
  result.reply.tokens = total_tokens(spent);
  result.reply.failure = last.failure;
  if (last.retryable)
    result.reply.failure
      += " (after " + std::to_string(result.attempts)
         + (result.attempts == 1 ? " attempt)" : " attempts)");
  if (last.kernel)
    result.reply.candidates.push_back(
      make_candidate(a, std::move(*last.kernel), result.reply.tokens));
  return result;
}

caf::expected<std::string> starting_kernel(caf::actor_system& sys,
                                           const assignment& a,
                                           const store_actor& store) {
  const auto& p = a.parent;
  if (p.id.empty() || p.family == "baseline")
    return a.task.baseline_source;
  for (const auto& f : a.task.families)
    if (f.name == p.family)
      return render_template(f, p.params);
  if (!store)
    return make_error(error::agent_failed,
                      "the source of parent " + p.id + " is not available");
  candidate key;
  key.team = a.team;
  key.id = p.id;
  caf::expected<std::string> source = caf::error{};
  caf::scoped_actor self{sys};
  self->request(store, std::chrono::seconds(60), file_atom_v,
                candidate_dir(key) + "kernel.cpp", uint64_t{0})
    .receive([&](std::string& bytes) { source = std::move(bytes); },
             [&](caf::error& err) { source = std::move(err); });
  return source;
}

agent_actor::behavior_type cli_agent(agent_actor::pointer self,
                                     cli_agent_options opts) {
  auto serial = std::make_shared<uint64_t>(0);
  return {
    [self, opts, serial](propose_atom, const assignment& a) -> agent_reply {
      // The serial starts again in a resumed run: numbers whose workspace
      // exists are skipped, so that workspaces and ./eval ids stay unique.
      auto n = ++*serial;
      std::error_code ec;
      while (fs::exists(opts.work_dir / workspace_name(a, n), ec))
        n = ++*serial;
      auto kernel = starting_kernel(self->system(), a, opts.store);
      if (!kernel) {
        agent_reply reply;
        reply.failure = render(kernel.error());
        return reply;
      }
      candidate proto;
      proto.id = workspace_name(a, n);
      proto.team = a.team;
      proto.agent = a.agent;
      proto.task = a.task.name;
      proto.family = "custom";
      proto.parent = a.parent.id;
      auto eval = device_eval_handler(self->system(), opts.device, a.task,
        proto, a.seed, opts.eval_timeout_s, opts.store, opts.max_evals);
      return run_cli_assignment(a, *kernel, opts, n, eval).reply;
    },
  };
}

} // namespace eat
