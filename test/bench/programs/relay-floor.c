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
 *         sockmap  the kernel relays: both sockets in a BPF SOCKHASH whose stream verdict program redirects
 *                  each socket's received bytes to the other's egress (see relay_sockmap); this process
 *                  only waits for the ends of stream and passes them on. Needs root (bpf(2)); its own CPU
 *                  leaves out the kernel worker that sends the redirected bytes (the bench measures those)
 *   OPTION buf=N        the copy buffer, or the pipe's size (F_SETPIPE_SZ), bytes (default 1 MiB)
 *          rcvbuf=N sndbuf=N   SO_RCVBUF / SO_SNDBUF on both of the relay's sockets (default: autotuned)
 *          nodelay=1    TCP_NODELAY on both (default off)
 *          mss=N        TCP_MAXSEG on the upstream socket, at most 32767 (for zc: segments of whole pages,
 *                       which alone can be mapped)
 *          cpu=N        pins the relay (all its threads) to CPU N
 *          busypoll=N   SO_BUSY_POLL N µs (raising it above net.core.busy_read needs CAP_NET_ADMIN: then
 *                       the program says so and goes on without)
 *          parser=1     sockmap: a stream parser program too (the kernel's strparser path)
 * Not pure: sockets, pipes, threads, BPF programs and maps, stdout. Not a gate and no trust boundary: it carries whatever it
 * is given to the one upstream it was told, for a benchmark on loopback only. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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

/* --- sockmap: the kernel relays, by a BPF program on both sockets (no byte passes through this process) ---
 * One SOCKHASH for the relay, keyed by a socket's cookie (SO_COOKIE), whose value is the *other* socket of
 * its connection: the client's cookie holds the upstream socket and the upstream's cookie the client. The
 * stream verdict program, attached to the map, runs for every skb either socket receives and redirects it
 * to the egress of the socket stored under its own socket's cookie (bpf_sk_redirect_hash, flags 0: the
 * other socket's send queue, sent by a kernel worker, sk_psock_backlog). Hand-written instructions loaded
 * by bpf(2): no libbpf, no clang. With parser=1 a stream parser (the whole skb is one message) is attached
 * too, which takes the kernel's strparser path instead of the verdict-only one. This process only waits
 * for each socket's end of stream (POLLRDHUP), then, once every byte received on that socket was written
 * to the other (TCP_INFO's tcpi_bytes_received against the other's tcpi_bytes_acked plus its unsent and
 * unacknowledged bytes, SIOCOUTQ), passes the end on with shutdown(SHUT_WR). A reset (POLLERR) on either
 * ends both directions. The bytes up and down are the counts written to each socket then. */
static int sockmap_fd = -1, parser;

static long sys_bpf(int cmd, union bpf_attr *a) { return syscall(SYS_bpf, cmd, a, sizeof *a); }

#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})

static int load_prog(const struct bpf_insn *insns, unsigned n, const char *what) {
  static char log[65536];
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_SK_SKB;
  a.insns = (uint64_t)(uintptr_t)insns;
  a.insn_cnt = n;
  a.license = (uint64_t)(uintptr_t) "Dual MIT/GPL";
  a.log_buf = (uint64_t)(uintptr_t)log;
  a.log_size = sizeof log;
  a.log_level = 1;
  int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
  if (fd < 0) {
    fprintf(stderr, "relay-floor: BPF_PROG_LOAD %s: %s\n%s\n", what, strerror(errno), log);
    exit(1);
  }
  return fd;
}

static void attach(int prog, enum bpf_attach_type type) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.target_fd = (uint32_t)sockmap_fd;
  a.attach_bpf_fd = (uint32_t)prog;
  a.attach_type = type;
  if (sys_bpf(BPF_PROG_ATTACH, &a)) die("BPF_PROG_ATTACH");
}

static void sockmap_setup(void) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.map_type = BPF_MAP_TYPE_SOCKHASH;
  a.key_size = 8; /* a socket's cookie */
  a.value_size = 4; /* the other socket (an fd, from user space) */
  a.max_entries = 64;
  sockmap_fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
  if (sockmap_fd < 0) die("BPF_MAP_CREATE SOCKHASH");
  /* verdict: key = bpf_get_socket_cookie(skb); return bpf_sk_redirect_hash(skb, map, &key, 0) */
  const struct bpf_insn verdict[] = {
      INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0), /* r6 = skb */
      INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_socket_cookie), /* r0 = its socket's cookie */
      INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -8, 0), /* key on the stack */
      INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0), /* r1 = skb */
      INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, sockmap_fd), /* r2 = the map */
      INSN(0, 0, 0, 0, 0), /* (second half) */
      INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0), /* r3 = &key */
      INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -8), /* */
      INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0), /* flags 0: egress */
      INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_redirect_hash), /* SK_PASS, or SK_DROP */
      INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  /* parser: the message is the whole skb (return skb->len) */
  const struct bpf_insn parse[] = {
      INSN(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_1, (short)offsetof(struct __sk_buff, len), 0),
      INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  if (parser) attach(load_prog(parse, sizeof parse / sizeof parse[0], "parser"), BPF_SK_SKB_STREAM_PARSER);
  attach(load_prog(verdict, sizeof verdict / sizeof verdict[0], "verdict"), BPF_SK_SKB_STREAM_VERDICT);
}

static uint64_t cookie_of(int fd) {
  uint64_t c = 0;
  socklen_t l = sizeof c;
  if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &c, &l)) die("SO_COOKIE");
  return c;
}

static void map_put(uint64_t key, int fd) {
  union bpf_attr a;
  uint32_t v = (uint32_t)fd;
  memset(&a, 0, sizeof a);
  a.map_fd = (uint32_t)sockmap_fd;
  a.key = (uint64_t)(uintptr_t)&key;
  a.value = (uint64_t)(uintptr_t)&v;
  a.flags = BPF_ANY;
  if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a)) die("BPF_MAP_UPDATE_ELEM");
}

static struct tcp_info info_of(int fd) {
  struct tcp_info ti;
  socklen_t l = sizeof ti;
  memset(&ti, 0, sizeof ti);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l)) die("TCP_INFO");
  return ti;
}

/* bytes written to fd so far: acknowledged, plus sent or queued and not yet acknowledged (SIOCOUTQ); on the
 * socket that connected (`active`), tcpi_bytes_acked counts the acknowledged SYN as one byte too */
static unsigned long long written_to(int fd, int active) {
  int outq = 0;
  if (ioctl(fd, SIOCOUTQ, &outq)) die("SIOCOUTQ");
  unsigned long long acked = info_of(fd).tcpi_bytes_acked;
  return acked - (active && acked > 0) + (unsigned long long)outq;
}

/* bytes received on fd so far; tcpi_bytes_received counts a FIN as one byte (tcp_rcv_nxt_update), and
 * `ended` says one came (POLLRDHUP without an error: its state may have gone on to TCP_CLOSE meanwhile) */
static unsigned long long received_on(int fd, int ended) {
  unsigned long long r = info_of(fd).tcpi_bytes_received;
  return r - (ended && r > 0);
}

static void relay_sockmap(struct dir ds[2]) {
  int c = ds[0].from, u = ds[1].from;
  map_put(cookie_of(c), u);
  map_put(cookie_of(u), c);
  /* bytes that came before the socket was in the map wait in its receive queue: the verdict program
   * runs when more come (and takes those first), not for these; if none come (curl's request, then it
   * waits for the answer) they are this process's to pass on */
  for (int i = 0; i < 2; i++)
    for (;;) {
      ssize_t r = recv(ds[i].from, ds[i].buf, buf_size, MSG_DONTWAIT);
      if (r <= 0) break;
      if (send_all(&ds[i], (size_t)r)) break;
    }
  int ended[2] = {0, 0}; /* [i]: ds[i].from said end of stream (or failed) */
  int wait_ms = 1; /* while draining: 1 ms, doubled up to 64 (a slow client can take minutes) */
  for (;;) {
    struct pollfd pf[2];
    int draining = 0;
    for (int i = 0; i < 2; i++) {
      pf[i] = (struct pollfd){.fd = ended[i] ? -1 : ds[i].from, .events = POLLRDHUP};
      draining |= ended[i] && !ds[i].done;
    }
    /* waiting for the kernel worker to write out what it was handed: look again after wait_ms */
    if (poll(pf, 2, draining ? wait_ms : -1) < 0 && errno != EINTR) die("poll");
    if (draining && wait_ms < 64) wait_ms *= 2;
    int reset = 0;
    for (int i = 0; i < 2; i++) {
      reset |= (pf[i].revents & (POLLERR | POLLNVAL)) != 0;
      if (pf[i].revents & (POLLRDHUP | POLLHUP)) ended[i] = 1;
    }
    /* a direction ends once its source said end of stream and the other socket was written all it
     * received; what it carried is counted then, before the FIN that shutdown adds to the counts */
    for (int i = 0; i < 2; i++)
      if (!ds[i].done && (reset || (ended[i] && written_to(ds[i].to, i == 0) >= received_on(ds[i].from, 1)))) {
        ds[i].bytes = written_to(ds[i].to, i == 0);
        end_dir(&ds[i]);
      }
    if (ds[0].done && ds[1].done) break;
  }
  /* closing the sockets takes them out of the map */
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
    fprintf(stderr,
            "usage: relay-floor LISTEN UPSTREAM copy|splice|copy-threads|splice-threads|zc|sockmap [OPTION...]\n");
    return 2;
  }
  const char *mode = argv[3];
  int spliced = !strncmp(mode, "splice", 6), threads = strstr(mode, "-threads") != NULL, zc = !strcmp(mode, "zc");
  int sockmap = !strcmp(mode, "sockmap");
  if (!spliced && !zc && !sockmap && strncmp(mode, "copy", 4)) {
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
    else if (!strncmp(argv[i], "parser=", 7)) parser = (int)v;
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
  if (sockmap) sockmap_setup();
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
    if (sockmap) {
      relay_sockmap(ds);
    } else if (threads || zc) {
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
