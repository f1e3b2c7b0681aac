/*
 * gate-launch's entry (gate_launch, ../gate-launch.h) and its front: the process the caller spawned and
 * signals. It reads the arguments, joins a session sandbox's namespaces, forks the supervisor (which forks
 * the tree root: supervise.c, tree.c), then forwards the caller's signals to the tree root and exits with
 * its status. Trust boundary: the arguments and the GATE_* variables are the run plan's (gate-sh's or the
 * daemon's); a failure before the program runs exits 126 with a `gate-sh: exec gate: ` line.
 */
#define _GNU_SOURCE
#include "launch.h"
#include "../gate-launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

static struct launch L;
/* joining a session sandbox (gate-join.h): --session-ns */
static struct gate_join J = {.pidns = -1, .mntns = -1, .folder_tree = -1};

#define NOT_RUN(prog, why) gate_die(126, "exec gate: ", prog, ": not run: ", why)

static int pass_on(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (!WIFSIGNALED(st)) return 126;
  int sig = WTERMSIG(st);
  gate_end_by_signal(sig); /* (the tree root dumped core already, if it was going to) */
  return 128 + sig;
}

static int has_arg(char *const argv[], const char *a) {
  for (int i = 0; argv[i]; i++)
    if (!strcmp(argv[i], a)) return 1;
  return 0;
}

/* Network "rules" (src/sandbox/network-bridge.ts): bubblewrap's command is `gate-netbridge PORT SOCKET --
 * COMMAND...`, which starts COMMAND itself: that exec is the plan's too. The bridge must be this launcher's
 * own (`dir`, read-only in every sandbox) and the command after bubblewrap's `--`; the bridge runs no other
 * program and nothing else runs in the tree before it, so this third expected exec is the bridge's.
 * NULL when the plan is not so. */
static const char *bridged_command(char *const prog[], const char *then, const char *dir) {
  char real[PATH_MAX];
  size_t n = strlen(dir);
  if (!realpath(then, real) || strncmp(real, dir, n) || strcmp(real + n, "/gate-netbridge")) return NULL;
  int i = 1;
  while (prog[i] && strcmp(prog[i], "--")) i++;
  if (!prog[i] || !prog[i + 1] || strcmp(prog[i + 1], then)) return NULL;
  for (int k = 2; k <= 4; k++)
    if (!prog[i + k]) return NULL;
  return !strcmp(prog[i + 4], "--") && prog[i + 5] && prog[i + 5][0] == '/' ? prog[i + 5] : NULL;
}

/* A closed stdin/stdout/stderr (`<&-`) is a free number the next pipe or socket would take, and
 * supervise() points 0 and 1 at /dev/null: an internal descriptor there is lost (the relay socket on fd 0
 * made every later exec fail). Hold each closed one with /dev/null, close-on-exec, so the payload still
 * starts with it closed, as under bash. */
static void hold_closed_stdio(void) {
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int n = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (n >= 0 && n != fd) close(n); /* lower ones are held already, so n == fd */
    }
}

/* The supervisor ends before any tree exists: the front gets 126 and no root. */
static _Noreturn void supervisor_failed(int status_w) {
  int st = 126 << 8;
  pid_t none = 0;
  /* unwritten: the front reads the pipe's end and says the supervisor did not start, 126 all the same */
  if (write(status_w, &none, sizeof none) != (ssize_t)sizeof none) _exit(0);
  if (write(status_w, &st, sizeof st) != (ssize_t)sizeof st) _exit(0);
  _exit(0);
}

/* The listener's sizes, as the kernel says (or its headers, on a kernel that does not say). */
static void notif_sizes(struct seccomp_notif_sizes *s) {
  if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, s)) {
    s->seccomp_notif = sizeof(struct seccomp_notif);
    s->seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
  }
  if (s->seccomp_notif < sizeof(struct seccomp_notif)) s->seccomp_notif = sizeof(struct seccomp_notif);
  if (s->seccomp_notif_resp < sizeof(struct seccomp_notif_resp))
    s->seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
}

/* The supervisor: forks the tree root, takes its listener, supervises. Never returns. */
static _Noreturn void supervisor(char **prog, const char *path, const char *argv0, int die_with_parent, pid_t front,
                                 int status_w, int sp[2], const sigset_t *oldmask, const char *outer_ksock) {
  /* not SIGKILL: after a normal end the supervisor still removes its sockets */
  if (die_with_parent && (prctl(PR_SET_PDEATHSIG, FRONT_GONE) || getppid() != front))
    NOT_RUN(prog[0], "its caller is gone");
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  /* in a session sandbox the jobs outlive the command and their supervisor must outlive the caller's
   * process group being killed (a timeout kills the group): a group of its own */
  if (J.pidns >= 0) setpgid(0, 0);
  /* the supervisor outlives interruptions meant for the command; only the tree's end stops it */
  for (const int *s = launch_forwarded; *s; s++) signal(*s, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTSTP, SIG_IGN);
  signal(SIGTTIN, SIG_IGN);
  signal(SIGTTOU, SIG_IGN);
  char rerr[512];
  if (relay_name(&L, rerr, sizeof rerr)) {
    gate_msg("exec gate: ", prog[0], ": not run: ", rerr);
    supervisor_failed(status_w);
  }
  /* the plan's own first exec is the command's, or bubblewrap's when the mounts changed meanwhile */
  if (J.direct) L.joined = J.command[0];
  int inside = gate_join_born_inside(&J, 1);
  pid_t root = fork();
  if (inside && root != 0) gate_join_born_inside(&J, 0);
  if (root < 0) gate_die_errno(126, "exec gate: ", prog[0], ": not run");
  if (root == 0) {
    close(sp[0]);
    close(status_w);
    setenv(GATE_VAR_KERNEL_SOCK, relay_path(), 1);
    relay_close();
    if (argv0) prog[0] = (char *)argv0;
    tree_root(&J, sp[1], path, prog, oldmask, outer_ksock);
  }
  close(sp[1]);
  /* the run's client folder is the tree root's to attach (gate-join-folder.c), not the supervisor's to keep */
  if (J.folder_tree >= 0) close(J.folder_tree), J.folder_tree = -1;
  /* unwritten (the front gone): the tree's root is killed by nobody, and ends with its stdio */
  if (write(status_w, &root, sizeof root) != (ssize_t)sizeof root) {}
  /* the relay's sockets bound while the tree root installs its filter (and applies the guard): no exec of the
   * tree passes before the workers start (supervise), after these; the root is killed when they fail */
  if (relay_open(rerr, sizeof rerr)) {
    gate_msg("exec gate: ", prog[0], ": not run: ", rerr);
    kill(root, SIGKILL);
    int st;
    while (waitpid(root, &st, 0) < 0 && errno == EINTR) {}
    st = 126 << 8;
    if (write(status_w, &st, sizeof st) != (ssize_t)sizeof st) {}
    relay_remove();
    _exit(0);
  }
  gate_reuse_open(L.conf.request_sock); /* no epoch file (an older daemon): nothing is reused */
  if (J.stale) tell_stale(&L, &J);
  int why;
  L.listener = filter_recv(sp[0], &why);
  /* a nested tree root goes on once it hears the supervisor started (tree.c): unsent, it stops (126) */
  if (L.listener < 0 && why < 0 && send(sp[0], "G", 1, MSG_NOSIGNAL) != 1) {}
  close(sp[0]);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigaddset(&chld, FRONT_GONE);
  /* SIGCHLD only for children that end: a worker's follow stops every exec'ing process at its exec
   * (follow.c), and each trace stop would otherwise wake this thread to look for an exited child (nine
   * system calls and a wake-up per exec, docs/history/2026-11-measurements.md); the worker's own waitpid is woken
   * all the same. Set after the tree root was forked: its dispositions are its own. Setting it discards a
   * SIGCHLD already pending (the root may have ended by now): supervise() looks for ended children once first. */
  struct sigaction nostop = {.sa_handler = SIG_DFL, .sa_flags = SA_NOCLDSTOP};
  sigemptyset(&nostop.sa_mask);
  sigaction(SIGCHLD, &nostop, NULL);
  int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (L.listener < 0) {
    if (why > 0)
      gate_msg("exec gate: ", prog[0],
               ": not run: the kernel refused the exec filter (seccomp user notification): ", strerror(why));
    else if (why == 0) gate_msg("exec gate: ", prog[0], ": not run: the exec filter's listener did not arrive", NULL);
    if (why >= 0) kill(root, SIGKILL);
    int st;
    while (waitpid(root, &st, 0) < 0 && errno == EINTR) {}
    if (why >= 0) st = 126 << 8;
    if (write(status_w, &st, sizeof st) != (ssize_t)sizeof st) {}
    relay_remove();
    _exit(0);
  }
  prctl(PR_SET_DUMPABLE, 0);
  L.root = root;
  notif_sizes(&L.sizes);
  char kids[64];
  snprintf(kids, sizeof kids, "/proc/self/task/%d/children", (int)syscall(SYS_gettid));
  L.trace = access(kids, R_OK) == 0;
  supervise(&L, &J, status_w, sigfd);
}

/* The front: the tree root's status, the caller's signals passed on to it. */
static int front_loop(const char *prog0, int status_r, const sigset_t *fwd) {
  pid_t root = 0;
  ssize_t n;
  do n = read(status_r, &root, sizeof root);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)sizeof root) NOT_RUN(prog0, "the exec supervisor did not start");
  int sigfd = signalfd(-1, fwd, SFD_CLOEXEC);
  for (;;) {
    struct pollfd pf[2] = {{status_r, POLLIN, 0}, {sigfd, POLLIN, 0}};
    if (poll(pf, 2, -1) < 0 && errno != EINTR) break;
    if (pf[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      int sig = read(sigfd, &si, sizeof si) == (ssize_t)sizeof si ? (int)si.ssi_signo : 0;
      if (sig && sig != SIGCHLD && sig != FRONT_GONE && root > 0) kill(root, sig);
    }
    if (!(pf[0].revents & (POLLIN | POLLHUP))) continue;
    int st;
    do n = read(status_r, &st, sizeof st);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof st) return pass_on(st);
    /* the supervisor is gone before the command ended: no exec can pass any more (the kernel answers
     * ENOSYS); end the command rather than leave it running half-able */
    if (root > 0 && J.pidns >= 0) kill_command_group(root);
    if (root > 0) kill(root, SIGKILL);
    gate_msg("exec gate: the exec supervisor of this run is gone; the run was stopped (nothing more could be "
             "checked)",
             NULL, NULL, NULL);
    return 126;
  }
  return 126;
}

/* Joining a session sandbox (--pidns), bubblewrap forks intermediate processes that exit at once, and its
 * child sets its parent-death signal while its parent may still be such an intermediate: when that one's
 * exit comes late (a busy machine), the kernel SIGKILLs the sandbox's pid 1 and the command with it (seen
 * as exit 137 in about 1 of 1,500 concurrent runs). There the option is left out of bubblewrap's arguments;
 * the front's death still takes the command down (the supervisor kills the command's group and
 * bubblewrap), and so does the supervisor's (the front does the same). */
static void drop_die_with_parent(char **prog) {
  int o = 0, command = 0;
  for (int i = 0; prog[i]; i++) {
    command = command || !strcmp(prog[i], "--"); /* the command's own words are never touched */
    if (command || strcmp(prog[i], "--die-with-parent")) prog[o++] = prog[i];
  }
  prog[o] = NULL;
}

int gate_launch(int argc, char **argv) {
  char err[1200];
  launch_note_dispositions();
  hold_closed_stdio();
  /* --argv0 NAME: the program's argv[0] when it is not the program's path (an escalated command) */
  const char *argv0 = NULL, *session = NULL;
  /* --presets REPLY: answers the daemon decided for this run with its plan (reuse.c, keep_plan_presets) */
  if (argc > 3 && !strcmp(argv[1], "--presets")) {
    L.presets = argv[2];
    argv += 2;
    argc -= 2;
  }
  if (argc > 3 && !strcmp(argv[1], "--session-ns")) {
    session = argv[2];
    argv += 2;
    argc -= 2;
  }
  if (argc > 3 && !strcmp(argv[1], "--argv0")) {
    argv0 = argv[2];
    argv += 2;
    argc -= 2;
  }
  if (argc < 2 || argv[1][0] != '/')
    gate_die(126,
             "exec gate: usage: gate-launch [--presets REPLY] [--session-ns PID:PIDNS:NETNS] [--argv0 NAME] "
             "/absolute/program [args...]",
             NULL, NULL, NULL);
  char **prog = argv + 1;
  const char *path = prog[0];
  if (session) {
    if (gate_join_open(&J, session, err, sizeof err)) NOT_RUN(prog[0], err);
    /* PROGRAM --pidns FD ARGS...: argv has room (the two --session-ns words before it) */
    memmove(prog - 2, prog, sizeof *prog);
    prog -= 2;
    prog[1] = "--pidns";
    prog[2] = J.pidns_arg;
  }
  /* this supervisor talks to the daemon itself; a nested launcher's tree keeps the enclosing one's */
  const char *outer = getenv(GATE_VAR_KERNEL_SOCK);
  char *outer_ksock = outer ? strdup(outer) : NULL;
  unsetenv(GATE_VAR_KERNEL_SOCK);
  if (gate_conf_from_env(&L.conf, err, sizeof err)) NOT_RUN(prog[0], err);
  char self[PATH_MAX];
  if (read_link("/proc/self/exe", self, sizeof self))
    gate_die(126, "exec gate: ", prog[0], ": not run: cannot find the gate's own folder", NULL);
  *strrchr(self, '/') = 0;
  gate_join(L.own_preload, sizeof L.own_preload, self, "/libgate.so", NULL, NULL);
  gate_join(L.own_path, sizeof L.own_path, self, "/bin", NULL, NULL);
  L.expect[L.nexpect++] = prog[0];
  const char *then = getenv(GATE_VAR_INNER_PROGRAM);
  if (then && *then == '/') {
    L.expect[L.nexpect++] = then;
    const char *bridged = bridged_command(prog, then, self);
    if (bridged) L.expect[L.nexpect++] = bridged;
  }
  /* under bubblewrap's --die-with-parent the sandbox goes when its spawner does: keep that through us */
  int die_with_parent = has_arg(prog, "--die-with-parent");
  if (J.pidns >= 0 && die_with_parent) drop_die_with_parent(prog);
  /* the host sockets' masks: the supervisor's (masks.c), or, joining held mounts, the tree root's */
  masks_plan(prog);
  J.masks = masks_paths(&J.nmasks);
  if (J.pidns >= 0) gate_join_plan(&J, prog);
  pid_t spawner = getppid();
  if (die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != spawner))
    NOT_RUN(prog[0], "its caller is gone");
  sigset_t fwd, oldmask;
  sigemptyset(&fwd);
  for (const int *s = launch_forwarded; *s; s++) sigaddset(&fwd, *s);
  sigaddset(&fwd, SIGCHLD);
  sigaddset(&fwd, FRONT_GONE);
  sigprocmask(SIG_BLOCK, &fwd, &oldmask);
  int status[2], sp[2];
  if (pipe2(status, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp))
    gate_die_errno(126, "exec gate: ", prog[0], ": not run");
  pid_t front = getpid();
  pid_t sup = fork();
  if (sup < 0) gate_die_errno(126, "exec gate: ", prog[0], ": not run: cannot start the exec supervisor");
  if (sup == 0) {
    close(status[0]);
    supervisor(prog, path, argv0, die_with_parent, front, status[1], sp, &oldmask, outer_ksock);
  }
  close(status[1]);
  /* the front keeps nothing of the caller's but stdio: a pipe the command holds ends when the command
   * (and what it started) lets go of it, as without the launcher */
  int keep[1] = {status[0]};
  close_all_but(keep, 1);
  return front_loop(prog[0], status[0], &fwd);
}
