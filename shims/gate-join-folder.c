/*
 * A run's own client folder inside a session sandbox whose mounts are held: the holder builds
 * the clients' folder `<request folder>/c` empty and read-only (runs of one sandbox key share those mounts),
 * and each command joining binds its own run's folder in, in a mount namespace of its own, as bubblewrap
 * does for a sandbox of its own (src/sandbox/bwrap-argv.ts requestDir: `--ro-bind Q Q --tmpfs Q/c --bind
 * Q/c/R Q/c/R`). So a background job of one run cannot unlink, replace or even see another run's reply
 * sockets. The folder is taken on the host (open_tree: a detached copy of its mount, made before entering,
 * while the host path is there) and attached after entering (move_mount): a plain bind cannot take its
 * source from another mount namespace. Its own namespace is a slave of the held one, so nothing mounted
 * here reaches the held mounts or the other commands; the held mounts' digest (gate-proc.h) covers their
 * first lines only, and is checked before these are added.
 * Not pure (mounts). Trust boundary: the folder is the plan's (bubblewrap's argv, the daemon's or gate-sh's
 * own, outside the sandbox), taken before anything of the run runs; every failure past the point of no
 * return ends the process (126) with a message, never runs the command without its folder.
 */
#define _GNU_SOURCE
#include "gate-join.h"
#include "gate-common.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* The three options of requestDir at a[i..]: 1 with the clients' folder and the run's in j, else 0. */
static int run_folder_at(struct gate_join *j, char **a, int i) {
  for (int k = 0; k <= 7; k++)
    if (!a[i + k]) return 0;
  if (strcmp(a[i], "--ro-bind") || strcmp(a[i + 3], "--tmpfs") || strcmp(a[i + 5], "--bind")) return 0;
  const char *q = a[i + 1], *c = a[i + 4], *r = a[i + 6];
  size_t ql = strlen(q), cl = strlen(c);
  if (strcmp(a[i + 2], q) || strcmp(a[i + 7], r) || q[0] != '/') return 0;
  if (cl != ql + 2 || strncmp(c, q, ql) || strcmp(c + ql, "/c")) return 0;
  if (strncmp(r, c, cl) || r[cl] != '/' || !r[cl + 1] || strchr(r + cl + 1, '/')) return 0;
  if (!strcmp(r + cl + 1, ".") || !strcmp(r + cl + 1, "..")) return 0;
  if (cl >= sizeof j->clients || strlen(r) >= sizeof j->run_folder) return 0;
  memcpy(j->clients, c, cl + 1);
  memcpy(j->run_folder, r, strlen(r) + 1);
  return 1;
}

int gate_join_folder_plan(struct gate_join *j, char **a, int end) {
  j->folder_tree = -1;
  for (int i = 1; i + 7 < end; i++) {
    if (!run_folder_at(j, a, i)) continue;
    /* on the host, before entering: a detached copy of the folder's mount, attached after (tree root) */
    j->folder_tree = open_tree(AT_FDCWD, j->run_folder, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    return j->folder_tree >= 0 ? 0 : -1;
  }
  return 0; /* no folder of the run's own: its clients find none and fail closed */
}

void gate_join_folder_enter(struct gate_join *j) {
  if (j->folder_tree < 0) return;
  const char *c = j->clients, *r = j->run_folder;
  if (unshare(CLONE_NEWNS))
    gate_die_errno(126, "exec gate: not run: cannot make a mount namespace for the run's client folder", NULL, NULL);
  /* nothing of this namespace propagates back into the held mounts (the other commands' and jobs') */
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
    gate_die_errno(126, "exec gate: not run: cannot part the run's mounts from the session sandbox's", NULL, NULL);
  if (mount("tmpfs", c, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755"))
    gate_die_errno(126, "exec gate: not run: cannot make the clients' folder ", c, NULL);
  if (mkdir(r, 0700)) gate_die_errno(126, "exec gate: not run: cannot make the run's client folder ", r, NULL);
  if (move_mount(j->folder_tree, "", AT_FDCWD, r, MOVE_MOUNT_F_EMPTY_PATH))
    gate_die_errno(126, "exec gate: not run: cannot bind the run's client folder ", r, NULL);
  close(j->folder_tree);
  j->folder_tree = -1;
  if (mount(NULL, c, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
    gate_die_errno(126, "exec gate: not run: cannot make the clients' folder read-only ", c, NULL);
}
