/* The request channel's transport on the exec gate's C side. See gate-transport.h. */
#define _GNU_SOURCE
#include "gate-transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---------- transport ---------- */

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

ssize_t gate_recv_until(int fd, void *buf, size_t n, long deadline_ms, const char *from) {
  for (;;) {
    long left = deadline_ms - now_ms();
    if (left <= 0) return -1;
    struct pollfd pf = {fd, POLLIN, 0};
    int pr = poll(&pf, 1, (int)left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return -1;
    struct sockaddr_un a;
    socklen_t alen = sizeof a;
    ssize_t got = recvfrom(fd, buf, n, MSG_TRUNC, (struct sockaddr *)&a, &alen);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (from && !gate_sent_from(&a, alen, from)) continue; /* not the daemon's: dropped */
    return got;
  }
}

int gate_sent_from(const struct sockaddr_un *a, socklen_t len, const char *path) {
  size_t at = offsetof(struct sockaddr_un, sun_path), want = strlen(path);
  if (len <= at || a->sun_family != AF_UNIX) return 0;
  return strnlen(a->sun_path, len - at) == want && !memcmp(a->sun_path, path, want);
}

int gate_sock_addr(struct sockaddr_un *a, const char *path, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a->sun_path) return gate_fail(err, errlen, "socket path too long: %s", path);
  strcpy(a->sun_path, path);
  return 0;
}

int gate_unreachable(const char *path, int e, char *err, size_t errlen) {
  return gate_fail(
      err, errlen,
      "the gate-sh daemon is not reachable at %s (%s); nothing was run: start it with 'gate daemon start' and "
      "check 'gate status'",
      path, strerror(e));
}

/* ---------- how a client waits ---------- */

const struct gate_waits GATE_CALL_WAITS = {GATE_CLIENT_CALL,    GATE_WAIT_FIRST_MS,     GATE_WAIT_MAX_MS,
                                           GATE_WAIT_RETRIES,   GATE_WAIT_HEARTBEAT_MS, GATE_WAIT_HEARTBEAT_MS,
                                           GATE_WAIT_SILENCE_MS};

struct gate_waits gate_exec_waits(const struct gate_conf *c) {
  struct gate_waits w = {GATE_CLIENT_EXEC,
                         c->timeout_ms,
                         c->timeout_ms,
                         c->attempts - 1,
                         (long)c->timeout_ms * GATE_EXEC_WAIT_PENDING_FACTOR,
                         0,
                         0};
  return w;
}

/* The wait after send `attempt` (0: the first): doubled from the first up to the longest. */
static long wait_for(const struct gate_waits *w, int attempt) {
  long t = w->first_ms;
  for (int k = 0; k < attempt && t < w->max_ms; k++) t *= 2;
  return t < w->max_ms ? t : w->max_ms;
}

/* Every wait added up: how long a client waits in all for a daemon that never answers. */
static long budget(const struct gate_waits *w) {
  long all = 0;
  for (int k = 0; k <= w->retries; k++) all += wait_for(w, k);
  return all;
}

void gate_send_room(int fd) {
  struct timeval tv = {GATE_EXEC_WAIT_SEND_ROOM_MS / 1000, GATE_EXEC_WAIT_SEND_ROOM_MS % 1000 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* An error reply for our id in the words of client w: -1 with err, or GATE_ASK_BY_STREAM when the answer is
 * too large for a datagram and the exec gate fetches it over the stream socket (dgram: it came as one). */
static ssize_t error_reply(const struct gate_waits *w, const struct gate_reply *r, int dgram, char *err,
                           size_t errlen) {
  int too_large = !strcmp(r->code, GATE_CODE_TOO_LARGE);
  if (w->client == GATE_CLIENT_CALL) {
    if (too_large)
      return gate_fail(err, errlen,
                       "protocol error from the gate daemon: the answer is too large for the native gate-sh");
    if (!strcmp(r->code, GATE_CODE_BAD_VERSION)) return gate_fail(err, errlen, GATE_TEXT_BAD_VERSION, r->reason);
    if (!strcmp(r->code, GATE_CODE_REFUSED))
      return gate_fail(err, errlen, "%s", r->reason); /* says why and what to do */
    return gate_fail(err, errlen, GATE_TEXT_REFUSED_REQUEST, r->code, r->reason);
  }
  if (dgram && too_large) return GATE_ASK_BY_STREAM;
  /* the kernel layer's supervisor relays requests (shims/launch/relay.c) and says so when the daemon is gone */
  if (!strcmp(r->code, GATE_CODE_UNREACHABLE) && r->reason[0]) return gate_fail(err, errlen, "%s", r->reason);
  return gate_fail(err, errlen, "the daemon refused the request: %s", r->reason[0] ? r->reason : "protocol error");
}

/* A framed reply on the stream socket: 1 = final (r filled), 0 = pending or another id (keep waiting), -1 = error. */
static int take_framed(const struct gate_waits *w, const char *buf, size_t n, const char *id, struct gate_reply *r,
                       char *err, size_t errlen) {
  if (gate_parse_reply(buf, n, r, err, errlen)) return -1;
  if (strcmp(r->id, id) || !strcmp(r->type, GATE_MSG_PENDING)) return 0; /* a late reply to an earlier request */
  if (!strcmp(r->type, GATE_MSG_ERROR)) return (int)error_reply(w, r, 0, err, errlen);
  return 1;
}

int gate_stream_connect(const char *path, char *err, size_t errlen) {
  struct sockaddr_un a;
  if (gate_sock_addr(&a, path, err, errlen)) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return gate_fail(err, errlen, "socket: %s", strerror(errno));
  if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
    int e = errno;
    close(fd);
    return gate_unreachable(path, e, err, errlen);
  }
  return fd;
}

/* The request over the stream socket, its reply waited for as long as all of w's waits while nothing comes. */
static int request_stream(const struct gate_conf *c, const struct gate_waits *w, const char *id, const struct gbuf *msg,
                          struct gate_reply *r, char *err, size_t errlen) {
  int fd = gate_stream_connect(c->stream_sock, err, errlen);
  if (fd < 0) return -1;
  uint32_t len = (uint32_t)msg->len;
  unsigned char head[4] = {len & 255, len >> 8 & 255, len >> 16 & 255, len >> 24 & 255};
  struct gbuf out;
  gb_init(&out);
  gb_put(&out, (const char *)head, 4);
  gb_put(&out, msg->p, msg->len);
  size_t off = 0;
  while (!out.oom && off < out.len) {
    ssize_t w = send(fd, out.p + off, out.len - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      gb_free(&out);
      close(fd);
      return gate_unreachable(c->stream_sock, e, err, errlen);
    }
    off += (size_t)w;
  }
  gb_free(&out);
  struct gbuf in;
  gb_init(&in);
  int rc = -1;
  long silent_until = now_ms() + budget(w);
  for (;;) {
    while (in.len >= 4) {
      const unsigned char *u = (const unsigned char *)in.p;
      uint32_t n = u[0] | u[1] << 8 | u[2] << 16 | (uint32_t)u[3] << 24;
      if (n > GATE_MAX_FRAME) {
        gate_fail(err, errlen, "malformed reply from the daemon (frame too large)");
        goto out;
      }
      if (in.len < 4 + n) break;
      int t = take_framed(w, in.p + 4, n, id, r, err, errlen);
      if (t) {
        rc = t > 0 ? 0 : -1;
        goto out;
      }
      memmove(in.p, in.p + 4 + n, in.len - 4 - n);
      in.len -= 4 + n;
      silent_until = now_ms() + budget(w);
    }
    long left = silent_until - now_ms();
    if (left <= 0) {
      gate_fail(err, errlen, "the gate-sh daemon did not answer (timeout); nothing was run: check 'gate status'");
      goto out;
    }
    struct pollfd pf = {fd, POLLIN, 0};
    int pr = poll(&pf, 1, (int)left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    char chunk[65536];
    ssize_t got = recv(fd, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      gate_fail(err, errlen,
                "the gate-sh daemon closed the connection without an answer; nothing was run: check 'gate status'");
      goto out;
    }
    gb_put(&in, chunk, (size_t)got);
    if (in.oom) {
      gate_fail(err, errlen, "out of memory");
      goto out;
    }
  }
out:
  gb_free(&in);
  close(fd);
  return rc;
}

/* ---------- the reply socket ---------- */

/* A process that asks more than once (make, xargs-like spawners, system() in a loop: their checks run in
 * the spawning process) keeps one bound reply socket instead of creating and deleting a socket file per
 * request, which is most of a request's kernel time on a disk filesystem. It belongs to the pid that
 * bound it: a child never reads its parent's replies — it leaves the inherited one alone (not even
 * closing it: the number may be the program's by now, and a vfork child shares this memory with its
 * parent, so it must not change anything here either) and uses one-off sockets. One request at a time uses it
 * (busy); a concurrent one from another thread gets a one-off socket. Before the descriptor is used it is
 * checked to still be the same socket (the program may have closed it and reused the number). A
 * one-request process — the usual forked child that asks and then execs — binds a one-off socket as
 * before, so nothing outlives it; gate_reply_release() removes a kept one before exec and at exit. */
static struct {
  int busy, fd, uses;
  pid_t pid;
  dev_t dev;
  ino_t ino;
  char path[sizeof((struct sockaddr_un *)0)->sun_path];
} RS = {0, -1, 0, 0, 0, 0, ""};

static int kept_usable(void) {
  struct stat st;
  return fstat(RS.fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == RS.dev && st.st_ino == RS.ino;
}

/* A bound reply socket: the kept one (*kept = 1, path filled) or a new one bound at path. -1 with err. */
static int reply_open(const char *path, int *kept, char *err, size_t errlen) {
  struct sockaddr_un me;
  *kept = 0;
  if (!__atomic_exchange_n(&RS.busy, 1, __ATOMIC_ACQUIRE)) {
    pid_t pid = getpid();
    if (RS.pid == pid && RS.fd >= 0 && kept_usable()) {
      *kept = 1;
      return RS.fd;
    }
    if (RS.pid == pid && RS.fd >= 0) {
      unlink(RS.path);
      RS.fd = -1;
    } /* the program closed it */
    if (RS.pid != pid && RS.fd < 0) {
      RS.pid = pid;
      RS.uses = 0;
    } /* counting starts for this pid */
    if (RS.pid == pid && RS.uses++ >= 1) *kept = 1; /* asked before: keep this one */
    else __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE);
  }
  int fd = -1;
  if (gate_sock_addr(&me, path, err, errlen)) goto fail;
  fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    gate_fail(err, errlen, "socket: %s", strerror(errno));
    goto fail;
  }
  /* never on 0-2: in a program whose stdin/stdout/stderr is closed, a kept socket there would be what it
   * later reads or writes as stdio, and its own next open would not get the number it expects */
  if (fd <= 2) {
    int up = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    fd = up;
    if (fd < 0) {
      gate_fail(err, errlen, "socket: %s", strerror(errno));
      goto fail;
    }
  }
  mode_t old = umask(077);
  int b = bind(fd, (struct sockaddr *)&me, sizeof me);
  umask(old);
  if (b) {
    gate_fail(err, errlen, "cannot bind the reply socket %s (%s); nothing was run", path, strerror(errno));
    goto fail;
  }
  gate_send_room(fd);
  struct stat st;
  if (*kept && fstat(fd, &st) == 0) {
    RS.fd = fd;
    RS.dev = st.st_dev;
    RS.ino = st.st_ino;
    memcpy(RS.path, me.sun_path, sizeof RS.path);
  } else if (*kept) {
    *kept = 0;
    __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE);
  }
  return fd;
fail:
  if (fd >= 0) close(fd);
  if (*kept) {
    *kept = 0;
    __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE);
  }
  return -1;
}

static void reply_done(int fd, const char *path, int kept) {
  if (kept) {
    __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE);
    return;
  }
  close(fd);
  unlink(path);
}

void gate_reply_release(void) {
  if (__atomic_load_n(&RS.fd, __ATOMIC_RELAXED) < 0) return; /* the usual case: nothing kept */
  if (__atomic_exchange_n(&RS.busy, 1, __ATOMIC_ACQUIRE)) return; /* in use by another thread: it stays */
  if (RS.pid == getpid() && RS.fd >= 0) {
    if (kept_usable()) close(RS.fd);
    unlink(RS.path);
    RS.fd = -1;
    RS.uses = 0;
  }
  __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE);
}

/* One datagram to `to` carrying `carry` (SCM_RIGHTS) when it is a descriptor. */
static ssize_t send_request(int fd, const struct sockaddr_un *to, const struct gbuf *msg, int carry) {
  struct iovec iov = {msg->p, msg->len};
  union {
    struct cmsghdr h;
    char b[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = {.msg_name = (void *)to, .msg_namelen = sizeof *to, .msg_iov = &iov, .msg_iovlen = 1};
  if (carry >= 0) {
    memset(&u, 0, sizeof u);
    m.msg_control = u.b;
    m.msg_controllen = sizeof u.b;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &carry, sizeof carry);
  }
  ssize_t s;
  do s = sendmsg(fd, &m, MSG_NOSIGNAL);
  while (s < 0 && errno == EINTR);
  return s;
}

/* ---------- the request loop ---------- */

int gate_sandbox_denied(int e) { return e == EPERM || e == EACCES || e == EROFS; }

/* A send that failed with e (not for want of room), in the words of client w. */
static ssize_t send_failed(const struct gate_link *l, const struct gate_waits *w, int e, int sent, int pending,
                           char *err, size_t errlen) {
  const char *to = l->to->sun_path;
  if (w->client == GATE_CLIENT_EXEC && l->via_supervisor)
    return gate_fail(err, errlen, "the exec supervisor of this run is gone (%s); nothing more can run in this run",
                     strerror(e));
  if (w->client == GATE_CLIENT_EXEC) return gate_unreachable(to, e, err, errlen);
  if (!sent && (e == ENOENT || e == ECONNREFUSED || gate_sandbox_denied(e))) return GATE_ASK_NO_DAEMON;
  if (e == ENOENT || e == ECONNREFUSED)
    return gate_fail(err, errlen, GATE_TEXT_DIED, pending ? GATE_TEXT_DIED_PENDING : GATE_TEXT_DIED_BEFORE);
  return gate_fail(err, errlen, "send to %s failed (%s)", to, strerror(e));
}

ssize_t gate_ask(const struct gate_link *l, const struct gate_waits *w, const char *id, const struct gbuf *msg,
                 char *buf, size_t room, struct gate_reply *r, char *err, size_t errlen) {
  int attempts = 0, pending = 0, sent = 0;
  long last_life = now_ms();
  char ping_id[96] = "";
  struct gbuf ping;
  gb_init(&ping);
  const struct gbuf *out = msg; /* what goes next: the request (first, or a resend) or a heartbeat ping */
  ssize_t rc = -1;
  for (;;) {
    if (out->oom) {
      rc = gate_fail(err, errlen, "out of memory");
      goto done;
    }
    if (send_request(l->fd, l->to, out, l->carry) >= 0) sent = 1;
    else if (errno != EAGAIN && errno != ENOBUFS) {
      rc = send_failed(l, w, errno, sent, pending, err, errlen);
      goto done;
    } else if (w->client == GATE_CLIENT_CALL) {
      rc = gate_fail(err, errlen,
                     "the gate daemon is overloaded (its queue stayed full for %.1f s); retry, or check 'gate status'",
                     GATE_EXEC_WAIT_SEND_ROOM_MS / 1000.0);
      goto done;
    } /* the exec gate: the queue stayed full; this send is lost, and resent when its wait ends */
    long deadline = now_ms() + (pending && w->heartbeat_ms ? w->heartbeat_ms : wait_for(w, attempts));
    for (;;) {
      ssize_t n = gate_recv_until(l->fd, buf, room, deadline, l->from);
      if (n < 0) break;
      if ((size_t)n > room) {
        rc = w->client == GATE_CLIENT_EXEC
            ? GATE_ASK_BY_STREAM
            : gate_fail(err, errlen, "protocol error from the gate daemon: reply too large");
        goto done;
      }
      char perr[256];
      if (gate_parse_reply(buf, (size_t)n, r, perr, sizeof perr)) {
        rc = gate_fail(err, errlen, w->client == GATE_CLIENT_EXEC ? "%s" : "protocol error from the gate daemon: %s",
                       perr);
        goto done;
      }
      if (ping_id[0] && !strcmp(r->id, ping_id)) {
        last_life = now_ms();
        continue;
      }
      if (strcmp(r->id, id)) continue; /* a late answer to something else */
      last_life = now_ms();
      if (!strcmp(r->type, GATE_MSG_PENDING)) { /* a person is asked: the sends are counted anew */
        if (!pending && l->on_pending) l->on_pending();
        pending = 1;
        attempts = 0;
        deadline = now_ms() + w->pending_ms;
        continue;
      }
      rc = strcmp(r->type, GATE_MSG_ERROR) ? n : error_reply(w, r, 1, err, errlen);
      goto done;
    }
    if (pending && w->heartbeat_ms) { /* while a person is asked: a ping proves the daemon alive */
      if (now_ms() - last_life > w->silence_ms) {
        rc = gate_fail(err, errlen, GATE_TEXT_SILENT);
        goto done;
      }
      gate_new_id(ping_id, sizeof ping_id);
      ping.len = 0;
      gb_puts(&ping, GATE_MSG_HEAD);
      gb_json_str(&ping, ping_id, strlen(ping_id), 0);
      gb_puts(&ping, GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_PING) "}");
      out = &ping;
      continue;
    }
    if (attempts >= w->retries) {
      if (w->client == GATE_CLIENT_EXEC)
        rc = gate_fail(err, errlen,
                       "the gate-sh daemon did not answer %d attempts; nothing was run: check 'gate status'",
                       w->retries + 1);
      else {
        char secs[32];
        snprintf(secs, sizeof secs, "%.1f", budget(w) / 1000.0);
        rc = gate_fail(err, errlen, GATE_TEXT_NOT_ANSWERING, secs, "");
      }
      goto done;
    }
    attempts++;
    out = msg;
  }
done:
  gb_free(&ping);
  return rc;
}

/* The reply channel. To the daemon: a reply socket bound in the client folder (above). To the kernel
 * layer's supervisor (same process tree, GATE_KERNEL_SOCK): a socket pair whose other end goes with the
 * request, so nothing is created in the filesystem per request (a socket file's create and unlink on a disk
 * filesystem cost more than the rest of the request); the supervisor answers on that end and closes it. */
int gate_request(const struct gate_conf *c, const char *id, const struct gbuf *msg, struct gate_reply *r, char *err,
                 size_t errlen) {
  struct gate_waits w = gate_exec_waits(c);
  if (msg->oom) return gate_fail(err, errlen, "out of memory building the request");
  if (msg->len > GATE_MAX_DATAGRAM) return request_stream(c, &w, id, msg, r, err, errlen);
  struct sockaddr_un to;
  if (gate_sock_addr(&to, c->request_sock, err, errlen)) return -1;
  char path[256] = "";
  int kept = 0;
  struct gate_link l = {-1, &to, c->request_sock, -1, c->via_supervisor, NULL};
  if (c->via_supervisor) {
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp))
      return gate_fail(err, errlen, "socketpair: %s; nothing was run", strerror(errno));
    l.fd = sp[0];
    l.carry = sp[1];
    l.from = NULL;
    gate_send_room(l.fd);
  } else {
    gate_join(path, sizeof path, c->client_dir, "/", id, ".sock");
    if ((l.fd = reply_open(path, &kept, err, errlen)) < 0) return -1;
  }
  /* On the stack, not a 64 KiB heap block: exec answers are a few hundred bytes (see GATE_REPLY_ROOM). */
  char buf[GATE_REPLY_ROOM];
  ssize_t n = gate_ask(&l, &w, id, msg, buf, sizeof buf, r, err, errlen);
  if (l.carry >= 0) {
    close(l.carry);
    close(l.fd);
  } else reply_done(l.fd, path, kept);
  /* A reply too large for buf, or for a datagram: the daemon keeps every reply longer than
   * GATE_REPLY_ROOM by request id and answers a repeated id from that cache (never deciding twice), so
   * the same request on the stream socket fetches it whole. */
  if (n == GATE_ASK_BY_STREAM) return request_stream(c, &w, id, msg, r, err, errlen);
  return n < 0 ? -1 : 0;
}
