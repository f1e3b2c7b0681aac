/* The escalation handshake on the exec gate's C side. See gate-escalate.h. */
#define _GNU_SOURCE
#include "gate-escalate.h"
#include "gate-json.h"
#include "gate-transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* ---------- escalation ---------- */

/* Signals an escalated command should see as if it were the caller (the caller only waits for it). */
#define SIGNUM(s) s,
static const int FORWARDED[] = {GATE_FORWARDED_SIGNALS(SIGNUM) 0}; /* src/protocol/shared-with-c.ts */
#undef SIGNUM
static volatile int sig_w = -1;
static void on_signal(int sig) {
  int e = errno;
  unsigned char b = (unsigned char)sig;
  if (sig_w >= 0) {
    ssize_t w = write(sig_w, &b, 1);
    (void)w;
  }
  errno = e;
}

int gate_escalate(const struct gate_conf *c, const char *token, char *const envp[], char *err, size_t errlen) {
  int sp[2] = {-1, -1}; /* self-pipe for forwarded signals */
  int fd = gate_stream_connect(c->escalate_sock, err, errlen);
  if (fd < 0) return -1;
  /* The frame: {token, env} where env is the exec's environment without the gate's own variables. */
  struct gbuf m;
  gb_init(&m);
  gb_puts(&m, "{" GATE_KEY1(GATE_F_TOKEN));
  gb_json_str(&m, token, strlen(token), 0);
  int b64 = 0;
  for (int i = 0; envp && envp[i] && !b64; i++) b64 = !gate_utf8_valid(envp[i], strlen(envp[i]));
  if (b64) gb_puts(&m, GATE_KEY(GATE_F_ENCODING) GATE_QUOTE(GATE_VALUE_BASE64));
  gb_puts(&m, GATE_KEY(GATE_F_ENV) "[");
  int first = 1;
  for (int i = 0; envp && envp[i]; i++) {
    if (gate_own_var(envp[i])) continue;
    if (!first) gb_put(&m, ",", 1);
    first = 0;
    gb_json_str(&m, envp[i], strlen(envp[i]), b64);
  }
  gb_puts(&m, "]}");
  uint32_t len = (uint32_t)m.len;
  unsigned char head[4] = {len & 255, len >> 8 & 255, len >> 16 & 255, len >> 24 & 255};
  /* fds 0-2 as they are; a closed one is replaced by /dev/null so the count is always 3 */
  int fds[3], opened[3] = {-1, -1, -1};
  for (int i = 0; i < 3; i++) {
    fds[i] = i;
    if (fcntl(i, F_GETFD) < 0) fds[i] = opened[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
  }
  struct iovec iov[2] = {{head, 4}, {m.p, m.len}};
  union {
    char buf[CMSG_SPACE(sizeof fds)];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr mh = {0};
  mh.msg_iov = iov;
  mh.msg_iovlen = 2;
  mh.msg_control = u.buf;
  mh.msg_controllen = sizeof u.buf;
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(cm), fds, sizeof fds);
  int rc = -1;
  ssize_t w;
  do w = sendmsg(fd, &mh, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  for (int i = 0; i < 3; i++)
    if (opened[i] >= 0) close(opened[i]);
  if (w < 0 || m.oom) {
    gate_fail(err, errlen, "escalation: cannot send to %s (%s)", c->escalate_sock, strerror(errno));
    goto out;
  }
  size_t off = (size_t)w;
  while (off < 4 + m.len) { /* the rest of a large frame, descriptors already sent */
    const char *p = off < 4 ? (const char *)head + off : m.p + (off - 4);
    size_t n = off < 4 ? 4 - off : m.len - (off - 4);
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      gate_fail(err, errlen, "escalation: connection lost while sending (%s)", strerror(errno));
      goto out;
    }
    off += (size_t)k;
  }
  /* The answer: one frame {"exit_status":N} or {"error":"..."}; the wait lasts as long as the command.
   * Meanwhile signals for us (Ctrl-C, kill, a terminal resize) are passed on as {"signal":N}. */
  if (pipe2(sp, O_CLOEXEC | O_NONBLOCK) == 0) {
    sig_w = sp[1];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int i = 0; FORWARDED[i]; i++) sigaction(FORWARDED[i], &sa, NULL);
  }
  char in[8192];
  size_t got = 0;
  for (;;) {
    struct pollfd pf[2] = {{fd, POLLIN, 0}, {sp[0], POLLIN, 0}};
    if (poll(pf, sp[0] >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      gate_fail(err, errlen, "escalation: poll: %s", strerror(errno));
      goto out;
    }
    if (sp[0] >= 0 && (pf[1].revents & POLLIN)) {
      unsigned char sigs[16];
      ssize_t ns = read(sp[0], sigs, sizeof sigs);
      for (ssize_t i = 0; i < ns; i++) {
        char body[32], frame[40];
        int bl = snprintf(body, sizeof body, "{" GATE_KEY1(GATE_F_SIGNAL) "%d}", sigs[i]);
        frame[0] = (char)bl;
        frame[1] = frame[2] = frame[3] = 0;
        memcpy(frame + 4, body, (size_t)bl);
        if (send(fd, frame, (size_t)bl + 4, MSG_NOSIGNAL) < 0) break;
      }
    }
    if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t k = recv(fd, in + got, sizeof in - 1 - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      gate_fail(err, errlen, "escalation: the daemon closed the connection without an exit status");
      goto out;
    }
    got += (size_t)k;
    if (got >= 4) {
      const unsigned char *h = (const unsigned char *)in;
      uint32_t n = h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24;
      if (n > sizeof in - 5) {
        gate_fail(err, errlen, "escalation: malformed answer from the daemon");
        goto out;
      }
      if (got >= 4 + n) {
        in[4 + n] = 0;
        char *es = strstr(in + 4, GATE_KEY1(GATE_F_EXIT_STATUS));
        if (es) {
          int st = atoi(es + 14);
          if (st < 0 || st > 255) {
            gate_fail(err, errlen, "escalation: malformed exit status from the daemon");
            goto out;
          }
          rc = st;
          goto out;
        }
        struct gate_jp p = {in + 4, in + 4 + n, 0};
        char msg[1024] = "";
        char *e = strstr(in + 4, GATE_KEY1(GATE_F_ERROR));
        if (e) {
          p.s = e + 8;
          while (p.s < p.e && *p.s == ' ') p.s++;
          if (gate_jstr(&p, msg, sizeof msg)) msg[0] = 0;
        }
        gate_fail(err, errlen, "escalation refused: %s", msg[0] ? msg : "malformed answer from the daemon");
        goto out;
      }
    }
    if (got >= sizeof in - 1) {
      gate_fail(err, errlen, "escalation: malformed answer from the daemon");
      goto out;
    }
  }
out:
  if (sp[0] >= 0) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int i = 0; FORWARDED[i]; i++) sigaction(FORWARDED[i], &dfl, NULL);
    close(sp[0]);
    close(sp[1]);
    sig_w = -1;
  }
  gb_free(&m);
  close(fd);
  return rc;
}
