/* JSON for the exec gate's C side: buffers, writing, the bounded reader. See gate-json.h. */
#define _GNU_SOURCE
#include "gate-json.h"

#include <stdlib.h>
#include <string.h>

/* ---------- buffers and JSON writing ---------- */

void gb_init(struct gbuf *b) {
  b->p = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}
void gb_free(struct gbuf *b) {
  free(b->p);
  gb_init(b);
}

void gb_put(struct gbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
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
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k;
    unsigned min;
    if ((c & 0xe0) == 0xc0) {
      k = 1;
      c &= 0x1f;
      min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      k = 2;
      c &= 0x0f;
      min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      k = 3;
      c &= 0x07;
      min = 0x10000;
    } else return 0;
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
      q[0] = B64[v >> 18 & 63];
      q[1] = B64[v >> 12 & 63];
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
      else {
        memcpy(e, "\\u00", 4);
        e[4] = "0123456789abcdef"[c >> 4];
        e[5] = "0123456789abcdef"[c & 15];
        gb_put(b, e, 6);
      }
      start = i + 1;
    }
    gb_put(b, s + start, n - start);
  }
  gb_put(b, "\"", 1);
}

/* ---------- a small JSON reader (replies only; depth and size bounded) ---------- */

static void ws(struct gate_jp *p) {
  while (p->s < p->e && (*p->s == ' ' || *p->s == '\n' || *p->s == '\r' || *p->s == '\t')) p->s++;
}

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
    char tmp[4];
    size_t tl = 1;
    tmp[0] = (char)c;
    if (c == '\\') {
      if (p->s >= p->e) return -1;
      char e = *p->s++;
      switch (e) {
      case '"':
      case '\\':
      case '/': tmp[0] = e; break;
      case 'n': tmp[0] = '\n'; break;
      case 't': tmp[0] = '\t'; break;
      case 'r': tmp[0] = '\r'; break;
      case 'b': tmp[0] = '\b'; break;
      case 'f': tmp[0] = '\f'; break;
      case 'u': {
        if (p->e - p->s < 4) return -1;
        unsigned v = 0;
        for (int i = 0; i < 4; i++) {
          int h = hexval(p->s[i]);
          if (h < 0) return -1;
          v = v << 4 | (unsigned)h;
        }
        p->s += 4;
        if (v >= 0xd800 && v <= 0xdbff && p->e - p->s >= 6 && p->s[0] == '\\' && p->s[1] == 'u') {
          unsigned w = 0;
          int ok = 1;
          for (int i = 0; i < 4; i++) {
            int h = hexval(p->s[2 + i]);
            if (h < 0) ok = 0;
            else w = w << 4 | (unsigned)h;
          }
          if (ok && w >= 0xdc00 && w <= 0xdfff) {
            v = 0x10000 + ((v - 0xd800) << 10) + (w - 0xdc00);
            p->s += 6;
          }
        }
        if (v < 0x80) {
          tmp[0] = (char)v;
          tl = 1;
        } else if (v < 0x800) {
          tmp[0] = (char)(0xc0 | v >> 6);
          tmp[1] = (char)(0x80 | (v & 63));
          tl = 2;
        } else if (v < 0x10000) {
          tmp[0] = (char)(0xe0 | v >> 12);
          tmp[1] = (char)(0x80 | (v >> 6 & 63));
          tmp[2] = (char)(0x80 | (v & 63));
          tl = 3;
        } else {
          tmp[0] = (char)(0xf0 | v >> 18);
          tmp[1] = (char)(0x80 | (v >> 12 & 63));
          tmp[2] = (char)(0x80 | (v >> 6 & 63));
          tmp[3] = (char)(0x80 | (v & 63));
          tl = 4;
        }
        break;
      }
      default: return -1;
      }
    }
    if (out)
      for (size_t i = 0; i < tl; i++)
        if (o + 1 < outlen) out[o++] = tmp[i];
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
  if (*p->s == ',') {
    p->s++;
    return 1;
  }
  if (*p->s == close) {
    p->s++;
    return 0;
  }
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
    p->s++;
    ws(p);
    if (p->s < p->e && *p->s == close) {
      p->s++;
      p->depth--;
      return 0;
    }
    for (;;) {
      if (c == '{') {
        ws(p);
        if (jstr(p, NULL, 0)) return -1;
        ws(p);
        if (p->s >= p->e || *p->s++ != ':') return -1;
      }
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
  p->s++;
  ws(p);
  if (p->s < p->e && *p->s == '}') {
    p->s++;
    p->depth--;
    return 0;
  }
  for (;;) {
    char key[64];
    ws(p);
    if (jstr(p, key, sizeof key)) return -1;
    ws(p);
    if (p->s >= p->e || *p->s++ != ':') return -1;
    ws(p);
    /* a member without a value is malformed; and fn may look at *p->s before it reads (found by fuzzing) */
    if (p->s >= p->e || fn(key, p, ctx)) return -1;
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
int gate_jstr(struct gate_jp *p, char *out, size_t outlen) { return jstr(p, out, outlen); }
void gate_jws(struct gate_jp *p) { ws(p); }
int gate_jnext(struct gate_jp *p, char close) { return jnext(p, close); }

int gate_jarray(struct gate_jp *p, gate_jelem fn, void *ctx) {
  ws(p);
  if (p->s >= p->e || *p->s != '[' || ++p->depth > 64) return -1;
  p->s++;
  ws(p);
  if (p->s < p->e && *p->s == ']') {
    p->s++;
    p->depth--;
    return 0;
  }
  for (int i = 0;; i++) {
    ws(p);
    if (p->s >= p->e || fn(i, p, ctx)) return -1;
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
  if (jstr(p, out, room)) {
    free(out);
    return NULL;
  }
  return out;
}

int gate_jbool(struct gate_jp *p) {
  ws(p);
  if (!jlit(p, "true")) return 1;
  if (!jlit(p, "false")) return 0;
  return -1;
}
