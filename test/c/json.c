/*
 * Unit tests of the shims' JSON (shims/gate-json.c): writing strings (escaped, base64), the UTF-8 check, and
 * the bounded reader that takes the daemon's replies: strings and their escapes, skipping any value, objects
 * and arrays, depth bound, malformed and truncated input. The reader is a trust boundary (it reads whatever
 * arrives on the socket). TAP on stdout (tap.h).
 */
#define _GNU_SOURCE
#include "gate-json.h"
#include "tap.h"

#include <stdlib.h>

static char *json_str(const char *s, size_t n, int b64) {
  static char out[256];
  struct gbuf b;
  gb_init(&b);
  gb_json_str(&b, s, n, b64);
  snprintf(out, sizeof out, "%s", b.p ? b.p : "(oom)");
  gb_free(&b);
  return out;
}

static void writing(void) {
  is_str(json_str("a\"b\\c\n\t\x01z", 9, 0), "\"a\\\"b\\\\c\\n\\t\\u0001z\"", "quotes, backslashes, controls escaped");
  is_str(json_str("\xc3\xa9", 2, 0), "\"\xc3\xa9\"", "UTF-8 kept as it is");
  is_str(json_str("", 0, 1), "\"\"", "base64 of nothing");
  is_str(json_str("f", 1, 1), "\"Zg==\"", "base64 of one byte");
  is_str(json_str("fo", 2, 1), "\"Zm8=\"", "base64 of two bytes");
  is_str(json_str("foo", 3, 1), "\"Zm9v\"", "base64 of three bytes");
  is_str(json_str("\xff\xfe\x00", 3, 1), "\"//4A\"", "base64 of bytes that are not text");
  struct gbuf b;
  gb_init(&b);
  for (int i = 0; i < 10000; i++) gb_puts(&b, "0123456789");
  ok(!b.oom && b.len == 100000 && strlen(b.p) == 100000, "a buffer grows and stays NUL-terminated");
  gb_free(&b);
}

static void utf8(void) {
  ok(gate_utf8_valid("plain", 5), "ASCII is UTF-8");
  ok(gate_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9), "2, 3 and 4 byte characters are UTF-8");
  ok(!gate_utf8_valid("\xc0\x80", 2), "an overlong NUL is not");
  ok(!gate_utf8_valid("\xed\xa0\x80", 3), "a surrogate is not");
  ok(!gate_utf8_valid("\xf4\x90\x80\x80", 4), "above U+10FFFF is not");
  ok(!gate_utf8_valid("a\xe2\x82", 3), "a character cut at the end is not");
  ok(!gate_utf8_valid("\x80", 1), "a lone continuation byte is not");
  ok(gate_utf8_valid("a\0b", 3), "NUL is (the caller decides what a NUL means)");
}

/* One string value from text: its decoding, or NULL when malformed. */
static char *str_of(const char *text) {
  struct gate_jp p = {text, text + strlen(text), 0};
  return gate_jstr_dup(&p);
}

static void strings(void) {
  char *s = str_of("\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f\"");
  is_str(s, "a\"b\\c/d\n\t\r\b\f", "every short escape decodes");
  free(s);
  s = str_of("\"\\u00e9\\u20ac\\ud83d\\ude00\"");
  is_str(s, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\\u escapes and a surrogate pair decode to UTF-8");
  free(s);
  s = str_of("\"\\ud83dx\"");
  ok(s && strlen(s) == 4, "a lone high surrogate decodes to its 3 bytes, no more");
  free(s);
  const char *bad[] = {"\"abc", "\"a\\x\"", "\"a\x01\"", "\"\\u12\"", "\"\\u12g4\"", "\"\\", "abc", "", "\"\\u"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    s = str_of(bad[i]);
    ok(s == NULL, "malformed string %zu refused", i);
    free(s);
  }
  char small[4];
  struct gate_jp p = {"\"abcdef\" rest", NULL, 0};
  p.e = p.s + strlen(p.s);
  ok(gate_jstr(&p, small, sizeof small) == 0 && !strcmp(small, "abc"), "a long string is cut to its room, NUL-ended");
  ok(*p.s == ' ', "and the reader stands after it");
  /* the encoded length bounds the decoded one */
  s = str_of("\"\\u00e9\\u00e9\\u00e9\"");
  is_str(s, "\xc3\xa9\xc3\xa9\xc3\xa9", "decoding needs no more room than the text");
  free(s);
}

static int skip_all(const char *text) {
  struct gate_jp p = {text, text + strlen(text), 0};
  if (gate_jskip(&p)) return -1;
  gate_jws(&p);
  return p.s == p.e ? 0 : -1;
}

static void skipping(void) {
  const char *good[] = {"1",
                        "-2.5e+3",
                        "true",
                        "false",
                        "null",
                        "\"s\"",
                        "[]",
                        "{}",
                        " [1, \"a\", {\"k\": [null]}] ",
                        "{\"a\":{\"b\":{\"c\":[true,false]}}}"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) ok(skip_all(good[i]) == 0, "skips %s", good[i]);
  const char *bad[] = {"[1,]", "{\"a\" 1}", "{\"a\":}", "tru", "nul", "[", "{", "{\"a\":1,}", "]", "{1:2}", "x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) ok(skip_all(bad[i]) == -1, "refuses %s", bad[i]);
  char deep[300];
  memset(deep, '[', 64);
  memset(deep + 64, ']', 64);
  deep[128] = 0;
  ok(skip_all(deep) == 0, "64 levels deep are read");
  memset(deep, '[', 65);
  memset(deep + 65, ']', 65);
  deep[130] = 0;
  ok(skip_all(deep) == -1, "65 are refused (the depth bound)");
}

struct seen {
  char keys[8][64];
  int n, ints;
};

static int count_elem(int i, struct gate_jp *p, void *ctx) {
  ((struct seen *)ctx)->ints += i;
  return gate_jskip(p);
}

static int field(const char *key, struct gate_jp *p, void *ctx) {
  struct seen *s = ctx;
  if (s->n < 8) snprintf(s->keys[s->n++], 64, "%s", key);
  if (*p->s == '[') return gate_jarray(p, count_elem, s);
  if (!strcmp(key, "b")) return gate_jbool(p) == 1 ? 0 : -1;
  return gate_jskip(p);
}

static void objects(void) {
  struct seen s = {0};
  const char *text = "{ \"a\" : 1 , \"list\":[9,9,9], \"b\":true, "
                     "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\":0}";
  struct gate_jp p = {text, text + strlen(text), 0};
  ok(gate_jobject(&p, field, &s) == 0 && s.n == 4, "an object's members are visited in order");
  is_str(s.keys[1], "list", "a key");
  ok(s.ints == 0 + 1 + 2, "an array's elements are numbered");
  ok(strlen(s.keys[3]) == 63, "a key longer than the reader's room is cut, not overrun");
  ok(p.depth == 0, "the depth is back to 0 after the object");
  struct seen t = {0};
  const char *bad = "{\"b\":maybe}";
  struct gate_jp q = {bad, bad + strlen(bad), 0};
  ok(gate_jobject(&q, field, &t) == -1, "a field reader's failure fails the object");
  /* the end pointer is the bound, not a NUL */
  const char *cut = "{\"a\":\"abc\"}";
  struct gate_jp r = {cut, cut + 7, 0};
  struct seen u = {0};
  ok(gate_jobject(&r, field, &u) == -1, "text cut before its end is malformed (the end pointer bounds every read)");
}

int main(void) {
  writing();
  utf8();
  strings();
  skipping();
  objects();
  return tap_done();
}
