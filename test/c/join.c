/*
 * Unit test of a command joining a session sandbox's held mounts (shims/gate-join.c, gate_join_enter) when
 * they changed between the supervisor's look, before the fork, and the tree root's, from inside: a host
 * socket removed detaches its mask there. The tree root goes back to the host's mounts and folder, and
 * bubblewrap builds the mounts from the plan (-1, direct cleared); it used to end the command (126, "the
 * session sandbox's mounts changed as the command started"). Unchanged mounts are still entered; the plan's
 * host-socket masks are mounted in a namespace of the command's own (the held mounts carry none, and keep
 * their digest).
 * Not pure: needs root (mount namespaces); makes a namespace of its own with a tmpfs in a fresh folder under
 * /tmp, all gone when it ends. Skips without root. TAP on stdout (tap.h).
 */
#define _GNU_SOURCE
#include "gate-join.h"
#include "gate-proc.h"
#include "tap.h"

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char DIR_[] = "/tmp/gate-join-XXXXXX";

/* The keeper: a mount namespace of its own with a tmpfs on DIR_; 'u' on tell unmounts it, 's' binds a
 * listening socket at DIR_/held.sock there, 'c' connects to it; each step answered on done ('r' done, 'e'
 * not); ends when tell closes (the parent's end is the only one left). */
static pid_t keeper(int tell[2], int done[2]) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  close(tell[1]);
  close(done[0]);
  char c = 'r';
  if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
      mount("tmpfs", DIR_, "tmpfs", 0, "size=64k"))
    c = 'e';
  if (write(done[1], &c, 1) != 1) _exit(1);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s/held.sock", DIR_);
  int held = -1;
  while (read(tell[0], &c, 1) == 1) {
    if (c == 'u') {
      if (held >= 0) close(held), held = -1; /* (a socket bound there keeps the tmpfs busy) */
      c = umount(DIR_) ? 'e' : 'r';
    } else if (c == 's') {
      held = socket(AF_UNIX, SOCK_STREAM, 0);
      c = held >= 0 && bind(held, (struct sockaddr *)&a, sizeof a) == 0 && listen(held, 4) == 0 ? 'r' : 'e';
    } else {
      int s = socket(AF_UNIX, SOCK_STREAM, 0);
      c = connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 'r' : 'e';
      close(s);
    }
    if (write(done[1], &c, 1) != 1) _exit(1);
  }
  _exit(0);
}

/* The lines and digest of the mounts of namespace fd, as the holder records them. */
static long digest_of(int fd, unsigned long long *d) {
  int p[2];
  if (pipe(p)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    struct {
      long lines;
      unsigned long long d;
    } w = {-1, 0};
    if (setns(fd, CLONE_NEWNS) == 0) w.lines = gate_mounts_digest(AT_FDCWD, -1, &w.d);
    _exit(write(p[1], &w, sizeof w) == (ssize_t)sizeof w ? 0 : 1);
  }
  struct {
    long lines;
    unsigned long long d;
  } r = {-1, 0};
  if (read(p[0], &r, sizeof r) != (ssize_t)sizeof r) r.lines = -1;
  waitpid(pid, NULL, 0);
  close(p[0]);
  close(p[1]);
  *d = r.d;
  return r.lines;
}

/* gate_join_enter in a child: 0 entered (its mounts the keeper's), 1 fell back (the host's mounts and
 * folder again, direct cleared, stale set), else what went wrong (the child's exit status; 126: it died). */
static int enter(struct gate_join *j, pid_t keeper_pid) {
  pid_t pid = fork();
  if (pid == 0) {
    char kept[64], before[4096], after[4096];
    snprintf(kept, sizeof kept, "/proc/%d/ns/mnt", (int)keeper_pid);
    int host = open("/proc/self/ns/mnt", O_RDONLY);
    if (host < 0 || !getcwd(before, sizeof before)) _exit(3);
    const char *path = NULL;
    char **argv = NULL;
    struct stat k; /* (looked at first: with no capability left, the keeper's /proc files are out of reach) */
    if (stat(kept, &k)) _exit(3);
    int r = gate_join_enter(j, &path, &argv);
    struct stat in;
    if (r == 0)
      _exit(stat("/proc/self/ns/mnt", &in) == 0 && in.st_ino == k.st_ino && !strcmp(path, "/bin/true") ? 0 : 4);
    struct stat now, was;
    int home = fstat(host, &was) == 0 && stat("/proc/self/ns/mnt", &now) == 0 && now.st_ino == was.st_ino;
    _exit(home && getcwd(after, sizeof after) && !strcmp(before, after) && !j->direct && j->stale ? 1 : 5);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* gate_join_enter with the host-socket mask of path, in a child: 0 when it entered a mount namespace of its own
 * (not the keeper's) where path is the null device; else what went wrong. */
static int enter_masked(struct gate_join *j, pid_t keeper_pid, char *path) {
  pid_t pid = fork();
  if (pid == 0) {
    char kept[64];
    snprintf(kept, sizeof kept, "/proc/%d/ns/mnt", (int)keeper_pid);
    struct stat k, in, st;
    if (stat(kept, &k)) _exit(3);
    char *masks[] = {path, NULL};
    j->masks = masks;
    j->nmasks = 1;
    const char *prog = NULL;
    char **argv = NULL;
    if (gate_join_enter(j, &prog, &argv)) _exit(4);
    if (stat("/proc/self/ns/mnt", &in) || in.st_ino == k.st_ino) _exit(5);
    _exit(lstat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) ? 0 : 6);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* a child that dies (gate_die) must not print what the parent has */
  if (geteuid() != 0) {
    printf("ok 1 # skip not root: mount namespaces need it\n1..1\n");
    return 0;
  }
  if (!mkdtemp(DIR_)) return perror("mkdtemp"), 1;
  int tell[2], done[2];
  if (pipe(tell) || pipe(done)) return perror("pipe"), 1;
  pid_t k = keeper(tell, done);
  close(tell[0]);
  close(done[1]);
  char c = 0;
  ok(read(done[0], &c, 1) == 1 && c == 'r', "the keeper holds a mount namespace with a tmpfs");
  char ns[64];
  snprintf(ns, sizeof ns, "/proc/%d/ns/mnt", (int)k);
  int mntns = open(ns, O_RDONLY | O_CLOEXEC);
  struct gate_join j;
  memset(&j, 0, sizeof j);
  j.pidns = -1;
  j.folder_tree = -1;
  j.mntns = mntns;
  j.lines = digest_of(mntns, &j.digest);
  ok(mntns >= 0 && j.lines > 0, "its mounts' digest, as the holder records it (%ld lines)", j.lines);
  int r;
  static char *cmd[] = {"/bin/true", NULL};
  j.direct = 1;
  j.chdir = "/";
  j.command = cmd;
  r = enter(&j, k);
  ok(r == 0, "unchanged mounts: the command enters them (got %d)", r);
  c = 's';
  ok(write(tell[1], &c, 1) == 1 && read(done[0], &c, 1) == 1 && c == 'r', "a socket in the held mounts");
  j.lines = digest_of(mntns, &j.digest);
  char held[64];
  snprintf(held, sizeof held, "%s/held.sock", DIR_);
  r = enter_masked(&j, k, held);
  ok(r == 0, "its mask: mounted in a namespace of the command's own (got %d)", r);
  unsigned long long d = 0;
  ok(digest_of(mntns, &d) == j.lines && d == j.digest, "the held mounts are as they were");
  c = 'c';
  ok(write(tell[1], &c, 1) == 1 && read(done[0], &c, 1) == 1 && c == 'r', "the socket is reachable in them still");
  c = 'u';
  ok(write(tell[1], &c, 1) == 1 && read(done[0], &c, 1) == 1 && c == 'r', "a mount of theirs goes away");
  r = enter(&j, k);
  ok(r == 1, "changed since the supervisor looked: back in the host's mounts and folder, for bubblewrap (got %d)", r);
  close(tell[1]);
  waitpid(k, NULL, 0);
  rmdir(DIR_);
  return tap_done();
}
