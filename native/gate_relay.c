/*
 * gate_relay — the byte copying of the network proxy's open tunnels, off Node's event loop (a
 * download through the proxy at the speed of a direct one). Once the proxy (src/network/) has decided a
 * CONNECT or SOCKS5 tunnel, connected the destination and checked the client's TLS server name, it hands
 * the two sockets here: the run's side (the Unix socket the daemon accepted from the sandbox's bridge) and
 * the destination's (the TCP socket the daemon connected). One thread of this process moves the bytes
 * both ways with splice(2) through a pipe per direction (no JavaScript per chunk; past a direction's first
 * MiB between two sockets, recv/send through a buffer instead: copy mode, struct half), passes
 * half-closes on, and reports each pair once when it is over: bytes each way and why it ended, through a
 * thread-safe function onto Node's loop (the audit record's bytes up and down).
 *
 * Not pure: a thread, sockets, pipes. Trust boundary: both sockets are the daemon's own open file
 * descriptions (dup'd here; the sandbox never holds either: a connected host socket in the sandbox could be
 * disconnected with connect(AF_UNSPEC) and pointed anywhere). The bytes are the run's and the
 * destination's, carried unread. Nothing here decides anything.
 *
 *   relayInit(onClosed(id, bytesUp, bytesDown, error|null))   once per process; false when no thread
 *   relayAdd(clientFd, destFd, headUp|null, headDown|null, pipes, limitUp, limitDown) → id
 *       dups both fds; heads are written first. A limit >= 0 (plain HTTP: one answer's body, src/network/
 *       http-front.ts) is how many bytes that half reads from its `from` (heads apart): once they are
 *       carried the half is over without a shutdown, so the connection goes on in Node (keep-alive); an end
 *       of file before it is an error. A limit of 0 never reads `from` at all (Node keeps reading it).
 *   relayClose(id)                                               ends the pair (its run finished)
 *   relayCount() → pairs being relayed
 *   relayCopied() → bytes sent in copy mode so far (below: struct half)
 *   relayCheckListener(fd) → null | why not    a listening socket the run's bridge handed over (below)
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include "gate_relay.h"

/* what one splice moves at most, and the pipe size asked for (the kernel may give less: then less moves) */
#define CHUNK (1 << 20)
#define PIPE_SIZE (1 << 20)
#define BULK (1 << 20)
/* the buffer a bulk half between two sockets copies through (below: copy mode) */
#define COPY_SIZE (1 << 20)
#define MAX_EVENTS 64

/* One direction: bytes from `from` to `to`. Between two sockets they go through a pipe of this half's
 * (two splices); when either side is a pipe (the bridge's, in pipes mode) one splice moves them. `head`
 * is what Node had read and not written: it goes first. */
struct half {
  int from, to;
  int direct; /* `from` or `to` is a pipe */
  int to_pipe; /* `to` is a pipe: closed (not shut down) for end of file */
  int pr, pw; /* this half's own pipe, between two sockets */
  size_t inpipe;
  int grown; /* the pipe was enlarged (after BULK bytes) */
  /* Copy mode: a half between two sockets that has carried BULK bytes reads into a buffer of its own and
   * sends from it once its pipe is empty. Splice costs the relay less, but what it sends are the source's
   * pages, and the receiver then pays more for every byte it reads than for bytes written from memory
   * (curl: up to 112-174 ms of CPU per 100 MiB instead of 92-113 on this 2-core machine, docs/network.md "Figures"),
   * where the receiver was the slowest party already. */
  int copy;
  char *buf; /* held while it holds bytes: freed when `from` has nothing more for now */
  size_t boff, blen;
  size_t moved;
  char *head;
  size_t headlen, headoff;
  int eof; /* `from` said end of file: `to` ends once everything is written */
  int done; /* `to` ended */
  int next_from; /* pipes mode, up: the bridge's pipe, read once the Unix socket said end of file; else -1 */
  int wait_fd; /* what the half waits for (-1: nothing) */
  uint32_t wait_ev;
  uint64_t bytes;
  int limited; /* `from` gives `left` bytes more, then the half is over (no shutdown of `to`) */
  uint64_t left;
};

struct pair;
struct end {
  struct pair *pair;
  int fd; /* -1 once closed */
  uint32_t armed; /* the events asked of epoll; 0: not registered (a hung-up socket would wake it in a loop) */
};

/* ends: [0] the run's Unix socket, [1] the destination; in pipes mode [2] the read end of the bridge's
 * up pipe, [3] the write end of its down pipe */
struct pair {
  uint32_t id;
  struct half up, down; /* up: client → destination */
  struct end ends[4];
  int nends;
  int marker; /* pipes mode: the bridge's ends are still to be sent */
  int give[2]; /* those ends: the down pipe's read end, the up pipe's write end */
  int kill; /* relayClose asked (under the lock) */
  int dead;
  struct pair *next; /* in `pending` or `active`, under the lock */
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
/* GATE_RELAY_COPY=off in the daemon's environment: bulk halves keep splicing (for comparison) */
static int copy_mode = 1;
static uint64_t copied; /* bytes sent in copy mode since the start (relayCopied: tests, benches) */

static void set_error(struct pair *p, const char *what, int e) {
  if (!p->error[0]) snprintf(p->error, sizeof p->error, "%s: %s", what, strerror(e));
}

/* A pipe's pages count against the user's pipe-user-pages-soft (beyond it every new pipe of that user is
 * small): a pipe is enlarged only once its half has carried BULK bytes, so idle connections cost 64 KiB. */
static void grow(struct half *h, int fd, size_t moved) {
  if (h->grown) return;
  h->moved += moved;
  if (h->moved < BULK) return;
  h->grown = 1;
  if (!h->direct && copy_mode) {
    h->copy = 1; /* from the next read on, once the pipe is empty */
    return;
  }
  fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE); /* best effort: a smaller pipe moves less per call */
}

static void wait_on(struct half *h, int fd, uint32_t ev) {
  h->wait_fd = fd;
  h->wait_ev = ev;
}

/* close one of the pair's ends (its epoll entry first) */
static void close_end(struct pair *p, int fd) {
  for (int i = 0; i < p->nends; i++)
    if (p->ends[i].fd == fd) {
      if (p->ends[i].armed) epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
      p->ends[i].armed = 0;
      p->ends[i].fd = -1;
    }
  close(fd);
}

/* pipes mode: the bridge gets the down pipe's read end and the up pipe's write end, with one byte (the
 * bridge takes the byte that carries them for the mark, never for data); this end's copies close */
static int send_marker(struct pair *p) {
  char byte = 0;
  struct iovec iov = {&byte, 1};
  union {
    char b[CMSG_SPACE(2 * sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(2 * sizeof(int));
  memcpy(CMSG_DATA(c), p->give, 2 * sizeof(int));
  ssize_t n = sendmsg(p->ends[0].fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  close(p->give[0]);
  close(p->give[1]);
  p->give[0] = p->give[1] = -1;
  p->marker = 0;
  return 1;
}

/* how much one splice may read from `from`: never past a limit (the next answer's bytes are Node's) */
static size_t want(const struct half *h) { return h->limited && h->left < CHUNK ? (size_t)h->left : CHUNK; }

/* move bytes for one half as far as they go without blocking; -1: that direction failed */
static int pump(struct pair *p, struct half *h, const char *dir) {
  for (;;) {
    wait_on(h, -1, 0);
    if (h->done) return 0;
    if (h->headoff < h->headlen) {
      ssize_t w = send(h->to, h->head + h->headoff, h->headlen - h->headoff, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN || errno == EINTR) return wait_on(h, h->to, EPOLLOUT), 0;
        set_error(p, dir, errno);
        return -1;
      }
      h->headoff += (size_t)w;
      h->bytes += (uint64_t)w;
      continue;
    }
    if (h == &p->down && p->marker) {
      int r = send_marker(p);
      if (r < 0) {
        set_error(p, "handing the pipes to the bridge", errno);
        return -1;
      }
      if (r == 0) return wait_on(h, h->to, EPOLLOUT), 0;
      /* from here the destination's bytes go straight into the bridge's pipe */
      h->to = p->ends[3].fd;
      h->direct = h->to_pipe = 1;
      continue;
    }
    if (h->inpipe > 0) {
      ssize_t w = splice(h->pr, NULL, h->to, NULL, h->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (w < 0) {
        if (errno == EAGAIN || errno == EINTR) return wait_on(h, h->to, EPOLLOUT), 0;
        set_error(p, dir, errno);
        return -1;
      }
      h->inpipe -= (size_t)w;
      h->bytes += (uint64_t)w;
      continue;
    }
    if (h->blen > 0) {
      ssize_t w = send(h->to, h->buf + h->boff, h->blen, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN || errno == EINTR) return wait_on(h, h->to, EPOLLOUT), 0;
        set_error(p, dir, errno);
        return -1;
      }
      h->boff += (size_t)w;
      h->blen -= (size_t)w;
      h->bytes += (uint64_t)w;
      __atomic_add_fetch(&copied, (uint64_t)w, __ATOMIC_RELAXED);
      continue;
    }
    if (h->limited && h->left == 0) {
      h->done = 1; /* the body is carried: the connection is Node's again */
      return 0;
    }
    if (h->eof) {
      if (h->limited) {
        snprintf(p->error, sizeof p->error, "%s: ended %llu bytes early", dir, (unsigned long long)h->left);
        return -1;
      }
      if (h->next_from >= 0) { /* the Unix socket is over: the bridge's pipe carries the rest */
        h->from = h->next_from;
        h->next_from = -1;
        h->direct = 1;
        h->eof = 0;
        continue;
      }
      if (h->to_pipe) close_end(p, h->to);
      else shutdown(h->to, SHUT_WR);
      h->done = 1;
      return 0;
    }
    if (h->direct) {
      ssize_t r = splice(h->from, NULL, h->to, NULL, want(h), SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (r > 0) {
        if (h->limited) h->left -= (uint64_t)r;
        h->bytes += (uint64_t)r;
        grow(h, h->to_pipe ? h->to : h->from, (size_t)r);
        continue;
      }
      if (r == 0) {
        h->eof = 1;
        continue;
      }
      if (errno != EAGAIN && errno != EINTR) {
        set_error(p, dir, errno);
        return -1;
      }
      /* nothing to read, or no room to write: ask which */
      struct pollfd pf[2] = {{.fd = h->from, .events = POLLIN}, {.fd = h->to, .events = POLLOUT}};
      if (poll(pf, 2, 0) < 0) return wait_on(h, h->from, EPOLLIN), 0;
      if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) return wait_on(h, h->from, EPOLLIN), 0;
      if (!(pf[1].revents & (POLLOUT | POLLHUP | POLLERR))) return wait_on(h, h->to, EPOLLOUT), 0;
      continue; /* both ready now: once more */
    }
    if (h->copy && !h->buf && !(h->buf = malloc(COPY_SIZE))) h->copy = 0; /* no memory: splice goes on */
    if (h->copy) { /* the buffer and the pipe are empty here */
      size_t n = want(h);
      ssize_t r = recv(h->from, h->buf, n < COPY_SIZE ? n : COPY_SIZE, MSG_DONTWAIT);
      if (r == 0) {
        h->eof = 1;
        continue;
      }
      if (r < 0) {
        if (errno != EAGAIN && errno != EINTR) {
          set_error(p, dir, errno);
          return -1;
        }
        free(h->buf); /* an idle connection holds no buffer */
        h->buf = NULL;
        return wait_on(h, h->from, EPOLLIN), 0;
      }
      if (h->limited) h->left -= (uint64_t)r;
      h->boff = 0;
      h->blen = (size_t)r;
      continue;
    }
    /* the pipe is empty here: EAGAIN means `from` has nothing yet */
    ssize_t r = splice(h->from, NULL, h->pw, NULL, want(h), SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r > 0 && h->limited) h->left -= (uint64_t)r;
    if (r == 0) {
      h->eof = 1;
      continue;
    }
    if (r < 0) {
      if (errno == EAGAIN || errno == EINTR) return wait_on(h, h->from, EPOLLIN), 0;
      set_error(p, dir, errno);
      return -1;
    }
    h->inpipe += (size_t)r;
    grow(h, h->pw, (size_t)r);
  }
}

/* each end waits for what a half waits for on it */
static void rearm(struct pair *p) {
  for (int i = 0; i < p->nends; i++) {
    struct end *e = &p->ends[i];
    if (e->fd < 0) continue;
    uint32_t want = 0;
    if (p->up.wait_fd == e->fd) want |= p->up.wait_ev;
    if (p->down.wait_fd == e->fd) want |= p->down.wait_ev;
    if (want == e->armed) continue;
    struct epoll_event ev = {.events = want, .data.ptr = e};
    if (want == 0) epoll_ctl(ep, EPOLL_CTL_DEL, e->fd, NULL);
    else epoll_ctl(ep, e->armed ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, e->fd, &ev);
    e->armed = want;
  }
}

static void close_half(struct half *h) {
  if (h->pr >= 0) close(h->pr);
  if (h->pw >= 0) close(h->pw);
  free(h->head);
  free(h->buf);
}

/* the pair is over: its descriptors close (no epoll entry stays), its report goes to Node */
static void finish(struct pair *p, struct pair **dead) {
  if (p->dead) return;
  pthread_mutex_lock(&lock); /* relayClose reads it */
  p->dead = 1;
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < p->nends; i++)
    if (p->ends[i].fd >= 0) close_end(p, p->ends[i].fd);
  for (int i = 0; i < 2; i++)
    if (p->give[i] >= 0) close(p->give[i]);
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
  if (pump(p, &p->up, "client -> destination") < 0 || pump(p, &p->down, "destination -> client") < 0 ||
      (p->up.done && p->down.done)) {
    finish(p, dead);
    return;
  }
  rearm(p);
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
  pthread_setname_np(pthread_self(), "gate-relay"); /* what top and /proc show */
  static int ctl_tag;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &ctl_tag};
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
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_typeof(env, argv[0], &t) != napi_ok || t != napi_function) {
    napi_throw_type_error(env, NULL, "relayInit(onClosed)");
    return NULL;
  }
  /* one relay per process, reporting to the environment that started it (the daemon's main thread) */
  static napi_env owner;
  bool ok = ep >= 0 && env == owner;
  if (ep < 0) {
    owner = env;
    const char *cm = getenv("GATE_RELAY_COPY");
    copy_mode = !(cm && !strcmp(cm, "off"));
    napi_value name;
    napi_create_string_utf8(env, "gate-relay", NAPI_AUTO_LENGTH, &name);
    ep = epoll_create1(EPOLL_CLOEXEC);
    ctl = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_t th;
    if (ep >= 0 && ctl >= 0 &&
        napi_create_threadsafe_function(env, argv[0], NULL, name, 0, 1, NULL, NULL, NULL, call_js, &tsfn) == napi_ok &&
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

static int open_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }

static napi_value relay_add(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  int32_t fds[2];
  bool pipes = false;
  double limits[2] = {-1, -1};
  if (ep < 0 || napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 ||
      napi_get_value_int32(env, argv[0], &fds[0]) != napi_ok ||
      napi_get_value_int32(env, argv[1], &fds[1]) != napi_ok) {
    napi_throw_type_error(env, NULL, "relayAdd(clientFd, destFd, headUp, headDown, pipes) after relayInit");
    return NULL;
  }
  if (argc >= 5) napi_get_value_bool(env, argv[4], &pipes);
  for (size_t i = 0; i < 2 && argc >= 6 + i; i++)
    if (napi_get_value_double(env, argv[5 + i], &limits[i]) != napi_ok) limits[i] = -1;
  if (pipes && (limits[0] >= 0 || limits[1] >= 0)) {
    napi_throw_type_error(env, NULL, "relayAdd: limits are for plain HTTP, never with pipes");
    return NULL;
  }
  struct pair *p = calloc(1, sizeof *p);
  if (!p) {
    napi_throw_error(env, NULL, "relayAdd: out of memory");
    return NULL;
  }
  p->up.pr = p->up.pw = p->down.pr = p->down.pw = -1;
  p->up.next_from = p->down.next_from = -1;
  p->give[0] = p->give[1] = -1;
  int upp[2] = {-1, -1}, downp[2] = {-1, -1};
  int a = fcntl(fds[0], F_DUPFD_CLOEXEC, 3);
  int b = a < 0 ? -1 : fcntl(fds[1], F_DUPFD_CLOEXEC, 3);
  int ok = b >= 0 && head_arg(env, argv[2], &p->up.head, &p->up.headlen) == 0 &&
      head_arg(env, argv[3], &p->down.head, &p->down.headlen) == 0;
  int own[2] = {-1, -1};
  ok = ok && open_pipe(own) == 0; /* up: the Unix socket to the destination (and, in legacy mode, all of up) */
  if (ok) p->up.pr = own[0], p->up.pw = own[1];
  if (ok && pipes) ok = open_pipe(upp) == 0 && open_pipe(downp) == 0;
  else if (ok && open_pipe(own) == 0) p->down.pr = own[0], p->down.pw = own[1];
  else ok = 0;
  int e = errno;
  if (!ok) {
    if (a >= 0) close(a);
    if (b >= 0) close(b);
    for (int i = 0; i < 2; i++) {
      if (upp[i] >= 0) close(upp[i]);
      if (downp[i] >= 0) close(downp[i]);
    }
    close_half(&p->up);
    close_half(&p->down);
    free(p);
    char msg[128];
    snprintf(msg, sizeof msg, "relayAdd: %s", strerror(e ? e : ENOMEM));
    napi_throw_error(env, NULL, msg);
    return NULL;
  }
  /* both are the daemon's own descriptions (libuv made them non-blocking already): said again, for this copy */
  fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
  fcntl(b, F_SETFL, fcntl(b, F_GETFL) | O_NONBLOCK);
  p->up.from = p->down.to = a;
  p->up.to = p->down.from = b;
  p->ends[0] = (struct end){.pair = p, .fd = a};
  p->ends[1] = (struct end){.pair = p, .fd = b};
  p->nends = 2;
  struct half *hs[2] = {&p->up, &p->down};
  for (int i = 0; i < 2; i++)
    if (limits[i] >= 0) hs[i]->limited = 1, hs[i]->left = (uint64_t)limits[i];
  if (pipes) {
    /* the bridge writes its client's bytes into upp and reads the destination's from downp (both pipes: a
     * pipe carries bytes and nothing else into the sandbox); the Unix socket then carries nothing more */
    p->ends[2] = (struct end){.pair = p, .fd = upp[0]};
    p->ends[3] = (struct end){.pair = p, .fd = downp[1]};
    p->nends = 4;
    p->give[0] = downp[0];
    p->give[1] = upp[1];
    p->marker = 1;
    p->up.next_from = upp[0];
  }
  __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED); /* before the thread can count it out */
  pthread_mutex_lock(&lock);
  /* read here: once it is pending the relay thread may finish and free it before this returns */
  uint32_t id = p->id = next_id++;
  if (next_id == 0) next_id = 1;
  p->next = pending;
  pending = p;
  pthread_mutex_unlock(&lock);
  uint64_t one = 1;
  if (write(ctl, &one, sizeof one) < 0) { /* the counter is far from full: cannot fail in practice */
  }
  napi_value out;
  napi_create_uint32(env, id, &out);
  return out;
}

static napi_value relay_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  uint32_t id;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_uint32(env, argv[0], &id) != napi_ok) {
    napi_throw_type_error(env, NULL, "relayClose(id)");
    return NULL;
  }
  int found = 0;
  pthread_mutex_lock(&lock);
  for (struct pair *l = pending; l && !found; l = l->next)
    if (l->id == id) l->kill = found = 1;
  for (struct pair *l = active; l && !found; l = l->next)
    if (l->id == id && !l->dead) l->kill = found = 1;
  pthread_mutex_unlock(&lock);
  if (found && ctl >= 0) {
    uint64_t one = 1;
    if (write(ctl, &one, sizeof one) < 0) {}
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

static napi_value relay_copied(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_create_double(env, (double)__atomic_load_n(&copied, __ATOMIC_RELAXED), &out);
  return out;
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* The network namespace of a socket (Linux >= 5.14), 0 when the kernel cannot say. */
static uint64_t netns_cookie(int fd) {
  uint64_t c = 0;
  socklen_t l = sizeof c;
  return getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &l) == 0 ? c : 0;
}

static const char *why_not_listener(int fd) {
  struct stat st;
  int v;
  socklen_t l = sizeof v;
  if (fstat(fd, &st) || !S_ISSOCK(st.st_mode)) return "not a socket";
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) || (v != AF_INET && v != AF_INET6)) return "not an IP socket";
  l = sizeof v;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) || v != SOCK_STREAM) return "not a stream socket";
  l = sizeof v;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) || v != 1) return "not listening";
  struct sockaddr_storage a;
  socklen_t al = sizeof a;
  if (getsockname(fd, (struct sockaddr *)&a, &al)) return "no address";
  const struct sockaddr_in *a4 = (const struct sockaddr_in *)&a;
  const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&a;
  int loop = a.ss_family == AF_INET ? a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK)
                                    : a.ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
  if (!loop) return "not bound to the loopback address";
  /* the sandbox's own namespace, never the daemon's: connections from the host's network must not reach
   * a run's proxy this way (a listener the run inherited from its caller, say) */
  int own = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  uint64_t mine = own >= 0 ? netns_cookie(own) : 0, theirs = netns_cookie(fd);
  if (own >= 0) close(own);
  if (!mine || !theirs) return "the kernel does not say which network namespace it is in";
  if (mine == theirs) return "in the daemon's own network namespace";
  return NULL;
}

static napi_value relay_check_listener(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t fd;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok) {
    napi_throw_type_error(env, NULL, "relayCheckListener(fd)");
    return NULL;
  }
  const char *why = why_not_listener(fd);
  if (why) napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &out);
  else napi_get_null(env, &out);
  return out;
}

void gate_relay_register(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback fn;
  } fns[] = {{"relayInit", relay_init},   {"relayAdd", relay_add},       {"relayClose", relay_close},
             {"relayCount", relay_count}, {"relayCopied", relay_copied}, {"relayCheckListener", relay_check_listener}};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f);
    napi_set_named_property(env, exports, fns[i].name, f);
  }
}
