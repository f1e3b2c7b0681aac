/*
 * Answers reused at the supervisor (docs/exec-gate.md, "Answers reused"; the grants are kept by
 * ../gate-reuse.c). A Run the daemon marked with a grant holds for any argv of that program in that run
 * (src/decide/reuse.ts): kept with the very file it was given for, it answers a later exec of the same run,
 * path, name and file here, without the daemon's round trip, while the policy epoch stays the one it came
 * with. Each such exec is told to the daemon (ExecReused, no reply; audited there); when that notice cannot
 * be sent at once, the exec is asked as usual. Trust boundary: the request read here comes from the tree;
 * only its run, program and argv[0] are looked at, and the file is the one the supervisor finds itself.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int asked_argv0(int i, struct gate_jp *p, void *ctx) {
  struct asked *a = ctx;
  if (i == 0 && !a->argv0) return (a->argv0 = gate_jstr_dup(p)) ? 0 : -1;
  return gate_jskip(p);
}

static int asked_field(const char *key, struct gate_jp *p, void *ctx) {
  struct asked *a = ctx;
  if (!strcmp(key, GATE_F_TYPE)) {
    char t[16];
    if (gate_jstr(p, t, sizeof t)) return -1;
    a->exec = !strcmp(t, GATE_MSG_EXEC);
    return 0;
  }
  if (!strcmp(key, GATE_F_RUN_ID) && !a->run) return (a->run = gate_jstr_dup(p)) ? 0 : -1;
  if (!strcmp(key, GATE_F_PROGRAM) && !a->program) return (a->program = gate_jstr_dup(p)) ? 0 : -1;
  if (!strcmp(key, GATE_F_ARGV) && *p->s == '[') return gate_jarray(p, asked_argv0, a);
  /* (a real_program is a symlink's target: the file's identity, read through the symlink, is what counts) */
  if (!strcmp(key, GATE_F_ENCODING) || !strcmp(key, GATE_F_LAYER)) a->other = 1;
  return gate_jskip(p);
}

void asked_free(struct asked *a) {
  free(a->run);
  free(a->program);
  free(a->argv0);
}

void file_of(pid_t pid, const char *program, struct gate_ident *id) {
  char path[PATH_MAX + 64];
  struct stat st;
  id->known = 0;
  if (program[0] != '/' || !strncmp(program, "/proc/", 6) || !strncmp(program, "/dev/fd/", 8)) return;
  if ((size_t)snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, program) >= sizeof path) return;
  if (stat(path, &st) == 0) gate_ident_of(id, &st);
}

/* The request's inputs (rest: its text after the id, starting with its type) as an ExecReused, to the
 * supervisors' notice socket, <session>/notice.sock beside the request folder (src/daemon/notice-channel.ts):
 * every sandbox hides it, so no gated run can tell of an exec it did not make; the request channel takes no
 * such notice. None (an older daemon): the exec is asked instead. */
int tell_reused(const struct gate_conf *c, const char *grant, const char *rest, const char *end) {
  static const char type[] = GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_EXEC);
  size_t tn = sizeof type - 1;
  if ((size_t)(end - rest) < tn || memcmp(rest, type, tn)) return -1;
  /* <session>/notice.sock: the request socket's folder's folder */
  const char *dir_slash = strrchr(c->request_sock, '/');
  while (dir_slash && dir_slash > c->request_sock && dir_slash[-1] != '/') dir_slash--;
  size_t at = dir_slash && dir_slash > c->request_sock ? (size_t)(dir_slash - c->request_sock) : 0;
  char to[PATH_MAX];
  if (!at || at + sizeof GATE_NOTICE_SOCK > sizeof to) return -1;
  memcpy(to, c->request_sock, at);
  memcpy(to + at, GATE_NOTICE_SOCK, sizeof GATE_NOTICE_SOCK);
  char id[96];
  gate_new_id(id, sizeof id);
  struct gbuf m;
  gb_init(&m);
  gb_puts(&m, GATE_MSG_HEAD);
  gb_json_str(&m, id, strlen(id), 0);
  gb_puts(&m, GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_EXEC_REUSED) GATE_KEY(GATE_F_GRANT));
  gb_json_str(&m, grant, strlen(grant), 0); /* base64url: nothing to escape */
  gb_put(&m, rest + tn, (size_t)(end - rest - (ptrdiff_t)tn));
  int sent = m.oom ? -1 : relay_notify(to, m.p, m.len);
  gb_free(&m);
  return sent;
}

int reused_answer(const struct gate_conf *c, const char *msg, size_t n, const char *id, const char *rest, pid_t pid,
                  const struct peer *from, struct asked *a, struct gate_ident *file) {
  struct gate_jp jp = {msg, msg + n, 0};
  file->known = 0;
  if (gate_jobject(&jp, asked_field, a) || !a->exec || a->other || !a->run || !a->program || !a->argv0) return 0;
  file_of(pid, a->program, file);
  struct gate_reuse_hit hit;
  if (!file->known || !gate_same_name(a->argv0, a->program) || !gate_reuse_find(a->run, a->program, file, 0, 0, &hit))
    return 0;
  char *key = strndup(rest, (size_t)(msg + n - rest));
  if (!key || tell_reused(c, hit.grant, rest, msg + n)) {
    free(key);
    return 0;
  }
  pairs_add(PAIRED, pid, key, file, NULL);
  answer_here(from, id, NULL);
  return 1;
}

/* "<dev> <ino> <size> <mtime s> <mtime ns> <ctime s> <ctime ns>" (ReusePreset.file): 0, or -1 when malformed. */
static int parse_ident(const char *s, struct gate_ident *id) {
  unsigned long long v[7];
  char *end;
  for (int i = 0; i < 7; i++) {
    while (*s == ' ') s++;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    v[i] = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    s = end;
  }
  if (*s || v[4] >= 1000000000ULL || v[6] >= 1000000000ULL) return -1;
  *id = (struct gate_ident){
      (dev_t)v[0], (ino_t)v[1], (off_t)v[2], {(time_t)v[3], (long)v[4]}, {(time_t)v[5], (long)v[6]}, 1};
  return 0;
}

void keep_presets(const struct gate_conf *c, const struct gate_presets *ps, unsigned long long epoch,
                  const struct gate_reused_audit *audit) {
  /* "any_argv"'s entries: their records end with their own tail (without one, the daemon is told of each) */
  static __thread struct gate_reused_audit own;
  const struct gate_reused_audit *theirs = NULL;
  if (audit && ps->tail[0]) {
    own = *audit;
    strcpy(own.tail, ps->tail);
    theirs = &own;
  }
  for (int i = 0; i < ps->n; i++) {
    struct gate_ident id;
    /* (a scoped grant's reply hands over others scoped alike: held only below that process; pid -1, a scope
     * read wrong, nowhere: gate_reuse_add keeps none) */
    struct gate_reuse_scope scope = {ps->e[i].scope_pid, ps->e[i].scope_ppid, ps->e[i].scope_start};
    if (!parse_ident(ps->e[i].file, &id))
      gate_reuse_add(c->run_id, ps->e[i].program, &id, ps->e[i].grant, epoch, ps->e[i].own_tail ? theirs : audit,
                     &scope, ps->e[i].below);
  }
}

void keep_plan_presets(const struct gate_conf *c, const char *reply) {
  struct gate_reply *r = malloc(sizeof *r);
  struct gate_presets *ps = malloc(sizeof *ps);
  struct gate_reused_audit *audit = malloc(sizeof *audit);
  char err[256];
  if (r && ps && audit) {
    gate_reply_init(r, NULL, audit);
    r->presets = ps;
    /* (no audit log named: each reuse is told to the daemon instead, as for a grant's) */
    if (!gate_parse_reply(reply, strlen(reply), r, err, sizeof err) && r->action == GA_RUN && r->epoch)
      keep_presets(c, ps, r->epoch, audit);
  }
  free(r);
  free(ps);
  free(audit);
}
