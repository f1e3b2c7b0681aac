/*
 * gate-session: the holder of one session sandbox (docs/sandbox.md, "Session sandboxes").
 *
 *   gate-session [--net] [--mounts BWRAP OPTION... --]
 *   gate-session --keep FD                (run by bubblewrap: see below)
 *
 * Started by the daemon (src/daemon/session-sandbox.ts), never by a sandboxed process. It makes a new pid
 * namespace (and with --net a new network namespace with only loopback, up) and stays in it as its pid 1:
 * the namespaces every gated command of one session sandbox joins (shims/gate-launch --session-ns), and the
 * reaper of the background jobs those commands leave behind. Pid 1 going away ends the sandbox: the kernel
 * kills every process left in the pid namespace. It goes when its stdin (a pipe from the daemon) closes —
 * the daemon stopped or died — or when the daemon kills it.
 *
 * With --mounts it also holds a mount namespace built by bubblewrap with those options (the sandbox key's
 * mounts, src/sandbox/session-join.ts; never the host sockets' masks, which each command joining mounts in
 * a namespace of its own, gate-masks.h: sockets come and go, and the held mounts must not): pid 1 runs `BWRAP
 * OPTION... -- gate-session --keep FD`, whose
 * keeper, inside the new mounts, hands its mount namespace back over FD with the digest of its mounts
 * (gate-proc.h) and exits. Pid 1 keeps that namespace open on descriptor 3 for the commands that join it
 * (shims/gate-launch enters it instead of running bubblewrap again). A namespace that cannot be built
 * leaves the holder without one: commands then build their mounts themselves, as before. Told `check`
 * (a command found the mounts changed: a folder they bind was removed on the host), pid 1 looks at them
 * itself and, when they did change, builds them again (its jobs stay; commands then join the new ones).
 *
 * Protocol on stdout, one line each (the daemon reads them; pids as the host sees them where said):
 *   ready <host pid of pid 1> [3 <mount lines> <mount digest, hex>]
 *                                      the namespaces exist, loopback is up (and the mounts are held)
 *   job <host pid> <pid inside>        a process became pid 1's child: its command ended, it lives on
 *   exit <pid inside> <wait status>    pid 1 reaped a child (a job, or a short-lived orphan)
 *   mounts 3 <lines> <digest> | mounts none
 *                                      after `check` found the held mounts changed: built again, or not
 *   error <message>                    nothing was made; the process exits 1
 * On stdin: `killall\n` kills every process of the namespace but pid 1; `check\n` (see above); EOF ends
 * the sandbox.
 *
 * Trust boundary: the jobs share this pid namespace and run as the same uid, without capabilities. Pid 1 is
 * not dumpable, so they cannot open its /proc files (its root is the host's filesystem); as a namespace's
 * init it gets no signal from inside that it has no handler for, and it installs none. Its argv is the
 * daemon's own (the mounts of a plan the daemon made, its own bubblewrap: src/daemon/session-sandbox.ts),
 * never a request's. It runs outside every sandbox, so it runs with the least it needs, before anything
 * else (harden below): no_new_privs, only the capabilities that making namespaces and bubblewrap's mounts
 * take, and a seccomp filter of its own; bubblewrap and the keeper inherit all three. Not pure: it is the
 * process that holds the namespaces.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <stddef.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gate-masks.h"
#include "gate-proc.h"
#include "gate-shared.h"

/* How often pid 1 looks for newly adopted children (a job's "started" record comes at most this late). */
#define SCAN_MS 250
#define MAX_JOBS 4096

static void say(const char *fmt, long a, long b) {
  char line[128];
  int n = snprintf(line, sizeof line, fmt, a, b);
  if (n > 0) {
    ssize_t w = write(1, line, (size_t)n);
    (void)w;
  }
}

/* "error <errno> <what>: <text>": the daemon acts on the errno (src/daemon/session-sandbox.ts), the text is for
 * people. */
static void fail(const char *what) {
  char line[512];
  int e = errno;
  int n = snprintf(line, sizeof line, GATE_HOLDER_SAYS_ERROR " %d %s: %s\n", e, what, strerror(e));
  if (n > 0) {
    ssize_t w = write(1, line, (size_t)n);
    (void)w;
  }
  _exit(1);
}

#if defined(__x86_64__)
#define HOLDER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HOLDER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "gate-session knows the system call numbers of x86_64 and aarch64 only"
#endif

/* What the holder keeps: making namespaces and mounts (bubblewrap as root: SYS_ADMIN, SYS_CHROOT, SETUID,
 * SETGID), bringing loopback up (NET_ADMIN), finding the folders it binds (DAC_READ_SEARCH). Gone: writing
 * or chmod-ing others' files (DAC_OVERRIDE, FOWNER, CHOWN), ptrace, modules, raw I/O, and the rest. */
static const int KEEP_CAPS[] = {CAP_SYS_ADMIN, CAP_SYS_CHROOT, CAP_SETUID,
                                CAP_SETGID,    CAP_NET_ADMIN,  CAP_DAC_READ_SEARCH};

/* System calls the holder, bubblewrap and the keeper never make: refused (EPERM). Any other architecture's
 * calls (compat, x32) end the process: the numbers below are the native ones only. */
static const int DENIED_CALLS[] = {
    __NR_ptrace,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
    __NR_kexec_load,
    __NR_kexec_file_load,
    __NR_init_module,
    __NR_finit_module,
    __NR_delete_module,
    __NR_bpf,
    __NR_perf_event_open,
    __NR_keyctl,
    __NR_add_key,
    __NR_request_key,
    __NR_reboot,
    __NR_swapon,
    __NR_swapoff,
    __NR_open_by_handle_at,
    __NR_name_to_handle_at,
    __NR_acct,
    __NR_settimeofday,
    __NR_clock_settime,
    __NR_userfaultfd,
    __NR_execveat,
#ifdef __NR_pidfd_getfd
    __NR_pidfd_getfd,
#endif
#ifdef __NR_iopl
    __NR_iopl,
    __NR_ioperm,
#endif
};

/* no_new_privs, the capabilities above only (bounding set, then permitted/effective/inheritable), and the
 * seccomp filter; -1 when any of it fails (the holder then makes nothing). */
static int harden(void) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  unsigned long long keep = 0;
  for (size_t i = 0; i < sizeof KEEP_CAPS / sizeof KEEP_CAPS[0]; i++) keep |= 1ULL << KEEP_CAPS[i];
  /* (a user other than root has no capabilities to bound, nor the CAP_SETPCAP to do it) */
  for (int c = 0; c <= 63 && geteuid() == 0; c++) {
    if (keep & (1ULL << c)) continue;
    if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL) return -1; /* EINVAL: past the kernel's last */
  }
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof d);
  if (syscall(SYS_capget, &h, d)) return -1;
  for (int i = 0; i < 2; i++) {
    __u32 k = (__u32)(keep >> (32 * i));
    d[i].effective &= k;
    d[i].permitted &= k;
    d[i].inheritable &= k;
  }
  if (syscall(SYS_capset, &h, d)) return -1;
  enum { N = sizeof DENIED_CALLS / sizeof DENIED_CALLS[0] };
  struct sock_filter f[N + 7];
  int n = 0;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HOLDER_AUDIT_ARCH, 1, 0);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  /* x32 calls (numbers with bit 30 set) on x86_64 are another table: refused with the rest */
  for (int i = 0; i < N; i++)
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)DENIED_CALLS[i], (__u8)(N + 1 - i), 0);
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 1, 0);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  struct sock_fprog prog = {(unsigned short)n, f};
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) ? -1 : 0;
}

static int loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  int r = ioctl(s, SIOCGIFFLAGS, &ifr);
  if (r == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    r = ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  close(s);
  return r;
}

/* The pids pid 1 has adopted and already reported: host pid → pid inside. */
static struct { long host, inside; } jobs[MAX_JOBS];
static int njobs;

/* The job's pid inside the sandbox: the last of NSpid's values. */
static long inside_pid(long host) {
  char buf[4096];
  const char *v = gate_status_field(host, "\nNSpid:", buf, sizeof buf);
  const char *last = v ? strrchr(v, '\t') : NULL;
  return last ? strtol(last + 1, NULL, 10) : -1;
}

static void scan(long self) {
  char buf[16384];
  if (!gate_children(self, buf, sizeof buf)) return;
  for (char *p = buf; *p;) {
    char *e;
    long h = strtol(p, &e, 10);
    if (e == p) break;
    p = e;
    while (*p == ' ' || *p == '\n') p++;
    int known = 0;
    for (int i = 0; i < njobs; i++)
      if (jobs[i].host == h) {
        known = 1;
        break;
      }
    if (known || njobs >= MAX_JOBS) continue;
    long in = inside_pid(h);
    if (in <= 0) continue;
    jobs[njobs].host = h;
    jobs[njobs].inside = in;
    njobs++;
    say(GATE_HOLDER_SAYS_JOB " %ld %ld\n", h, in);
  }
}

static void reap(void) {
  int st;
  pid_t w;
  while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
    for (int i = 0; i < njobs; i++)
      if (jobs[i].inside == w) {
        jobs[i] = jobs[--njobs];
        break;
      }
    say(GATE_HOLDER_SAYS_EXIT " %ld %ld\n", (long)w, (long)st);
  }
}

static long host_pid_of_self(void) {
  char buf[32];
  /* /proc is the host's procfs (this process keeps the daemon's mounts): its "self" is the host pid */
  ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
  if (n <= 0) return -1;
  buf[n] = 0;
  return strtol(buf, NULL, 10);
}

/* The keeper, run by bubblewrap inside the new mounts: its mount namespace and the digest of its mounts
 * go back over fd; then it exits (the namespace lives on in pid 1's descriptor). */
static int keep(const char *fdarg) {
  int fd = atoi(fdarg);
  int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  unsigned long long digest = 0;
  long lines = gate_mounts_digest(AT_FDCWD, -1, &digest);
  if (ns < 0 || lines <= 0) return 1;
  struct {
    long lines;
    unsigned long long digest;
  } what = {lines, digest};
  char ctl[CMSG_SPACE(sizeof(int))];
  memset(ctl, 0, sizeof ctl);
  struct iovec iov = {&what, sizeof what};
  struct msghdr m = {0};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctl;
  m.msg_controllen = sizeof ctl;
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &ns, sizeof ns);
  return sendmsg(fd, &m, MSG_NOSIGNAL) == (ssize_t)sizeof what ? 0 : 1;
}

/* Pid 1 builds the mount namespace with bubblewrap (argv: BWRAP OPTION... up to "--") and keeps it on
 * descriptor 3; 0 when held, with its mount lines and digest. Nothing of it is left when it fails. */
static int hold_mounts(char **argv, long *lines, unsigned long long *digest) {
  char self[PATH_MAX];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  int n = 0;
  while (argv[n] && strcmp(argv[n], "--")) n++;
  if (sl <= 0 || !argv[n] || n < 1) return -1;
  self[sl] = 0;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) return -1;
  pid_t k = fork();
  if (k < 0) {
    close(sv[0]);
    close(sv[1]);
    return -1;
  }
  if (k == 0) {
    int fd = open("/dev/null", O_RDWR);
    if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(sv[1], 3) < 0) _exit(1);
    char fdarg[] = "3", pidarg[16];
    /* bubblewrap mounts a /proc of its own only for a pid namespace it is told of (else it binds the
     * host's): this one, which this child is already in */
    int pidns = open("/proc/self/ns/pid", O_RDONLY);
    char **a = calloc((size_t)n + 7, sizeof *a);
    if (pidns < 0 || !a) _exit(1);
    snprintf(pidarg, sizeof pidarg, "%d", pidns);
    a[0] = argv[0];
    a[1] = "--pidns";
    a[2] = pidarg;
    /* the options, but the host sockets' masks: each command joining mounts its own (gate-masks.h) */
    int m = 3;
    for (int i = 1; i < n; i++) {
      if (i + 2 < n && gate_mask_at(argv, i)) {
        i += 2;
        continue;
      }
      a[m++] = argv[i];
    }
    a[m] = "--";
    a[m + 1] = self;
    a[m + 2] = "--keep";
    a[m + 3] = fdarg;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv(argv[0], a);
    _exit(127);
  }
  close(sv[1]);
  struct {
    long lines;
    unsigned long long digest;
  } what;
  char ctl[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {&what, sizeof what};
  struct msghdr m = {0};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctl;
  m.msg_controllen = sizeof ctl;
  int ns = -1;
  struct pollfd pf = {sv[0], POLLIN, 0};
  if (poll(&pf, 1, 20000) == 1 && recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC) == (ssize_t)sizeof what) {
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (c && c->cmsg_type == SCM_RIGHTS) memcpy(&ns, CMSG_DATA(c), sizeof ns);
  }
  close(sv[0]);
  if (ns < 0) kill(k, SIGKILL); /* (held: bubblewrap ends with its keeper) */
  int st;
  while (waitpid(k, &st, 0) < 0 && errno == EINTR) {}
  if (ns < 0 || dup2(ns, 3) < 0) {
    if (ns >= 0) close(ns);
    return -1;
  }
  if (ns != 3) close(ns);
  *lines = what.lines;
  *digest = what.digest;
  return 0;
}

/* hold_mounts, tried three times: a host path the plan binds (a protected folder) may go away while
 * bubblewrap mounts it. */
static int hold_mounts_tries(char **argv, long *lines, unsigned long long *digest) {
  for (int t = 0; t < 3; t++)
    if (hold_mounts(argv, lines, digest) == 0) return 0;
  return -1;
}

/* "<what> [<pid> ]3 <lines> <digest>": the held mounts, as the daemon reads them. */
static void say_held(const char *what, long pid, long lines, unsigned long long digest) {
  char line[160];
  int n = pid > 0 ? snprintf(line, sizeof line, "%s %ld 3 %ld %llx\n", what, pid, lines, digest)
                  : snprintf(line, sizeof line, "%s 3 %ld %llx\n", what, lines, digest);
  if (n > 0) {
    ssize_t w = write(1, line, (size_t)n);
    (void)w;
  }
}

/* `check`: the held mounts (descriptor 3) looked at from inside and left again (back to this process's own
 * mount namespace, descriptor 4); when they changed, built again. Says so only when they changed. */
static void check_mounts(char **mounts, long *lines, unsigned long long *digest) {
  unsigned long long d = 0;
  int same = setns(3, CLONE_NEWNS) == 0 && gate_mounts_digest(AT_FDCWD, *lines, &d) >= *lines && d == *digest;
  if (setns(4, CLONE_NEWNS) || chdir("/")) fail("cannot come back from the held mounts");
  if (same) return;
  if (hold_mounts_tries(mounts, lines, digest)) {
    close(3);
    say(GATE_HOLDER_SAYS_MOUNTS " none\n", 0, 0);
    return;
  }
  say_held(GATE_HOLDER_SAYS_MOUNTS, 0, *lines, *digest);
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--keep")) return keep(argv[2]);
  int net = argc > 1 && !strcmp(argv[1], "--net");
  pid_t daemon_pid = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != daemon_pid) _exit(1);
  signal(SIGPIPE, SIG_IGN);
  if (harden()) fail("cannot drop its privileges (no_new_privs, capabilities, seccomp)");
  if (unshare(CLONE_NEWPID | (net ? CLONE_NEWNET : 0)))
    fail(net ? "cannot make the pid and network namespaces" : "cannot make the pid namespace");
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  pid_t init = fork();
  if (init < 0) fail("cannot start the holder");
  if (init > 0) {
    /* the outer process only waits: its death (the daemon's SIGKILL) takes pid 1 with it */
    close(0);
    int st;
    while (waitpid(init, &st, 0) < 0 && errno == EINTR) {}
    _exit(0);
  }
  /* the parent is outside the namespace (getppid() says 0): a death before this prctl still ends pid 1
   * through stdin, which the daemon closes when it ends the sandbox */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL)) _exit(1);
  prctl(PR_SET_DUMPABLE, 0);
  if (chdir("/")) fail("chdir /");
  if (net && loopback_up()) fail("cannot bring loopback up");
  char **mounts = NULL;
  for (int i = 1; i < argc - 1; i++)
    if (!strcmp(argv[i], "--mounts")) {
      mounts = argv + i + 1;
      break;
    }
  long lines = 0;
  unsigned long long digest = 0;
  int held = mounts && hold_mounts_tries(mounts, &lines, &digest) == 0;
  /* this process's own mount namespace on 4, to come back to after a check (never inherited) */
  int own = held ? open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC) : -1;
  if (held && (own < 0 || (own != 4 && dup3(own, 4, O_CLOEXEC) < 0))) fail("cannot keep its own mount namespace");
  syscall(__NR_close_range, held ? 5u : 3u, ~0u, 0);
  int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) fail("signalfd");
  long self = host_pid_of_self();
  if (self <= 0) fail("cannot read its own pid");
  if (held) say_held(GATE_HOLDER_SAYS_READY, self, lines, digest);
  else say(GATE_HOLDER_SAYS_READY " %ld\n", self, 0);
  char cmd[64];
  size_t have = 0;
  for (;;) {
    struct pollfd pf[2] = {{0, POLLIN, 0}, {sigfd, POLLIN, 0}};
    int r = poll(pf, 2, SCAN_MS);
    if (r < 0 && errno != EINTR) _exit(1);
    if (pf[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si) {}
      /* a child that died before the next look is reported first (its zombie is still listed), so that
       * every job whose end is reported was reported as started */
      scan(self);
      reap();
    }
    if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(0, cmd + have, sizeof cmd - 1 - have);
      if (n <= 0) _exit(0); /* the daemon is gone: the kernel ends every process of the namespace */
      have += (size_t)n;
      cmd[have] = 0;
      char *nl;
      while ((nl = strchr(cmd, '\n'))) {
        *nl = 0;
        /* kill(-1) from a namespace's init reaches every process in it but itself */
        if (!strcmp(cmd, GATE_HOLDER_KILLALL)) kill(-1, SIGKILL);
        if (!strcmp(cmd, GATE_HOLDER_CHECK) && held) {
          check_mounts(mounts, &lines, &digest);
          held = fcntl(3, F_GETFD) >= 0;
        }
        size_t rest = have - (size_t)(nl + 1 - cmd);
        memmove(cmd, nl + 1, rest + 1);
        have = rest;
      }
      if (have >= sizeof cmd - 1) have = 0;
    }
    scan(self);
  }
}
