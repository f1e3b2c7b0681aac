/* Benchmark program (built with gcc -static by test/bench/network.bench.ts, part `floor`): what the
 * fastest plain user-space TCP relay reaches on this machine, with none of gate-sh's work (no proxy
 * protocol, no decision, no sandbox, no audit), so that the native relay's CONNECT tunnel
 * (native/gate_relay.c) can be set against a floor and not only against a direct connection. It listens
 * on LISTEN (host:port on 127.0.0.x, port 0: any; the port is printed on stdout, one line, once it
 * listens), accepts one connection at a time, connects UPSTREAM for it and moves bytes both ways until
 * both ends said end of file (half-closes passed on with shutdown), then prints one line for it (bytes
 * up, bytes down, of those down sent from mapped pages, its CPU: user and system µs) and takes the next.
 *
 * Usage: relay-floor LISTEN UPSTREAM MODE [OPTION...]
 *   MODE  copy     one thread, non-blocking sockets and poll, recv/send through a buffer per direction
 *         splice   one thread, non-blocking, splice(2) socket → pipe → socket, a pipe per direction
 *         copy-threads, splice-threads   the same with a thread per direction and blocking calls (no
 *                  poll, no EAGAIN: the fewest system calls a byte can cost)
 *         zc       as copy-threads, but the download direction maps the upstream socket's received pages
 *                  (getsockopt TCP_ZEROCOPY_RECEIVE) and sends from them, one copy instead of two; the
 *                  kernel's fallback copy (recv) for what it cannot map
 *   OPTION buf=N        the copy buffer, or the pipe's size (F_SETPIPE_SZ), bytes (default 1 MiB)
 *          rcvbuf=N sndbuf=N   SO_RCVBUF / SO_SNDBUF on both of the relay's sockets (default: autotuned)
 *          nodelay=1    TCP_NODELAY on both (default off)
 *          mss=N        TCP_MAXSEG on the upstream socket, at most 32767 (for zc: segments of whole pages,
 *                       which alone can be mapped)
 *          cpu=N        pins the relay (all its threads) to CPU N
 *          busypoll=N   SO_BUSY_POLL N µs (raising it above net.core.busy_read needs CAP_NET_ADMIN: then
 *                       the program says so and goes on without)
 * Not pure: sockets, pipes, threads, stdout. Not a gate and no trust boundary: it carries whatever it
 * is given to the one upstream it was told, for a benchmark on loopback only. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef TCP_ZEROCOPY_RECEIVE
#define TCP_ZEROCOPY_RECEIVE 35
#endif
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif

static size_t buf_size = 1 << 20;
static int rcvbuf, sndbuf, nodelay, mss, busypoll, cpu = -1;

static void die(const char *what) {
  fprintf(stderr, "relay-floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

static struct sockaddr_in addr_of(const char *s) {
  struct sockaddr_in a = {.sin_family = AF_INET};
  char host[64];
  const char *colon = strrchr(s, ':');
  if (!colon || (size_t)(colon - s) >= sizeof host) {
    fprintf(stderr, "relay-floor: not host:port: %s\n", s);
    exit(2);
  }
  memcpy(host, s, (size_t)(colon - s));
  host[colon - s] = 0;
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
    fprintf(stderr, "relay-floor: not an IPv4 address: %s\n", host);
    exit(2);
  }
  a.sin_port = htons((uint16_t)atoi(colon + 1));
  return a;
}

/* the options every relay socket gets (SO_RCVBUF before connect/listen: it sets the window scale) */
static void tune(int fd) {
  int one = 1;
  if (rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf)) die("SO_RCVBUF");
  if (sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf)) die("SO_SNDBUF");
  if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)) die("TCP_NODELAY");
  if (busypoll && setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &busypoll, sizeof busypoll)) {
    fprintf(stderr, "relay-floor: SO_BUSY_POLL %d: %s (going on without)\n", busypoll, strerror(errno));
    busypoll = 0;
  }
}

static void set_nonblock(int fd, int on) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK)) die("fcntl");
}

/* One direction of a connection. */
struct dir {
  int from, to;
  int pr, pw; /* splice: the pipe */
  char *buf;
  size_t off, len; /* copy: bytes in buf not yet sent; splice: len = bytes in the pipe */
  int eof, done;
  unsigned long long bytes; /* sent to `to` */
  unsigned long long mapped; /* zc: of which sent from mapped pages */
};

static void end_dir(struct dir *d) {
  shutdown(d->to, SHUT_WR);
  d->done = 1;
}

/* --- one thread, non-blocking: move what can move now; returns what to poll for (0: nothing) --- */
static short step_copy(struct dir *d, int *on_to) {
  for (;;) {
    if (d->done) return 0;
    if (d->len > 0) {
      ssize_t w = send(d->to, d->buf + d->off, d->len, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EAGAIN || errno == EINTR) return *on_to = 1, POLLOUT;
        return end_dir(d), 0;
      }
      d->off += (size_t)w, d->len -= (size_t)w, d->bytes += (size_t)w;
      continue;
    }
    if (d->eof) return end_dir(d), 0;
    ssize_t r = recv(d->from, d->buf, buf_size, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return *on_to = 0, POLLIN;
    if (r <= 0) {
      d->eof = 1;
      continue;
    }
    d->off = 0, d->len = (size_t)r;
  }
}

static short step_splice(struct dir *d, int *on_to) {
  for (;;) {
    if (d->done) return 0;
    if (d->len > 0) {
      ssize_t w = splice(d->pr, NULL, d->to, NULL, d->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (w < 0) {
        if (errno == EAGAIN || errno == EINTR) return *on_to = 1, POLLOUT;
        return end_dir(d), 0;
      }
      d->len -= (size_t)w, d->bytes += (size_t)w;
      continue;
    }
    if (d->eof) return end_dir(d), 0;
    ssize_t r = splice(d->from, NULL, d->pw, NULL, buf_size, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return *on_to = 0, POLLIN;
    if (r <= 0) {
      d->eof = 1;
      continue;
    }
    d->len = (size_t)r;
  }
}

static void relay_poll(struct dir ds[2], int spliced) {
  for (;;) {
    struct pollfd pf[4];
    int n = 0;
    for (int i = 0; i < 2; i++) {
      int on_to = 0;
      short ev = spliced ? step_splice(&ds[i], &on_to) : step_copy(&ds[i], &on_to);
      if (ev) pf[n++] = (struct pollfd){.fd = on_to ? ds[i].to : ds[i].from, .events = ev};
    }
    if (n == 0) return;
    if (poll(pf, (nfds_t)n, -1) < 0 && errno != EINTR) die("poll");
  }
}

/* --- a thread per direction, blocking calls --- */
/* The first n bytes of d's buffer sent whole, blocking: 0, or -1 when the socket failed. */
static int send_all(struct dir *d, size_t n) {
  for (size_t off = 0; off < n;) {
    ssize_t w = send(d->to, d->buf + off, n - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    off += (size_t)w, d->bytes += (size_t)w;
  }
  return 0;
}

static void *run_copy(void *arg) {
  struct dir *d = arg;
  for (;;) {
    ssize_t r = recv(d->from, d->buf, buf_size, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    if (send_all(d, (size_t)r)) goto out;
  }
out:
  end_dir(d);
  return NULL;
}

static void *run_splice(void *arg) {
  struct dir *d = arg;
  for (;;) {
    ssize_t r = splice(d->from, NULL, d->pw, NULL, buf_size, SPLICE_F_MOVE);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    for (ssize_t left = r; left > 0;) {
      ssize_t w = splice(d->pr, NULL, d->to, NULL, (size_t)left, SPLICE_F_MOVE);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) goto out;
      left -= w, d->bytes += (size_t)w;
    }
  }
out:
  end_dir(d);
  return NULL;
}

/* The download direction by TCP_ZEROCOPY_RECEIVE: the received pages are mapped into `map` (a mapping
 * of the socket itself), sent from there (one copy, into the client's socket), then unmapped by the
 * next call; bytes the kernel cannot map (not whole pages) come through recv. */
static void *run_zc(void *arg) {
  struct dir *d = arg;
  void *map = mmap(NULL, buf_size, PROT_READ, MAP_SHARED, d->from, 0);
  if (map == MAP_FAILED) die("mmap of the upstream socket");
  for (;;) {
    struct tcp_zerocopy_receive zc = {.address = (uint64_t)(uintptr_t)map, .length = (uint32_t)buf_size};
    socklen_t zl = sizeof zc;
    if (getsockopt(d->from, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &zl)) {
      if (errno == EINTR) continue;
      die("TCP_ZEROCOPY_RECEIVE");
    }
    for (size_t off = 0; off < zc.length;) {
      ssize_t w = send(d->to, (char *)map + off, zc.length - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) goto out;
      off += (size_t)w, d->bytes += (size_t)w, d->mapped += (size_t)w;
    }
    if (zc.length == 0 && zc.recv_skip_hint == 0) {
      /* nothing received yet, or the end: wait, then tell which by a peek */
      struct pollfd pf = {.fd = d->from, .events = POLLIN};
      char b;
      if (poll(&pf, 1, -1) < 0 && errno != EINTR) break;
      ssize_t r = recv(d->from, &b, 1, MSG_PEEK | MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) break;
      continue;
    }
    if (zc.recv_skip_hint > 0) {
      /* what cannot be mapped (not whole pages): copied by recv */
      size_t want = zc.recv_skip_hint;
      ssize_t r = recv(d->from, d->buf, want < buf_size ? want : buf_size, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      if (send_all(d, (size_t)r)) goto out;
    }
  }
out:
  munmap(map, buf_size);
  end_dir(d);
  return NULL;
}

static long us(struct timeval t) { return t.tv_sec * 1000000L + t.tv_usec; }

static void open_pipe(struct dir *d) {
  int p[2];
  if (pipe2(p, O_CLOEXEC)) die("pipe2");
  d->pr = p[0], d->pw = p[1];
  if (fcntl(p[1], F_SETPIPE_SZ, (int)buf_size) < 0)
    fprintf(stderr, "relay-floor: F_SETPIPE_SZ %zu: %s\n", buf_size, strerror(errno));
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: relay-floor LISTEN UPSTREAM copy|splice|copy-threads|splice-threads|zc [OPTION...]\n");
    return 2;
  }
  const char *mode = argv[3];
  int spliced = !strncmp(mode, "splice", 6), threads = strstr(mode, "-threads") != NULL, zc = !strcmp(mode, "zc");
  if (!spliced && !zc && strncmp(mode, "copy", 4)) {
    fprintf(stderr, "relay-floor: unknown mode %s\n", mode);
    return 2;
  }
  for (int i = 4; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    long v = eq ? strtol(eq + 1, NULL, 0) : 0;
    if (!eq) v = -1;
    else if (!strncmp(argv[i], "buf=", 4)) buf_size = (size_t)v;
    else if (!strncmp(argv[i], "rcvbuf=", 7)) rcvbuf = (int)v;
    else if (!strncmp(argv[i], "sndbuf=", 7)) sndbuf = (int)v;
    else if (!strncmp(argv[i], "nodelay=", 8)) nodelay = (int)v;
    else if (!strncmp(argv[i], "mss=", 4)) mss = (int)v;
    else if (!strncmp(argv[i], "cpu=", 4)) cpu = (int)v;
    else if (!strncmp(argv[i], "busypoll=", 9)) busypoll = (int)v;
    else v = -1;
    if (v < 0) {
      fprintf(stderr, "relay-floor: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (zc) buf_size = (buf_size + 4095) & ~(size_t)4095; /* the mapping's length: whole pages */
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) die("sched_setaffinity");
  }
  struct sockaddr_in la = addr_of(argv[1]), ua = addr_of(argv[2]);
  int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  if (l < 0) die("socket");
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  tune(l); /* accepted sockets inherit it */
  if (bind(l, (struct sockaddr *)&la, sizeof la) || listen(l, 16)) die("listen");
  socklen_t al = sizeof la;
  getsockname(l, (struct sockaddr *)&la, &al);
  printf("%d\n", ntohs(la.sin_port));
  fflush(stdout);
  char *bufs[2] = {malloc(buf_size), malloc(buf_size)};
  if (!bufs[0] || !bufs[1]) die("malloc");
  for (;;) {
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      die("accept");
    }
    int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (u < 0) die("socket");
    tune(u);
    if (mss && setsockopt(u, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss)) die("TCP_MAXSEG");
    if (connect(u, (struct sockaddr *)&ua, sizeof ua)) {
      fprintf(stderr, "relay-floor: connect upstream: %s\n", strerror(errno));
      close(c), close(u);
      continue;
    }
    /* [0] up: client → upstream, [1] down: upstream → client */
    struct dir ds[2] = {{.from = c, .to = u, .buf = bufs[0]}, {.from = u, .to = c, .buf = bufs[1]}};
    if (spliced) open_pipe(&ds[0]), open_pipe(&ds[1]);
    if (threads || zc) {
      pthread_t th[2];
      if (pthread_create(&th[0], NULL, spliced ? run_splice : run_copy, &ds[0]) ||
          pthread_create(&th[1], NULL,
                         zc            ? run_zc
                             : spliced ? run_splice
                                       : run_copy,
                         &ds[1]))
        die("pthread_create");
      pthread_join(th[0], NULL);
      pthread_join(th[1], NULL);
    } else {
      set_nonblock(c, 1), set_nonblock(u, 1);
      relay_poll(ds, spliced);
    }
    for (int i = 0; spliced && i < 2; i++) close(ds[i].pr), close(ds[i].pw);
    close(c), close(u);
    /* one line per connection: bytes up, bytes down (of which sent from mapped pages), the relay's CPU
     * for it in µs (user, system; joined threads included) */
    getrusage(RUSAGE_SELF, &ru1);
    printf("%llu %llu %llu %ld %ld\n", ds[0].bytes, ds[1].bytes, ds[1].mapped, us(ru1.ru_utime) - us(ru0.ru_utime),
           us(ru1.ru_stime) - us(ru0.ru_stime));
    fflush(stdout);
  }
}
