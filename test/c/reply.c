/*
 * Unit tests of the reply parser every exec check runs (gate_parse_reply, shims/gate-request.c): the
 * daemon's exec, preflight, error and pending replies into the fields the gate acts on, with the room the
 * caller gives (denials, a grant's audit) and nothing past it; malformed, truncated and oversized replies
 * fail closed with a reason. The reply comes off a socket: a trust boundary. TAP on stdout (tap.h).
 */
#define _GNU_SOURCE
#include "gate-request.h"
#include "tap.h"

#include <stdlib.h>

static struct gate_reply R;
static gate_denial DENIED[GATE_MAX_DENIED];
static struct gate_reused_audit AUDIT;
static char ERR[256];
static struct gate_presets PS;

static int parse(const char *json) {
  gate_reply_init(&R, DENIED, &AUDIT);
  ERR[0] = 0;
  return gate_parse_reply(json, strlen(json), &R, ERR, sizeof ERR);
}

/* The same, with room for presets (PS). */
static int parse_presets(const char *json, size_t n) {
  gate_reply_init(&R, DENIED, &AUDIT);
  R.presets = &PS;
  ERR[0] = 0;
  return gate_parse_reply(json, n, &R, ERR, sizeof ERR);
}

static void exec_replies(void) {
  ok(parse("{\"v\":1,\"id\":\"r1\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"}}") == 0, "a Run reply parses");
  ok(R.action == GA_RUN && !strcmp(R.type, "exec") && !strcmp(R.id, "r1"), "its type, id and action");
  ok(parse("{\"id\":\"r2\",\"type\":\"exec\",\"action\":{\"type\":\"Deny\",\"reason\":\"no \\\"rm\\\"\"}}") == 0 &&
         R.action == GA_DENY,
     "a Deny reply parses");
  is_str(R.reason, "no \"rm\"", "its reason, decoded");
  ok(parse("{\"id\":\"r3\",\"type\":\"exec\",\"action\":{\"type\":\"Escalate\","
           "\"execution\":{\"type\":\"Unsandboxed\"}},\"escalation_token\":\"tok\"}") == 0 &&
         R.action == GA_ESCALATE,
     "an Escalate reply parses, its execution skipped");
  is_str(R.token, "tok", "its token");
  ok(parse("{\"id\":\"r4\",\"type\":\"exec\",\"action\":{\"type\":\"Sudo\"}}") == 0 && R.action == GA_NONE,
     "an unknown action is no action (the gate refuses)");
  parse("{\"id\":\"r5\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"}}");
  ok(parse("{\"id\":\"r6\",\"type\":\"exec\"}") == 0 && R.action == GA_NONE && !R.reason[0] && !R.token[0],
     "a reply parsed after another keeps nothing of it");
}

static void reuse(void) {
  const char *with_audit = "{\"id\":\"g\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"},"
                           "\"reuse\":{\"grant\":\"abc_-\",\"epoch\":42,"
                           "\"audit\":{\"log\":\"/l\",\"head\":\"{\\\"h\\\":1\",\"tail\":\"}\"}}}";
  ok(parse(with_audit) == 0, "a reply with a grant parses");
  ok(!strcmp(R.grant, "abc_-") && R.epoch == 42, "its grant and epoch");
  ok(!strcmp(AUDIT.log, "/l") && !strcmp(AUDIT.head, "{\"h\":1") && !strcmp(AUDIT.tail, "}"), "its audit fields");
  ok(parse("{\"id\":\"g\",\"type\":\"exec\",\"reuse\":{\"grant\":\"a\",\"epoch\":1,"
           "\"audit\":{\"log\":\"/l\"}}}") == 0 &&
         !AUDIT.log[0],
     "an audit without all three fields is none");
  ok(parse("{\"id\":\"g\",\"type\":\"exec\",\"reuse\":{\"grant\":\"a\"}}") == 0 && !R.grant[0],
     "a grant without its epoch is none");
  ok(parse("{\"id\":\"g\",\"type\":\"exec\",\"reuse\":{\"grant\":\"a\",\"epoch\":12345678901234567890123}}") == -1,
     "an epoch too large fails the reply");
  gate_reply_init(&R, NULL, NULL);
  ok(gate_parse_reply(with_audit, strlen(with_audit), &R, ERR, sizeof ERR) == 0 && !strcmp(R.grant, "abc_-"),
     "without room for the audit, the grant still parses");
  char big[2048];
  int n = snprintf(big, sizeof big,
                   "{\"id\":\"g\",\"type\":\"exec\",\"reuse\":{\"grant\":\"a\",\"epoch\":1,\"audit\":"
                   "{\"log\":\"/l\",\"head\":\"%0600d\",\"tail\":\"}\"}}}",
                   0);
  ok(n > 0 && parse(big) == 0 && !AUDIT.log[0], "an audit field longer than its room is dropped, not cut");
}

/* Other programs' Runs handed over with a grant (ReusePreset): kept only with room given, whole, up to the room. */
static void presets(void) {
  const char *one = "{\"id\":\"g\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"},"
                    "\"reuse\":{\"grant\":\"a\",\"epoch\":3,"
                    "\"presets\":[{\"program\":\"/usr/bin/sed\",\"grant\":\"b\",\"file\":\"1 2 3 4 5 6 7\"},"
                    "{\"program\":\"sed\",\"grant\":\"c\",\"file\":\"1 2 3 4 5 6 7\"},"
                    "{\"program\":\"/usr/bin/cat\",\"file\":\"1 2 3 4 5 6 7\"}]}}";
  ok(parse(one) == 0 && R.presets == NULL, "without room, presets are skipped");
  ok(parse_presets(one, strlen(one)) == 0 && PS.n == 1, "with room: one kept (%d)", PS.n);
  ok(!strcmp(PS.e[0].program, "/usr/bin/sed") && !strcmp(PS.e[0].grant, "b") && !strcmp(PS.e[0].file, "1 2 3 4 5 6 7"),
     "its program, grant and file; a relative program and one without a grant are left out");
  ok(PS.e[0].scope_pid == 0, "no scope: held everywhere in its run");
  const char *scoped = "{\"id\":\"g\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"},"
                       "\"reuse\":{\"grant\":\"a\",\"epoch\":3,\"scope\":{\"pid\":7,\"start\":9,\"ppid\":1},"
                       "\"scoped_presets\":[{\"program\":\"/usr/bin/rm\",\"grant\":\"b\",\"file\":\"1 2 3 4 5 6 7\","
                       "\"scope\":{\"pid\":7,\"start\":9,\"ppid\":1}},"
                       "{\"program\":\"/bin/sh\",\"grant\":\"c\",\"file\":\"1 2 3 4 5 6 7\",\"scope\":{\"start\":9}},"
                       "{\"program\":\"/bin/sh\",\"grant\":\"c\",\"file\":\"1 2 3 4 5 6 7\"},"
                       "{\"program\":\"/bin/sh\",\"grant\":\"c\",\"file\":\"1 2 3 4 5 6 7\",\"scope\":{\"pid\":0}}]}}";
  ok(parse_presets(scoped, strlen(scoped)) == 0 && PS.n == 4, "scoped presets parse (%d)", PS.n);
  ok(PS.e[0].scope_pid == 7 && PS.e[0].scope_start == 9 && PS.e[0].scope_ppid == 1, "each with its own scope");
  ok(PS.e[1].scope_pid == -1 && PS.e[2].scope_pid == -1 && PS.e[3].scope_pid == -1,
     "a scoped one without a scope, or without its pid, holds nowhere (gate_reuse_add keeps none)");
  const char *other =
      "{\"id\":\"g\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"},"
      "\"reuse\":{\"grant\":\"a\",\"epoch\":3,\"scoped_presets\":[{\"program\":\"/bin/sh\","
      "\"grant\":\"c\",\"file\":\"1 2 3 4 5 6 7\",\"scope\":{\"pid\":7,\"start\":9,\"ppid\":1}}],"
      "\"any_argv\":{\"presets\":[{\"program\":\"/usr/bin/sed\",\"grant\":\"d\",\"file\":\"1 2 3 4 5 6 7\"}],"
      "\"tail\":\"\\\"source\\\":\\\"s\\\"\"}}}";
  ok(parse_presets(other, strlen(other)) == 0 && PS.n == 2, "any_argv's presets parse (%d)", PS.n);
  ok(!PS.e[0].own_tail && PS.e[0].scope_pid == 7 && PS.e[1].own_tail && PS.e[1].scope_pid == 0 &&
         !strcmp(PS.tail, "\"source\":\"s\""),
     "its entries held everywhere, with its own tail (%s)", PS.tail);
  const char *plain_again = "{\"id\":\"g\",\"type\":\"exec\"}";
  ok(parse_presets(plain_again, strlen(plain_again)) == 0 && PS.n == 0 && !PS.tail[0],
     "a reply parsed after another keeps none of its tail");
  char big[2048];
  int n = snprintf(big, sizeof big,
                   "{\"id\":\"g\",\"type\":\"exec\",\"reuse\":{\"grant\":\"a\",\"epoch\":3,"
                   "\"presets\":[{\"program\":\"/%0600d\",\"grant\":\"b\",\"file\":\"1 2 3 4 5 6 7\"}]}}",
                   0);
  ok(n > 0 && parse_presets(big, strlen(big)) == 0 && PS.n == 0, "a program longer than its room is left out, not cut");
  struct gbuf many;
  gb_init(&many);
  gb_puts(&many, "{\"id\":\"g\",\"type\":\"exec\",\"reuse\":{\"grant\":\"a\",\"epoch\":3,\"presets\":[");
  for (int i = 0; i < GATE_MAX_PRESETS + 5; i++) {
    if (i) gb_puts(&many, ",");
    gb_puts(&many, "{\"program\":\"/p\",\"grant\":\"g\",\"file\":\"1\"}");
  }
  gb_puts(&many, "]}}");
  ok(!many.oom && parse_presets(many.p, many.len) == 0 && PS.n == GATE_MAX_PRESETS,
     "entries past the room are skipped (%d)", PS.n);
  gb_free(&many);
  const char *plain = "{\"id\":\"g\",\"type\":\"exec\"}";
  ok(parse_presets(plain, strlen(plain)) == 0 && PS.n == 0, "a reply parsed after another keeps none of its presets");
}

static void preflight(void) {
  char json[4096];
  size_t o = (size_t)snprintf(json, sizeof json,
                              "{\"id\":\"p\",\"type\":\"preflight\",\"run_id\":\"run-1\",\"action\":"
                              "{\"type\":\"Deny\",\"reason\":\"x\"},\"subcommands\":[");
  for (int i = 0; i < 10; i++)
    o += (size_t)snprintf(json + o, sizeof json - o,
                          "%s{\"argv\":[\"rm\",\"-rf\",\"/%d\"],\"action\":{\"type\":\"Deny\",\"reason\":\"r%d\"}}",
                          i ? "," : "", i, i);
  snprintf(json + o, sizeof json - o, ",{\"argv\":[],\"action\":{\"type\":\"Run\"}}]}");
  ok(parse(json) == 0, "a preflight reply with 11 subcommands parses");
  ok(R.deny_count == GATE_MAX_DENIED, "10 are denied, counted up to GATE_MAX_DENIED (%d)", R.deny_count);
  is_str(DENIED[0], "rm -rf /0: r0", "a denial is its words and its reason");
  is_str(DENIED[7], "rm -rf /7: r7", "the room holds GATE_MAX_DENIED of them");
  is_str(R.run_id, "run-1", "its run id");
  gate_reply_init(&R, NULL, NULL);
  ok(gate_parse_reply(json, strlen(json), &R, ERR, sizeof ERR) == 0 && R.deny_count == GATE_MAX_DENIED,
     "without room, the denials are counted and not written");
}

static void errors(void) {
  ok(parse("{\"id\":\"e\",\"type\":\"error\",\"code\":\"too-large\",\"message\":\"m\"}") == 0, "an error reply parses");
  ok(!strcmp(R.code, "too-large") && !strcmp(R.reason, "m"), "its code and message");
  struct {
    const char *json, *why;
  } bad[] = {
      {"", "not a JSON object"},
      {"[]", "not a JSON object"},
      {"{\"id\":\"x\"}", "no type or id"},
      {"{\"type\":\"exec\"}", "no type or id"},
      {"{\"id\":\"x\",\"type\":\"exec\"} {}", "trailing data"},
      {"{\"id\":\"x\",\"type\":\"exec\"", "not a JSON object"},
      {"{\"id\":1,\"type\":\"exec\"}", "not a JSON object"},
      {"{\"id\":\"x\",\"type\":\"exec\",\"action\":\"Run\"}", "not a JSON object"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ok(parse(bad[i].json) == -1 && strstr(ERR, bad[i].why), "refused: %s (%s)", bad[i].json, ERR);
  }
  char deep[512] = "{\"id\":\"x\",\"type\":\"exec\",\"extra\":";
  size_t o = strlen(deep);
  for (int i = 0; i < 100; i++) deep[o++] = '[';
  for (int i = 0; i < 100; i++) deep[o++] = ']';
  deep[o++] = '}';
  deep[o] = 0;
  ok(parse(deep) == -1, "an unknown field nested 100 deep fails the reply (the depth bound)");
  char *huge = malloc(8192);
  o = (size_t)sprintf(huge, "{\"id\":\"x\",\"type\":\"exec\",\"action\":{\"type\":\"Deny\",\"reason\":\"");
  memset(huge + o, 'r', 5000);
  strcpy(huge + o + 5000, "\"}}");
  ok(parse(huge) == 0 && strlen(R.reason) == sizeof R.reason - 1, "a reason longer than its room is cut to it");
  free(huge);
  /* cut right after a key's colon, in a buffer of exactly its size: no byte past it is read (ASan build) */
  const char *cuts[] = {"{\"id\":\"x\",\"type\":\"exec\",\"reuse\":{\"audit\":{\"log\":",
                        "{\"id\":\"x\",\"type\":\"exec\",\"reuse\":", "{\"id\":\"x\",\"action\":{\"reason\":  "};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    size_t n = strlen(cuts[i]);
    char *exact = malloc(n);
    memcpy(exact, cuts[i], n);
    gate_reply_init(&R, DENIED, &AUDIT);
    ok(gate_parse_reply(exact, n, &R, ERR, sizeof ERR) == -1, "a reply cut after a key's colon is refused (%zu)", i);
    free(exact);
  }
  /* a NUL inside the text: the length given is the bound */
  const char with_nul[] = "{\"id\":\"x\",\"type\":\"exec\"}\0garbage";
  gate_reply_init(&R, DENIED, &AUDIT);
  ok(gate_parse_reply(with_nul, sizeof with_nul - 1, &R, ERR, sizeof ERR) == -1, "bytes after a NUL are trailing data");
}

int main(void) {
  exec_replies();
  reuse();
  presets();
  preflight();
  errors();
  return tap_done();
}
