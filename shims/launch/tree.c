/*
 * The tree root (gate-launch): the first process of the gated tree. It installs the exec filter and hands
 * its listener to the supervisor (filter.c), puts the caller's signals and mask back, applies the gate's
 * guard for a run without a sandbox (../gate-guard.c), scopes a sandbox on the host's network away from the
 * host's abstract Unix sockets (Landlock), joins a session sandbox's mounts when it runs the command without
 * bubblewrap (../gate-join.c), and execs the program (bubblewrap without the host sockets' masks, which the
 * supervisor mounts: masks.c). Trust boundary: from here on the process is the
 * tree's; every exec it makes, this one included, is the supervisor's to decide.
 */
#define _GNU_SOURCE
#include "launch.h"
#include "../gate-guard.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SIGNUM(s) s,
const int launch_forwarded[] = {GATE_FORWARDED_SIGNALS(SIGNUM) 0};
#undef SIGNUM

/* The signals besides the forwarded ones whose dispositions the front or the supervisor change (SIGPIPE and
 * the terminal's job-control stops, ignored there), 0-terminated. */
static const int own_dispositions[] = {SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, 0};
/* Those of both lists the launcher was started with ignored. */
static sigset_t caller_ignored;

void launch_note_dispositions(void) {
  sigemptyset(&caller_ignored);
  const int *lists[] = {launch_forwarded, own_dispositions};
  for (int l = 0; l < 2; l++)
    for (const int *s = lists[l]; *s; s++) {
      struct sigaction sa;
      if (!sigaction(*s, NULL, &sa) && sa.sa_handler == SIG_IGN) sigaddset(&caller_ignored, *s);
    }
}

/* The command starts with the caller's dispositions, as under bash: a signal ignored there stays ignored
 * (`nohup gate-sh ...`, a background job's SIGINT and SIGQUIT), every other one is the default. Until
 * 2026-11 the job-control stops stayed ignored as the supervisor had set them, for the whole run. */
static void caller_dispositions(void) {
  const int *lists[] = {launch_forwarded, own_dispositions};
  for (int l = 0; l < 2; l++)
    for (const int *s = lists[l]; *s; s++) signal(*s, sigismember(&caller_ignored, *s) ? SIG_IGN : SIG_DFL);
}

/* Abstract Unix sockets (docs/sandbox.md, "Unix sockets of the host"): a sandbox that keeps the host's
 * network (no --unshare-net) shares its abstract Unix socket namespace: X11's, D-Bus's, any server's @name.
 * Landlock (ABI >= 6) scopes them: the tree can reach no abstract socket made outside it. Only for
 * bubblewrap dropping every capability (a sandbox; a danger-full-access run keeps the host's sockets); a
 * kernel that cannot scope makes such a run fail, never run unscoped. */
struct gate_landlock_attr {
  uint64_t handled_access_fs, handled_access_net, scoped;
};
#define GATE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_restrict_self 446
#endif

static int wants_unix_scope(const char *path, char *const argv[]) {
  if (!launch_is_bwrap(path)) return 0;
  int caps_dropped = 0;
  for (int i = 1; argv[i] && strcmp(argv[i], "--"); i++) {
    if (!strcmp(argv[i], "--unshare-net")) return 0;
    if (!strcmp(argv[i], "--cap-drop") && argv[i + 1] && !strcmp(argv[i + 1], "ALL")) caps_dropped = 1;
  }
  return caps_dropped;
}

static void scope_abstract_unix(const char *path) {
  struct gate_landlock_attr a = {0, 0, GATE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET};
  int fd = (int)syscall(__NR_landlock_create_ruleset, &a, sizeof a, 0);
  if (fd < 0 || syscall(__NR_landlock_restrict_self, fd, 0))
    gate_die_errno(126, "exec gate: ", path,
                   ": not run: this kernel cannot keep the sandbox from the host's abstract Unix sockets (Landlock "
                   "ABI 6, Linux 6.12)");
  close(fd);
}

void tree_root(struct gate_join *j, int sock, const char *path, char *const argv[], const sigset_t *oldmask,
               const char *outer_ksock) {
  int fd = filter_install(), filtered = fd >= 0;
  if (fd < 0) {
    int e = errno;
    filter_send_refusal(sock, e);
    if (e != GATE_NESTED_ERRNO) _exit(126); /* the supervisor says why */
    /* nested: the enclosing tree's supervisor already sees every exec of this one, and pairs them. Nothing
     * here waits for this supervisor's workers, so it goes on only when the supervisor says its own start
     * went through (front.c: its sockets are bound after this process was forked) */
    char go = 0;
    ssize_t r;
    do r = read(sock, &go, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1 || go != 'G') _exit(126);
    if (outer_ksock) setenv(GATE_VAR_KERNEL_SOCK, outer_ksock, 1);
    else unsetenv(GATE_VAR_KERNEL_SOCK);
  } else {
    if (filter_send(sock, fd))
      gate_die_errno(126, "exec gate: ", path, ": not run: cannot hand the exec filter to its supervisor");
    close(fd);
  }
  close(sock);
  caller_dispositions();
  sigprocmask(SIG_SETMASK, oldmask, NULL);
  /* a run without a sandbox: the gate's own state read-only, its runtime folder hidden (gate-guard.c) */
  const char *guard = getenv(GATE_GUARD_ENV);
  if (guard) {
    char why[600];
    if (gate_guard_apply(guard, why, sizeof why))
      gate_die(126, "exec gate: ", path, ": not run: the gate's guard: ", why);
    unsetenv(GATE_GUARD_ENV);
  }
  /* before joining: the plan's own program and options say whether it is a sandbox on the host's network */
  if (wants_unix_scope(path, argv)) scope_abstract_unix(path);
  /* a sandbox: the plan's own argv, but the host sockets' masks, which the supervisor mounts (masks.c); any
   * other program's arguments are the run's, byte for byte */
  if (launch_is_bwrap(path) && !(argv = masks_argv(argv, filtered)))
    gate_die(126, "exec gate: ", path, ": not run: out of memory", NULL);
  /* joining held session mounts: the command in place of bubblewrap (bubblewrap still, if they changed) */
  gate_join_enter(j, &path, (char ***)&argv);
  execv(path, argv);
  int e = errno;
  gate_die(e == ENOENT ? 127 : 126, path, ": ", strerror(e), NULL);
}
