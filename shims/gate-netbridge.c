/* gate-netbridge: the network bridge inside a sandbox whose network is "rules" (docs/network.md).
 *
 *   gate-netbridge PORT SOCKET -- COMMAND [ARG...]
 *
 * The sandbox has a network namespace of its own with loopback only (bubblewrap's --unshare-net), so no
 * program in it reaches anything. This listens on 127.0.0.1:PORT there, then forks: the parent execs
 * COMMAND (the run's bash, keeping the pid bubblewrap waits for), the child hands the listening socket to the
 * daemon (listen.sock beside SOCKET: hand_listener), which then accepts the sandbox's connections itself
 * (src/network/listener-handoff.ts); the child only copies the denial lines afterwards. Where the daemon
 * does not take it, the child relays every connection made to 127.0.0.1:PORT to SOCKET, the daemon's proxy
 * for this run (a Unix socket bound into the sandbox), byte for byte (splice through a pipe: the kernel
 * moves them). Once the proxy has opened a tunnel, the daemon's
 * relay may hand this bridge a pipe each way on that connection (it says it takes them on its notice
 * connection): the tunnel's bytes then go between the client and those pipes, one splice each way. The proxy decides
 * each destination; the run's environment names 127.0.0.1:PORT in its proxy
 * variables. The relay also keeps one connection of its own to the proxy on which the proxy sends the
 * run's denial lines ("gate-sh: network: denied ..."), and copies them to its stderr: the run's; it answers
 * each line with one byte once written, and the proxy holds the client's refusal until then (the line
 * comes first on stderr, before anything the command says about the refusal).
 *
 * The relay ends with COMMAND (PR_SET_PDEATHSIG) and with the sandbox's pid namespace. It holds no
 * standard input or output of the run (only stderr, for those lines). It is static, so the run's
 * LD_PRELOAD is never loaded into it; the kernel layer checks its exec of COMMAND like any other.
 * Trust boundary: everything inside the sandbox is untrusted, this relay included (a process there may kill
 * it or connect to the socket itself): it only carries bytes to a proxy that decides, and grants nothing.
 * Errors as bubblewrap's (gate-error.h): one `gate-sh: netbridge: ` line on stderr, then exit 126 (nothing of
 * the run ran).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gate-error.h"
#include "gate-shared.h"

/* nothing of the run ran */
#define EXIT_NOT_RUN GATE_CALL_EXIT_DENIED

/* the proxy tells this connection from HTTP and SOCKS5 by its first bytes (src/network/run-proxy.ts) */
static const char NOTICE_HELLO[] = "\0gate-netbridge notices\n";
/* after the hello on the notice connection: this bridge takes a tunnel's pipes (PIPES_LINE, run-proxy.ts) */
static const char PIPES_LINE[] = "pipes\n";
/* and then: this bridge answers each denial line with one byte once the line is on the run's stderr
 * (ACKS_LINE, run-proxy.ts): the proxy answers the client only after that, so the line comes before
 * anything the command writes about the refusal */
static const char ACKS_LINE[] = "acks\n";
/* what one splice moves at most, the pipe size asked for (best effort: a smaller pipe moves less), and the
 * buffer of proxy → client before a hand-over */
#define CHUNK (1024 * 1024)
#define BUF_SIZE (256 * 1024)
#define PIPE_SIZE (1024 * 1024)
#define BULK (1024 * 1024)
#define MAX_EVENTS 64

/* One direction of a relayed connection. Client → proxy: spliced through a pipe of this half's (the
 * kernel moves the bytes). Proxy → client: read with recvmsg into a buffer, because the proxy may hand over
 * a tunnel's pipes on it (below). Once it has, each direction is one splice between the client's socket
 * and a pipe of the daemon's relay (native/gate_relay.c), and the Unix socket is closed. */
struct half {
  int from, to;
  int direct; /* `from` or `to` is a pipe: one splice moves the bytes */
  int to_pipe; /* `to` is a pipe: closed (not shut down) for end of file */
  int pr, pw; /* client → proxy: this half's pipe */
  size_t inpipe;
  int grown; /* the pipe was enlarged (after BULK bytes) */
  size_t moved;
  char *buf; /* proxy → client, before the hand-over: bytes read, waiting to be written */
  size_t len, off;
  int eof; /* `from` said end of file: `to` ends once everything is written */
  int done; /* `to` ended (or this direction failed) */
  int wait_fd; /* what the half waits for (-1: nothing) */
  uint32_t wait_ev;
};

/* ends: [0] the client, [1] the proxy's Unix socket (until the hand-over), [2] the relay's down pipe (read
 * end), [3] its up pipe (write end) */
struct end {
  struct pair *pair;
  int fd; /* -1: closed, or not there yet */
  uint32_t armed;
};

struct pair {
  struct half up, down; /* up: client → proxy; down: proxy → client */
  struct end ends[4];
  int dead; /* closed; freed after the current batch of events, which may still name its other ends */
  int again; /* the pipes came while serving: the other half waits on the closed Unix socket, serve it again */
};

static int ep;
static const char *sock_path;
static struct sockaddr_un sun_addr;

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) gate_die_errno(EXIT_NOT_RUN, "netbridge: fcntl", NULL, NULL);
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

static void wait_on(struct half *h, int fd, uint32_t ev) {
  h->wait_fd = fd;
  h->wait_ev = ev;
}

/* each end waits for what a half waits for on it; an end nothing waits for leaves epoll (a hung-up
 * socket would otherwise wake the loop again and again) */
static void rearm(struct pair *p) {
  for (int i = 0; i < 4; i++) {
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

static void close_end(struct pair *p, int fd) {
  for (int i = 0; i < 4; i++)
    if (p->ends[i].fd == fd) {
      if (p->ends[i].armed) epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
      p->ends[i].armed = 0;
      p->ends[i].fd = -1;
    }
  close(fd);
}

static struct pair *dead[MAX_EVENTS];
static int ndead;

static void pair_close(struct pair *p) {
  for (int i = 0; i < 4; i++)
    if (p->ends[i].fd >= 0) close_end(p, p->ends[i].fd);
  if (p->up.pr >= 0) close(p->up.pr);
  if (p->up.pw >= 0) close(p->up.pw);
  p->dead = 1;
  dead[ndead++] = p;
}

static void free_dead(void) {
  for (int i = 0; i < ndead; i++) {
    free(dead[i]->down.buf);
    free(dead[i]);
  }
  ndead = 0;
}

/* A pipe's pages count against the user's pipe-user-pages-soft (beyond it every new pipe of that user is
 * small): a pipe is enlarged only once its half has carried BULK bytes, so idle connections cost 64 KiB. */
static void grow(struct half *h, int fd, size_t moved) {
  if (h->grown) return;
  h->moved += moved;
  if (h->moved < BULK) return;
  h->grown = 1;
  fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE); /* best effort: a smaller pipe moves less per call */
}

/* The daemon's relay handed over a tunnel's pipes (on the byte it sent them with: the mark, not data):
 * from now on the destination's bytes come from `down`, the client's go into `up`, and the Unix socket,
 * closed here, carries nothing more (the relay reads what was sent on it before, then the pipe). */
static void take_pipes(struct pair *p, int down, int up) {
  set_nonblock(down);
  set_nonblock(up);
  p->ends[2].fd = down;
  p->ends[3].fd = up;
  close_end(p, p->ends[1].fd);
  p->down.from = down;
  p->down.direct = 1;
  p->up.to = up;
  p->up.to_pipe = 1;
  p->again = 1;
  if (p->up.done) close_end(p, up); /* the client had said end of file already: so does the pipe */
}

/* proxy → client before the hand-over: one recvmsg; 1 when it brought pipes, 0, or -1 on failure */
static int read_proxy(struct pair *p, struct half *h) {
  if (!h->buf && !(h->buf = malloc(BUF_SIZE))) return -1;
  struct iovec iov = {h->buf, BUF_SIZE};
  union {
    char b[CMSG_SPACE(2 * sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
  ssize_t r = recvmsg(h->from, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (r < 0) return errno == EAGAIN || errno == EINTR ? (wait_on(h, h->from, EPOLLIN), 0) : -1;
  int fds[2], nfds = 0, bad = (mh.msg_flags & MSG_CTRUNC) != 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int *got = (int *)CMSG_DATA(c);
    for (size_t i = 0; i < n; i++) {
      if (nfds < 2) fds[nfds++] = got[i];
      else close(got[i]), bad = 1;
    }
  }
  if (nfds == 0 && !bad) {
    if (r == 0) h->eof = 1;
    h->len = (size_t)r;
    h->off = 0;
    return 0;
  }
  if (bad || nfds != 2 || r < 1) {
    for (int i = 0; i < nfds; i++) close(fds[i]);
    return -1;
  }
  h->len = (size_t)r - 1; /* the last byte is the mark */
  h->off = 0;
  take_pipes(p, fds[0], fds[1]);
  return 1;
}

/* move bytes for one half as far as they go without blocking; -1: that direction failed */
static int pump(struct pair *p, struct half *h) {
  for (;;) {
    wait_on(h, -1, 0);
    if (h->done) return 0;
    if (h->len > h->off) {
      ssize_t w = send(h->to, h->buf + h->off, h->len - h->off, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) return errno == EAGAIN || errno == EINTR ? (wait_on(h, h->to, EPOLLOUT), 0) : -1;
      h->off += (size_t)w;
      continue;
    }
    if (h->inpipe > 0) {
      ssize_t w = splice(h->pr, NULL, h->to, NULL, h->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (w < 0) return errno == EAGAIN || errno == EINTR ? (wait_on(h, h->to, EPOLLOUT), 0) : -1;
      h->inpipe -= (size_t)w;
      continue;
    }
    if (h->eof) {
      if (h->to_pipe) close_end(p, h->to);
      else shutdown(h->to, SHUT_WR);
      h->done = 1;
      return 0;
    }
    if (h == &p->down && !h->direct) {
      if (read_proxy(p, h) < 0) return -1;
      if (h->wait_fd >= 0) return 0;
      continue;
    }
    if (h->direct || h->to_pipe) {
      ssize_t r = splice(h->from, NULL, h->to, NULL, CHUNK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (r > 0) {
        grow(h, h->direct ? h->from : h->to, (size_t)r);
        continue;
      }
      if (r == 0) {
        h->eof = 1;
        continue;
      }
      if (errno != EAGAIN && errno != EINTR) return -1;
      /* nothing to read, or no room to write: ask which */
      struct pollfd pf[2] = {{.fd = h->from, .events = POLLIN}, {.fd = h->to, .events = POLLOUT}};
      if (poll(pf, 2, 0) < 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) return wait_on(h, h->from, EPOLLIN), 0;
      if (!(pf[1].revents & (POLLOUT | POLLHUP | POLLERR))) return wait_on(h, h->to, EPOLLOUT), 0;
      continue;
    }
    /* the pipe is empty here: EAGAIN means `from` has nothing yet */
    ssize_t r = splice(h->from, NULL, h->pw, NULL, CHUNK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (r == 0) {
      h->eof = 1;
      continue;
    }
    if (r < 0) return errno == EAGAIN || errno == EINTR ? (wait_on(h, h->from, EPOLLIN), 0) : -1;
    h->inpipe = (size_t)r;
    grow(h, h->pw, (size_t)r);
  }
}

static void serve_pair(struct pair *p) {
  if (p->dead) return;
  do {
    p->again = 0;
    if (pump(p, &p->up) < 0 || pump(p, &p->down) < 0 || (p->up.done && p->down.done)) {
      pair_close(p);
      return;
    }
  } while (p->again);
  rearm(p);
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
  int up[2] = {-1, -1};
  if (!p || pipe2(up, O_CLOEXEC | O_NONBLOCK) < 0) {
    free(p);
    close(c);
    close(pfd);
    return;
  }
  set_nonblock(c);
  set_nonblock(pfd);
  p->up = (struct half){.from = c, .to = pfd, .pr = up[0], .pw = up[1], .wait_fd = -1};
  p->down = (struct half){.from = pfd, .to = c, .pr = -1, .pw = -1, .wait_fd = -1};
  for (int i = 0; i < 4; i++) p->ends[i] = (struct end){.pair = p, .fd = i == 0 ? c : i == 1 ? pfd : -1};
  serve_pair(p);
}

/* the proxy's denial lines, to the run's stderr; each whole line written is acknowledged with one byte
 * (the proxy holds the client's refusal until then). `flags`: MSG_DONTWAIT or 0. */
static int copy_notices(int nfd, int flags) {
  char b[4096];
  ssize_t r = recv(nfd, b, sizeof b, flags);
  if (r <= 0) return r < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
  for (ssize_t o = 0; o < r;) {
    ssize_t w = write(STDERR_FILENO, b + o, (size_t)(r - o));
    if (w <= 0) break;
    o += w;
  }
  char acks[sizeof b];
  size_t n = 0;
  for (ssize_t i = 0; i < r; i++)
    if (b[i] == '\n') acks[n++] = 'A';
  /* a few bytes on a socket the proxy reads at once: never more than its buffer */
  if (n > 0 && send(nfd, acks, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN) return -1;
  return 0;
}

static void relay(int lfd, int nfd) {
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) gate_die_errno(EXIT_NOT_RUN, "netbridge: epoll_create1", NULL, NULL);
  static int listen_tag, notice_tag;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0) gate_die_errno(EXIT_NOT_RUN, "netbridge: epoll_ctl", NULL, NULL);
  if (nfd >= 0) {
    ev.data.ptr = &notice_tag;
    epoll_ctl(ep, EPOLL_CTL_ADD, nfd, &ev);
  }
  struct epoll_event evs[MAX_EVENTS];
  for (;;) {
    int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      gate_die_errno(EXIT_NOT_RUN, "netbridge: epoll_wait", NULL, NULL);
    }
    for (int i = 0; i < n; i++) {
      void *tag = evs[i].data.ptr;
      if (tag == &listen_tag) accept_one(lfd);
      else if (tag == &notice_tag) {
        if (copy_notices(nfd, MSG_DONTWAIT) < 0) {
          epoll_ctl(ep, EPOLL_CTL_DEL, nfd, NULL);
          close(nfd);
        }
      } else serve_pair(((struct end *)tag)->pair);
    }
    free_dead();
  }
}

/* The listener handed to the daemon (src/network/listener-handoff.ts): one byte with it on listen.sock
 * beside SOCKET; the daemon's one-byte answer says whether it accepts the run's connections itself from now
 * on ('Y'). Then this bridge relays nothing: the sandbox's clients reach the proxy directly, and a tunnel's
 * bytes go between the two sockets in the daemon's relay thread alone. 0 when not taken (no such socket: an
 * older daemon; no answer in time; 'N': a daemon without its native addon): this bridge relays as before. */
static int hand_listener(int lfd) {
  struct sockaddr_un a = sun_addr;
  char *slash = strrchr(a.sun_path, '/');
  static const char name[] = "listen.sock";
  if (!slash || (size_t)(slash + 1 - a.sun_path) + sizeof name > sizeof a.sun_path) return 0;
  memcpy(slash + 1, name, sizeof name);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    close(fd);
    return 0;
  }
  char byte = 'L';
  struct iovec iov = {&byte, 1};
  union {
    char b[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &lfd, sizeof(int));
  char answer = 0;
  struct pollfd pf = {.fd = fd, .events = POLLIN};
  int ok =
      sendmsg(fd, &mh, MSG_NOSIGNAL) == 1 && poll(&pf, 1, 10000) == 1 && read(fd, &answer, 1) == 1 && answer == 'Y';
  close(fd);
  return ok;
}

static volatile sig_atomic_t command_ended;
static void on_command_end(int sig) {
  (void)sig;
  command_ended = 1;
}

/* The daemon took the listener: only the denial lines are left to copy, until the command ends (SIGTERM,
 * its parent-death signal here); then the lines already sent are copied before this ends. The proxy sends a
 * denial's line before its 403, and the connection no longer passes through here: the command may read the
 * 403 and end before this has read the line. */
static void notices_only(int nfd) {
  if (nfd < 0) return;
  int fl = fcntl(nfd, F_GETFL);
  if (fl >= 0) fcntl(nfd, F_SETFL, fl & ~O_NONBLOCK);
  for (;;) {
    struct pollfd pf = {.fd = nfd, .events = POLLIN};
    if (command_ended && poll(&pf, 1, 0) != 1) return;
    if (copy_notices(nfd, 0) < 0) return; /* (SIGTERM interrupts a waiting recv: the poll above then) */
  }
}

int main(int argc, char **argv) {
  if (argc < 5 || strcmp(argv[3], "--") != 0)
    gate_die(EXIT_NOT_RUN, "netbridge: usage: gate-netbridge PORT SOCKET -- COMMAND [ARG...]", NULL, NULL, NULL);
  char *end;
  long port = strtol(argv[1], &end, 10);
  if (*end || port < 1 || port > 65535) gate_die(EXIT_NOT_RUN, "netbridge: not a port: ", argv[1], NULL, NULL);
  sock_path = argv[2];
  if (sock_path[0] != '/' || strlen(sock_path) >= sizeof sun_addr.sun_path)
    gate_die(EXIT_NOT_RUN, "netbridge: not a socket path: ", sock_path, NULL, NULL);
  sun_addr.sun_family = AF_UNIX;
  strcpy(sun_addr.sun_path, sock_path);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (lfd < 0) gate_die_errno(EXIT_NOT_RUN, "netbridge: socket", NULL, NULL);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sin = {
      .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(lfd, (struct sockaddr *)&sin, sizeof sin) < 0) {
    char num[24];
    snprintf(num, sizeof num, "%ld", port);
    gate_die_errno(EXIT_NOT_RUN, "netbridge: cannot listen on 127.0.0.1:", num, NULL);
  }
  if (listen(lfd, 1024) < 0) gate_die_errno(EXIT_NOT_RUN, "netbridge: listen", NULL, NULL);

  /* the notice connection: made before the command starts, so no denial line of the run is missed */
  int nfd = connect_proxy();
  if (nfd >= 0) {
    char hello[sizeof NOTICE_HELLO + sizeof PIPES_LINE + sizeof ACKS_LINE];
    size_t n = sizeof NOTICE_HELLO - 1;
    memcpy(hello, NOTICE_HELLO, n);
    memcpy(hello + n, PIPES_LINE, sizeof PIPES_LINE - 1);
    n += sizeof PIPES_LINE - 1;
    memcpy(hello + n, ACKS_LINE, sizeof ACKS_LINE - 1);
    n += sizeof ACKS_LINE - 1;
    if (write(nfd, hello, n) != (ssize_t)n) {
      close(nfd);
      nfd = -1;
    } else set_nonblock(nfd);
  }
  /* (no proxy: the run has no network; its connections fail, the command still runs) */

  pid_t command = getpid();
  pid_t child = fork();
  if (child < 0) gate_die_errno(EXIT_NOT_RUN, "netbridge: fork", NULL, NULL);
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
    if (hand_listener(lfd)) {
      close(lfd);
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_command_end; /* (no SA_RESTART: a blocked read returns) */
      sigaction(SIGTERM, &sa, NULL);
      if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != command) command_ended = 1;
      notices_only(nfd);
      _exit(0);
    }
    relay(lfd, nfd);
    _exit(0);
  }
  close(lfd);
  if (nfd >= 0) close(nfd);
  execvp(argv[4], argv + 4);
  gate_die_errno(EXIT_NOT_RUN, "netbridge: cannot run ", argv[4], NULL);
}
