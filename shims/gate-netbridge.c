/* gate-netbridge: the network bridge inside a sandbox whose network is "rules" (docs/network.md).
 *
 *   gate-netbridge PORT SOCKET -- COMMAND [ARG...]
 *
 * The sandbox has a network namespace of its own with loopback only (bubblewrap's --unshare-net), so no
 * program in it reaches anything. This listens on 127.0.0.1:PORT there, then forks: the parent execs
 * COMMAND (the run's bash, keeping the pid bubblewrap waits for), the child relays every connection made to
 * 127.0.0.1:PORT to SOCKET, the daemon's proxy for this run (a Unix socket bound into the sandbox), byte for
 * byte (splice through a pipe per direction: the kernel moves them). The proxy decides each destination; the run's environment names 127.0.0.1:PORT in its proxy
 * variables. The relay also keeps one connection of its own to the proxy on which the proxy sends the
 * run's denial lines ("gate-sh: network: denied ..."), and copies them to its stderr: the run's.
 *
 * The relay ends with COMMAND (PR_SET_PDEATHSIG) and with the sandbox's pid namespace. It holds no
 * standard input or output of the run (only stderr, for those lines). It is static, so the run's
 * LD_PRELOAD is never loaded into it; the kernel layer checks its exec of COMMAND like any other.
 * Trust boundary: everything inside the sandbox is untrusted, this relay included (a process there may kill
 * it or connect to the socket itself): it only carries bytes to a proxy that decides, and grants nothing.
 * Errors as bubblewrap's: one line on stderr, then exit (126: nothing of the run ran).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* the proxy tells this connection from HTTP and SOCKS5 by its first bytes (src/network/run-proxy.ts) */
static const char NOTICE_HELLO[] = "\0gate-netbridge notices\n";
/* what one splice moves at most, and the pipe size asked for (best effort: a smaller pipe moves less) */
#define CHUNK (1024 * 1024)
#define PIPE_SIZE (1024 * 1024)
#define MAX_EVENTS 64

static void die_with_error(const char *format, ...) {
  int errsv = errno;
  va_list args;
  fputs("gate-sh: netbridge: ", stderr);
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fprintf(stderr, ": %s\n", strerror(errsv));
  exit(126);
}

static void die(const char *format, ...) {
  va_list args;
  fputs("gate-sh: netbridge: ", stderr);
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  exit(126);
}

/* one direction of a relayed connection: bytes spliced from `from` into a pipe, and from it to `to` (the
 * kernel moves them: no copy through this process) */
struct half {
  int from, to;
  int pr, pw;
  size_t inpipe;
  int grown; /* the pipe was enlarged: only a connection that fills the default one gets a large one */
  int eof;  /* `from` said end of file: `to` is shut down for writing once the buffer is written */
  int done; /* that shutdown happened (or this direction failed) */
};

/* a relayed connection: the client's socket and the proxy's; epoll data points at one of its ends */
struct pair {
  struct half up, down; /* up: client → proxy; down: proxy → client */
  int client, proxy;
  int dead; /* closed; freed after the current batch of events, which may still name its other end */
};

struct end {
  struct pair *pair;
  int fd;
};

static int ep;
static const char *sock_path;
static struct sockaddr_un sun_addr;

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) die_with_error("fcntl");
}

static int connect_proxy(void) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&sun_addr, sizeof sun_addr) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* what each end of a pair waits for: readable while its buffer has room, writable while the other's has bytes */
static void rearm(struct pair *p, struct end *e, int fd) {
  struct half *in = fd == p->client ? &p->up : &p->down;   /* read from fd */
  struct half *out = fd == p->client ? &p->down : &p->up;  /* written to fd */
  struct epoll_event ev = { .events = 0, .data.ptr = e };
  if (!in->eof && !in->done && in->inpipe == 0) ev.events |= EPOLLIN;
  if (!out->done && out->inpipe > 0) ev.events |= EPOLLOUT;
  epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

static struct end *dead[MAX_EVENTS];
static int ndead;

static void pair_close(struct pair *p, struct end *ends) {
  close(p->client);
  close(p->proxy);
  close(p->up.pr);
  close(p->up.pw);
  close(p->down.pr);
  close(p->down.pw);
  p->dead = 1;
  dead[ndead++] = ends;
}

static void free_dead(void) {
  for (int i = 0; i < ndead; i++) {
    free(dead[i]->pair);
    free(dead[i]);
  }
  ndead = 0;
}

/* A pipe's pages count against the user's pipe-user-pages-soft (beyond it every new pipe of that user is
 * small): a pipe is enlarged only once a splice filled the default one, so idle connections cost 64 KiB. */
static void grow(struct half *h, size_t moved) {
  if (h->grown || moved < 65536) return;
  h->grown = 1;
  fcntl(h->pw, F_SETPIPE_SZ, PIPE_SIZE); /* best effort: a smaller pipe moves less per call */
}

/* move bytes for one half as far as they go without blocking; -1: that direction failed */
static int pump(struct half *h) {
  for (;;) {
    if (h->inpipe > 0) {
      ssize_t w = splice(h->pr, NULL, h->to, NULL, h->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (w < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
      h->inpipe -= (size_t)w;
      continue;
    }
    if (h->eof) {
      if (!h->done) shutdown(h->to, SHUT_WR);
      h->done = 1;
      return 0;
    }
    /* the pipe is empty here: EAGAIN means `from` has nothing yet */
    ssize_t r = splice(h->from, NULL, h->pw, NULL, CHUNK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r == 0) {
      h->eof = 1;
      continue;
    }
    if (r < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    h->inpipe = (size_t)r;
    grow(h, (size_t)r);
  }
}

static void accept_one(int lfd) {
  int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
  if (c < 0) return;
  int one = 1;
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int pfd = connect_proxy();
  if (pfd < 0) { /* the proxy is gone (the run finished) or full: the client sees the connection close */
    close(c);
    return;
  }
  struct pair *p = calloc(1, sizeof *p);
  struct end *ends = calloc(2, sizeof *ends);
  int up[2] = { -1, -1 }, down[2] = { -1, -1 };
  if (!p || !ends || pipe2(up, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(down, O_CLOEXEC | O_NONBLOCK) < 0) {
    free(p); free(ends);
    close(c); close(pfd);
    for (int i = 0; i < 2; i++) {
      if (up[i] >= 0) close(up[i]);
      if (down[i] >= 0) close(down[i]);
    }
    return;
  }
  set_nonblock(c);
  set_nonblock(pfd);
  p->client = c;
  p->proxy = pfd;
  p->up = (struct half){ .from = c, .to = pfd, .pr = up[0], .pw = up[1] };
  p->down = (struct half){ .from = pfd, .to = c, .pr = down[0], .pw = down[1] };
  ends[0] = (struct end){ .pair = p, .fd = c };
  ends[1] = (struct end){ .pair = p, .fd = pfd };
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &ends[0] };
  epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
  ev.data.ptr = &ends[1];
  epoll_ctl(ep, EPOLL_CTL_ADD, pfd, &ev);
}

static void serve_pair(struct end *e) {
  struct pair *p = e->pair;
  if (p->dead) return;
  struct end *ends = e - (e->fd == p->proxy ? 1 : 0);
  if (pump(&p->up) < 0 || pump(&p->down) < 0 || (p->up.done && p->down.done)) {
    pair_close(p, ends);
    return;
  }
  rearm(p, &ends[0], p->client);
  rearm(p, &ends[1], p->proxy);
}

/* the proxy's denial lines, to the run's stderr */
static int copy_notices(int nfd) {
  char b[4096];
  ssize_t r = read(nfd, b, sizeof b);
  if (r <= 0) return r < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
  for (ssize_t o = 0; o < r;) {
    ssize_t w = write(STDERR_FILENO, b + o, (size_t)(r - o));
    if (w <= 0) break;
    o += w;
  }
  return 0;
}

static void relay(int lfd, int nfd) {
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die_with_error("epoll_create1");
  static int listen_tag, notice_tag;
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listen_tag };
  if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0) die_with_error("epoll_ctl");
  if (nfd >= 0) {
    ev.data.ptr = &notice_tag;
    epoll_ctl(ep, EPOLL_CTL_ADD, nfd, &ev);
  }
  struct epoll_event evs[MAX_EVENTS];
  for (;;) {
    int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die_with_error("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      void *tag = evs[i].data.ptr;
      if (tag == &listen_tag) accept_one(lfd);
      else if (tag == &notice_tag) {
        if (copy_notices(nfd) < 0) {
          epoll_ctl(ep, EPOLL_CTL_DEL, nfd, NULL);
          close(nfd);
        }
      } else serve_pair(tag);
    }
    free_dead();
  }
}

int main(int argc, char **argv) {
  if (argc < 5 || strcmp(argv[3], "--") != 0) die("usage: gate-netbridge PORT SOCKET -- COMMAND [ARG...]");
  char *end;
  long port = strtol(argv[1], &end, 10);
  if (*end || port < 1 || port > 65535) die("not a port: %s", argv[1]);
  sock_path = argv[2];
  if (sock_path[0] != '/' || strlen(sock_path) >= sizeof sun_addr.sun_path) die("not a socket path: %s", sock_path);
  sun_addr.sun_family = AF_UNIX;
  strcpy(sun_addr.sun_path, sock_path);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (lfd < 0) die_with_error("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  if (bind(lfd, (struct sockaddr *)&sin, sizeof sin) < 0) die_with_error("cannot listen on 127.0.0.1:%ld", port);
  if (listen(lfd, 1024) < 0) die_with_error("listen");

  /* the notice connection: made before the command starts, so no denial line of the run is missed */
  int nfd = connect_proxy();
  if (nfd >= 0) {
    if (write(nfd, NOTICE_HELLO, sizeof NOTICE_HELLO - 1) != (ssize_t)(sizeof NOTICE_HELLO - 1)) {
      close(nfd);
      nfd = -1;
    } else set_nonblock(nfd);
  }
  /* (no proxy: the run has no network; its connections fail, the command still runs) */

  pid_t command = getpid();
  pid_t child = fork();
  if (child < 0) die_with_error("fork");
  if (child == 0) {
    /* the relay: ends when the command does */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != command) _exit(0);
    signal(SIGPIPE, SIG_IGN);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDOUT_FILENO);
      close(null);
    }
    relay(lfd, nfd);
    _exit(0);
  }
  close(lfd);
  if (nfd >= 0) close(nfd);
  execvp(argv[4], argv + 4);
  die_with_error("cannot run %s", argv[4]);
}
