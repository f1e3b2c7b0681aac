/*
 * The gate's guard (gate-guard.h): gate-sh's own state out of reach of a run that has no sandbox.
 *
 * Lines of the spec (built by src/sandbox/gate-state.ts, outside any run):
 *   d PATH   a folder kept read-only; made first (0700) when missing, so the run cannot make it
 *   f PATH   a file or folder kept read-only when it exists
 *   h PATH   a folder hidden (an empty read-only tmpfs): the runtime folder, every session's approval socket;
 *            then the clients' folder inside the request folder bound back (the other runs' client folders)
 *   b PATH   bound back read-only inside a hidden folder: the session's request folder
 *   w PATH   bound back read-write: the run's own client folder (its reply sockets)
 * The lines are applied in their order (what is bound back is opened before anything is hidden).
 *
 * How it holds: the tree root (still the gate's, before the run's program) makes a mount namespace, as
 * root directly, as another user inside a user namespace of its own (mapping only the user's own uid), and
 * mounts the lines above in it; host mounts still propagate in (slave), so nothing else changes. Then, as
 * root, CAP_SYS_ADMIN leaves the bounding set and every set (no mount, umount or remount; the one
 * capability that undoes mounts — a user namespace the run makes gets it back only over copies of these
 * mounts, which the kernel locks together); as another user, the exec drops every capability of the user
 * namespace anyway. Last, a Landlock domain keeps every process outside the run out of its reach through
 * /proc, as ptrace is (scope_outside, below): /proc/<pid>/root of the daemon or of the user's shell shows
 * the host's view, where none of these mounts is. Nothing else is taken from the run: the host's processes
 * (signals, ps), network, devices, path sockets and every other file stay as they were. What it does not
 * stop (docs/sandbox.md): programs that run commands elsewhere.
 * Already inside a guard (a nested gate-sh of a guarded run, which cannot make a mount namespace any more):
 * the guard is taken as applied when every `d` line is already a read-only mount; otherwise it fails.
 * Trust boundary: the spec comes from gate-sh outside the run (the plan's environment, removed before
 * the exec); every failure stops the run (126), never runs it unguarded.
 */
#define _GNU_SOURCE
#include "gate-guard.h"
#include "gate-error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif

#define MAX_LINES 64

struct line {
  char op;
  const char *path;
  int fd;
};

static int fail(char *why, size_t n, const char *what, const char *path) {
  return gate_fail(why, n, "%s %s: %s", what, path ? path : "", strerror(errno));
}

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t w = write(fd, text, strlen(text));
  int e = errno;
  close(fd);
  errno = e;
  return w == (ssize_t)strlen(text) ? 0 : -1;
}

/* mkdir -p, 0700 for what it makes */
static int make_dirs(const char *path) {
  char p[4096];
  if (strlen(path) >= sizeof p) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(p, path);
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == 0) {
      char c = *s;
      *s = 0;
      if (mkdir(p, 0700) && errno != EEXIST) return -1;
      *s = c;
      if (!c) return 0;
    }
  }
}

/* A read-only remount keeps the flags the kernel locked on the mount (nosuid, nodev, noexec...). */
static int remount_ro(const char *path) {
  struct statvfs v;
  if (statvfs(path, &v)) return -1;
  unsigned long keep = 0;
  if (v.f_flag & ST_NOSUID) keep |= MS_NOSUID;
  if (v.f_flag & ST_NODEV) keep |= MS_NODEV;
  if (v.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
  if (v.f_flag & ST_NOATIME) keep |= MS_NOATIME;
  if (v.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
  if (v.f_flag & ST_RELATIME) keep |= MS_RELATIME;
  return mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL);
}

static int own_namespace(void) {
  if (getuid() == 0 && unshare(CLONE_NEWNS) == 0) return 0;
  if (getuid() == 0) return -1;
  uid_t u = getuid();
  gid_t g = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) return -1;
  char map[64];
  if (write_file("/proc/self/setgroups", "deny")) return -1;
  snprintf(map, sizeof map, "%u %u 1", (unsigned)u, (unsigned)u);
  if (write_file("/proc/self/uid_map", map)) return -1;
  snprintf(map, sizeof map, "%u %u 1", (unsigned)g, (unsigned)g);
  return write_file("/proc/self/gid_map", map);
}

/* As root: CAP_SYS_ADMIN out of the bounding set and of every set, so no exec gets it back. */
static int drop_sys_admin(void) {
  if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0)) return -1;
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_ADMIN, 0, 0);
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  if (syscall(SYS_capget, &h, d)) return -1;
  unsigned bit = 1u << (CAP_SYS_ADMIN % 32);
  int i = CAP_SYS_ADMIN / 32;
  d[i].effective &= ~bit;
  d[i].permitted &= ~bit;
  d[i].inheritable &= ~bit;
  return (int)syscall(SYS_capset, &h, d);
}

/*
 * The run out of reach of every process outside it through /proc: /proc/<pid>/root of
 * the daemon, of the gate-sh that started the run or of the user's shell is the host's view, where the
 * mounts above are not, so the rules could be emptied through it. A Landlock domain denies its processes
 * ptrace access (PTRACE_MODE_READ included, which /proc/<pid>/root, cwd, fd, exe and mem need) to
 * any process outside it, root's CAP_SYS_PTRACE notwithstanding; the run's own processes stay open to it,
 * and /proc/<pid>/status, cmdline and signals to all. The domain handles no file, network or signal right
 * (one that handled a file right would also forbid every mount: bubblewrap inside the run would fail); it
 * is made by a scope, the abstract Unix sockets' one (ABI 6): an abstract socket made outside the run is
 * out of its reach too, as in a sandbox (launch/tree.c); path sockets stay. A kernel without ABI 6 (before
 * 6.12, or Landlock off) leaves this out: the gate's files are then read-only by their names only
 * (docs/threat-model.md). Needs no_new_privs (the exec filter set it) or CAP_SYS_ADMIN.
 */
static int scope_outside(void) {
  struct {
    uint64_t handled_access_fs, handled_access_net, scoped;
  } a = {0, 0, 1ULL << 0};
  if (syscall(SYS_landlock_create_ruleset, NULL, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */) < 6) return 0;
  int fd = (int)syscall(SYS_landlock_create_ruleset, &a, sizeof a, 0);
  if (fd < 0) return -1;
  int r = (int)syscall(SYS_landlock_restrict_self, fd, 0);
  int e = errno;
  close(fd);
  errno = e;
  return r;
}

static int already_guarded(struct line *l, int count) {
  int any = 0;
  for (int i = 0; i < count; i++) {
    if (l[i].op != 'd') continue;
    struct statvfs v;
    if (statvfs(l[i].path, &v) || !(v.f_flag & ST_RDONLY)) return 0;
    any = 1;
  }
  return any;
}

int gate_guard_apply(const char *spec, char *why, size_t n) {
  static char buf[16384];
  struct line l[MAX_LINES];
  int count = 0;
  if (strlen(spec) >= sizeof buf) return gate_fail(why, n, "the guard's list is too long");
  strcpy(buf, spec);
  for (char *s = buf, *e; *s; s = e) {
    e = strchr(s, '\n');
    if (e) *e++ = 0;
    else e = s + strlen(s);
    if (!*s) continue;
    if (count == MAX_LINES || strlen(s) < 3 || s[1] != ' ' || s[2] != '/' || !strchr("dfhbw", s[0]))
      return gate_fail(why, n, "the guard's list has a line it does not know");
    l[count++] = (struct line){s[0], s + 2, -1};
  }
  if (own_namespace()) {
    if (errno == EPERM && already_guarded(l, count)) return 0;
    return fail(why, n, "cannot make a mount namespace for the gate's guard", NULL);
  }
  /* host mounts still come in (a disk mounted later), nothing made here goes out */
  /* EPERM here with CAP_SYS_ADMIN in a namespace of our own: another sandbox forbids mounts (a Landlock
   * domain does); the gate's state cannot be kept out of the run's reach, so nothing runs (fail closed) */
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
    return fail(why, n,
                errno == EPERM ? "another sandbox (Landlock?) forbids the mounts that keep gate-sh's rules, config and "
                                 "sockets out of the run's reach; run gate-sh outside it. cannot make mounts private"
                               : "cannot make mounts private",
                "/");
  for (int i = 0; i < count; i++)
    if (l[i].op == 'd' && make_dirs(l[i].path)) return fail(why, n, "cannot make", l[i].path);
  /* what is bound back inside hidden folders, opened before they are hidden */
  for (int i = 0; i < count; i++)
    if ((l[i].op == 'b' || l[i].op == 'w') && (l[i].fd = open(l[i].path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 &&
        errno != ENOENT)
      return fail(why, n, "cannot open", l[i].path);
  for (int i = 0; i < count; i++) {
    struct line *x = &l[i];
    if (x->op == 'd' || x->op == 'f') {
      struct stat st;
      if (lstat(x->path, &st)) {
        if (errno == ENOENT && x->op == 'f') continue;
        return fail(why, n, "cannot protect", x->path);
      }
      if (S_ISLNK(st.st_mode)) continue; /* the caller gives real paths: a link made since is not followed */
      if (mount(x->path, x->path, NULL, MS_BIND | MS_REC, NULL) || remount_ro(x->path))
        return fail(why, n, "cannot protect", x->path);
      continue;
    } else if (x->op == 'h') {
      struct stat st;
      if (lstat(x->path, &st)) {
        if (errno == ENOENT) continue;
        return fail(why, n, "cannot hide", x->path);
      }
      if (mount("tmpfs", x->path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k"))
        return fail(why, n, "cannot hide", x->path);
      continue;
    }
    /* b, w: in the order of the lines, so a folder bound back can have a part hidden again (the clients'
     * folder, with the run's own bound back into it) */
    if (x->fd < 0) continue;
    char from[64];
    snprintf(from, sizeof from, "/proc/self/fd/%d", x->fd);
    if (make_dirs(x->path) || mount(from, x->path, NULL, MS_BIND, NULL))
      return fail(why, n, "cannot bind back", x->path);
    if (x->op == 'b' && remount_ro(x->path)) return fail(why, n, "cannot bind back", x->path);
    close(x->fd);
  }
  for (int i = 0; i < count; i++)
    if (l[i].op == 'h' && access(l[i].path, F_OK) == 0 && remount_ro(l[i].path))
      return fail(why, n, "cannot hide", l[i].path);
  if (scope_outside()) return fail(why, n, "cannot keep the run out of other processes' /proc files (Landlock)", NULL);
  if (getuid() == 0 && drop_sys_admin()) return fail(why, n, "cannot drop CAP_SYS_ADMIN", NULL);
  return 0;
}
