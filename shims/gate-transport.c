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
  if (strlen(path) >= sizeof a->sun_path) {
    snprintf(err, errlen, "socket path too long: %s", path);
    return -1;
  }
  strcpy(a->sun_path, path);
  return 0;
}

int gate_unreachable(const char *path, int e, char *err, size_t errlen) {
  snprintf(err, errlen,
           "the gate-sh daemon is not reachable at %s (%s); nothing was run: start it with 'gate daemon start' and "
           "check 'gate status'",
           path, strerror(e));
  return -1;
}

/* A reply for our id: 1 = final (r filled), 0 = pending/other id (keep waiting), -1 = error, 2 = the
 * answer is too large for a datagram (fetch it over the stream socket; only when dgram is set). */
static int take(const char *buf, size_t n, const char *id, struct gate_reply *r, char *err, size_t errlen, int dgram) {
  if (gate_parse_reply(buf, n, r, err, errlen)) return -1;
  if (strcmp(r->id, id)) return 0; /* a late reply to an earlier request: not ours */
  if (!strcmp(r->type, GATE_MSG_PENDING)) return 0;
  if (dgram && !strcmp(r->type, GATE_MSG_ERROR) && !strcmp(r->code, GATE_CODE_TOO_LARGE)) return 2;
  /* the kernel layer's supervisor relays requests (shims/launch/relay.c) and says so when the daemon is gone */
  if (!strcmp(r->type, GATE_MSG_ERROR) && !strcmp(r->code, GATE_CODE_UNREACHABLE) && r->reason[0]) {
    snprintf(err, errlen, "%s", r->reason);
    return -1;
  }
  if (!strcmp(r->type, GATE_MSG_ERROR)) {
    snprintf(err, errlen, "the daemon refused the request: %s", r->reason[0] ? r->reason : "protocol error");
    return -1;
  }
  return 1;
}

int gate_stream_connect(const char *path, char *err, size_t errlen) {
  struct sockaddr_un a;
  if (gate_sock_addr(&a, path, err, errlen)) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(err, errlen, "socket: %s", strerror(errno));
    return -1;
  }
  if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
    int e = errno;
    close(fd);
    return gate_unreachable(path, e, err, errlen);
  }
  return fd;
}

static int request_stream(const struct gate_conf *c, const char *id, const struct gbuf *msg, struct gate_reply *r,
                          char *err, size_t errlen) {
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
  long silent_until = now_ms() + (long)c->timeout_ms * c->attempts;
  for (;;) {
    while (in.len >= 4) {
      const unsigned char *u = (const unsigned char *)in.p;
      uint32_t n = u[0] | u[1] << 8 | u[2] << 16 | (uint32_t)u[3] << 24;
      if (n > GATE_MAX_FRAME) {
        snprintf(err, errlen, "malformed reply from the daemon (frame too large)");
        goto out;
      }
      if (in.len < 4 + n) break;
      int t = take(in.p + 4, n, id, r, err, errlen, 0);
      if (t) {
        rc = t > 0 ? 0 : -1;
        goto out;
      }
      memmove(in.p, in.p + 4 + n, in.len - 4 - n);
      in.len -= 4 + n;
      silent_until = now_ms() + (long)c->timeout_ms * c->attempts;
    }
    long left = silent_until - now_ms();
    if (left <= 0) {
      snprintf(err, errlen, "the gate-sh daemon did not answer (timeout); nothing was run: check 'gate status'");
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
      snprintf(err, errlen,
               "the gate-sh daemon closed the connection without an answer; nothing was run: check 'gate status'");
      goto out;
    }
    gb_put(&in, chunk, (size_t)got);
    if (in.oom) {
      snprintf(err, errlen, "out of memory");
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
    snprintf(err, errlen, "socket: %s", strerror(errno));
    goto fail;
  }
  /* never on 0-2: in a program whose stdin/stdout/stderr is closed, a kept socket there would be what it
   * later reads or writes as stdio, and its own next open would not get the number it expects */
  if (fd <= 2) {
    int up = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    fd = up;
    if (fd < 0) {
      snprintf(err, errlen, "socket: %s", strerror(errno));
      goto fail;
    }
  }
  mode_t old = umask(077);
  int b = bind(fd, (struct sockaddr *)&me, sizeof me);
  umask(old);
  if (b) {
    snprintf(err, errlen, "cannot bind the reply socket %s (%s); nothing was run", path, strerror(errno));
    goto fail;
  }
  struct timeval tv = {1, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
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

/* The reply channel. To the daemon: a reply socket bound in the client folder (above). To the kernel
 * layer's supervisor (same process tree, GATE_KERNEL_SOCK): a socket pair whose other end goes with the
 * request, so nothing is created in the filesystem per request (a socket file's create and unlink on a disk
 * filesystem cost more than the rest of the request); the supervisor answers on that end and closes it. */
int gate_request(const struct gate_conf *c, const char *id, const struct gbuf *msg, struct gate_reply *r, char *err,
                 size_t errlen) {
  if (msg->oom) {
    snprintf(err, errlen, "out of memory building the request");
    return -1;
  }
  if (msg->len > GATE_MAX_DATAGRAM) return request_stream(c, id, msg, r, err, errlen);
  struct sockaddr_un to;
  if (gate_sock_addr(&to, c->request_sock, err, errlen)) return -1;
  char path[256] = "";
  int kept = 0, carry = -1, fd;
  if (c->via_supervisor) {
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp)) {
      snprintf(err, errlen, "socketpair: %s; nothing was run", strerror(errno));
      return -1;
    }
    fd = sp[0];
    carry = sp[1];
    struct timeval tv = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  } else {
    gate_join(path, sizeof path, c->client_dir, "/", id, ".sock");
    fd = reply_open(path, &kept, err, errlen);
    if (fd < 0) return -1;
  }
  int rc = -1, by_stream = 0;
  /* On the stack, not a 64 KiB heap block: exec answers are a few hundred bytes (see GATE_REPLY_ROOM). */
  char buf[GATE_REPLY_ROOM];
  for (int attempt = 0; attempt < c->attempts; attempt++) {
    ssize_t s = send_request(fd, &to, msg, carry);
    if (s < 0 && errno != EAGAIN && errno != ENOBUFS && c->via_supervisor) {
      snprintf(err, errlen, "the exec supervisor of this run is gone (%s); nothing more can run in this run",
               strerror(errno));
      goto out;
    }
    if (s < 0 && errno != EAGAIN && errno != ENOBUFS) {
      gate_unreachable(c->request_sock, errno, err, errlen);
      goto out;
    }
    long deadline = now_ms() + c->timeout_ms;
    for (;;) {
      ssize_t n = gate_recv_until(fd, buf, sizeof buf, deadline, c->via_supervisor ? NULL : c->request_sock);
      if (n < 0) break;
      if ((size_t)n > sizeof buf) {
        by_stream = 1;
        goto out;
      }
      int t = take(buf, (size_t)n, id, r, err, errlen, 1);
      if (t < 0) goto out;
      if (t == 2) {
        by_stream = 1;
        goto out;
      }
      if (t > 0) {
        rc = 0;
        goto out;
      }
      if (!strcmp(r->type, GATE_MSG_PENDING) && !strcmp(r->id, id)) {
        deadline = now_ms() + c->timeout_ms * 3L;
        attempt = 0;
      }
    }
  }
  snprintf(err, errlen, "the gate-sh daemon did not answer %d attempts; nothing was run: check 'gate status'",
           c->attempts);
out:
  if (carry >= 0) {
    close(carry);
    close(fd);
  } else reply_done(fd, path, kept);
  /* A reply too large for buf, or for a datagram: the daemon keeps every reply longer than
   * GATE_REPLY_ROOM by request id and answers a repeated id from that cache (never deciding twice), so
   * the same request on the stream socket fetches it whole. */
  if (by_stream) return request_stream(c, id, msg, r, err, errlen);
  return rc;
}
