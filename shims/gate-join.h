/* Joining a session sandbox (docs/sandbox.md, "Session sandboxes"): the launcher's part. The daemon's
 * holder (shims/gate-session) owns a pid namespace, maybe a network namespace, and, when it could build
 * one, a mount namespace with the sandbox key's mounts. A command that joins enters the network namespace
 * before anything is forked; with held mounts it is born in the pid namespace (the supervisor forks it
 * there), enters the mounts, checks they are still the ones built, and runs its command in place of
 * bubblewrap, doing what bubblewrap would have done after its mounts (--chdir, --new-session, --cap-drop
 * ALL) and what the supervisor does for bubblewrap's (the host sockets' masks, in a mount namespace of the
 * command's own: the held mounts carry none, gate-masks.h); without them, or when anything of that does not hold,
 * bubblewrap builds the mounts as before.
 * Not pure (namespaces, /proc). Trust boundary: the spec is the daemon's (in the plan); the holder's
 * namespaces are checked by inode, so a reused pid is never joined; the mounts by their digest. */
#ifndef GATE_JOIN_H
#define GATE_JOIN_H

#include <stddef.h>

struct gate_join {
  int pidns; /* the holder's pid namespace (-1: not joining), handed to bubblewrap as --pidns */
  char pidns_arg[16];
  int mntns; /* its held mounts (-1: none) */
  long holder; /* the holder's pid and its held mounts' namespace number, as the spec named them */
  unsigned long mntns_ino;
  int stale; /* the held mounts changed since they were built: the daemon is to be told */
  long lines; /* their mountinfo lines and digest when built (gate-proc.h) */
  unsigned long long digest;
  int direct; /* the command runs without bubblewrap: the fields below are its */
  const char *chdir;
  int new_session;
  char **command;
  int folder_tree; /* the run's own client folder, a detached copy of its mount (-1: none; gate-join-folder.c) */
  char *const *masks; /* the host sockets' masks of the plan (gate-masks.h): the held mounts have none */
  int nmasks;
  char clients[256], run_folder[256];
};

/* Open the namespaces of spec (PID:PIDNS:NETNS[:MNTFD:MNTNS:LINES:DIGEST]) and enter the network one;
 * 0, or -1 with a message in err. */
int gate_join_open(struct gate_join *j, const char *spec, char *err, size_t n);
/* Whether the plan's bubblewrap argv (bwrap --pidns FD OPTIONS... -- COMMAND...) can run without
 * bubblewrap: held mounts that are still as built, only options known here, --chdir, --cap-drop ALL and an
 * absolute command. Called before anything is forked (it enters the mounts to look, and comes back). */
void gate_join_plan(struct gate_join *j, char **bwrap_argv);
/* The supervisor, around its fork of the tree root: 1 = children are born in the sandbox's pid namespace
 * (0 when that cannot be: then bubblewrap joins it), 0 = back to its own. */
int gate_join_born_inside(struct gate_join *j, int inside);
/* The tree root, born inside: enter the held mounts and become the command as bubblewrap would have made
 * it (its path and argv in *path, *argv); -1 when bubblewrap builds the mounts: nothing changed, or the
 * mounts changed since the supervisor looked (back in the host's mounts; bubblewrap's --pidns joins the pid
 * namespace this process was born in). Past the point of no return a failure ends the process (126). */
int gate_join_enter(struct gate_join *j, const char **path, char ***argv);

/* gate-join-folder.c: the run's own client folder in a held session sandbox. _plan (host, before the fork):
 * find it among the plan's bubblewrap options a[1..end) and take it (0; -1 when it cannot be taken: then
 * bubblewrap builds the mounts); _enter (the tree root, inside the held mounts): bind it in a mount
 * namespace of the command's own; a failure ends the process (126). */
int gate_join_folder_plan(struct gate_join *j, char **a, int end);
void gate_join_folder_enter(struct gate_join *j);

#endif
