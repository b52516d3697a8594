// eat-keeper: runs one coding-agent CLI so that nothing it starts outlives
// it and it cannot write the run's files (docs/agent-cli.md, "Processes").
// run_cli_process starts
//
//   eat-keeper --parent <eat's pid> --grace <seconds> [--no-namespaces]
//              [--read-only PATH]... [--writable PATH]...
//              -- <program> <args>
//
// as the leader of a new process group. The keeper starts the program in
// new PID and mount namespaces (inside a user namespace of its own when it
// is not root, its ids mapped to themselves), under a small init (PID 1
// there) in a process group of its own. The program can see, signal or
// stop neither the keeper nor eat (before, a CLI could SIGKILL or SIGSTOP
// its keeper, and its daemons then ran on); when it exits, init exits and
// the kernel kills every process of the namespace, daemons that left the
// group with setsid included. In its mount namespace the --read-only and
// --writable paths are mounted so, in the order given (keeper_mounts.hpp),
// and a program started as root runs without capabilities. The program
// gets no descriptor but stdin, stdout and stderr. Where the kernel
// refuses the namespaces (saying so on stderr), or with --no-namespaces,
// the program runs in the keeper's group and the keeper is a child
// subreaper instead: a daemon becomes its child once the daemon's parent
// exits, and is killed by the keeper.
//
// When the program exits, or `grace` seconds after the keeper is asked to
// stop (SIGTERM, SIGINT or SIGHUP, which it passes on to the program's
// group as SIGTERM), it kills every process it still has and reaps them,
// and exits as the program did (same status, or the same signal). It is
// also asked to stop when the thread of eat that started it ends
// (PR_SET_PDEATHSIG): eat killed or crashed, the CLI and its daemons go
// with it; init dies with the keeper (PR_SET_PDEATHSIG, SIGKILL).
//
// Exit status 125: the keeper could not start (bad arguments, or eat was
// already gone); 127: the program could not be run. Both are explained on
// stderr, prefixed "eat-keeper:". Single-threaded; plain system calls.

#pragma once

namespace eat {

/// The keeper's main: argv as described above.
int keeper_main(int argc, char** argv);

} // namespace eat
