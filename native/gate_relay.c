/*
 * gate_relay — the byte copying of the network proxy's open tunnels, off Node's event loop (issue 33: a
 * download through the proxy at the speed of a direct one). Once the proxy (src/network/) has decided a
 * CONNECT or SOCKS5 tunnel, connected the destination and checked the client's TLS server name, it hands
 * the two sockets here: the run's side (the Unix socket the daemon accepted from the sandbox's bridge) and
 * the destination's (the TCP socket the daemon connected). One thread of this process moves the bytes
 * both ways with splice(2) through a pipe per direction (no copy through user space, no JavaScript per
 * chunk), passes half-closes on, and reports each pair once when it is over: bytes each way and why it
 * ended, through a thread-safe function onto Node's loop (the audit record's bytes up and down).
 *
 * Not pure: a thread, sockets, pipes. Trust boundary: both sockets are the daemon's own open file
 * descriptions (dup'd here; the sandbox never holds either: a connected host socket in the sandbox could be
 * disconnected with connect(AF_UNSPEC) and pointed anywhere). The bytes are the run's and the
 * destination's, carried unread. Nothing here decides anything.
 *
 *   relayInit(onClosed(id, bytesUp, bytesDown, error|null))   once per process; false when no thread
 *   relayAdd(clientFd, destFd, headUp|null, headDown|null) → id   dups both fds; heads are written first
 *   relayClose(id)                                               ends the pair (its run finished)
 *   relayCount() → pairs being relayed
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gate_relay.h"

/* what one splice moves at most, and the pipe size asked for (the kernel may give less: then less moves) */
#define CHUNK (1 << 20)
#define PIPE_SIZE (1 << 20)
#define MAX_EVENTS 64

/* one direction: bytes from `from` to `to`, through a pipe; `head` is what Node had read and not written */
struct half {
  int from, to;
  int pr, pw;
  size_t inpipe;
  int grown; /* the pipe was enlarged: only a connection that fills the default one gets a large one */
  char *head;
  size_t headlen, headoff;
  int eof;  /* `from` said end of file: `to` is shut down for writing once everything is written */
  int done; /* that shutdown happened */
  uint64_t bytes;
};

struct pair;
struct end {
  struct pair *pair;
  int fd;
  uint32_t armed; /* the events asked of epoll; 0: not registered (a hung-up socket would wake it in a loop) */
};

struct pair {
  uint32_t id;
  struct half up, down; /* up: client → destination */
  struct end ends[2];   /* [0] client, [1] destination */
  int kill;             /* relayClose asked (under the lock) */
  int dead;
  struct pair *next;    /* in `pending` or `active`, under the lock */
  struct pair *dead_next;
  struct pair *work_next; /* control()'s list of pairs to start or end */
  char error[160];
};

struct report {
  uint32_t id;
  double up, down;
  char error[160];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pair *pending, *active;
static uint32_t next_id = 1;
static int ctl = -1, ep = -1;
static napi_threadsafe_function tsfn;
static int count;

static void set_error(struct pair *p, const char *what, int e) {
  if (!p->error[0]) snprintf(p->error, sizeof p->error, "%s: %s", what, strerror(e));
}

/* A pipe's pages count against the user's pipe-user-pages-soft (beyond it every new pipe of that user is
 * small): a pipe is enlarged only once a splice filled the default one, so idle tunnels cost 64 KiB each. */
static void grow(struct half *h, size_t moved) {
  if (h->grown || moved < 65536) return;
  h->grown = 1;
  fcntl(h->pw, F_SETPIPE_SZ, PIPE_SIZE); /* best effort: a smaller pipe moves less per call */
}

/* move bytes for one half as far as they go without blocking; -1: that direction failed */
static int pump(struct pair *p, struct half *h, const char *dir) {
  for (;;) {
    if (h->headoff < h->headlen) {
      ssize_t w = send(h->to, h->head + h->headoff, h->headlen - h->headoff, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN || errno == EINTR) return 0;
        set_error(p, dir, errno);
        return -1;
      }
      h->headoff += (size_t)w;
      h->bytes += (uint64_t)w;
      continue;
    }
    if (h->inpipe > 0) {
      ssize_t w = splice(h->pr, NULL, h->to, NULL, h->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (w < 0) {
        if (errno == EAGAIN || errno == EINTR) return 0;
        set_error(p, dir, errno);
        return -1;
      }
      h->inpipe -= (size_t)w;
      h->bytes += (uint64_t)w;
      continue;
    }
    if (h->eof) {
      if (!h->done) shutdown(h->to, SHUT_WR);
      h->done = 1;
      return 0;
    }
    ssize_t r = splice(h->from, NULL, h->pw, NULL, CHUNK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r == 0) {
      h->eof = 1;
      continue;
    }
    if (r < 0) {
      if (errno == EAGAIN || errno == EINTR) return 0;
      set_error(p, dir, errno);
      return -1;
    }
    h->inpipe += (size_t)r;
    grow(h, (size_t)r);
  }
}

/* what an end waits for: readable while its direction's pipe is empty, writable while the other has bytes */
static void rearm(struct pair *p, struct end *e) {
  struct half *in = e == &p->ends[0] ? &p->up : &p->down;
  struct half *out = e == &p->ends[0] ? &p->down : &p->up;
  uint32_t want = 0;
  if (!in->eof && !in->done && in->inpipe == 0 && in->headoff == in->headlen) want |= EPOLLIN;
  if (!out->done && (out->inpipe > 0 || out->headoff < out->headlen)) want |= EPOLLOUT;
  if (want == e->armed) return;
  struct epoll_event ev = { .events = want, .data.ptr = e };
  if (want == 0) epoll_ctl(ep, EPOLL_CTL_DEL, e->fd, NULL);
  else epoll_ctl(ep, e->armed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, e->fd, &ev);
  e->armed = want;
}

static void close_half(struct half *h) {
  if (h->pr >= 0) close(h->pr);
  if (h->pw >= 0) close(h->pw);
  free(h->head);
}

/* the pair is over: its sockets close (no epoll entry stays), its report goes to Node */
static void finish(struct pair *p, struct pair **dead) {
  if (p->dead) return;
  pthread_mutex_lock(&lock); /* relayClose reads it */
  p->dead = 1;
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < 2; i++) {
    if (p->ends[i].armed) epoll_ctl(ep, EPOLL_CTL_DEL, p->ends[i].fd, NULL);
    close(p->ends[i].fd);
  }
  close_half(&p->up);
  close_half(&p->down);
  struct report *r = calloc(1, sizeof *r);
  if (r) {
    r->id = p->id;
    r->up = (double)p->up.bytes;
    r->down = (double)p->down.bytes;
    memcpy(r->error, p->error, sizeof r->error);
    if (napi_call_threadsafe_function(tsfn, r, napi_tsfn_nonblocking) != napi_ok) free(r);
  }
  p->dead_next = *dead;
  *dead = p;
}

static void serve(struct pair *p, struct pair **dead) {
  if (p->dead) return;
  if (pump(p, &p->up, "client") < 0 || pump(p, &p->down, "destination") < 0 || (p->up.done && p->down.done)) {
    finish(p, dead);
    return;
  }
  rearm(p, &p->ends[0]);
  rearm(p, &p->ends[1]);
}

/* new pairs start, killed pairs end */
static void control(struct pair **dead) {
  uint64_t v;
  if (read(ctl, &v, sizeof v) < 0 && errno != EAGAIN) return;
  pthread_mutex_lock(&lock);
  struct pair *fresh = pending, *work = NULL;
  pending = NULL;
  for (struct pair *p = active; p; p = p->next)
    if (p->kill && !p->dead) p->work_next = work, work = p;
  while (fresh) {
    struct pair *p = fresh;
    fresh = p->next;
    p->next = active;
    active = p;
    p->work_next = work;
    work = p;
  }
  pthread_mutex_unlock(&lock);
  for (struct pair *p = work; p; p = p->work_next) {
    if (p->kill) {
      if (!p->error[0]) snprintf(p->error, sizeof p->error, "closed: the run finished");
      finish(p, dead);
    } else serve(p, dead); /* a new pair: its heads and its first bytes */
  }
}

static void reap(struct pair *dead) {
  if (!dead) return;
  pthread_mutex_lock(&lock);
  for (struct pair **pp = &active; *pp;) {
    if ((*pp)->dead) *pp = (*pp)->next;
    else pp = &(*pp)->next;
  }
  pthread_mutex_unlock(&lock);
  while (dead) {
    struct pair *n = dead->dead_next;
    free(dead);
    __atomic_sub_fetch(&count, 1, __ATOMIC_RELAXED);
    dead = n;
  }
}

static void *relay_thread(void *arg) {
  (void)arg;
  static int ctl_tag;
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &ctl_tag };
  epoll_ctl(ep, EPOLL_CTL_ADD, ctl, &ev);
  struct epoll_event evs[MAX_EVENTS];
  for (;;) {
    int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return NULL;
    }
    struct pair *dead = NULL;
    for (int i = 0; i < n; i++) {
      if (evs[i].data.ptr == &ctl_tag) control(&dead);
      else serve(((struct end *)evs[i].data.ptr)->pair, &dead);
    }
    reap(dead);
  }
}

static void call_js(napi_env env, napi_value cb, void *context, void *data) {
  (void)context;
  struct report *r = data;
  if (env && cb) {
    napi_value argv[4], undef;
    napi_create_uint32(env, r->id, &argv[0]);
    napi_create_double(env, r->up, &argv[1]);
    napi_create_double(env, r->down, &argv[2]);
    if (r->error[0]) napi_create_string_utf8(env, r->error, NAPI_AUTO_LENGTH, &argv[3]);
    else napi_get_null(env, &argv[3]);
    napi_get_undefined(env, &undef);
    napi_call_function(env, undef, cb, 4, argv, NULL);
  }
  free(r);
}

static napi_value relay_init(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  napi_valuetype t;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_typeof(env, argv[0], &t) != napi_ok ||
      t != napi_function) {
    napi_throw_type_error(env, NULL, "relayInit(onClosed)");
    return NULL;
  }
  bool ok = ep >= 0;
  if (!ok) {
    napi_value name;
    napi_create_string_utf8(env, "gate-relay", NAPI_AUTO_LENGTH, &name);
    ep = epoll_create1(EPOLL_CLOEXEC);
    ctl = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_t th;
    if (ep >= 0 && ctl >= 0 && napi_create_threadsafe_function(env, argv[0], NULL, name, 0, 1, NULL, NULL, NULL, call_js, &tsfn) == napi_ok &&
        pthread_create(&th, NULL, relay_thread, NULL) == 0) {
      pthread_detach(th);
      /* the thread does not keep the daemon alive: its pairs end with the daemon */
      napi_unref_threadsafe_function(env, tsfn);
      ok = true;
    } else {
      if (ep >= 0) close(ep);
      if (ctl >= 0) close(ctl);
      ep = ctl = -1;
    }
  }
  napi_get_boolean(env, ok, &out);
  return out;
}

/* a copy of a Buffer argument, or NULL with *len 0 for null/undefined/empty */
static int head_arg(napi_env env, napi_value v, char **out, size_t *len) {
  *out = NULL;
  *len = 0;
  bool is;
  if (napi_is_buffer(env, v, &is) != napi_ok || !is) return 0;
  void *data;
  size_t n;
  if (napi_get_buffer_info(env, v, &data, &n) != napi_ok) return -1;
  if (n == 0) return 0;
  if (!(*out = malloc(n))) return -1;
  memcpy(*out, data, n);
  *len = n;
  return 0;
}

static int open_pipe(struct half *h) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) return -1;
  h->pr = fds[0];
  h->pw = fds[1];
  return 0;
}

static napi_value relay_add(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  int32_t fds[2];
  if (ep < 0 || napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || napi_get_value_int32(env, argv[0], &fds[0]) != napi_ok ||
      napi_get_value_int32(env, argv[1], &fds[1]) != napi_ok) {
    napi_throw_type_error(env, NULL, "relayAdd(clientFd, destFd, headUp, headDown) after relayInit");
    return NULL;
  }
  struct pair *p = calloc(1, sizeof *p);
  if (!p) {
    napi_throw_error(env, NULL, "relayAdd: out of memory");
    return NULL;
  }
  p->up.pr = p->up.pw = p->down.pr = p->down.pw = -1;
  int a = fcntl(fds[0], F_DUPFD_CLOEXEC, 3);
  int b = a < 0 ? -1 : fcntl(fds[1], F_DUPFD_CLOEXEC, 3);
  int e = errno;
  if (b < 0 || open_pipe(&p->up) < 0 || open_pipe(&p->down) < 0 || head_arg(env, argv[2], &p->up.head, &p->up.headlen) < 0 ||
      head_arg(env, argv[3], &p->down.head, &p->down.headlen) < 0) {
    if (b >= 0) e = errno;
    if (a >= 0) close(a);
    if (b >= 0) close(b);
    close_half(&p->up);
    close_half(&p->down);
    free(p);
    char msg[128];
    snprintf(msg, sizeof msg, "relayAdd: %s", strerror(e));
    napi_throw_error(env, NULL, msg);
    return NULL;
  }
  /* both are the daemon's own descriptions (libuv made them non-blocking already): said again, for this copy */
  fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
  fcntl(b, F_SETFL, fcntl(b, F_GETFL) | O_NONBLOCK);
  p->up.from = p->down.to = a;
  p->up.to = p->down.from = b;
  p->ends[0] = (struct end){ .pair = p, .fd = a };
  p->ends[1] = (struct end){ .pair = p, .fd = b };
  pthread_mutex_lock(&lock);
  p->id = next_id++;
  if (next_id == 0) next_id = 1;
  p->next = pending;
  pending = p;
  pthread_mutex_unlock(&lock);
  __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
  uint64_t one = 1;
  if (write(ctl, &one, sizeof one) < 0) { /* the counter is far from full: cannot fail in practice */
  }
  napi_value out;
  napi_create_uint32(env, p->id, &out);
  return out;
}

static napi_value relay_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  uint32_t id;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_get_value_uint32(env, argv[0], &id) != napi_ok) {
    napi_throw_type_error(env, NULL, "relayClose(id)");
    return NULL;
  }
  int found = 0;
  pthread_mutex_lock(&lock);
  for (struct pair *l = pending; l && !found; l = l->next) if (l->id == id) l->kill = found = 1;
  for (struct pair *l = active; l && !found; l = l->next) if (l->id == id && !l->dead) l->kill = found = 1;
  pthread_mutex_unlock(&lock);
  if (found && ctl >= 0) {
    uint64_t one = 1;
    if (write(ctl, &one, sizeof one) < 0) {
    }
  }
  napi_value out;
  napi_get_boolean(env, found, &out);
  return out;
}

static napi_value relay_count(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_create_int32(env, __atomic_load_n(&count, __ATOMIC_RELAXED), &out);
  return out;
}

void gate_relay_register(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback fn;
  } fns[] = { { "relayInit", relay_init }, { "relayAdd", relay_add }, { "relayClose", relay_close }, { "relayCount", relay_count } };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f);
    napi_set_named_property(env, exports, fns[i].name, f);
  }
}
