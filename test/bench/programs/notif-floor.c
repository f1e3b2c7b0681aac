/* Benchmark program (built with gcc -static by test/bench/kernel-gate.bench.ts): what the kernel layer's
 * mechanism alone costs an exec on this machine, with none of gate-sh's work. A child installs a seccomp
 * filter that sends every execve to a listener (SECCOMP_RET_USER_NOTIF) and hands the listener to its
 * parent, which answers each notification "continue" at once; the child then forks and execv's PROGRAM
 * N times, one after another, and prints each fork+exec+wait's wall time in milliseconds, one per line
 * (as exec-loop.c does). With --follow the parent also follows each exec to its end as gate-launch does
 * (ptrace seize, interrupt, the stop at PTRACE_EVENT_EXEC, detach). Not a gate: it lets everything
 * through. Usage: notif-floor [--follow] N PROGRAM [ARG...]
 *
 * The same for a whole gated call (test/bench/native.bench.ts): `notif-floor --respond SOCK` answers every
 * datagram on SOCK with one of the size of a plan (a daemon that does no work); `notif-floor --call SOCK
 * PROGRAM [ARG...]` makes one round trip of a pre-flight's size to it, then runs PROGRAM once under the
 * filter, every exec answered "continue" and followed, and exits with its status: the mechanisms a gated
 * call cannot do without (a client, one round trip, a supervisor outside the tree, a notification per
 * exec), with none of gate-sh's work. */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int send_fd(int sock, int fd) {
  char c = 0, ctl[CMSG_SPACE(sizeof(int))] = { 0 };
  struct iovec io = { &c, 1 };
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl };
  struct cmsghdr *h = CMSG_FIRSTHDR(&m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(h), &fd, sizeof fd);
  return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock) {
  char c, ctl[CMSG_SPACE(sizeof(int))] = { 0 };
  struct iovec io = { &c, 1 };
  struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl };
  if (recvmsg(sock, &m, 0) != 1) return -1;
  struct cmsghdr *h = CMSG_FIRSTHDR(&m);
  if (!h || h->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(h), sizeof fd);
  return fd;
}

/* The parent: answer every notification "continue" until the listener reports no filtered process left. */
static int answer_all(int listener, int follow) {
  struct seccomp_notif req;
  struct seccomp_notif_resp resp;
  for (;;) {
    struct pollfd pf = { listener, POLLIN, 0 };
    if (poll(&pf, 1, -1) < 0) continue;
    if (!(pf.revents & POLLIN) && pf.revents & (POLLHUP | POLLERR)) return 0; /* no filtered process left */
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req)) continue;
    memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    pid_t pid = (pid_t)req.pid;
    int traced = follow && ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXEC) == 0;
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    if (!traced) continue;
    int st;
    ptrace(PTRACE_INTERRUPT, pid, 0, 0);
    if (waitpid(pid, &st, __WALL) == pid && WIFSTOPPED(st)) ptrace(PTRACE_DETACH, pid, 0, 0);
  }
}

static int loop(int n, char **argv) {
  for (int i = 0; i < n; i++) {
    double t0 = now_ms();
    pid_t p = fork();
    if (p == 0) { execv(argv[0], argv); _exit(126); }
    int st;
    if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) { fprintf(stderr, "notif-floor: iteration %d failed\n", i); return 1; }
    printf("%.4f\n", now_ms() - t0);
  }
  return 0;
}


/* --respond SOCK: answer each datagram with a reply of a plan's size, to its sender. */
static int respond(const char *path) {
  int s = socket(AF_UNIX, SOCK_DGRAM, 0);
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  unlink(path);
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a)) { perror("notif-floor: bind"); return 1; }
  static char in[65536], out[2800];
  memset(out, 'p', sizeof out);
  for (;;) {
    struct sockaddr_un from;
    socklen_t fl = sizeof from;
    if (recvfrom(s, in, sizeof in, 0, (struct sockaddr *)&from, &fl) >= 0) sendto(s, out, sizeof out, 0, (struct sockaddr *)&from, fl);
  }
}

/* --call SOCK: one round trip of a pre-flight's size (from a reply socket of its own, as gate-sh's). */
static int round_trip(const char *path) {
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un me = { .sun_family = AF_UNIX }, to = { .sun_family = AF_UNIX };
  snprintf(me.sun_path, sizeof me.sun_path, "%s.%d", path, (int)getpid());
  snprintf(to.sun_path, sizeof to.sun_path, "%s", path);
  static char req[2000], rep[65536];
  memset(req, 'q', sizeof req);
  unlink(me.sun_path);
  int ok = s >= 0 && bind(s, (struct sockaddr *)&me, sizeof me) == 0 &&
           sendto(s, req, sizeof req, 0, (struct sockaddr *)&to, sizeof to) == (ssize_t)sizeof req && recv(s, rep, sizeof rep, 0) > 0;
  unlink(me.sun_path);
  if (s >= 0) close(s);
  return ok ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--respond")) return respond(argv[2]);
  int call = argc > 3 && !strcmp(argv[1], "--call");
  if (call) {
    if (round_trip(argv[2])) { perror("notif-floor: round trip"); return 1; }
    argv[2] = "--follow"; /* the call's execs are followed, as gate-launch follows them */
    argv += 1;
    argc -= 1;
  }
  if (argc < 3) return 2;
  int follow = !strcmp(argv[1], "--follow");
  argv += follow;
  if (argc - follow < 3) return 2;
  int n = atoi(argv[1]), sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) { perror("notif-floor: socketpair"); return 1; }
  pid_t child = fork();
  if (child < 0) { perror("notif-floor: fork"); return 1; }
  if (child) {
    close(sv[1]);
    int listener = recv_fd(sv[0]);
    if (listener < 0) { fprintf(stderr, "notif-floor: no listener\n"); return 1; }
    answer_all(listener, follow);
    int st;
    return waitpid(child, &st, 0) == child && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
  }
  close(sv[0]);
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { sizeof f / sizeof f[0], f };
  int listener = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -1 : (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (listener < 0 || send_fd(sv[1], listener)) { perror("notif-floor: seccomp"); return 1; }
  close(listener);
  close(sv[1]);
  if (call) { execv(argv[1], argv + 1); perror("notif-floor: exec"); _exit(127); }
  return loop(n, argv + 2);
}
