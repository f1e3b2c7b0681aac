/*
 * The requests the relay (relay.c) forwards to the daemon, and the daemon's replies: who sent each request
 * (its pid, its reply socket), what it asked about (for pairing and for a grant's reuse), the request
 * forwarded with the sender's pid as the daemon sees it, and each reply passed back, pairing an exec's Run or
 * Escalate with its pid (pairs.c) and keeping a grant (../gate-reuse.c). The pending table is this file's
 * own, touched by the relay thread only. Trust boundary: a request comes from any process of the tree;
 * replies only from the daemon's socket (relay.c checks the sender).
 */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <stddef.h>
#include <unistd.h>

#define MAX_PENDING 1024

/* run, program, file: what the request asked about (for its answer's reuse), when it could be told */
struct pending {
  char id[130];
  struct peer to;
  pid_t pid;
  char *key;
  long at;
  char *run, *program;
  struct gate_ident file;
};

static struct {
  const struct launch *l;
  int dsock;
  struct pending pending[MAX_PENDING];
} P;

#define EXEC_TYPE GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_EXEC)
#define IS_EXEC(rest) (!strncmp(rest, EXEC_TYPE, sizeof EXEC_TYPE - 1))

static void pending_clear(struct pending *p) {
  free(p->key);
  free(p->run);
  free(p->program);
  p->key = p->run = p->program = NULL;
  p->id[0] = 0;
}

/* The slot for request id: its own on a resend, else a free one, else the oldest. */
static struct pending *pending_slot(const char *id) {
  int slot = -1, oldest = 0;
  for (int i = 0; i < MAX_PENDING; i++) {
    if (P.pending[i].id[0] && !strcmp(P.pending[i].id, id)) return &P.pending[i];
    if (slot < 0 && !P.pending[i].id[0]) slot = i;
    if (P.pending[i].at < P.pending[oldest].at) oldest = i;
  }
  return &P.pending[slot < 0 ? oldest : slot];
}

/* The daemon is gone: the sender hears so at once, as it would have talking to the daemon itself. */
static void say_unreachable(const struct peer *to, const char *id, int e) {
  char why[400];
  gate_unreachable(P.l->conf.request_sock, e, why, sizeof why);
  struct gbuf m;
  gb_init(&m);
  gb_puts(&m, GATE_MSG_HEAD);
  gb_json_str(&m, id, strlen(id), 0);
  gb_puts(&m,
          GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_ERROR) GATE_KEY(GATE_F_CODE) GATE_QUOTE(GATE_CODE_UNREACHABLE)
              GATE_KEY(GATE_F_MESSAGE));
  gb_json_str(&m, why, strlen(why), 0);
  gb_puts(&m, "}");
  if (!m.oom) peer_send(to, m.p, m.len);
  gb_free(&m);
}

/* Forward a request to the daemon: an exec request goes with the sender's pid as the daemon sees it
 * (host_pid, where the daemon reads how the asking process was started: src/daemon/provenance.ts), added
 * as the object's last member; the request as it came when that does not fit. -1 (errno) when unsent. */
static int forward(const char *msg, size_t n, const char *rest, pid_t pid) {
  struct sockaddr_un to = {.sun_family = AF_UNIX};
  gate_join(to.sun_path, sizeof to.sun_path, P.l->conf.request_sock, NULL, NULL, NULL);
  struct gbuf withpid;
  gb_init(&withpid);
  if (IS_EXEC(rest) && n > 1 && msg[n - 1] == '}') {
    char num[24];
    gb_put(&withpid, msg, n - 1);
    gb_puts(&withpid, GATE_KEY(GATE_F_HOST_PID));
    gb_puts(&withpid, gate_num(num, (unsigned long)pid, 10));
    gb_puts(&withpid, "}");
  }
  int added = withpid.len && !withpid.oom;
  ssize_t s;
  do
    s = sendto(P.dsock, added ? withpid.p : msg, added ? withpid.len : n, MSG_NOSIGNAL, (struct sockaddr *)&to,
               sizeof to);
  while (s < 0 && errno == EINTR);
  if (s < 0 && errno == EMSGSIZE && added) {
    do s = sendto(P.dsock, msg, n, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
    while (s < 0 && errno == EINTR);
  }
  int e = errno;
  gb_free(&withpid);
  errno = e;
  return s < 0 ? -1 : 0;
}

/* A request from the tree: answered here, or remembered (who sent it, what it asks) and forwarded. The reply
 * socket is this function's to close, or to keep in the pending table until the final reply. */
void pending_request(const struct launch *l, int dsock, const char *msg, size_t n, struct peer *from, pid_t pid) {
  char id[130];
  P.l = l;
  P.dsock = dsock;
  const char *rest = after_id(msg, n, id, sizeof id), *end = msg + n;
  /* not a request we relay, or nowhere to answer: dropped (the sender times out, fails closed) */
  int nowhere = from->fd < 0 && from->len <= offsetof(struct sockaddr_un, sun_path);
  if (!rest || nowhere || held_answer(id, rest, end, pid, from) || landed_answer(id, rest, end, pid, from)) {
    peer_close(from);
    return;
  }
  struct asked a = {0};
  struct gate_ident file;
  if (reused_answer(&P.l->conf, msg, n, id, rest, pid, from, &a, &file)) {
    asked_free(&a);
    peer_close(from);
    return;
  }
  struct pending *p = pending_slot(id);
  if (strcmp(p->id, id)) {
    free(p->key);
    p->key = IS_EXEC(rest) ? strndup(rest, (size_t)(end - rest)) : NULL;
    free(p->run);
    free(p->program);
    p->run = a.run;
    p->program = a.program;
    a.run = a.program = NULL;
    p->file = file;
  }
  asked_free(&a);
  if (p->id[0]) peer_close(&p->to); /* a resend comes with a new reply socket; an evicted request's goes */
  memcpy(p->id, id, strlen(id) + 1);
  p->to = *from;
  from->fd = -1;
  p->pid = pid;
  p->at = mono_ms();
  if (!forward(msg, n, rest, pid) || errno == EAGAIN || errno == ENOBUFS) return; /* full: the sender resends */
  say_unreachable(&p->to, id, errno);
  peer_close(&p->to);
  pending_clear(p);
}

/* A reply from the daemon: pair an exec's Run with its pid (and keep a grant), pass the reply on. */
void pending_reply(const char *msg, size_t n) {
  struct gate_reply r;
  struct gate_reused_audit audit;
  char err[256];
  gate_reply_init(&r, NULL, &audit);
  if (gate_parse_reply(msg, n, &r, err, sizeof err)) {
    /* whose it is cannot be told: every waiting sender gets it, and fails closed on it as it would have */
    for (int i = 0; i < MAX_PENDING; i++) {
      struct pending *p = &P.pending[i];
      if (!p->id[0]) continue;
      peer_send(&p->to, msg, n);
      peer_close(&p->to);
      pending_clear(p);
    }
    return;
  }
  for (int i = 0; i < MAX_PENDING; i++) {
    struct pending *p = &P.pending[i];
    if (!p->id[0] || strcmp(p->id, r.id)) continue;
    int final = strcmp(r.type, GATE_MSG_PENDING) != 0;
    /* Escalate too: the kernel layer lets it go on in place either way (the layer escalates, or a spawned
     * child's constructor does with its mark) */
    int runs = !strcmp(r.type, GATE_MSG_EXEC) && (r.action == GA_RUN || r.action == GA_ESCALATE);
    if (final && runs && p->key) {
      pairs_add(PAIRED, p->pid, p->key, &p->file, NULL);
      p->key = NULL;
      /* kept only when the file is still the one asked about (so the one the daemon judged) */
      struct gate_ident now;
      /* (a grant scoped to a process is the kernel layer's: the daemon gives none to this layer's request) */
      int grant = r.action == GA_RUN && r.grant[0] && !r.scope_pid && p->run && p->program && p->file.known;
      if (grant && (file_of(p->pid, p->program, &now), gate_ident_eq(&now, &p->file)))
        gate_reuse_add(p->run, p->program, &p->file, r.grant, r.epoch, &audit, NULL, r.grant_below);
    }
    peer_send(&p->to, msg, n);
    if (final) {
      peer_close(&p->to);
      pending_clear(p);
    }
    break;
  }
}
