/* The request channel's messages on the exec gate's C side: ExecRequest and reply. See gate-request.h. */
#define _GNU_SOURCE
#include "gate-request.h"
#include "gate-preload.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------- requests ---------- */

/* Lengths computed at compile time: this runs for every variable of every exec's environment. */
#define W(s) {s, sizeof s - 1},
static const struct word {
  const char *s;
  size_t n;
} LOADING_NAMES[] = {GATE_FORWARDED_NAMES(W){NULL, 0}};
static const struct word LOADING_PREFIXES[] = {GATE_FORWARDED_PREFIXES(W){NULL, 0}};
#undef W

int gate_code_loading_name(const char *name, size_t n) {
  for (const struct word *w = LOADING_NAMES; w->s; w++)
    if (w->n == n && !memcmp(w->s, name, n)) return 1;
  for (const struct word *w = LOADING_PREFIXES; w->s; w++)
    if (n >= w->n && !memcmp(w->s, name, w->n)) return 1;
  return 0;
}

/* LD_PRELOAD without the gate's own library (and a sanitizer build's runtime before it, gate-preload.h);
 * NULL when nothing else is left. */
static char *foreign_preload(const char *v, const char *own) {
  struct gbuf b;
  gb_init(&b);
  const char *s = v;
  while (*s) {
    size_t n = strcspn(s, ": ");
    if (n && !(own && strlen(own) == n && !memcmp(s, own, n)) && !gate_preload_first(s, n)) {
      if (b.len) gb_put(&b, ":", 1);
      gb_put(&b, s, n);
    }
    s += n;
    if (*s) s++;
  }
  return b.len ? b.p : (gb_free(&b), NULL);
}

/* PATH without the gate's own entry (the nested-shell shims): what the caller put there is what counts. */
static char *without_entry(const char *v, const char *entry) {
  struct gbuf b;
  gb_init(&b);
  gb_puts(&b, "");
  for (const char *s = v;;) {
    size_t n = strcspn(s, ":");
    if (!(strlen(entry) == n && !memcmp(s, entry, n))) {
      if (b.len) gb_put(&b, ":", 1);
      gb_put(&b, s, n);
    }
    if (!s[n]) break;
    s += n + 1;
  }
  if (b.oom) {
    gb_free(&b);
    return NULL;
  }
  return b.p;
}

/* The kernel layer's fields (gate_exec_extra), after the LD_PRELOAD layer's: a pair_run that is not UTF-8
 * goes as base64; a kernel_argv or program_file that is not UTF-8 is left out (the daemon reads the file). */
static void exec_extra(struct gbuf *b, const struct gate_exec_extra *x) {
  if (x->pair_run) {
    size_t n = strlen(x->pair_run);
    gb_puts(b, GATE_KEY(GATE_F_PAIR_RUN));
    gb_json_str(b, x->pair_run, n, !gate_utf8_valid(x->pair_run, n));
  }
  int text = x->kernel_argv != NULL;
  for (char *const *k = x->kernel_argv; k && *k; k++) text = text && gate_utf8_valid(*k, strlen(*k));
  if (text) {
    gb_puts(b, GATE_KEY(GATE_F_KERNEL_ARGV) "[");
    for (char *const *k = x->kernel_argv; *k; k++) {
      if (k != x->kernel_argv) gb_put(b, ",", 1);
      gb_json_str(b, *k, strlen(*k), 0);
    }
    gb_put(b, "]", 1);
  }
  if (x->program_file && gate_utf8_valid(x->program_file, strlen(x->program_file))) {
    gb_puts(b, GATE_KEY(GATE_F_PROGRAM_FILE));
    gb_json_str(b, x->program_file, strlen(x->program_file), 0);
  }
  if (x->host_pid > 0) {
    char num[24];
    gb_puts(b, GATE_KEY(GATE_F_HOST_PID));
    gb_puts(b, gate_num(num, (unsigned long)x->host_pid, 10));
  }
}

void gate_exec_request(struct gbuf *b, const struct gate_conf *c, const char *id, const char *program,
                       char *const argv[], const char *cwd, char *const envp[], const char *own_preload,
                       const char *own_path) {
  gate_exec_request_for(b, c, id, program, argv, cwd, envp, own_preload, own_path, (long)getpid(), NULL);
}

void gate_exec_request_for(struct gbuf *b, const struct gate_conf *c, const char *id, const char *program,
                           char *const argv[], const char *cwd, char *const envp[], const char *own_preload,
                           const char *own_path, long pid, const struct gate_exec_extra *extra) {
  /* the program's real path when it is a symlink (also /proc/self/fd/N of fexecve): a rule about the
   * real program applies too (src/decide/intercepted.ts) */
  char real[PATH_MAX];
  struct stat st;
  /* only a program that is itself a symlink can have another name's rules (a folder symlink such as
   * /bin -> usr/bin keeps the name): one lstat per exec, the rest only for symlinks; none for the supervisor's
   * pairing keys, which leave the program out) */
  int has_real = program[0] && lstat(program, &st) == 0 && S_ISLNK(st.st_mode) && realpath(program, real) != NULL &&
      strcmp(real, program) != 0;
  int b64 = !gate_utf8_valid(program, strlen(program)) || !gate_utf8_valid(cwd, strlen(cwd)) ||
      (has_real && !gate_utf8_valid(real, strlen(real)));
  for (int i = 0; argv && argv[i] && !b64; i++) b64 = !gate_utf8_valid(argv[i], strlen(argv[i]));
  for (int i = 0; envp && envp[i] && !b64; i++) b64 = !gate_utf8_valid(envp[i], strlen(envp[i]));
  char num[32];
  gb_puts(b, GATE_MSG_HEAD);
  gb_json_str(b, id, strlen(id), 0);
  gb_puts(b, GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_EXEC) GATE_KEY(GATE_F_RUN_ID));
  gb_json_str(b, c->run_id, strlen(c->run_id), 0);
  if (b64) gb_puts(b, GATE_KEY(GATE_F_ENCODING) GATE_QUOTE(GATE_VALUE_BASE64));
  gb_puts(b, GATE_KEY(GATE_F_PROGRAM));
  gb_json_str(b, program, strlen(program), b64);
  if (has_real) {
    gb_puts(b, GATE_KEY(GATE_F_REAL_PROGRAM));
    gb_json_str(b, real, strlen(real), b64);
  }
  gb_puts(b, GATE_KEY(GATE_F_ARGV) "[");
  for (int i = 0; argv && argv[i]; i++) {
    if (i) gb_put(b, ",", 1);
    gb_json_str(b, argv[i], strlen(argv[i]), b64);
  }
  gb_puts(b, "]" GATE_KEY(GATE_F_CWD));
  gb_json_str(b, cwd, strlen(cwd), b64);
  gb_puts(b, GATE_KEY(GATE_F_PID));
  gb_puts(b, gate_num(num, (unsigned long)pid, 10));
  if (extra && extra->layer) {
    gb_puts(b, GATE_KEY(GATE_F_LAYER));
    gb_json_str(b, extra->layer, strlen(extra->layer), 0);
  }
  int any = 0;
  for (int i = 0; envp && envp[i]; i++) {
    const char *e = envp[i], *eq = strchr(e, '=');
    if (!eq || gate_own_var(e) || !gate_code_loading_name(e, (size_t)(eq - e))) continue;
    const char *val = eq + 1;
    char *own = NULL;
    if (eq - e == 10 && !memcmp(e, "LD_PRELOAD", 10)) {
      own = foreign_preload(val, own_preload);
      if (!own) continue;
      val = own;
    }
    if (eq - e == 4 && !memcmp(e, "PATH", 4) && own_path) {
      own = without_entry(val, own_path);
      val = own ? own : val;
    }
    gb_puts(b, any ? "," : GATE_KEY(GATE_F_ENV) "{");
    any = 1;
    gb_json_str(b, e, (size_t)(eq - e), 0);
    gb_put(b, ":", 1);
    gb_json_str(b, val, strlen(val), b64);
    free(own);
  }
  if (any) gb_put(b, "}", 1);
  if (extra) exec_extra(b, extra);
  gb_put(b, "}", 1);
}

/* ---------- the reply ---------- */

static int action_field(const char *key, struct gate_jp *p, void *ctx) {
  struct gate_reply *r = ctx;
  if (!strcmp(key, GATE_F_TYPE)) {
    char t[32];
    if (gate_jstr(p, t, sizeof t)) return -1;
    r->action = !strcmp(t, GATE_ACTION_RUN) ? GA_RUN
        : !strcmp(t, GATE_ACTION_ESCALATE)  ? GA_ESCALATE
        : !strcmp(t, GATE_ACTION_DENY)      ? GA_DENY
                                            : GA_NONE;
    return 0;
  }
  if (!strcmp(key, GATE_F_REASON) && *p->s == '"') return gate_jstr(p, r->reason, sizeof r->reason);
  return gate_jskip(p);
}

struct subctx {
  struct gate_reply *r;
  char argv[512];
  char reason[512];
  int deny;
};

static int sub_action_field(const char *key, struct gate_jp *p, void *ctx) {
  struct subctx *s = ctx;
  if (!strcmp(key, GATE_F_TYPE)) {
    char t[32];
    if (gate_jstr(p, t, sizeof t)) return -1;
    s->deny = !strcmp(t, GATE_ACTION_DENY);
    return 0;
  }
  if (!strcmp(key, GATE_F_REASON) && *p->s == '"') return gate_jstr(p, s->reason, sizeof s->reason);
  return gate_jskip(p);
}

static int sub_field(const char *key, struct gate_jp *p, void *ctx) {
  struct subctx *s = ctx;
  if (!strcmp(key, GATE_F_ACTION)) return gate_jobject(p, sub_action_field, s);
  if (!strcmp(key, GATE_F_ARGV) && *p->s == '[') {
    /* join the words with spaces for the message */
    size_t o = 0;
    p->s++;
    gate_jws(p);
    if (p->s < p->e && *p->s == ']') {
      p->s++;
      return 0;
    }
    for (;;) {
      char w[256];
      gate_jws(p);
      if (gate_jstr(p, w, sizeof w)) return -1;
      size_t wl = strlen(w);
      if (o && o + 1 < sizeof s->argv) s->argv[o++] = ' ';
      for (size_t i = 0; i < wl && o + 1 < sizeof s->argv; i++) s->argv[o++] = w[i];
      s->argv[o] = 0;
      int more = gate_jnext(p, ']');
      if (more < 0) return -1;
      if (more) continue;
      return 0;
    }
  }
  return gate_jskip(p);
}

/* A string field that fits its room; one that fills it (perhaps cut short) is emptied: an audit string is then
 * not written, a preset entry left out. */
static int whole_str(struct gate_jp *p, char *out, size_t n) {
  if (gate_jstr(p, out, n)) return -1;
  if (strlen(out) >= n - 1) out[0] = 0;
  return 0;
}

static int audit_field(const char *key, struct gate_jp *p, void *ctx) {
  struct gate_reused_audit *a = ctx;
  if (!strcmp(key, GATE_F_LOG) && *p->s == '"') return whole_str(p, a->log, sizeof a->log);
  if (!strcmp(key, GATE_F_HEAD) && *p->s == '"') return whole_str(p, a->head, sizeof a->head);
  if (!strcmp(key, GATE_F_TAIL) && *p->s == '"') return whole_str(p, a->tail, sizeof a->tail);
  return gate_jskip(p);
}

/* A non-negative JSON integer (at most 18 digits) into *out: 0, or -1. */
static int json_count(struct gate_jp *p, unsigned long long *out) {
  unsigned long long v = 0;
  if (p->s >= p->e || *p->s < '0' || *p->s > '9') return -1;
  while (p->s < p->e && *p->s >= '0' && *p->s <= '9' && v < 1000000000000000ULL) v = v * 10 + (unsigned)(*p->s++ - '0');
  if (p->s < p->e && *p->s >= '0' && *p->s <= '9') return -1; /* too large */
  *out = v;
  return 0;
}

/* Where a "scope" object's fields go: the reply's own, or a preset's. */
struct scope_out {
  long *pid, *ppid;
  unsigned long long *start;
};

static int scope_field(const char *key, struct gate_jp *p, void *ctx) {
  const struct scope_out *o = ctx;
  unsigned long long v;
  if (!strcmp(key, GATE_F_PID)) return json_count(p, &v) || v > 0x7fffffff ? -1 : (*o->pid = (long)v, 0);
  if (!strcmp(key, GATE_F_PPID)) return json_count(p, &v) || v > 0x7fffffff ? -1 : (*o->ppid = (long)v, 0);
  if (!strcmp(key, GATE_F_START)) return json_count(p, &v) ? -1 : (*o->start = v, 0);
  return gate_jskip(p);
}

static int preset_field(const char *key, struct gate_jp *p, void *ctx) {
  struct gate_preset *e = ctx;
  if (!strcmp(key, GATE_F_SCOPE) && *p->s == '{') {
    e->scope_pid = -1; /* until its pid is read */
    struct scope_out o = {&e->scope_pid, &e->scope_ppid, &e->scope_start};
    return gate_jobject(p, scope_field, &o);
  }
  if (!strcmp(key, GATE_F_PROGRAM) && *p->s == '"') return whole_str(p, e->program, sizeof e->program);
  if (!strcmp(key, GATE_F_GRANT) && *p->s == '"') return whole_str(p, e->grant, sizeof e->grant);
  if (!strcmp(key, GATE_F_FILE) && *p->s == '"') return whole_str(p, e->file, sizeof e->file);
  if (!strcmp(key, GATE_F_BELOW_PROGRAM)) return (e->below = gate_jbool(p)) < 0 ? -1 : 0;
  return gate_jskip(p);
}

/* An entry of "presets" (held everywhere in the run, unless it names a scope) or of "scoped_presets" (scoped:
 * held only below its scope's process, and nowhere without one). */
static int preset_entry(struct gate_jp *p, struct gate_presets *ps, int scoped, int own_tail) {
  if (*p->s != '{' || ps->n >= GATE_MAX_PRESETS) return gate_jskip(p);
  struct gate_preset *e = &ps->e[ps->n];
  e->program[0] = e->grant[0] = e->file[0] = 0;
  e->below = 0;
  e->own_tail = own_tail;
  e->scope_pid = scoped ? -1 : 0;
  e->scope_ppid = 0;
  e->scope_start = 0;
  if (gate_jobject(p, preset_field, e)) return -1;
  if (scoped && e->scope_pid == 0) e->scope_pid = -1; /* (pid 0 would be everywhere) */
  if (e->program[0] == '/' && e->grant[0] && e->file[0]) ps->n++;
  return 0;
}

static int preset_item(int i, struct gate_jp *p, void *ctx) {
  (void)i;
  return preset_entry(p, ctx, 0, 0);
}

static int scoped_preset_item(int i, struct gate_jp *p, void *ctx) {
  (void)i;
  return preset_entry(p, ctx, 1, 0);
}

static int any_argv_item(int i, struct gate_jp *p, void *ctx) {
  (void)i;
  return preset_entry(p, ctx, 0, 1);
}

/* "any_argv": {"tail": <its entries' audit fields after argv>, "presets": [...]} */
static int any_argv_field(const char *key, struct gate_jp *p, void *ctx) {
  struct gate_presets *ps = ctx;
  if (!strcmp(key, GATE_F_TAIL) && *p->s == '"') return whole_str(p, ps->tail, sizeof ps->tail);
  if (!strcmp(key, GATE_F_PRESETS) && *p->s == '[') return gate_jarray(p, any_argv_item, ps);
  return gate_jskip(p);
}

static int reuse_field(const char *key, struct gate_jp *p, void *ctx) {
  struct gate_reply *r = ctx;
  if (!strcmp(key, GATE_F_GRANT) && *p->s == '"') return gate_jstr(p, r->grant, sizeof r->grant);
  if (!strcmp(key, GATE_F_AUDIT) && *p->s == '{' && r->audit) {
    r->audit->head[0] = r->audit->tail[0] = 0;
    if (gate_jobject(p, audit_field, r->audit)) return -1;
    /* all three, or none */
    if (!r->audit->log[0] || !r->audit->head[0] || !r->audit->tail[0]) r->audit->log[0] = 0;
    return 0;
  }
  if (!strcmp(key, GATE_F_EPOCH) && p->s < p->e && *p->s >= '0' && *p->s <= '9') return json_count(p, &r->epoch);
  if (!strcmp(key, GATE_F_PRESETS) && *p->s == '[' && r->presets) return gate_jarray(p, preset_item, r->presets);
  if (!strcmp(key, GATE_F_SCOPED_PRESETS) && *p->s == '[' && r->presets)
    return gate_jarray(p, scoped_preset_item, r->presets);
  if (!strcmp(key, GATE_F_ANY_ARGV) && *p->s == '{' && r->presets) return gate_jobject(p, any_argv_field, r->presets);
  if (!strcmp(key, GATE_F_BELOW_PROGRAM)) return (r->grant_below = gate_jbool(p)) < 0 ? -1 : 0;
  if (!strcmp(key, GATE_F_SCOPE) && *p->s == '{') {
    r->scope_pid = -1;
    struct scope_out o = {&r->scope_pid, &r->scope_ppid, &r->scope_start};
    if (gate_jobject(p, scope_field, &o)) return -1;
    /* all three, or a scope that holds nowhere: pid -1 (never 0, which would hold everywhere) */
    if (r->scope_pid <= 1 || r->scope_ppid <= 0 || !r->scope_start) r->scope_pid = -1;
    return 0;
  }
  return gate_jskip(p);
}

static int reply_field(const char *key, struct gate_jp *p, void *ctx) {
  struct gate_reply *r = ctx;
  if (!strcmp(key, GATE_F_TYPE)) return gate_jstr(p, r->type, sizeof r->type);
  if (!strcmp(key, GATE_F_ID)) return gate_jstr(p, r->id, sizeof r->id);
  if (!strcmp(key, GATE_F_ACTION)) return gate_jobject(p, action_field, r);
  if (!strcmp(key, GATE_F_REUSE) && *p->s == '{') {
    if (gate_jobject(p, reuse_field, r)) return -1;
    if (!r->epoch) r->grant[0] = 0; /* both, or neither */
    return 0;
  }
  if (!strcmp(key, GATE_F_ESCALATION_TOKEN) && *p->s == '"') return gate_jstr(p, r->token, sizeof r->token);
  if (!strcmp(key, GATE_F_BELOW_PROGRAM)) return (r->below = gate_jbool(p)) < 0 ? -1 : 0;
  if (!strcmp(key, GATE_F_RUN_ID)) return gate_jstr(p, r->run_id, sizeof r->run_id);
  if (!strcmp(key, GATE_F_MESSAGE) && *p->s == '"') return gate_jstr(p, r->reason, sizeof r->reason);
  if (!strcmp(key, GATE_F_CODE) && *p->s == '"') return gate_jstr(p, r->code, sizeof r->code);
  if (!strcmp(key, GATE_F_SUBCOMMANDS) && *p->s == '[') {
    p->s++;
    gate_jws(p);
    if (p->s < p->e && *p->s == ']') {
      p->s++;
      return 0;
    }
    for (;;) {
      struct subctx s = {r, "", "", 0};
      if (gate_jobject(p, sub_field, &s)) return -1;
      if (s.deny && r->deny_count < GATE_MAX_DENIED) {
        if (r->denied)
          gate_join(r->denied[r->deny_count], sizeof r->denied[0], s.argv, ": ", s.reason[0] ? s.reason : "denied",
                    NULL);
        r->deny_count++;
      }
      int more = gate_jnext(p, ']');
      if (more < 0) return -1;
      if (more) continue;
      return 0;
    }
  }
  return gate_jskip(p);
}

int gate_parse_reply(const char *json, size_t n, struct gate_reply *r, char *err, size_t errlen) {
  /* field by field, not memset: the struct stays mostly untouched (see gate-proto.h) */
  r->type[0] = r->id[0] = r->reason[0] = r->token[0] = r->run_id[0] = r->code[0] = r->grant[0] = 0;
  r->epoch = 0;
  r->scope_pid = r->scope_ppid = 0;
  r->scope_start = 0;
  r->below = r->grant_below = 0;
  if (r->audit) r->audit->log[0] = 0;
  if (r->presets) {
    r->presets->n = 0;
    r->presets->tail[0] = 0;
  }
  r->action = GA_NONE;
  r->deny_count = 0;
  struct gate_jp p = {json, json + n, 0};
  if (gate_jobject(&p, reply_field, r))
    return gate_fail(err, errlen, "malformed reply from the daemon (not a JSON object)");
  gate_jws(&p);
  if (p.s != p.e) return gate_fail(err, errlen, "malformed reply from the daemon (trailing data)");
  if (!r->type[0] || !r->id[0]) return gate_fail(err, errlen, "malformed reply from the daemon (no type or id)");
  return 0;
}
