/* Joining a session sandbox: the launcher's part (gate-join.h says what and why). */
#define _GNU_SOURCE
#include "gate-join.h"
#include "gate-proc.h"
#include "gate-common.h"
#include "gate-masks.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_checked(const char *path, unsigned long ino) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) || (unsigned long)st.st_ino != ino)) {
    close(fd);
    fd = -1;
    errno = ESRCH;
  }
  return fd;
}

static int open_ns(long pid, const char *kind, unsigned long ino) {
  char p[64];
  snprintf(p, sizeof p, "/proc/%ld/ns/%s", pid, kind);
  return open_checked(p, ino);
}

int gate_join_open(struct gate_join *j, const char *spec, char *err, size_t n) {
  memset(j, 0, sizeof *j);
  j->pidns = j->mntns = j->folder_tree = -1;
  char *e;
  long pid = strtol(spec, &e, 10);
  unsigned long pidns = *e == ':' ? strtoul(e + 1, &e, 10) : 0;
  unsigned long netns = *e == ':' ? strtoul(e + 1, &e, 10) : 0;
  long mntfd = -1;
  unsigned long mntns = 0;
  if (*e == ':') {
    mntfd = strtol(e + 1, &e, 10);
    mntns = *e == ':' ? strtoul(e + 1, &e, 10) : 0;
    j->lines = *e == ':' ? strtol(e + 1, &e, 10) : 0;
    j->digest = *e == ':' ? strtoull(e + 1, &e, 16) : 0;
    if (mntfd < 0 || mntns == 0 || j->lines <= 0) pid = 0;
  }
  if (pid <= 0 || pidns == 0 || *e) return gate_fail(err, n, "malformed --session-ns %s", spec);
  j->pidns = open_ns(pid, "pid", pidns);
  if (j->pidns < 0 || fcntl(j->pidns, F_SETFD, 0))
    return gate_fail(err, n, "the session sandbox is gone (its namespaces cannot be joined): %s", strerror(errno));
  snprintf(j->pidns_arg, sizeof j->pidns_arg, "%d", j->pidns);
  if (netns) {
    int fd = open_ns(pid, "net", netns);
    if (fd < 0 || setns(fd, CLONE_NEWNET))
      return gate_fail(err, n, "cannot join the session sandbox's network: %s", strerror(errno));
    close(fd);
  }
  if (mntfd >= 0) {
    /* the holder keeps its mounts on a descriptor: a holder that lost them leaves bubblewrap to build them */
    char p[64];
    snprintf(p, sizeof p, "/proc/%ld/fd/%ld", pid, mntfd);
    j->mntns = open_checked(p, mntns);
    j->holder = pid;
    j->mntns_ino = mntns;
  }
  return 0;
}

/* bubblewrap's options that only build mounts (in the held namespace already), by their argument count */
static int mount_option(const char *o) {
  static const char *one[] = {"--dev", "--proc", "--tmpfs", "--remount-ro", "--dir", "--mqueue", NULL};
  static const char *two[] = {"--bind",        "--ro-bind",      "--dev-bind", "--bind-try",
                              "--ro-bind-try", "--dev-bind-try", "--symlink",  NULL};
  for (int i = 0; one[i]; i++)
    if (!strcmp(o, one[i])) return 1;
  for (int i = 0; two[i]; i++)
    if (!strcmp(o, two[i])) return 2;
  return -1;
}

/* Whether the held mounts are still the ones built: a look from inside them, and back (this process is
 * single-threaded: the supervisor is not forked yet). A process that cannot come back does not go on. */
static int mounts_hold(const struct gate_join *j) {
  int host = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  int here = open(".", O_PATH | O_CLOEXEC);
  int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  unsigned long long d = 0;
  int ok = 0;
  if (host >= 0 && here >= 0 && proc >= 0 && setns(j->mntns, CLONE_NEWNS) == 0) {
    ok = gate_mounts_digest(proc, j->lines, &d) >= j->lines && d == j->digest;
    if (setns(host, CLONE_NEWNS) || fchdir(here))
      gate_die_errno(126, "exec gate: not run: cannot leave the session sandbox's mounts", NULL, NULL);
  }
  if (host >= 0) close(host);
  if (here >= 0) close(here);
  if (proc >= 0) close(proc);
  return ok;
}

void gate_join_plan(struct gate_join *j, char **a) {
  j->direct = 0;
  if (j->pidns < 0 || j->mntns < 0) return;
  int caps = 0;
  const char *dir = NULL;
  int session = 0, i = 1;
  for (; a[i] && strcmp(a[i], "--"); i++) {
    int k = mount_option(a[i]);
    if (k > 0) {
      for (; k > 0; k--)
        if (!a[++i]) return;
      continue;
    }
    if (!strcmp(a[i], "--new-session")) {
      session = 1;
      continue;
    }
    if (!a[i + 1]) return;
    if (!strcmp(a[i], "--pidns")) {
      i++;
      continue;
    }
    if (!strcmp(a[i], "--chdir")) {
      dir = a[++i];
      continue;
    }
    if (!strcmp(a[i], "--cap-drop") && !strcmp(a[i + 1], "ALL")) {
      caps = 1;
      i++;
      continue;
    }
    return; /* anything else is bubblewrap's to do */
  }
  if (!a[i] || !a[i + 1] || a[i + 1][0] != '/' || !dir || dir[0] != '/' || !caps) return;
  if (!mounts_hold(j)) {
    j->stale = 1;
    return;
  }
  if (gate_join_folder_plan(j, a, i)) return; /* bubblewrap binds the run's client folder */
  j->chdir = dir;
  j->new_session = session;
  j->command = a + i + 1;
  j->direct = 1;
}

int gate_join_born_inside(struct gate_join *j, int inside) {
  static int own = -1;
  if (!j->direct) return 0;
  if (inside) {
    if (own < 0) own = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
    if (own < 0 || setns(j->pidns, CLONE_NEWPID)) {
      j->direct = 0;
      return 0;
    }
    return 1;
  }
  /* (a supervisor left with children born inside forks none after the tree root) */
  (void)setns(own, CLONE_NEWPID);
  return 0;
}

/* No capability left, none to regain by an exec (bubblewrap's --cap-drop ALL for root); 0 when done. */
static int drop_caps(void) {
  for (int c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
    if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL) return -1;
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof d);
  return (int)syscall(SYS_capset, &h, d);
}

/* The host sockets' masks (gate-masks.h), in a mount namespace of the command's own (own: the client
 * folder's already), a slave of the held one: nothing of it reaches the other commands and their jobs. */
static void enter_masks(struct gate_join *j, int own) {
  if (!own && unshare(CLONE_NEWNS))
    gate_die_errno(126, "exec gate: not run: cannot make a mount namespace for the host sockets' masks", NULL, NULL);
  if (!own && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
    gate_die_errno(126, "exec gate: not run: cannot part the run's mounts from the session sandbox's", NULL, NULL);
  int at = -1, e = gate_masks_mount(j->masks, j->nmasks, &at);
  errno = e;
  const char *why = "exec gate: not run: the host's sockets cannot be hidden from the sandbox: ";
  if (e && at >= 0) gate_die_errno(126, why, "the host socket ", j->masks[at]);
  if (e) gate_die_errno(126, why, "no null device in it", NULL);
}

int gate_join_enter(struct gate_join *j, const char **path, char ***argv) {
  if (!j->direct) return -1;
  /* the mounts were checked before the fork; checked again here, inside them. They may have changed in
   * between (a protected folder removed on the host detaches its mount): then back to the host's mounts,
   * and bubblewrap builds them from the plan, joining the pid namespace this process was born in */
  int host = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  int here = open(".", O_PATH | O_CLOEXEC);
  if (host < 0 || here < 0 || setns(j->mntns, CLONE_NEWNS))
    gate_die_errno(126, "exec gate: not run: cannot enter the session sandbox's mounts", NULL, NULL);
  unsigned long long d = 0;
  if (gate_mounts_digest(AT_FDCWD, j->lines, &d) < j->lines || d != j->digest) {
    if (setns(host, CLONE_NEWNS) || fchdir(here))
      gate_die_errno(126, "exec gate: not run: cannot leave the session sandbox's mounts", NULL, NULL);
    close(host);
    close(here);
    if (j->folder_tree >= 0) close(j->folder_tree), j->folder_tree = -1;
    j->direct = 0;
    j->stale = 1;
    return -1;
  }
  close(host);
  close(here);
  /* after the check: the mounts added here come after the held ones' lines (gate-proc.h) */
  int own = j->folder_tree >= 0;
  gate_join_folder_enter(j);
  if (j->nmasks > 0) enter_masks(j, own);
  if (chdir(j->chdir)) gate_die_errno(126, "exec gate: not run: cannot enter ", j->chdir, " in the sandbox");
  close(j->mntns);
  close(j->pidns);
  if (drop_caps()) gate_die_errno(126, "exec gate: not run: cannot drop the sandbox's capabilities", NULL, NULL);
  if (j->new_session && setsid() < 0) gate_die_errno(126, "exec gate: not run: cannot start a session", NULL, NULL);
  /* what bubblewrap sets, and the mark its LD_PRELOAD layer would have passed on to the command */
  setenv("PWD", j->chdir, 1);
  char mark[4096];
  snprintf(mark, sizeof mark, "0:%s", j->command[0]);
  setenv(GATE_VAR_CHECKED, mark, 1);
  unsetenv(GATE_VAR_INNER_PROGRAM);
  *path = j->command[0];
  *argv = j->command;
  return 0;
}
