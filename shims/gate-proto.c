/* Request-channel client for the exec gate. See gate-proto.h. */
#define _GNU_SOURCE
#include "gate-proto.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---------- buffers and JSON writing ---------- */

void gb_init(struct gbuf *b) { b->p = NULL; b->len = b->cap = 0; b->oom = 0; }
void gb_free(struct gbuf *b) { free(b->p); gb_init(b); }

void gb_put(struct gbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) { b->oom = 1; return; }
    b->p = p; b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}
void gb_puts(struct gbuf *b, const char *s) { gb_put(b, s, strlen(s)); }

int gate_utf8_valid(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    unsigned c = u[i];
    if (c < 0x80) { i++; continue; }
    size_t k; unsigned min;
    if ((c & 0xe0) == 0xc0) { k = 1; c &= 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { k = 2; c &= 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { k = 3; c &= 0x07; min = 0x10000; }
    else return 0;
    if (i + k >= n) return 0;
    for (size_t j = 1; j <= k; j++) {
      if ((u[i + j] & 0xc0) != 0x80) return 0;
      c = (c << 6) | (u[i + j] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    i += k + 1;
  }
  return 1;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void gb_json_str(struct gbuf *b, const char *s, size_t n, int b64) {
  gb_put(b, "\"", 1);
  if (b64) {
    const unsigned char *u = (const unsigned char *)s;
    char q[4];
    for (size_t i = 0; i < n; i += 3) {
      unsigned v = u[i] << 16 | (i + 1 < n ? u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
      q[0] = B64[v >> 18 & 63]; q[1] = B64[v >> 12 & 63];
      q[2] = i + 1 < n ? B64[v >> 6 & 63] : '=';
      q[3] = i + 2 < n ? B64[v & 63] : '=';
      gb_put(b, q, 4);
    }
  } else {
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
      unsigned char c = (unsigned char)s[i];
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      gb_put(b, s + start, i - start);
      char e[8];
      if (c == '"') gb_put(b, "\\\"", 2);
      else if (c == '\\') gb_put(b, "\\\\", 2);
      else if (c == '\n') gb_put(b, "\\n", 2);
      else if (c == '\t') gb_put(b, "\\t", 2);
      else { memcpy(e, "\\u00", 4); e[4] = "0123456789abcdef"[c >> 4]; e[5] = "0123456789abcdef"[c & 15]; gb_put(b, e, 6); }
      start = i + 1;
    }
    gb_put(b, s + start, n - start);
  }
  gb_put(b, "\"", 1);
}

/* ---------- a small JSON reader (replies only; depth and size bounded) ---------- */


static void ws(struct gate_jp *p) { while (p->s < p->e && (*p->s == ' ' || *p->s == '\n' || *p->s == '\r' || *p->s == '\t')) p->s++; }

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Parse a string; copy (truncated) into out when out != NULL. */
static int jstr(struct gate_jp *p, char *out, size_t outlen) {
  size_t o = 0;
  if (p->s >= p->e || *p->s != '"') return -1;
  p->s++;
  while (p->s < p->e && *p->s != '"') {
    unsigned c = (unsigned char)*p->s++;
    if (c < 0x20) return -1;
    char tmp[4]; size_t tl = 1; tmp[0] = (char)c;
    if (c == '\\') {
      if (p->s >= p->e) return -1;
      char e = *p->s++;
      switch (e) {
        case '"': case '\\': case '/': tmp[0] = e; break;
        case 'n': tmp[0] = '\n'; break;
        case 't': tmp[0] = '\t'; break;
        case 'r': tmp[0] = '\r'; break;
        case 'b': tmp[0] = '\b'; break;
        case 'f': tmp[0] = '\f'; break;
        case 'u': {
          if (p->e - p->s < 4) return -1;
          unsigned v = 0;
          for (int i = 0; i < 4; i++) { int h = hexval(p->s[i]); if (h < 0) return -1; v = v << 4 | (unsigned)h; }
          p->s += 4;
          if (v >= 0xd800 && v <= 0xdbff && p->e - p->s >= 6 && p->s[0] == '\\' && p->s[1] == 'u') {
            unsigned w = 0; int ok = 1;
            for (int i = 0; i < 4; i++) { int h = hexval(p->s[2 + i]); if (h < 0) ok = 0; else w = w << 4 | (unsigned)h; }
            if (ok && w >= 0xdc00 && w <= 0xdfff) { v = 0x10000 + ((v - 0xd800) << 10) + (w - 0xdc00); p->s += 6; }
          }
          if (v < 0x80) { tmp[0] = (char)v; tl = 1; }
          else if (v < 0x800) { tmp[0] = (char)(0xc0 | v >> 6); tmp[1] = (char)(0x80 | (v & 63)); tl = 2; }
          else if (v < 0x10000) { tmp[0] = (char)(0xe0 | v >> 12); tmp[1] = (char)(0x80 | (v >> 6 & 63)); tmp[2] = (char)(0x80 | (v & 63)); tl = 3; }
          else { tmp[0] = (char)(0xf0 | v >> 18); tmp[1] = (char)(0x80 | (v >> 12 & 63)); tmp[2] = (char)(0x80 | (v >> 6 & 63)); tmp[3] = (char)(0x80 | (v & 63)); tl = 4; }
          break;
        }
        default: return -1;
      }
    }
    if (out) for (size_t i = 0; i < tl; i++) if (o + 1 < outlen) out[o++] = tmp[i];
  }
  if (p->s >= p->e) return -1;
  p->s++;
  if (out && outlen) out[o] = 0;
  return 0;
}

/* After an element of a list or object: 1 = ',' (another follows), 0 = `close` (done), -1 = malformed. */
static int jnext(struct gate_jp *p, char close) {
  ws(p);
  if (p->s >= p->e) return -1;
  if (*p->s == ',') { p->s++; return 1; }
  if (*p->s == close) { p->s++; return 0; }
  return -1;
}

static int jskip(struct gate_jp *p);

static int jlit(struct gate_jp *p, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(p->e - p->s) < n || memcmp(p->s, lit, n)) return -1;
  p->s += n;
  return 0;
}

static int jskip(struct gate_jp *p) {
  ws(p);
  if (p->s >= p->e || ++p->depth > 64) return -1;
  int rc = 0;
  char c = *p->s;
  if (c == '"') rc = jstr(p, NULL, 0);
  else if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    p->s++; ws(p);
    if (p->s < p->e && *p->s == close) { p->s++; p->depth--; return 0; }
    for (;;) {
      if (c == '{') { ws(p); if (jstr(p, NULL, 0)) return -1; ws(p); if (p->s >= p->e || *p->s++ != ':') return -1; }
      if (jskip(p)) return -1;
      int more = jnext(p, close);
      if (more < 0) return -1;
      if (more) continue;
      break;
    }
  } else if (c == 't') rc = jlit(p, "true");
  else if (c == 'f') rc = jlit(p, "false");
  else if (c == 'n') rc = jlit(p, "null");
  else if (c == '-' || (c >= '0' && c <= '9')) {
    p->s++;
    while (p->s < p->e && strchr("0123456789.eE+-", *p->s)) p->s++;
  } else rc = -1;
  p->depth--;
  return rc;
}

/* Iterate an object: calls fn(key, p) positioned at each value; fn must consume the value. */
typedef int (*jfield)(const char *key, struct gate_jp *p, void *ctx);
static int jobject(struct gate_jp *p, jfield fn, void *ctx) {
  ws(p);
  if (p->s >= p->e || *p->s != '{') return -1;
  if (++p->depth > 64) return -1;
  p->s++; ws(p);
  if (p->s < p->e && *p->s == '}') { p->s++; p->depth--; return 0; }
  for (;;) {
    char key[64];
    ws(p);
    if (jstr(p, key, sizeof key)) return -1;
    ws(p);
    if (p->s >= p->e || *p->s++ != ':') return -1;
    ws(p);
    if (fn(key, p, ctx)) return -1;
    int more = jnext(p, '}');
    if (more < 0) return -1;
    if (more) continue;
    break;
  }
  p->depth--;
  return 0;
}

int gate_jobject(struct gate_jp *p, gate_jfield fn, void *ctx) { return jobject(p, fn, ctx); }
int gate_jskip(struct gate_jp *p) { return jskip(p); }

int gate_jarray(struct gate_jp *p, gate_jelem fn, void *ctx) {
  ws(p);
  if (p->s >= p->e || *p->s != '[' || ++p->depth > 64) return -1;
  p->s++; ws(p);
  if (p->s < p->e && *p->s == ']') { p->s++; p->depth--; return 0; }
  for (int i = 0;; i++) {
    ws(p);
    if (fn(i, p, ctx)) return -1;
    int more = jnext(p, ']');
    if (more < 0) return -1;
    if (!more) break;
  }
  p->depth--;
  return 0;
}

char *gate_jstr_dup(struct gate_jp *p) {
  ws(p);
  /* the encoded length bounds the decoded one (an escape never decodes longer than it is written) */
  const char *q = p->s + 1;
  while (q < p->e && *q != '"') q += *q == '\\' ? 2 : 1;
  if (p->s >= p->e || *p->s != '"' || q >= p->e) return NULL;
  size_t room = (size_t)(q - p->s) + 1;
  char *out = malloc(room);
  if (!out) return NULL;
  if (jstr(p, out, room)) { free(out); return NULL; }
  return out;
}

int gate_jbool(struct gate_jp *p) {
  ws(p);
  if (!jlit(p, "true")) return 1;
  if (!jlit(p, "false")) return 0;
  return -1;
}

static int action_field(const char *key, struct gate_jp *p, void *ctx) {
  struct gate_reply *r = ctx;
  if (!strcmp(key, "type")) {
    char t[32];
    if (jstr(p, t, sizeof t)) return -1;
    r->action = !strcmp(t, "Run") ? GA_RUN : !strcmp(t, "Escalate") ? GA_ESCALATE : !strcmp(t, "Deny") ? GA_DENY : GA_NONE;
    return 0;
  }
  if (!strcmp(key, "reason") && *p->s == '"') return jstr(p, r->reason, sizeof r->reason);
  return jskip(p);
}

struct subctx { struct gate_reply *r; char argv[512]; char reason[512]; int deny; };

static int sub_action_field(const char *key, struct gate_jp *p, void *ctx) {
  struct subctx *s = ctx;
  if (!strcmp(key, "type")) { char t[32]; if (jstr(p, t, sizeof t)) return -1; s->deny = !strcmp(t, "Deny"); return 0; }
  if (!strcmp(key, "reason") && *p->s == '"') return jstr(p, s->reason, sizeof s->reason);
  return jskip(p);
}

static int sub_field(const char *key, struct gate_jp *p, void *ctx) {
  struct subctx *s = ctx;
  if (!strcmp(key, "action")) return jobject(p, sub_action_field, s);
  if (!strcmp(key, "argv") && *p->s == '[') {
    /* join the words with spaces for the message */
    size_t o = 0;
    p->s++; ws(p);
    if (p->s < p->e && *p->s == ']') { p->s++; return 0; }
    for (;;) {
      char w[256];
      ws(p);
      if (jstr(p, w, sizeof w)) return -1;
      size_t wl = strlen(w);
      if (o && o + 1 < sizeof s->argv) s->argv[o++] = ' ';
      for (size_t i = 0; i < wl && o + 1 < sizeof s->argv; i++) s->argv[o++] = w[i];
      s->argv[o] = 0;
      int more = jnext(p, ']');
      if (more < 0) return -1;
      if (more) continue;
      return 0;
    }
  }
  return jskip(p);
}

static int reply_field(const char *key, struct gate_jp *p, void *ctx) {
  struct gate_reply *r = ctx;
  if (!strcmp(key, "type")) return jstr(p, r->type, sizeof r->type);
  if (!strcmp(key, "id")) return jstr(p, r->id, sizeof r->id);
  if (!strcmp(key, "action")) return jobject(p, action_field, r);
  if (!strcmp(key, "escalation_token") && *p->s == '"') return jstr(p, r->token, sizeof r->token);
  if (!strcmp(key, "run_id")) return jstr(p, r->run_id, sizeof r->run_id);
  if (!strcmp(key, "message") && *p->s == '"') return jstr(p, r->reason, sizeof r->reason);
  if (!strcmp(key, "code") && *p->s == '"') return jstr(p, r->code, sizeof r->code);
  if (!strcmp(key, "subcommands") && *p->s == '[') {
    p->s++; ws(p);
    if (p->s < p->e && *p->s == ']') { p->s++; return 0; }
    for (;;) {
      struct subctx s = { r, "", "", 0 };
      if (jobject(p, sub_field, &s)) return -1;
      if (s.deny && r->deny_count < GATE_MAX_DENIED) {
        if (r->denied) gate_join(r->denied[r->deny_count], sizeof r->denied[0], s.argv, ": ", s.reason[0] ? s.reason : "denied", NULL);
        r->deny_count++;
      }
      int more = jnext(p, ']');
      if (more < 0) return -1;
      if (more) continue;
      return 0;
    }
  }
  return jskip(p);
}

int gate_parse_reply(const char *json, size_t n, struct gate_reply *r, char *err, size_t errlen) {
  /* field by field, not memset: the struct stays mostly untouched (see gate-proto.h) */
  r->type[0] = r->id[0] = r->reason[0] = r->token[0] = r->run_id[0] = r->code[0] = 0;
  r->action = GA_NONE;
  r->deny_count = 0;
  struct gate_jp p = { json, json + n, 0 };
  if (jobject(&p, reply_field, r)) { snprintf(err, errlen, "malformed reply from the daemon (not a JSON object)"); return -1; }
  ws(&p);
  if (p.s != p.e) { snprintf(err, errlen, "malformed reply from the daemon (trailing data)"); return -1; }
  if (!r->type[0] || !r->id[0]) { snprintf(err, errlen, "malformed reply from the daemon (no type or id)"); return -1; }
  return 0;
}

/* ---------- configuration ---------- */

static const char *lookup(char *const vars[], int n, const char *name) {
  if (!vars) return getenv(name);
  size_t l = strlen(name);
  for (int i = 0; i < n; i++) if (!strncmp(vars[i], name, l) && vars[i][l] == '=') return vars[i] + l + 1;
  return NULL;
}

static const char *need(char *const vars[], int n, const char *name, char *err, size_t errlen) {
  const char *v = lookup(vars, n, name);
  if (!v || !*v) { snprintf(err, errlen, "%s is not set (the run's exec gate is incomplete)", name); return NULL; }
  return v;
}

int gate_conf_from_list(struct gate_conf *c, char *const vars[], int n, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  if (!(c->request_sock = need(vars, n, "GATE_REQUEST_SOCK", err, errlen))) return -1;
  if (!(c->stream_sock = need(vars, n, "GATE_STREAM_SOCK", err, errlen))) return -1;
  if (!(c->escalate_sock = need(vars, n, "GATE_ESCALATE_SOCK", err, errlen))) return -1;
  if (!(c->client_dir = need(vars, n, "GATE_CLIENT_DIR", err, errlen))) return -1;
  if (!(c->run_id = need(vars, n, "GATE_RUN", err, errlen))) return -1;
  /* under the kernel layer, requests go through the run's supervisor, which pairs the answer with the
   * exec the kernel then reports (shims/gate-launch.c); replies come back the same way */
  const char *k = lookup(vars, n, "GATE_KERNEL_SOCK");
  if (k && *k == '/') { c->request_sock = k; c->via_supervisor = 1; }
  const char *t = lookup(vars, n, "GATE_EXEC_TIMEOUT_MS");
  c->timeout_ms = t && atoi(t) > 0 ? atoi(t) : 2000;
  c->attempts = 5;
  return 0;
}

int gate_conf_from_env(struct gate_conf *c, char *err, size_t errlen) { return gate_conf_from_list(c, NULL, 0, err, errlen); }

/* Unique per daemon lifetime (the daemon caches replies by id): pid, time, a counter and random bits
 * (pids repeat across pid namespaces). Also the reply socket's file name. */
void gate_new_id(char *out, size_t n) {
  static unsigned counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r) r = (unsigned)ts.tv_nsec;
  char pid[24], sec[24], ns[24], cnt[24], rnd[24], a[80], b[80];
  gate_join(a, sizeof a, "g", gate_num(pid, (unsigned long)getpid(), 16), "-", gate_num(sec, (unsigned long)ts.tv_sec, 16));
  gate_join(b, sizeof b, gate_num(ns, (unsigned long)ts.tv_nsec, 16), "-", gate_num(cnt, ++counter, 16), "-");
  gate_join(out, n, a, b, gate_num(rnd, r, 16), NULL);
}

size_t gate_join(char *out, size_t n, const char *a, const char *b, const char *c, const char *d) {
  const char *parts[4] = { a, b, c, d };
  size_t o = 0;
  if (!n) return 0;
  for (int i = 0; i < 4; i++)
    for (const char *s = parts[i]; s && *s && o + 1 < n; s++) out[o++] = *s;
  out[o] = 0;
  return o;
}

void gate_describe(char *out, size_t n, char *const argv[], const char *program) {
  size_t o = 0;
  out[0] = 0;
  for (int i = 0; argv && argv[i] && o + 1 < n; i++) {
    if (i && o + 1 < n) out[o++] = ' ';
    for (const char *s = argv[i]; *s && o + 1 < n; s++) out[o++] = *s;
    out[o] = 0;
  }
  if (!out[0]) gate_join(out, n, program, NULL, NULL, NULL);
}

char *gate_num(char *out, unsigned long v, int base) {
  char tmp[24];
  int i = 0;
  do { tmp[i++] = "0123456789abcdef"[v % (unsigned)base]; v /= (unsigned)base; } while (v);
  for (int j = 0; j < i; j++) out[j] = tmp[i - 1 - j];
  out[i] = 0;
  return out;
}

void gate_msg(const char *a, const char *b, const char *c, const char *d) {
  struct gbuf m; gb_init(&m);
  gb_puts(&m, "gate-sh: ");
  if (a) gb_puts(&m, a);
  if (b) gb_puts(&m, b);
  if (c) gb_puts(&m, c);
  if (d) gb_puts(&m, d);
  gb_puts(&m, "\n");
  if (!m.oom) { ssize_t w = write(2, m.p, m.len); (void)w; }
  gb_free(&m);
}

/* ---------- transport ---------- */

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

ssize_t gate_recv_until(int fd, void *buf, size_t n, long deadline_ms) {
  for (;;) {
    long left = deadline_ms - now_ms();
    if (left <= 0) return -1;
    struct pollfd pf = { fd, POLLIN, 0 };
    int pr = poll(&pf, 1, (int)left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return -1;
    ssize_t got = recv(fd, buf, n, MSG_TRUNC);
    if (got < 0) { if (errno == EINTR) continue; return -1; }
    return got;
  }
}

static int set_addr(struct sockaddr_un *a, const char *path, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a->sun_path) { snprintf(err, errlen, "socket path too long: %s", path); return -1; }
  strcpy(a->sun_path, path);
  return 0;
}

static int unreachable(const char *path, int e, char *err, size_t errlen) {
  snprintf(err, errlen, "the gate-sh daemon is not reachable at %s (%s); nothing was run: start it with 'gate daemon start' and check 'gate status'",
           path, strerror(e));
  return -1;
}

/* A reply for our id: 1 = final (r filled), 0 = pending/other id (keep waiting), -1 = error, 2 = the
 * answer is too large for a datagram (fetch it over the stream socket; only when dgram is set). */
static int take(const char *buf, size_t n, const char *id, struct gate_reply *r, char *err, size_t errlen, int dgram) {
  if (gate_parse_reply(buf, n, r, err, errlen)) return -1;
  if (strcmp(r->id, id)) return 0; /* a late reply to an earlier request: not ours */
  if (!strcmp(r->type, "pending")) return 0;
  if (dgram && !strcmp(r->type, "error") && !strcmp(r->code, "too-large")) return 2;
  /* the kernel layer's supervisor relays requests (shims/gate-launch.c) and says so when the daemon is gone */
  if (!strcmp(r->type, "error") && !strcmp(r->code, "unreachable") && r->reason[0]) {
    snprintf(err, errlen, "%s", r->reason);
    return -1;
  }
  if (!strcmp(r->type, "error")) {
    snprintf(err, errlen, "the daemon refused the request: %s", r->reason[0] ? r->reason : "protocol error");
    return -1;
  }
  return 1;
}

static int request_stream(const struct gate_conf *c, const char *id, const struct gbuf *msg, struct gate_reply *r,
                          char *err, size_t errlen) {
  struct sockaddr_un a;
  if (set_addr(&a, c->stream_sock, err, errlen)) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) { snprintf(err, errlen, "socket: %s", strerror(errno)); return -1; }
  if (connect(fd, (struct sockaddr *)&a, sizeof a)) { int e = errno; close(fd); return unreachable(c->stream_sock, e, err, errlen); }
  uint32_t len = (uint32_t)msg->len;
  unsigned char head[4] = { len & 255, len >> 8 & 255, len >> 16 & 255, len >> 24 & 255 };
  struct gbuf out; gb_init(&out);
  gb_put(&out, (const char *)head, 4);
  gb_put(&out, msg->p, msg->len);
  size_t off = 0;
  while (!out.oom && off < out.len) {
    ssize_t w = send(fd, out.p + off, out.len - off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) { int e = errno; gb_free(&out); close(fd); return unreachable(c->stream_sock, e, err, errlen); }
    off += (size_t)w;
  }
  gb_free(&out);
  struct gbuf in; gb_init(&in);
  int rc = -1;
  long silent_until = now_ms() + (long)c->timeout_ms * c->attempts;
  for (;;) {
    while (in.len >= 4) {
      const unsigned char *u = (const unsigned char *)in.p;
      uint32_t n = u[0] | u[1] << 8 | u[2] << 16 | (uint32_t)u[3] << 24;
      if (n > GATE_MAX_FRAME) { snprintf(err, errlen, "malformed reply from the daemon (frame too large)"); goto out; }
      if (in.len < 4 + n) break;
      int t = take(in.p + 4, n, id, r, err, errlen, 0);
      if (t) { rc = t > 0 ? 0 : -1; goto out; }
      memmove(in.p, in.p + 4 + n, in.len - 4 - n);
      in.len -= 4 + n;
      silent_until = now_ms() + (long)c->timeout_ms * c->attempts;
    }
    long left = silent_until - now_ms();
    if (left <= 0) { snprintf(err, errlen, "the gate-sh daemon did not answer (timeout); nothing was run: check 'gate status'"); goto out; }
    struct pollfd pf = { fd, POLLIN, 0 };
    int pr = poll(&pf, 1, (int)left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    char chunk[65536];
    ssize_t got = recv(fd, chunk, sizeof chunk, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) { snprintf(err, errlen, "the gate-sh daemon closed the connection without an answer; nothing was run: check 'gate status'"); goto out; }
    gb_put(&in, chunk, (size_t)got);
    if (in.oom) { snprintf(err, errlen, "out of memory"); goto out; }
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
  char path[sizeof ((struct sockaddr_un *)0)->sun_path];
} RS = { 0, -1, 0, 0, 0, 0, "" };

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
    if (RS.pid == pid && RS.fd >= 0 && kept_usable()) { *kept = 1; return RS.fd; }
    if (RS.pid == pid && RS.fd >= 0) { unlink(RS.path); RS.fd = -1; } /* the program closed it */
    if (RS.pid != pid && RS.fd < 0) { RS.pid = pid; RS.uses = 0; }     /* counting starts for this pid */
    if (RS.pid == pid && RS.uses++ >= 1) *kept = 1;                  /* asked before: keep this one */
    else __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE);
  }
  int fd = -1;
  if (set_addr(&me, path, err, errlen)) goto fail;
  fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) { snprintf(err, errlen, "socket: %s", strerror(errno)); goto fail; }
  mode_t old = umask(077);
  int b = bind(fd, (struct sockaddr *)&me, sizeof me);
  umask(old);
  if (b) { snprintf(err, errlen, "cannot bind the reply socket %s (%s); nothing was run", path, strerror(errno)); goto fail; }
  struct timeval tv = { 1, 0 };
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct stat st;
  if (*kept && fstat(fd, &st) == 0) {
    RS.fd = fd; RS.dev = st.st_dev; RS.ino = st.st_ino;
    memcpy(RS.path, me.sun_path, sizeof RS.path);
  } else if (*kept) { *kept = 0; __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE); }
  return fd;
fail:
  if (fd >= 0) close(fd);
  if (*kept) { *kept = 0; __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE); }
  return -1;
}

static void reply_done(int fd, const char *path, int kept) {
  if (kept) { __atomic_store_n(&RS.busy, 0, __ATOMIC_RELEASE); return; }
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

int gate_request(const struct gate_conf *c, const char *id, const struct gbuf *msg, struct gate_reply *r,
                 char *err, size_t errlen) {
  if (msg->oom) { snprintf(err, errlen, "out of memory building the request"); return -1; }
  if (msg->len > GATE_MAX_DATAGRAM) return request_stream(c, id, msg, r, err, errlen);
  struct sockaddr_un to;
  if (set_addr(&to, c->request_sock, err, errlen)) return -1;
  char path[256];
  gate_join(path, sizeof path, c->client_dir, "/", id, ".sock");
  int kept, fd = reply_open(path, &kept, err, errlen);
  if (fd < 0) return -1;
  int rc = -1, by_stream = 0;
  /* On the stack, not a 64 KiB heap block: exec answers are a few hundred bytes (see GATE_REPLY_ROOM). */
  char buf[GATE_REPLY_ROOM];
  for (int attempt = 0; attempt < c->attempts; attempt++) {
    ssize_t s;
    do s = sendto(fd, msg->p, msg->len, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
    while (s < 0 && errno == EINTR);
    if (s < 0 && errno != EAGAIN && errno != ENOBUFS && c->via_supervisor) {
      snprintf(err, errlen, "the exec supervisor of this run is gone (%s); nothing more can run in this run", strerror(errno));
      goto out;
    }
    if (s < 0 && errno != EAGAIN && errno != ENOBUFS) { unreachable(c->request_sock, errno, err, errlen); goto out; }
    long deadline = now_ms() + c->timeout_ms;
    for (;;) {
      ssize_t n = gate_recv_until(fd, buf, sizeof buf, deadline);
      if (n < 0) break;
      if ((size_t)n > sizeof buf) { by_stream = 1; goto out; }
      int t = take(buf, (size_t)n, id, r, err, errlen, 1);
      if (t < 0) goto out;
      if (t == 2) { by_stream = 1; goto out; }
      if (t > 0) { rc = 0; goto out; }
      if (!strcmp(r->type, "pending") && !strcmp(r->id, id)) { deadline = now_ms() + c->timeout_ms * 3L; attempt = 0; }
    }
  }
  snprintf(err, errlen, "the gate-sh daemon did not answer %d attempts; nothing was run: check 'gate status'", c->attempts);
out:
  reply_done(fd, path, kept);
  /* A reply too large for buf, or for a datagram: the daemon keeps every reply longer than
   * GATE_REPLY_ROOM by request id and answers a repeated id from that cache (never deciding twice), so
   * the same request on the stream socket fetches it whole. */
  if (by_stream) return request_stream(c, id, msg, r, err, errlen);
  return rc;
}

/* ---------- requests ---------- */

/* Lengths computed at compile time: this runs for every variable of every exec's environment. */
#define W(s) { s, sizeof s - 1 }
static const struct word { const char *s; size_t n; } LOADING_NAMES[] = {
  W("PATH"), W("ENV"), W("BASH_ENV"), W("PROMPT_COMMAND"), W("PS4"), W("SHELLOPTS"), W("BASHOPTS"), W("ZDOTDIR"),
  W("INPUTRC"), W("GCONV_PATH"), W("LOCPATH"), W("HOSTALIASES"), W("CLASSPATH"), W("PAGER"), W("GH_PAGER"), W("MANPAGER"),
  W("SYSTEMD_PAGER"), W("LESSOPEN"), W("LESSCLOSE"), W("EDITOR"), W("VISUAL"), W("BROWSER"), W("SSH_ASKPASS"),
  W("SUDO_ASKPASS"), W("MAKEFLAGS"), W("MFLAGS"), W("GEM_PATH"), W("GEM_HOME"), W("CARGO_HOME"),
  W("RUSTC_WRAPPER"), W("PERLLIB"), { NULL, 0 } };
static const struct word LOADING_PREFIXES[] = {
  W("LD_"), W("DYLD_"), W("GIT_"), W("BASH_FUNC_"), W("PYTHON"), W("NODE_"), W("PERL5"), W("RUBY"), W("JAVA_"),
  W("_JAVA_"), W("JDK_"), W("NPM_CONFIG_"), W("npm_config_"), W("PIP_"), { NULL, 0 } };
#undef W

int gate_code_loading_name(const char *name, size_t n) {
  for (const struct word *w = LOADING_NAMES; w->s; w++) if (w->n == n && !memcmp(w->s, name, n)) return 1;
  for (const struct word *w = LOADING_PREFIXES; w->s; w++) if (n >= w->n && !memcmp(w->s, name, w->n)) return 1;
  return 0;
}

/* LD_PRELOAD without the gate's own library; NULL when nothing else is left. */
static char *foreign_preload(const char *v, const char *own) {
  struct gbuf b; gb_init(&b);
  const char *s = v;
  while (*s) {
    size_t n = strcspn(s, ": ");
    if (n && !(own && strlen(own) == n && !memcmp(s, own, n))) { if (b.len) gb_put(&b, ":", 1); gb_put(&b, s, n); }
    s += n;
    if (*s) s++;
  }
  return b.len ? b.p : (gb_free(&b), NULL);
}

/* PATH without the gate's own entry (the nested-shell shims): what the caller put there is what counts. */
static char *without_entry(const char *v, const char *entry) {
  struct gbuf b; gb_init(&b);
  gb_puts(&b, "");
  for (const char *s = v;;) {
    size_t n = strcspn(s, ":");
    if (!(strlen(entry) == n && !memcmp(s, entry, n))) { if (b.len) gb_put(&b, ":", 1); gb_put(&b, s, n); }
    if (!s[n]) break;
    s += n + 1;
  }
  if (b.oom) { gb_free(&b); return NULL; }
  return b.p;
}

static int is_gate_var(const char *e) { return !strncmp(e, "GATE_", 5); }

void gate_exec_request(struct gbuf *b, const struct gate_conf *c, const char *id, const char *program,
                       char *const argv[], const char *cwd, char *const envp[], const char *own_preload,
                       const char *own_path) {
  gate_exec_request_for(b, c, id, program, argv, cwd, envp, own_preload, own_path, (long)getpid(), NULL);
}

void gate_exec_request_for(struct gbuf *b, const struct gate_conf *c, const char *id, const char *program,
                           char *const argv[], const char *cwd, char *const envp[], const char *own_preload,
                           const char *own_path, long pid, const char *layer) {
  /* the program's real path when it is a symlink (also /proc/self/fd/N of fexecve): a rule about the
   * real program applies too (src/decide/intercepted.ts) */
  char real[PATH_MAX];
  struct stat st;
  /* only a program that is itself a symlink can have another name's rules (a folder symlink such as
   * /bin -> usr/bin keeps the name): one lstat per exec, the rest only for symlinks */
  int has_real = lstat(program, &st) == 0 && S_ISLNK(st.st_mode) && realpath(program, real) != NULL && strcmp(real, program) != 0;
  int b64 = !gate_utf8_valid(program, strlen(program)) || !gate_utf8_valid(cwd, strlen(cwd)) || (has_real && !gate_utf8_valid(real, strlen(real)));
  for (int i = 0; argv && argv[i] && !b64; i++) b64 = !gate_utf8_valid(argv[i], strlen(argv[i]));
  for (int i = 0; envp && envp[i] && !b64; i++) b64 = !gate_utf8_valid(envp[i], strlen(envp[i]));
  char num[32];
  gb_puts(b, "{\"v\":1,\"id\":");
  gb_json_str(b, id, strlen(id), 0);
  gb_puts(b, ",\"type\":\"exec\",\"run_id\":");
  gb_json_str(b, c->run_id, strlen(c->run_id), 0);
  if (b64) gb_puts(b, ",\"encoding\":\"base64\"");
  gb_puts(b, ",\"program\":");
  gb_json_str(b, program, strlen(program), b64);
  if (has_real) {
    gb_puts(b, ",\"real_program\":");
    gb_json_str(b, real, strlen(real), b64);
  }
  gb_puts(b, ",\"argv\":[");
  for (int i = 0; argv && argv[i]; i++) {
    if (i) gb_put(b, ",", 1);
    gb_json_str(b, argv[i], strlen(argv[i]), b64);
  }
  gb_puts(b, "],\"cwd\":");
  gb_json_str(b, cwd, strlen(cwd), b64);
  gb_puts(b, ",\"pid\":");
  gb_puts(b, gate_num(num, (unsigned long)pid, 10));
  if (layer) { gb_puts(b, ",\"layer\":"); gb_json_str(b, layer, strlen(layer), 0); }
  int any = 0;
  for (int i = 0; envp && envp[i]; i++) {
    const char *e = envp[i], *eq = strchr(e, '=');
    if (!eq || is_gate_var(e) || !gate_code_loading_name(e, (size_t)(eq - e))) continue;
    const char *val = eq + 1;
    char *own = NULL;
    if (eq - e == 10 && !memcmp(e, "LD_PRELOAD", 10)) { own = foreign_preload(val, own_preload); if (!own) continue; val = own; }
    if (eq - e == 4 && !memcmp(e, "PATH", 4) && own_path) { own = without_entry(val, own_path); val = own ? own : val; }
    gb_puts(b, any ? "," : ",\"env\":{");
    any = 1;
    gb_json_str(b, e, (size_t)(eq - e), 0);
    gb_put(b, ":", 1);
    gb_json_str(b, val, strlen(val), b64);
    free(own);
  }
  if (any) gb_put(b, "}", 1);
  gb_put(b, "}", 1);
}

/* ---------- escalation ---------- */

/* Signals an escalated command should see as if it were the caller (the caller only waits for it). */
static const int FORWARDED[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, 0 };
static volatile int sig_w = -1;
static void on_signal(int sig) {
  int e = errno;
  unsigned char b = (unsigned char)sig;
  if (sig_w >= 0) { ssize_t w = write(sig_w, &b, 1); (void)w; }
  errno = e;
}

int gate_escalate(const struct gate_conf *c, const char *token, char *const envp[], char *err, size_t errlen) {
  int sp[2] = { -1, -1 }; /* self-pipe for forwarded signals */
  struct sockaddr_un a;
  if (set_addr(&a, c->escalate_sock, err, errlen)) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) { snprintf(err, errlen, "socket: %s", strerror(errno)); return -1; }
  if (connect(fd, (struct sockaddr *)&a, sizeof a)) { int e = errno; close(fd); return unreachable(c->escalate_sock, e, err, errlen); }
  /* The frame: {token, env} where env is the exec's environment without the gate's own variables. */
  struct gbuf m; gb_init(&m);
  gb_puts(&m, "{\"token\":");
  gb_json_str(&m, token, strlen(token), 0);
  int b64 = 0;
  for (int i = 0; envp && envp[i] && !b64; i++) b64 = !gate_utf8_valid(envp[i], strlen(envp[i]));
  if (b64) gb_puts(&m, ",\"encoding\":\"base64\"");
  gb_puts(&m, ",\"env\":[");
  int first = 1;
  for (int i = 0; envp && envp[i]; i++) {
    if (is_gate_var(envp[i])) continue;
    if (!first) gb_put(&m, ",", 1);
    first = 0;
    gb_json_str(&m, envp[i], strlen(envp[i]), b64);
  }
  gb_puts(&m, "]}");
  uint32_t len = (uint32_t)m.len;
  unsigned char head[4] = { len & 255, len >> 8 & 255, len >> 16 & 255, len >> 24 & 255 };
  /* fds 0-2 as they are; a closed one is replaced by /dev/null so the count is always 3 */
  int fds[3], opened[3] = { -1, -1, -1 };
  for (int i = 0; i < 3; i++) {
    fds[i] = i;
    if (fcntl(i, F_GETFD) < 0) fds[i] = opened[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
  }
  struct iovec iov[2] = { { head, 4 }, { m.p, m.len } };
  union { char buf[CMSG_SPACE(sizeof fds)]; struct cmsghdr align; } u;
  memset(&u, 0, sizeof u);
  struct msghdr mh = { 0 };
  mh.msg_iov = iov; mh.msg_iovlen = 2;
  mh.msg_control = u.buf; mh.msg_controllen = sizeof u.buf;
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET; cm->cmsg_type = SCM_RIGHTS; cm->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(cm), fds, sizeof fds);
  int rc = -1;
  ssize_t w;
  do w = sendmsg(fd, &mh, MSG_NOSIGNAL); while (w < 0 && errno == EINTR);
  for (int i = 0; i < 3; i++) if (opened[i] >= 0) close(opened[i]);
  if (w < 0 || m.oom) { snprintf(err, errlen, "escalation: cannot send to %s (%s)", c->escalate_sock, strerror(errno)); goto out; }
  size_t off = (size_t)w;
  while (off < 4 + m.len) { /* the rest of a large frame, descriptors already sent */
    const char *p = off < 4 ? (const char *)head + off : m.p + (off - 4);
    size_t n = off < 4 ? 4 - off : m.len - (off - 4);
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) { snprintf(err, errlen, "escalation: connection lost while sending (%s)", strerror(errno)); goto out; }
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
    struct pollfd pf[2] = { { fd, POLLIN, 0 }, { sp[0], POLLIN, 0 } };
    if (poll(pf, sp[0] >= 0 ? 2 : 1, -1) < 0) { if (errno == EINTR) continue; snprintf(err, errlen, "escalation: poll: %s", strerror(errno)); goto out; }
    if (sp[0] >= 0 && (pf[1].revents & POLLIN)) {
      unsigned char sigs[16];
      ssize_t ns = read(sp[0], sigs, sizeof sigs);
      for (ssize_t i = 0; i < ns; i++) {
        char body[32], frame[40];
        int bl = snprintf(body, sizeof body, "{\"signal\":%d}", sigs[i]);
        frame[0] = (char)bl; frame[1] = frame[2] = frame[3] = 0;
        memcpy(frame + 4, body, (size_t)bl);
        if (send(fd, frame, (size_t)bl + 4, MSG_NOSIGNAL) < 0) break;
      }
    }
    if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t k = recv(fd, in + got, sizeof in - 1 - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) { snprintf(err, errlen, "escalation: the daemon closed the connection without an exit status"); goto out; }
    got += (size_t)k;
    if (got >= 4) {
      const unsigned char *h = (const unsigned char *)in;
      uint32_t n = h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24;
      if (n > sizeof in - 5) { snprintf(err, errlen, "escalation: malformed answer from the daemon"); goto out; }
      if (got >= 4 + n) {
        in[4 + n] = 0;
        char *es = strstr(in + 4, "\"exit_status\":");
        if (es) {
          int st = atoi(es + 14);
          if (st < 0 || st > 255) { snprintf(err, errlen, "escalation: malformed exit status from the daemon"); goto out; }
          rc = st;
          goto out;
        }
        struct gate_jp p = { in + 4, in + 4 + n, 0 };
        char msg[1024] = "";
        char *e = strstr(in + 4, "\"error\":");
        if (e) { p.s = e + 8; while (p.s < p.e && *p.s == ' ') p.s++; if (jstr(&p, msg, sizeof msg)) msg[0] = 0; }
        snprintf(err, errlen, "escalation refused: %s", msg[0] ? msg : "malformed answer from the daemon");
        goto out;
      }
    }
    if (got >= sizeof in - 1) { snprintf(err, errlen, "escalation: malformed answer from the daemon"); goto out; }
  }
out:
  if (sp[0] >= 0) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int i = 0; FORWARDED[i]; i++) sigaction(FORWARDED[i], &dfl, NULL);
    close(sp[0]); close(sp[1]);
    sig_w = -1;
  }
  gb_free(&m);
  close(fd);
  return rc;
}
