/*
 * The relay (docs/exec-gate.md, "The kernel layer decides first"): the LD_PRELOAD layer's requests reach
 * the daemon through the
 * supervisor (GATE_KERNEL_SOCK, a datagram socket in the client folder). The supervisor learns each sender's
 * pid from the kernel (SCM_CREDENTIALS, in its own pid namespace: the pid a notification names), answers
 * what it can itself (a held decision, a landed answer, a kept grant: pairing.c, reuse.c), forwards the rest
 * with the sender's pid as the daemon sees it, and relays every reply back, pairing an exec's Run with its
 * pid (pending.c). This file: the two sockets, the relay thread, and the answers sent back to the tree.
 * Trust boundary: requests come from the tree (any process of it can write to the socket): bounded, never
 * trusted beyond pairing an exec the daemon has just answered with exactly those inputs; replies are taken
 * only from the daemon's own socket.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct {
  const struct launch *l;
  int ksock, dsock; /* the tree's side (requests in, replies out); the daemon's side */
  char kpath[108], dpath[108];
} R = {.ksock = -1, .dsock = -1};

#define EXEC_TYPE GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_EXEC)

const char *relay_path(void) { return R.kpath; }
int relay_ksock(void) { return R.ksock; }
int relay_dsock(void) { return R.dsock; }

void relay_close(void) {
  if (R.ksock >= 0) close(R.ksock);
  if (R.dsock >= 0) close(R.dsock);
  R.ksock = R.dsock = -1;
}

void peer_send(const struct peer *to, const char *msg, size_t n) {
  ssize_t s;
  /* unsent (the sender gone, its queue full): it times out and fails closed */
  if (to->fd >= 0) {
    do s = send(to->fd, msg, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (s < 0 && errno == EINTR);
  } else {
    do s = sendto(R.ksock, msg, n, MSG_NOSIGNAL, (const struct sockaddr *)&to->addr, to->len);
    while (s < 0 && errno == EINTR);
  }
}

void peer_close(struct peer *to) {
  if (to->fd >= 0) close(to->fd);
  to->fd = -1;
}

void answer_here(const struct peer *to, const char *id, const char *token) {
  struct gbuf r;
  gb_init(&r);
  gb_puts(&r, GATE_MSG_HEAD);
  gb_json_str(&r, id, strlen(id), 0);
  gb_puts(&r, EXEC_TYPE GATE_KEY(GATE_F_ACTION));
  if (token) {
    gb_puts(&r, "{" GATE_KEY1(GATE_F_TYPE) GATE_QUOTE(GATE_ACTION_ESCALATE) "}" GATE_KEY(GATE_F_ESCALATION_TOKEN));
    gb_json_str(&r, token, strlen(token), 0);
  } else gb_puts(&r, "{" GATE_KEY1(GATE_F_TYPE) GATE_QUOTE(GATE_ACTION_RUN) "}");
  gb_puts(&r, "}");
  if (!r.oom) peer_send(to, r.p, r.len);
  gb_free(&r);
}

int relay_notify(const char *path, const char *msg, size_t n) {
  struct sockaddr_un to = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof to.sun_path || n > GATE_MAX_DATAGRAM) return -1;
  strcpy(to.sun_path, path);
  ssize_t sent;
  do sent = sendto(R.dsock, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
  while (sent < 0 && errno == EINTR);
  return sent < 0 ? -1 : 0;
}

/* An Escalate the kernel layer let go on in place is the one answer a new program's constructor must ask
 * for (it escalates with the token; a Run it need not hear of): the supervisor says so with a file named
 * <GATE_KERNEL_SOCK>.e<pid> (the pid as the process knows itself) while that answer waits in LANDED, and
 * a constructor that finds none does not ask (gate-common.h, GATE_ESCALATING). A file made or removed by
 * the run itself only adds a question or turns an escalation into a run in place, inside the sandbox. */
void escalating(long own, int on) {
  char path[sizeof R.kpath + 32], n[24];
  gate_join(path, sizeof path, R.kpath, GATE_ESCALATING, gate_num(n, (unsigned long)own, 10), NULL);
  if (!on) {
    unlink(path);
    return;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd >= 0) close(fd); /* none: the constructor does not ask, and the exec runs in place (see above) */
}

void relay_remove(void) {
  /* the escalation files of answers nobody asked for */
  const char *base = strrchr(R.kpath, '/');
  DIR *d = base ? opendir(R.l->conf.client_dir) : NULL;
  if (d) {
    char prefix[128];
    size_t pl = gate_join(prefix, sizeof prefix, base + 1, GATE_ESCALATING, NULL, NULL);
    for (struct dirent *e; (e = readdir(d));)
      if (!strncmp(e->d_name, prefix, pl)) unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
  }
  unlink(R.kpath);
  unlink(R.dpath);
}

/* One request from the tree's socket: its sender's pid (SCM_CREDENTIALS) and reply socket (SCM_RIGHTS). */
static void take_request(char *buf, size_t room) {
  struct peer from = {.fd = -1};
  union {
    struct cmsghdr h;
    char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))];
  } u;
  struct iovec iov = {buf, room - 1};
  struct msghdr m = {.msg_name = &from.addr,
                     .msg_namelen = sizeof from.addr,
                     .msg_iov = &iov,
                     .msg_iovlen = 1,
                     .msg_control = u.b,
                     .msg_controllen = sizeof u.b};
  ssize_t n = recvmsg(R.ksock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  from.len = n >= 0 ? m.msg_namelen : 0;
  int credited = 0;
  struct ucred cr;
  for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET) continue;
    if (c->cmsg_type == SCM_CREDENTIALS) {
      memcpy(&cr, CMSG_DATA(c), sizeof cr);
      credited = 1;
    }
    if (c->cmsg_type != SCM_RIGHTS) continue;
    /* the reply socket: one descriptor; any more are closed, and a second one replaces nothing */
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
      struct stat st;
      int sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
      if (from.fd < 0 && sock && i == 0) from.fd = fd;
      else close(fd);
    }
  }
  if (n > 0 && credited && !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
    buf[n] = 0;
    pending_request(R.l, R.dsock, buf, (size_t)n, &from, cr.pid);
  } else peer_close(&from);
}

static void *relay(void *unused) {
  (void)unused;
  static char buf[GATE_MAX_DATAGRAM + 1];
  for (;;) {
    struct pollfd pf[2] = {{R.ksock, POLLIN, 0}, {R.dsock, POLLIN, 0}};
    if (poll(pf, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pf[0].revents & POLLIN) take_request(buf, sizeof buf);
    if (!(pf[1].revents & POLLIN)) continue;
    /* only the daemon answers: this socket's name is known inside the run (the request side's with one
     * letter changed), and a reply a process of the run made for its own request would pair its exec */
    struct sockaddr_un from;
    socklen_t flen = sizeof from;
    ssize_t n = recvfrom(R.dsock, buf, sizeof buf - 1, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
    if (n > 0 && gate_sent_from(&from, flen, R.l->conf.request_sock)) {
      buf[n] = 0;
      pending_reply(buf, (size_t)n);
    }
  }
  return NULL;
}

int relay_start(void) {
  pthread_t t;
  if (!pthread_create(&t, NULL, relay, NULL)) return 0;
  unlink(R.kpath);
  unlink(R.dpath);
  R.ksock = -1;
  return -1;
}

/* Reachable at the same path inside the sandbox. Named before the tree root is forked (its GATE_KERNEL_SOCK),
 * bound after (relay_open), while the root installs its filter: none of its execs passes before the workers
 * start, and they start after both. */
int relay_name(const struct launch *l, char *err, size_t errlen) {
  char id[48], pid[24], rnd[24];
  R.l = l;
  /* short (sun_path is 107 bytes, and the run's client folder is one level deeper than the shared one was):
   * unique in the folder by the pid, and by 32 random bits across pid namespaces; a clash is EADDRINUSE */
  unsigned r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
    r = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL);
  gate_join(id, sizeof id, gate_num(pid, (unsigned long)getpid(), 16), "-", gate_num(rnd, r, 16), NULL);
  /* a path cut at sun_path's limit would bind somewhere else: said, never bound */
  if (gate_join(R.kpath, sizeof R.kpath, l->conf.client_dir, "/k", id, ".sock") + 1 >= sizeof R.kpath ||
      gate_join(R.dpath, sizeof R.dpath, l->conf.client_dir, "/d", id, ".sock") + 1 >= sizeof R.dpath) {
    return gate_fail(err, errlen,
                     "cannot open the supervisor's sockets in %s: the path is too long for a socket "
                     "(set XDG_RUNTIME_DIR to a shorter folder)",
                     l->conf.client_dir);
  }
  return 0;
}

int relay_open(char *err, size_t errlen) {
  R.ksock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  R.dsock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int one = 1;
  struct sockaddr_un a = {.sun_family = AF_UNIX}, b = {.sun_family = AF_UNIX};
  gate_join(a.sun_path, sizeof a.sun_path, R.kpath, NULL, NULL, NULL);
  gate_join(b.sun_path, sizeof b.sun_path, R.dpath, NULL, NULL, NULL);
  /* 0666 on the request side: inside the sandbox the tree may be another uid (user namespace) */
  mode_t old = umask(077);
  int ok = R.ksock >= 0 && R.dsock >= 0 && setsockopt(R.ksock, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) == 0 &&
      bind(R.ksock, (struct sockaddr *)&a, sizeof a) == 0 && bind(R.dsock, (struct sockaddr *)&b, sizeof b) == 0;
  umask(old);
  if (ok) return 0;
  return gate_fail(err, errlen, "cannot open the supervisor's sockets in %s: %s", R.l->conf.client_dir,
                   strerror(errno));
}
