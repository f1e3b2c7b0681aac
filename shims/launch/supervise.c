/*
 * The supervisor's main loop (gate-launch): a child subreaper, so every process of the tree stays its
 * descendant (and its memory readable under Yama). It starts the relay and the workers, reaps children,
 * reports the tree root's status to the front, takes the sandbox down when the front is gone, and ends when
 * no filtered process is left (the listener hangs up) and the root was reaped. Trust boundary: the tree's
 * processes are its children; nothing it reads here is taken from them but their wait status.
 */
#define _GNU_SOURCE
#include "launch.h"
#include "../gate-proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void close_all_but(const int *keep, int n) {
  unsigned from = 3;
  for (int i = 0; i < n; i++) {
    if ((unsigned)keep[i] > from) syscall(__NR_close_range, from, (unsigned)keep[i] - 1, 0);
    from = (unsigned)keep[i] + 1;
  }
  syscall(__NR_close_range, from, ~0u, 0);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* In a session sandbox, bubblewrap's death takes only the command itself (--die-with-parent), and its
 * children would live on in the sandbox. Kill the command's process group too — bubblewrap made it a
 * session and group leader — as killing the group of a bash run by the caller would: what bash started with
 * `&` goes with it, what left the group (setsid, a daemon) stays, as under bash. */
void kill_command_group(pid_t root) {
  char buf[512];
  /* run without bubblewrap, the tree root is the command itself, its session's leader; else bubblewrap */
  if (getpgid(root) == root) kill(-root, SIGKILL);
  if (!gate_children(root, buf, sizeof buf)) return;
  for (char *p = buf, *e; *p; p = e) {
    long c = strtol(p, &e, 10);
    if (e == p) break;
    while (*e == ' ' || *e == '\n') e++;
    if (c > 0 && getpgid((pid_t)c) == (pid_t)c) kill(-(pid_t)c, SIGKILL);
  }
}

/* The held mounts changed (gate-join.h): this command builds its own; the daemon has the holder look at
 * them and build them again, so the next ones enter them again. One datagram, no reply; if it is lost, the
 * next command that finds them changed says so again. Sent by the supervisor, from its bound socket. */
void tell_stale(const struct launch *l, const struct gate_join *j) {
  char id[96], n1[24], n2[24];
  gate_new_id(id, sizeof id);
  struct gbuf m;
  gb_init(&m);
  gb_puts(&m, GATE_MSG_HEAD);
  gb_json_str(&m, id, strlen(id), 0);
  gb_puts(&m, GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_SESSION_SANDBOX_STALE) GATE_KEY(GATE_F_PID));
  gb_puts(&m, gate_num(n1, (unsigned long)j->holder, 10));
  gb_puts(&m, GATE_KEY(GATE_F_MNTNS));
  gb_puts(&m, gate_num(n2, j->mntns_ino, 10));
  gb_puts(&m, "}");
  /* unsent: the next command that finds the mounts changed says so again */
  if (!m.oom && relay_notify(l->conf.request_sock, m.p, m.len)) {}
  gb_free(&m);
}

/* One exited child of this thread reaped (its pid; status in *st), 0 when none has exited, -1 with ECHILD
 * when there is none. A child a worker follows with ptrace (follow.c) is that worker's to wait for: this
 * thread is in the tracer's thread group, so waitpid(-1) here would take the child's trace stops (and the
 * worker would wait forever); each child is looked at with WNOWAIT and only an exited one reaped. */
static pid_t reap_one(const struct launch *l, int *st) {
  char path[64];
  if (!l->trace) return waitpid(-1, st, WNOHANG | __WNOTHREAD);
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)syscall(SYS_gettid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return waitpid(-1, st, WNOHANG | __WNOTHREAD);
  struct gbuf b;
  gb_init(&b);
  char chunk[4096];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof chunk)) > 0) gb_put(&b, chunk, (size_t)n);
  close(fd);
  gb_put(&b, "", 1);
  pid_t found = -1;
  for (char *q = b.oom ? NULL : b.p; q && *q;) {
    char *end;
    long c = strtol(q, &end, 10);
    if (end == q) break;
    q = end;
    if (found < 0) found = 0;
    siginfo_t si;
    si.si_pid = 0;
    if (waitid(P_PID, (id_t)c, &si, WEXITED | WNOHANG | WNOWAIT | __WNOTHREAD) || si.si_pid != (pid_t)c) continue;
    if (si.si_code != CLD_EXITED && si.si_code != CLD_KILLED && si.si_code != CLD_DUMPED) continue;
    if (waitpid((pid_t)c, st, WNOHANG | __WNOTHREAD) == (pid_t)c) {
      found = (pid_t)c;
      break;
    }
  }
  gb_free(&b);
  if (found < 0) errno = ECHILD;
  return found;
}

/* Point fd at /dev/null (open with flags); left as it is when /dev/null cannot be opened. */
static void to_null(int fd, int flags) {
  int null = open("/dev/null", flags | O_CLOEXEC);
  if (null < 0) return;
  dup2(null, fd);
  close(null);
}

/* Every exited child reaped; the tree root's status, when it is among them, written to the front. Returns
 * whether the root is done (reaped now or before, or no child is left). */
static int reap_exited(const struct launch *l, int status_w, int root_done) {
  int st;
  pid_t w;
  while ((w = reap_one(l, &st)) > 0) {
    if (w != l->root || root_done) continue;
    root_done = 1;
    /* unwritten (the front gone): nobody is left to tell */
    if (write(status_w, &st, sizeof st) != (ssize_t)sizeof st) {}
    /* background jobs outlive the command, and this supervisor outlives them: it lets go of the caller's
     * stderr, as bash does, so a reader of that pipe is not kept waiting by the gate itself (a job's own
     * descriptors keep it open as under bash) */
    to_null(2, O_WRONLY);
  }
  return root_done || (w < 0 && errno == ECHILD);
}

void supervise(const struct launch *l, const struct gate_join *j, int status_w, int sigfd) {
  to_null(0, O_RDWR);
  to_null(1, O_RDWR);
  int keep[5] = {l->listener, status_w, sigfd, relay_ksock(), relay_dsock()};
  qsort(keep, 5, sizeof keep[0], cmp_int);
  close_all_but(keep, 5);
  /* (after the close: the audit log a preset's record goes to is opened here, and kept open) */
  if (l->presets) keep_plan_presets(&l->conf, l->presets);
  /* every waiting request of the tree holds its reply socket here until answered: the soft limit on
   * descriptors (often 1024) is raised to the hard one, for this process only */
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile); /* refused: fewer requests wait at once, each still answered */
  }
  relay_start(); /* no relay: nothing is paired, every exec is asked */
  struct seccomp_notif *own = NULL;
  /* nobody could answer an exec: the front stops the run (fail closed) */
  if (workers_start(l) && !(own = malloc(l->sizes.seccomp_notif))) _exit(126);
  /* a child that ended before SIGCHLD's disposition was set (front.c) has no signal left to say so: setting
   * SIG_DFL discards a pending SIGCHLD, blocked or not. A tree root that ends at once (its guard refused)
   * would leave this loop waiting for ever; one look now, then at each SIGCHLD */
  int root_done = reap_exited(l, status_w, 0), hup = 0;
  while (!(hup && root_done)) {
    /* after the hang-up only children are left to reap (a negative fd is skipped by poll); the workers
     * take the notifications, so this thread waits for the hang-up alone (POLLHUP is always reported) */
    struct pollfd pf[2] = {{hup ? -1 : l->listener, own ? POLLIN : 0, 0}, {sigfd, POLLIN, 0}};
    if (poll(pf, 2, -1) < 0 && errno != EINTR) break;
    int taken = !hup && own && (pf[0].revents & POLLIN) && workers_take_one(l, own) == 0;
    if (!taken && !hup && (pf[0].revents & (POLLHUP | POLLERR))) hup = 1; /* no filtered process left */
    if (!(pf[1].revents & POLLIN)) continue;
    struct signalfd_siginfo si;
    while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
      /* the front is gone before the command ended (its spawner died): take the sandbox down with it, as
       * bubblewrap's --die-with-parent would have, then finish as usual */
      if ((int)si.ssi_signo == FRONT_GONE && !root_done) {
        if (j->pidns >= 0) kill_command_group(l->root);
        kill(l->root, SIGKILL);
      }
    root_done = reap_exited(l, status_w, root_done);
  }
  workers_drain(); /* the workers answering the last notifications finish before the process goes */
  gate_reply_release(); /* the workers' kept reply socket, if they asked more than once */
  relay_remove();
  _exit(0);
}
