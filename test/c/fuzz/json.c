/*
 * Fuzz target: the shims' JSON reader and writer (shims/gate-json.c). The bytes are read as any JSON value,
 * walking every object and array with the reader's own functions (bounded by depth 64 and by the end
 * pointer: the buffer is exactly n bytes); and written as a JSON string, which must read back as the same
 * bytes (a NUL aside), and as base64 of the right length. Built with libFuzzer (clang) or driver.c.
 */
#include "gate-json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int walk(struct gate_jp *p);

static int member(const char *key, struct gate_jp *p, void *ctx) {
  (void)ctx;
  if (memchr(key, 0, 64) == NULL) abort();
  return walk(p);
}

static int element(int i, struct gate_jp *p, void *ctx) {
  (void)ctx;
  if (i < 0) abort();
  return walk(p);
}

static int walk(struct gate_jp *p) {
  gate_jws(p);
  if (p->s >= p->e) return -1;
  if (*p->s == '{') return gate_jobject(p, member, NULL);
  if (*p->s == '[') return gate_jarray(p, element, NULL);
  if (*p->s == '"') {
    char *s = gate_jstr_dup(p);
    free(s);
    return s ? 0 : -1;
  }
  if (*p->s == 't' || *p->s == 'f') return gate_jbool(p) < 0 ? -1 : 0;
  return gate_jskip(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  const char *s = (const char *)data;
  struct gate_jp p = {s, s + n, 0};
  if (walk(&p) == 0 && (p.s < s || p.s > s + n || p.depth != 0)) abort();
  struct gate_jp q = {s, s + n, 0};
  if (gate_jskip(&q) == 0 && (q.s > s + n)) abort();
  /* written as a string, read back */
  struct gbuf b;
  gb_init(&b);
  gb_json_str(&b, s, n, 0);
  if (!b.oom && !memchr(s, 0, n)) {
    struct gate_jp r = {b.p, b.p + b.len, 0};
    char *back = gate_jstr_dup(&r);
    if (!back || strlen(back) != n || memcmp(back, s, n) || r.s != b.p + b.len) abort();
    free(back);
  }
  gb_free(&b);
  gb_json_str(&b, s, n, 1);
  if (!b.oom && b.len != 2 + 4 * ((n + 2) / 3)) abort();
  gb_free(&b);
  (void)gate_utf8_valid(s, n);
  return 0;
}
