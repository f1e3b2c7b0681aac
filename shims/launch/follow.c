/*
 * After the exec (docs/exec-gate.md, "What each layer covers, and what remains").
 * The supervisor decides on the path, argv and envp it
 * read from the process's memory; answered, the kernel reads them again from that memory, and another thread
 * (or a vfork sibling, io_uring, a shared mapping) may have rewritten them in between: a program could have
 * `ls` checked and `rm` run. So a worker that lets an exec go on first seizes the process (ptrace,
 * PTRACE_O_TRACEEXEC: no stop, no signal), then follows the exec to its end: a successful exec stops at
 * PTRACE_EVENT_EXEC, before the new program's first instruction, with its new memory private (other threads
 * gone, vfork parent released). There the supervisor compares what the kernel took (/proc/<pid>/exe, the new
 * argv and environment) with what was decided; anything else and the process is killed before it runs. A
 * failed exec returns to the program, where a PTRACE_INTERRUPT stops it; either way the process is let go
 * (PTRACE_DETACH). A worker that keeps the receiving role through its wait (workers.c, hold) sends that
 * interrupt only once its wait has passed a bound (FOLLOW_BOUND_NS, a timer of its own): an exec that succeeds
 * stops without it, and an interrupt of a process running on another CPU is an inter-processor interrupt; at
 * the bound it also lets the role go, so that an exec that is slow to end (or one that failed) never holds up
 * other processes' execs for longer. The processes being followed are this file's table, under its lock.
 * Trust boundary: the followed process is the tree's; what it runs is compared, never believed.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a worker holding the receiving role waits for its exec's end before it interrupts the process and
 * lets the role go (most execs end in well under a millisecond; a failed one does not stop by itself). */
#define FOLLOW_BOUND_NS (5 * 1000 * 1000)

/* The processes a worker follows now. A process whose exec failed at once (execvp trying each PATH entry)
 * can be in its next execve before the worker's PTRACE_INTERRUPT lands; that exec's worker waits until the
 * first has let the process go (the interrupt withdraws the waiting notification, the exec is made again)
 * instead of answering it: answered, it would run while still traced by the first worker, whose check of
 * its end compares it with the failed exec's inputs and kills it. */
static pid_t FOLLOWING[MAX_WORKERS];
static pthread_mutex_t LOCK = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t FOLLOWED = PTHREAD_COND_INITIALIZER;

static int following(pid_t pid) {
  for (int i = 0; i < MAX_WORKERS; i++)
    if (FOLLOWING[i] == pid) return 1;
  return 0;
}

int follow_begin(pid_t pid) {
  int slot = -1;
  pthread_mutex_lock(&LOCK);
  if (following(pid)) workers_let_go(); /* (the other worker may need the next notification taken) */
  while (following(pid)) pthread_cond_wait(&FOLLOWED, &LOCK);
  for (int i = 0; i < MAX_WORKERS && slot < 0; i++)
    if (!FOLLOWING[i]) slot = i;
  if (slot >= 0) FOLLOWING[slot] = pid;
  pthread_mutex_unlock(&LOCK);
  return slot >= 0;
}

void follow_end(pid_t pid) {
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_WORKERS; i++)
    if (FOLLOWING[i] == pid) FOLLOWING[i] = 0;
  pthread_cond_broadcast(&FOLLOWED);
  pthread_mutex_unlock(&LOCK);
}

/* A #! script: the interpreter read before asking (the one the daemon judged) runs, with the very argv the
 * kernel builds from the #! lines read then (interpreter, argument, script, at each level) and the exec's
 * arguments; anything else is a script or interpreter changed meanwhile. */
static int ran_script(const struct decided *d, const struct stat *st, char **c, char **argv) {
  size_t nc = vec_len(c), na = vec_len(argv), np = d->kargv ? vec_len(d->kargv) : 0;
  int ok = d->script && d->kargv && d->interp.known && st->st_dev == d->interp.dev && st->st_ino == d->interp.ino;
  ok = ok && na >= 1 && nc == np + na - 1 && vec_eq(c + np, argv + 1);
  for (size_t i = 0; ok && i < np; i++) ok = !strcmp(c[i], d->kargv[i]);
  return ok;
}

/* What the stopped process (at PTRACE_EVENT_EXEC) runs is what was decided: 1; 0 when it is not; -1 when
 * it cannot be told (its /proc files are closed to this user: the program it now runs is not readable). The
 * environment is compared when the decision read it (envp); the new one is left in *now (the caller frees). */
static int ran_as_decided(struct proc *p, const struct decided *d, char **argv, char **envp, char ***now,
                          uint64_t *envp_at) {
  char exe[64];
  struct stat st;
  pid_t pid = p->pid;
  snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
  char **c = NULL, **e = NULL;
  *envp_at = 0;
  if (first_stack(p, &c, &e, envp_at)) {
    *envp_at = 0;
    c = proc_strings(pid, "cmdline");
    e = proc_strings(pid, "environ");
  }
  *now = e;
  int seen = e != NULL && stat(exe, &st) == 0;
  if (!seen && errno == EACCES) {
    free_vec(c);
    return -1;
  }
  int ok = c && e && d->id.known && seen && (!envp || vec_eq(e, envp));
  if (ok && st.st_dev == d->id.dev && st.st_ino == d->id.ino)
    ok = vec_len(argv) ? vec_eq(c, argv) : vec_len(c) == 1 && !c[0][0]; /* an empty argv gets "" */
  else if (ok) ok = ran_script(d, &st, c, argv);
  free_vec(c);
  return ok;
}

static void bound_passed(int sig) { (void)sig; }

static pthread_once_t BOUND_ONCE = PTHREAD_ONCE_INIT;
static void bound_install(void) {
  struct sigaction sa = {.sa_handler = bound_passed}; /* no SA_RESTART: the wait returns EINTR */
  sigemptyset(&sa.sa_mask);
  sigaction(FOLLOW_BOUND, &sa, NULL);
}

/* This worker's timer (made at its first follow; -1: it could not be), which signals this thread alone. */
static __thread timer_t BOUND;
static __thread int BOUND_MADE;

/* The bound armed: 1; 0 when there is no timer (then the process is interrupted at once, as by a worker
 * without the role). */
static int bound_arm(void) {
  if (!BOUND_MADE) {
    pthread_once(&BOUND_ONCE, bound_install);
    struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = FOLLOW_BOUND};
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, FOLLOW_BOUND);
    BOUND_MADE = pthread_sigmask(SIG_UNBLOCK, &s, NULL) || timer_create(CLOCK_MONOTONIC, &ev, &BOUND) ? -1 : 1;
  }
  struct itimerspec it = {.it_value = {0, FOLLOW_BOUND_NS}};
  return BOUND_MADE > 0 && timer_settime(BOUND, 0, &it, NULL) == 0;
}

static void bound_disarm(void) {
  struct itimerspec none = {{0, 0}, {0, 0}};
  timer_settime(BOUND, 0, &none, NULL); /* (fired meanwhile: its signal finds no wait to end) */
}

void after_exec(pid_t pid, const struct decided *d, const char *path, char **argv, char **envp, int hold) {
  int bounded = hold && bound_arm();
  if (!bounded) {
    workers_let_go(); /* (no timer: the role is not kept through an unbounded wait) */
    ptrace(PTRACE_INTERRUPT, pid, 0, 0); /* failed (the process gone): waitpid says so below */
  }
  int st;
  pid_t w;
  for (;;) {
    w = waitpid(-1, &st, __WALL | __WNOTHREAD); /* this thread's tracee only: this process */
    if (w >= 0 || errno != EINTR) break;
    if (bounded == 1) { /* past the bound: other execs are taken by another worker; a failed exec stops */
      bounded = 2;
      workers_let_go();
      ptrace(PTRACE_INTERRUPT, pid, 0, 0);
    }
  }
  if (bounded == 1) bound_disarm();
  if (w < 0 || !WIFSTOPPED(st)) return; /* gone */
  uint64_t envp_at = 0;
  struct proc p = {.pid = w};
  char **now = NULL;
  int execd = st >> 16 == PTRACE_EVENT_EXEC, as = execd ? ran_as_decided(&p, d, argv, envp, &now, &envp_at) : 1;
  /* below a program running its own files: the new program's layer is told so by its mark (libgate.c);
   * where the mark cannot be rewritten the layer stays in its children, as everywhere else */
  if (as == 1 && d->below && envp_at) mark_below(&p, envp_at, envp ? envp : now);
  proc_done(&p);
  int told = !(as == 1 && execd && now && d->stopped) || !d->stopped(d->ctx, w, now);
  free_vec(now);
  if (as == 1 && told) {
    /* run as decided; or the exec failed and the program stopped on its way back (a signal stop passes its
     * signal on) */
    int sig = st >> 16 == 0 && WSTOPSIG(st) != SIGTRAP ? WSTOPSIG(st) : 0;
    ptrace(PTRACE_DETACH, w, 0, sig);
    return;
  }
  char cmd[512];
  gate_describe(cmd, sizeof cmd, argv, path);
  kill(w, SIGKILL);
  if (!told) {
  } /* (said why) */
  else if (as < 0)
    gate_msg("exec gate: ", cmd,
             ": not run: what the kernel runs cannot be checked after the exec (the program is not readable by this "
             "user, mode --x, so its arguments cannot be compared with what was decided); the process was killed; "
             "make the program readable",
             NULL);
  else
    gate_msg("exec gate: ", cmd,
             ": not run: the kernel was about to run something other than what was checked (its program or "
             "arguments were rewritten during the check, by another thread or a process sharing its memory); the "
             "process was killed",
             NULL);
  while (waitpid(w, &st, __WALL) < 0 && errno == EINTR) {}
}
