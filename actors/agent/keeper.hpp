// eat-keeper: runs one coding-agent CLI so that nothing it starts outlives
// it (docs/agent-cli.md, "Processes"). run_cli_process starts
//
//   eat-keeper --parent <eat's pid> --grace <seconds> -- <program> <args>
//
// as the leader of a new process group. The keeper becomes a child
// subreaper, starts the program in its group, and waits. A daemon the
// program starts with setsid (or a double fork) leaves the group but not
// the keeper: it becomes the keeper's child once its parent exits. When the
// program exits, or `grace` seconds after the keeper is asked to stop
// (SIGTERM, SIGINT or SIGHUP, which it passes on to its group), it kills
// every process it still has, adopted ones too, reaps them, and exits as
// the program did (same status, or the same signal). It is also asked to
// stop when the thread of eat that started it ends (PR_SET_PDEATHSIG): eat
// killed or crashed, the CLI and its daemons go with it.
//
// Exit status 125: the keeper could not start (bad arguments, or eat was
// already gone); 127: the program could not be run. Both are explained on
// stderr, prefixed "eat-keeper:". Single-threaded; plain system calls.

#pragma once

namespace eat {

/// The keeper's main: argv as described above.
int keeper_main(int argc, char** argv);

} // namespace eat
