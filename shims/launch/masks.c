/*
 * The host sockets' masks of a sandbox that bubblewrap builds, mounted by the supervisor (../gate-masks.h
 * says why bubblewrap is not given them): taken from bubblewrap's options before anything is forked
 * (masks_plan), left out of the argv the tree root execs (masks_argv), and mounted in the sandbox when the
 * first exec inside it arrives, which waits until they are (masks_ready): bubblewrap has built the sandbox by
 * then and nothing of the run has run in it. A helper process forked for it enters the user namespace that
 * owns the sandbox's mount namespace (when it is not this one's: bubblewrap run by a user other than root),
 * the mount namespace and its root, and mounts them there (gate_masks_mount): a socket gone by then is
 * skipped; one that is there and cannot be masked refuses that exec and every later one of the tree (fail
 * closed), saying which.
 * The list is this file's, set before any thread starts and read-only after; the state, set under its lock
 * (read without it once settled).
 * Trust boundary: the masks are the plan's; the process whose namespaces are entered is the tree's, stopped
 * in its exec (its notification is checked still valid once they are open, so they are its), and a mount
 * namespace that is the supervisor's own is never mounted in.
 */
#define _GNU_SOURCE
#include "launch.h"
#include "../gate-masks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct {
  pthread_mutex_t lock;
  char **paths; /* the plan's masks (pointers into its argv), NULL-terminated */
  int n;
  int here; /* mounted by the supervisor: the tree root leaves them out of bubblewrap's options */
  int state; /* 0 not yet, 1 in place (or bubblewrap's, or the tree root's), -1 they could not be */
} M = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};

int launch_is_bwrap(const char *path) {
  const char *b = strrchr(path, '/');
  return !strcmp(b ? b + 1 : path, "bwrap");
}

void masks_plan(char *const prog[]) {
  if (!launch_is_bwrap(prog[0])) return;
  int words = 0;
  while (prog[words]) words++;
  char **scratch = calloc((size_t)words + 1, sizeof *scratch);
  M.paths = calloc((size_t)words + 1, sizeof *M.paths);
  if (!scratch || !M.paths) gate_die(126, "exec gate: ", prog[0], ": not run: out of memory", NULL);
  gate_without_masks(prog, 1, scratch, 0, M.paths, &M.n);
  free(scratch);
  /* a setuid bubblewrap run by another user makes namespaces that are root's, which this supervisor cannot
   * enter: there bubblewrap mounts them, as before */
  struct stat st;
  M.here = M.n > 0 && !(geteuid() != 0 && stat(prog[0], &st) == 0 && (st.st_mode & S_ISUID));
}

char *const *masks_paths(int *n) {
  *n = M.n;
  return M.paths;
}

char **masks_argv(char *const argv[], int filtered) {
  int words = 0;
  while (argv[words]) words++;
  char **out = calloc((size_t)words + 1, sizeof *out);
  if (!out) return NULL;
  /* the supervisor mounts them only where it sees the tree's execs: a launcher inside a gated tree does not */
  if (M.here && filtered) gate_without_masks(argv, 0, out, 0, NULL, NULL);
  else gate_without_gone_masks(argv, 0, out);
  return out;
}

/* What the helper says: 0, or the errno of the step that failed (step: 1 entering the sandbox, 2 a mask,
 * with the path's index in at, -1 for the null device). */
struct said {
  int error, step, at;
};

/* The helper, forked: the namespaces of the process (user: -1 when it is this one's), its root, the masks. */
static _Noreturn void helper(int user, int mnt, int root, int out) {
  struct said s = {0, 1, 0};
  if ((user >= 0 && setns(user, CLONE_NEWUSER)) || setns(mnt, CLONE_NEWNS) || fchdir(root) || chroot(".") || chdir("/"))
    s.error = errno;
  else {
    s.step = 2;
    s.error = gate_masks_mount(M.paths, M.n, &s.at);
  }
  _exit(write(out, &s, sizeof s) == (ssize_t)sizeof s ? 0 : 1);
}

/* The inode of a namespace file (open on fd), and of this process's own of that kind; 0 when unknown. */
static unsigned long ns_ino(int fd) {
  struct stat st;
  return fstat(fd, &st) ? 0 : (unsigned long)st.st_ino;
}
static unsigned long own_ns_ino(const char *kind) {
  struct stat st;
  char p[64];
  snprintf(p, sizeof p, "/proc/self/ns/%s", kind);
  return stat(p, &st) ? 0 : (unsigned long)st.st_ino;
}

/* The masks mounted in the sandbox of the process waiting in req: 0, or -1 (said why). */
static int mount_in(const struct launch *l, const struct seccomp_notif *req, const char *program) {
  char p[3][64];
  const char *file[3] = {"ns/mnt", "ns/user", "root"};
  int fd[3];
  for (int i = 0; i < 3; i++) {
    snprintf(p[i], sizeof p[i], "/proc/%d/%s", (int)req->pid, file[i]);
    fd[i] = open(p[i], O_RDONLY | O_CLOEXEC | (i == 2 ? O_PATH | O_DIRECTORY : 0));
  }
  /* The user namespace that owns the mount namespace, not the process's own: bubblewrap run by a user other
   * than root gives the sandbox a second user namespace inside the first (the one its mounts were made in),
   * and from inside that one no mount namespace of the first can be entered (EPERM: every non-root run was
   * refused). (A kernel without NS_GET_USERNS, before 4.9: the process's own.) */
  if (fd[0] >= 0 && fd[1] >= 0) {
    int owner = ioctl(fd[0], NS_GET_USERNS);
    if (owner >= 0) {
      close(fd[1]);
      fd[1] = owner;
      (void)fcntl(owner, F_SETFD, FD_CLOEXEC);
    }
  }
  struct said s = {0, 1, 0};
  int ok = fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0, pipefd[2] = {-1, -1};
  if (!ok) s.error = errno;
  /* opened while it still waits: they are that process's (a pid reused since would have no valid id) */
  else if (!notif_valid(l, req->id)) ok = 0, s.error = ESRCH;
  else if (ns_ino(fd[0]) == own_ns_ino("mnt")) ok = 0, s.error = EPERM; /* not a sandbox: never the host */
  else if (pipe2(pipefd, O_CLOEXEC)) ok = 0, s.error = errno;
  if (ok) {
    int user = ns_ino(fd[1]) == own_ns_ino("user") ? -1 : fd[1];
    pid_t h = fork();
    if (h == 0) helper(user, fd[0], fd[2], pipefd[1]);
    close(pipefd[1]);
    if (h < 0 || read(pipefd[0], &s, sizeof s) != (ssize_t)sizeof s) s = (struct said){h < 0 ? errno : EIO, 1, 0};
    close(pipefd[0]);
    while (h > 0 && waitpid(h, NULL, 0) < 0 && errno == EINTR) {}
  }
  for (int i = 0; i < 3; i++)
    if (fd[i] >= 0) close(fd[i]);
  if (!s.error) return 0;
  char what[PATH_MAX + 128];
  const char *why = strerror(s.error);
  if (s.step == 2 && s.at >= 0)
    gate_join(what, sizeof what, "the host socket ", M.paths[s.at], " cannot be masked: ", why);
  else
    gate_join(what, sizeof what, s.step == 2 ? "no null device in it: " : "its namespaces cannot be entered: ", why,
              NULL, NULL);
  gate_msg("exec gate: ", program, ": not run: the host's sockets cannot be hidden from the sandbox: ", what);
  return -1;
}

int masks_ready(const struct launch *l, const struct seccomp_notif *req, int seq, const char *program) {
  /* (every exec after the first ones: settled, no lock) */
  int r = __atomic_load_n(&M.state, __ATOMIC_ACQUIRE);
  if (r) return r > 0 ? 0 : -1;
  pthread_mutex_lock(&M.lock);
  /* the tree root's own exec: bubblewrap, which builds the sandbox, or the command joining held mounts,
   * which mounted them itself (../gate-join.c) */
  if (seq == 0) {
    if (l->joined && (pid_t)req->pid == l->root && !strcmp(program, l->joined) && !M.state)
      __atomic_store_n(&M.state, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&M.lock);
    return 0;
  }
  if (!M.state) __atomic_store_n(&M.state, !M.here || mount_in(l, req, program) == 0 ? 1 : -1, __ATOMIC_RELEASE);
  r = M.state;
  pthread_mutex_unlock(&M.lock);
  return r > 0 ? 0 : -1;
}
