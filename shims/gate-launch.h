/*
 * gate-launch: the kernel layer of the exec gate (docs/exec-gate.md, "The kernel layer").
 *
 *   gate-launch [--session-ns PID:PIDNS:NETNS] [--argv0 NAME] PROGRAM [ARGS...]
 *
 * Starts PROGRAM (bubblewrap or bash, as the run plan says) under a seccomp filter that hands every execve
 * and execveat of its whole process tree to a supervisor as a user notification, and the supervisor asks the
 * daemon's one decision engine (the request channel's ExecRequest, "layer":"kernel") before the kernel may
 * go on. Three processes:
 *
 *   front (the caller's pid: what gate-sh, the pty host or the escalation runner spawned and signals)
 *     └─ supervisor (forked before any filter exists: never filtered; a child subreaper, so every process
 *        │            of the tree stays its descendant and its memory stays readable under Yama;
 *        │            not dumpable: the tree can neither ptrace it nor open its /proc files)
 *        └─ tree root (sets no_new_privs, installs the filter, passes the listener to the supervisor over
 *                      a socketpair, closes its own copy, execs PROGRAM)
 *
 * An exec let through is followed to its end with ptrace, and killed before its first instruction if the
 * kernel took another program or other arguments than were checked ("after the exec"). The front forwards
 * signals to the tree root and exits with its status. The parts, one file per concern, are in launch/
 * (launch/launch.h lists them). Trust boundary: everything the supervisor reads from the tree (paths, argv,
 * environment, descriptors) is data from a process that may be hostile; it is bounded, and any failure to
 * read or to ask answers EACCES (fail closed). Statically linked (gate-launch, and gate-sh-native, which
 * calls gate_launch in its forked child instead of exec'ing gate-launch), so that LD_PRELOAD (the LD_PRELOAD
 * layer, in the run's environment) never loads into it.
 */
#ifndef GATE_LAUNCH_H
#define GATE_LAUNCH_H

/* The launcher, as the gate-launch program runs it: the exit status to end with (the command's, or 126). */
int gate_launch(int argc, char **argv);

#endif
