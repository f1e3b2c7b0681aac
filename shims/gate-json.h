/*
 * JSON for the exec gate's C side (shims/): a growable buffer, JSON writing (strings escaped or base64),
 * and a small reader for the daemon's replies, bounded in depth. Pure: no I/O, no globals. Trust: the
 * reader takes bytes from the daemon's socket; every read is bounded by the end pointer and depth 64.
 */
#ifndef GATE_JSON_H
#define GATE_JSON_H

#include <stddef.h>

/* A growable byte buffer. */
struct gbuf {
  char *p;
  size_t len, cap;
  int oom;
};
void gb_init(struct gbuf *b);
void gb_free(struct gbuf *b);
void gb_put(struct gbuf *b, const char *s, size_t n);
void gb_puts(struct gbuf *b, const char *s);
/* A JSON string literal; base64 of the raw bytes when b64 is set. */
void gb_json_str(struct gbuf *b, const char *s, size_t n, int b64);
int gate_utf8_valid(const char *s, size_t n);

/* The JSON reader. A value is consumed by each call; depth is bounded. */
struct gate_jp {
  const char *s, *e;
  int depth;
};
typedef int (*gate_jfield)(const char *key, struct gate_jp *p, void *ctx);
/* Call fn(key, p, ctx) at each member's value; fn must consume it. 0, or -1 when malformed. */
int gate_jobject(struct gate_jp *p, gate_jfield fn, void *ctx);
/* Call fn(i, p, ctx) at each element of a list; fn must consume it. */
typedef int (*gate_jelem)(int i, struct gate_jp *p, void *ctx);
int gate_jarray(struct gate_jp *p, gate_jelem fn, void *ctx);
int gate_jskip(struct gate_jp *p);
/* A string value; copied (truncated, NUL-terminated) into out when out != NULL. 0, or -1 when malformed. */
int gate_jstr(struct gate_jp *p, char *out, size_t outlen);
/* A string value, decoded into a new NUL-terminated allocation (NULL when malformed or out of memory). */
char *gate_jstr_dup(struct gate_jp *p);
/* true/false; -1 when the value is neither. */
int gate_jbool(struct gate_jp *p);
/* Skip white space. */
void gate_jws(struct gate_jp *p);
/* After an element of a list or object: 1 = ',' (another follows), 0 = `close` (done), -1 = malformed. */
int gate_jnext(struct gate_jp *p, char close);

#endif
