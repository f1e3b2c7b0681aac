/*
 * Unit test of the host sockets' masks (shims/gate-masks.h, gate-masks.c): the plan's spelling taken out of
 * bubblewrap's options (all of them, or only those of gone sockets), and gate_masks_mount, which the
 * supervisor and a command joining held mounts use: a live socket masked read-only (connect() refused), a
 * socket already masked not masked twice, nothing made where nothing is (no file, no folder: no trace on
 * the host), something other than a socket left alone, and a failure to mask a socket that is there
 * reported with its index (the callers then refuse the run), as is a view whose /dev/null is not the null
 * device.
 * Not pure: the mount parts need root (a mount namespace of its own, a tmpfs in a fresh folder under /tmp,
 * all gone when it ends) and are skipped without it. TAP on stdout (tap.h).
 */
#define _GNU_SOURCE
#include "gate-masks.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char DIR_[] = "/tmp/gate-masks-XXXXXX";

static void argv_helpers(void) {
  char *in[] = {"bwrap",         "--ro-bind",           "/",         "/",         "--ro-bind-try",
                "/dev/null",     "/nonexistent/a.sock", "--ro-bind", "/dev/null", "/x",
                "--ro-bind-try", "/dev/null",           "/",         "--",        "cmd",
                "--ro-bind-try", "/dev/null",           "/y",        NULL};
  char *out[32], *paths[32];
  int np = -1;
  int n = gate_without_masks(in, 1, out, 0, paths, &np);
  ok(n == 11 && np == 2, "all masks out of the options: %d words left, %d paths", n, np);
  is_str(paths[0], "/nonexistent/a.sock", "the first mask's path");
  is_str(paths[1], "/", "the second's");
  ok(paths[2] == NULL && out[n] == NULL, "both lists end with NULL");
  is_str(out[4], "/dev/null", "a --ro-bind of /dev/null (a protected file) stays");
  is_str(out[6], "--", "the command's words after -- are the command's");
  is_str(out[10], "/y", "a mask-like word after -- stays");
  n = gate_without_gone_masks(in, 0, out);
  ok(n == 15, "only the gone socket's mask out (/ is there): %d words", n);
}

/* A listening Unix socket at path: its descriptor, or -1. */
static int listen_at(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 4)) return -1;
  return s;
}

/* connect() to path: 0, or its errno. */
static int connect_to(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int r = connect(s, (struct sockaddr *)&a, sizeof a) ? errno : 0;
  close(s);
  return r;
}

static long mount_lines(void) {
  int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  char buf[4096];
  long lines = 0;
  ssize_t n;
  while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < n; i++) lines += buf[i] == '\n';
  if (fd >= 0) close(fd);
  return lines;
}

static int is_null_device(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

/* gate_masks_mount in a child without CAP_SYS_ADMIN: its result and index, as one number (e * 100 + at + 1). */
static int unprivileged(char *paths[], int n) {
  pid_t pid = fork();
  if (pid == 0) {
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d)) _exit(99);
    d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
    if (syscall(SYS_capset, &h, d)) _exit(99);
    int at = -2, e = gate_masks_mount(paths, n, &at);
    _exit(e == EPERM && at == 0 ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void mounts(void) {
  if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
      mount("tmpfs", DIR_, "tmpfs", 0, "size=64k")) {
    ok(0, "a mount namespace of its own with a tmpfs: %s", strerror(errno));
    return;
  }
  char live[128], file[128], none[128], gone[128], other[128];
  snprintf(live, sizeof live, "%s/live.sock", DIR_);
  snprintf(file, sizeof file, "%s/file", DIR_);
  snprintf(none, sizeof none, "%s/none.sock", DIR_);
  snprintf(gone, sizeof gone, "%s/gone/x.sock", DIR_);
  snprintf(other, sizeof other, "%s/other.sock", DIR_);
  int s = listen_at(live);
  int f = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ok(s >= 0 && f >= 0 && connect_to(live) == 0, "a live socket, reached before its mask");
  char *paths[] = {live, file, none, gone};
  long before = mount_lines();
  int at = -2, e = gate_masks_mount(paths, 4, &at);
  ok(e == 0, "masked: %s", strerror(e));
  ok(is_null_device(live), "the socket's path is the null device now");
  ok(connect_to(live) == ECONNREFUSED, "connect() to it is refused");
  struct statvfs v;
  ok(statvfs(live, &v) == 0 && (v.f_flag & ST_RDONLY) && (v.f_flag & ST_NODEV), "the mask is read-only, nodev");
  struct stat st;
  ok(lstat(file, &st) == 0 && S_ISREG(st.st_mode), "a file where a socket was listed is left alone");
  ok(lstat(none, &st) && errno == ENOENT, "nothing is made where the socket is gone");
  snprintf(gone, sizeof gone, "%s/gone", DIR_);
  ok(lstat(gone, &st) && errno == ENOENT, "nor a folder for one whose folder is gone");
  ok(mount_lines() == before + 1, "one mount made, for the one live socket");
  e = gate_masks_mount(paths, 1, &at);
  ok(e == 0 && mount_lines() == before + 1, "a socket already masked is not masked again");
  /* fail closed: a socket that is there and cannot be masked is reported, by its index */
  int s2 = listen_at(other);
  char *others[] = {other};
  ok(s2 >= 0 && unprivileged(others, 1) == 0, "without CAP_SYS_ADMIN: EPERM for the socket at index 0");
  ok(connect_to(other) == 0, "(that socket is untouched)");
  /* a view whose /dev/null is not the null device: refused, index -1 */
  ok(mount(file, "/dev/null", NULL, MS_BIND, NULL) == 0, "/dev/null replaced by a file in this view");
  at = 0;
  e = gate_masks_mount(others, 1, &at);
  ok(e == ENODEV && at == -1, "no null device: ENODEV, index -1 (got %d, %d)", e, at);
  ok(connect_to(other) == 0, "(nothing mounted over the socket)");
  umount2("/dev/null", MNT_DETACH);
  close(s);
  close(s2);
  close(f);
  umount2(DIR_, MNT_DETACH);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  argv_helpers();
  if (geteuid() != 0) {
    printf("ok %d # skip not root: mount namespaces need it\n1..%d\n", tap_n + 1, tap_n + 1);
    return tap_failed ? 1 : 0;
  }
  if (!mkdtemp(DIR_)) return perror("mkdtemp"), 1;
  mounts();
  rmdir(DIR_);
  return tap_done();
}
