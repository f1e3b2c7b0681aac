/*
 * The notifications of gate-launch's supervisor: worker threads take them from the kernel themselves, so an
 * exec waits for no hand-off inside this process. One always waits: a worker that takes a notification while
 * no other is waiting starts another, up to MAX_WORKERS. Where no worker thread can be started at all, the
 * supervisor's own thread takes them (workers_take_one: slower, never skipped). One worker at a time holds the
 * receiving role and waits in the ioctl (SECCOMP_IOCTL_NOTIF_RECV); the others wait for the role on a condition
 * variable: the kernel wakes every thread waiting in the ioctl for each notification, and again when one of
 * them has taken it. The worker that took a notification keeps the role while it answers and, when no other
 * exec is waiting by then, while it follows the exec to its end (within a bound: follow.c); then it takes the
 * next notification itself. It lets the role go where it would wait for something else (the daemon, another
 * worker's follow, an exec already waiting), and only then is an idle worker woken. Handing the role over at
 * every exec cost each exec a wake-up of another thread on the way of its follow (measured, docs/history); a
 * notification made while an exec is followed with the role kept waits for that follow (the exec's own time,
 * at most the bound). The pool's counts and the role are
 * this file's, under its lock. Trust boundary: the listener is the kernel's; a notification is only an id and
 * the syscall's arguments, and answering an id no longer valid does nothing.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static struct {
  pthread_mutex_t lock;
  pthread_cond_t freed;
  pthread_cond_t wanted; /* the receiving role was let go */
  int receiving; /* a worker holds the receiving role */
  int busy; /* notifications being answered */
  int idle; /* workers waiting for the receiving role */
  int threads; /* workers started */
  int seq; /* notifications taken so far: the first ones are the plan's own execs */
  int inline_; /* no worker could start: the supervisor's thread takes them */
} W = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0};
/* this thread holds the receiving role (workers_let_go) */
static __thread int HOLDS;

void workers_let_go(void) {
  if (!HOLDS) return;
  HOLDS = 0;
  pthread_mutex_lock(&W.lock);
  W.receiving = 0;
  if (W.idle) pthread_cond_signal(&W.wanted);
  pthread_mutex_unlock(&W.lock);
}

void notif_respond(const struct launch *l, uint64_t id, int error) {
  struct seccomp_notif_resp *r = calloc(1, l->sizes.seccomp_notif_resp);
  if (!r) return; /* the notifying exec waits until the tree is gone: never let it through */
  r->id = id;
  if (error) r->error = -error;
  else r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  /* ENOENT: the process died or its syscall was interrupted meanwhile; nothing to answer */
  ioctl(l->listener, SECCOMP_IOCTL_NOTIF_SEND, r);
  free(r);
}

int notif_valid(const struct launch *l, uint64_t id) {
  return ioctl(l->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int workers_keep_turn(const struct launch *l) {
  if (!HOLDS) return 0;
  struct pollfd pf = {l->listener, POLLIN, 0};
  if (poll(&pf, 1, 0) == 0) return 1;
  workers_let_go(); /* another exec waits already (or the listener hung up): it is not kept waiting */
  return 0;
}

/* One notification taken (0) into req, numbered in *seq; -1 on an error of the ioctl (errno). *more: this
 * thread is to start another worker (none waits now). */
static int take(const struct launch *l, struct seccomp_notif *req, int *seq, int *more) {
  memset(req, 0, l->sizes.seccomp_notif);
  if (!HOLDS) {
    pthread_mutex_lock(&W.lock);
    W.idle++;
    while (W.receiving) pthread_cond_wait(&W.wanted, &W.lock);
    W.idle--;
    W.receiving = HOLDS = 1;
    pthread_mutex_unlock(&W.lock);
  }
  int r = ioctl(l->listener, SECCOMP_IOCTL_NOTIF_RECV, req), e = errno;
  if (r) workers_let_go();
  pthread_mutex_lock(&W.lock);
  *more = r == 0 && !W.inline_ && W.idle == 0 && W.threads < MAX_WORKERS;
  if (*more) W.threads++;
  if (r == 0) {
    *seq = W.seq++;
    W.busy++;
  }
  pthread_mutex_unlock(&W.lock);
  errno = e;
  return r;
}

static void answered(void) {
  pthread_mutex_lock(&W.lock);
  W.busy--;
  pthread_cond_signal(&W.freed);
  pthread_mutex_unlock(&W.lock);
}

static int start_worker(const struct launch *l);

static void *worker(void *arg) {
  const struct launch *l = arg;
  struct seccomp_notif *req = malloc(l->sizes.seccomp_notif);
  for (int seq, more; req;) {
    if (take(l, req, &seq, &more)) {
      /* ENOENT: a notification went before it was taken, or (Linux 6.x) nothing is left under the filter,
       * when the ioctl no longer waits: wait here instead, and end with the hang-up (never a busy loop) */
      if (errno == ENOENT) {
        struct pollfd pf = {l->listener, POLLIN, 0};
        if (poll(&pf, 1, -1) > 0 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL))) break;
      } else if (errno != EINTR) usleep(1000);
      continue;
    }
    if (more && start_worker(l)) { /* none started: this one stays the waiting one once it is done */
      pthread_mutex_lock(&W.lock);
      W.threads--;
      pthread_mutex_unlock(&W.lock);
    }
    decide(l, req, seq); /* (still holding the role, unless it was let go: then it waits for it again) */
    answered();
  }
  workers_let_go();
  free(req);
  pthread_mutex_lock(&W.lock);
  W.threads--;
  pthread_mutex_unlock(&W.lock);
  return NULL;
}

static int start_worker(const struct launch *l) {
  pthread_attr_t attr;
  pthread_t t;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 512 * 1024);
  int r = pthread_create(&t, &attr, worker, (void *)l);
  pthread_attr_destroy(&attr);
  return r;
}

int workers_start(const struct launch *l) {
  W.threads = 1;
  if (!start_worker(l)) return 0;
  W.threads = 0;
  W.inline_ = 1;
  return -1;
}

int workers_take_one(const struct launch *l, struct seccomp_notif *req) {
  int seq, more;
  if (take(l, req, &seq, &more)) return -1;
  decide(l, req, seq);
  workers_let_go();
  answered();
  return 0;
}

void workers_drain(void) {
  pthread_mutex_lock(&W.lock);
  while (W.busy > 0) pthread_cond_wait(&W.freed, &W.lock);
  pthread_mutex_unlock(&W.lock);
}
