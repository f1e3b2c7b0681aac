/*
 * Pairing: one decision per exec (docs/exec-gate.md, "The kernel layer"). An answer Run the LD_PRELOAD layer
 * got through the relay is kept for that pid with the request's decision inputs (its text after the id: run,
 * program, argv, cwd, pid, code-loading variables; pairs.c). When the kernel then stops that pid in execve,
 * the supervisor builds the same text from what it reads itself in the process's memory; if it is identical,
 * the exec continues without asking again. Two more routes each exec would otherwise be decided twice by:
 *  - posix_spawn, system() and popen(): the layer asks from the parent, and glibc's child, made with
 *    clone(CLONE_VM|CLONE_VFORK), execs. An exec whose own pid has no pair is tried once more as its
 *    parent's (PPid), only when the exec'ing task shares the parent's address space (kcmp KCMP_VM), with the
 *    parent's pid in the inputs, as its request said. The inputs are still read from the exec'ing task.
 *  - an exec the layer did not see (a raw execve syscall, a static parent keeping LD_PRELOAD): the kernel
 *    layer asks, and the new program's constructor would ask again. The daemon's Run (or Escalate, with its
 *    token) for the kernel layer is kept for that pid ("landed") with the inputs and the file's identity;
 *    the constructor's request from that pid, naming the same inputs and a program that is the file the
 *    kernel ran (/proc/<pid>/exe), gets that answer here. It pairs nothing (the next exec is asked as usual).
 * And the kernel layer decides first: an exec the LD_PRELOAD layer marked (GATE_ASK) and the daemon denied or
 * escalated is held, and that layer's request for it gets the held answer (held_answer).
 * Trust boundary: a request forged from inside the run can only pair an exec the daemon has just answered Run
 * for with exactly these inputs; anything that does not match is asked like any other exec.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *after_id(const char *msg, size_t n, char *id, size_t idn) {
  static const char head[] = GATE_MSG_HEAD "\"";
  size_t h = sizeof head - 1;
  if (n <= h || memcmp(msg, head, h)) return NULL;
  const char *q = memchr(msg + h, '"', n - h);
  if (!q || (size_t)(q - msg - h) >= idn) return NULL;
  memcpy(id, msg + h, (size_t)(q - msg - h));
  id[q - msg - h] = 0;
  return q + 1;
}

static void answer_deny(const struct peer *to, const char *id, const char *reason) {
  struct gbuf r;
  gb_init(&r);
  gb_puts(&r, GATE_MSG_HEAD);
  gb_json_str(&r, id, strlen(id), 0);
  gb_puts(&r,
          GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_EXEC) GATE_KEY(GATE_F_ACTION) "{" GATE_KEY1(GATE_F_TYPE)
              GATE_QUOTE(GATE_ACTION_DENY) GATE_KEY(GATE_F_REASON));
  gb_json_str(&r, reason, strlen(reason), 0);
  gb_puts(&r, "}}");
  if (!r.oom) peer_send(to, r.p, r.len);
  gb_free(&r);
}

int held_answer(const char *id, const char *rest, const char *end, pid_t pid, const struct peer *to) {
  char *text;
  struct gate_ident file = {0};
  size_t n = (size_t)(end - rest);
  int action = held_take(pid, rest, n, &text, &file);
  if (action < 0) return 0;
  /* an escalated spawn is made again, its child carrying the token: that exec is paired with this answer
   * (as when the layer asked first), not decided a second time */
  if (action == GA_ESCALATE) {
    char *key = strndup(rest, n);
    if (key) pairs_add(PAIRED, pid, key, &file, NULL); /* unpaired, the spawn's exec is asked again */
    answer_here(to, id, text);
  } else answer_deny(to, id, text);
  free(text);
  return 1;
}

int landed_answer(const char *id, const char *rest, const char *end, pid_t pid, const struct peer *from) {
  static const char exec_type[] = GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_EXEC);
  static const char prog[] = GATE_KEY(GATE_F_PROGRAM);
  if (!pairs_any(LANDED, pid) || strncmp(rest, exec_type, sizeof exec_type - 1)) return 0;
  /* the field order is gate_exec_request_for's; `,"` never occurs inside a JSON string (its quotes are
   * escaped), so the first match is the field. A base64 request is left to the daemon. */
  const char *at = strstr(rest, prog), *enc = strstr(rest, GATE_KEY(GATE_F_ENCODING));
  if (!at || (enc && enc < at)) return 0;
  struct gate_jp jp = {at + sizeof prog - 1, end, 0};
  char *program = gate_jstr_dup(&jp);
  if (!program || program[0] != '/') {
    free(program);
    return 0;
  }
  /* the program it names is the file this pid now runs */
  char path[PATH_MAX + 64];
  struct stat named, running;
  snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, program);
  free(program);
  if (stat(path, &named)) return 0;
  snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
  if (stat(path, &running) || named.st_dev != running.st_dev || named.st_ino != running.st_ino) return 0;
  /* the inputs with the program left out (the kernel layer named it by the path the exec gave) */
  struct gbuf key;
  gb_init(&key);
  gb_put(&key, rest, (size_t)(at + sizeof prog - 1 - rest));
  gb_puts(&key, "\"\"");
  gb_put(&key, jp.s, (size_t)(end - jp.s));
  char *token = NULL;
  struct gate_ident rid;
  gate_ident_of(&rid, &running);
  int hit = !key.oom && pairs_take(LANDED, pid, key.p, &rid, &token);
  gb_free(&key);
  if (!hit) return 0;
  /* the daemon's answer to the kernel layer: Run, or Escalate with the token it granted */
  answer_here(from, id, token);
  if (token) escalating(own_pid(pid), 0);
  free(token);
  return 1;
}

const char *exec_inputs(struct gbuf *k, const struct launch *l, const struct exec_seen *x, long pid) {
  char none[4];
  gb_init(k);
  gate_exec_request_for(k, x->as, "", x->program, x->argv, x->cwd, x->envp, l->own_preload, l->own_path, pid, NULL);
  return k->oom ? NULL : after_id(k->p, k->len, none, sizeof none);
}

char *exec_inputs_dup(const struct launch *l, const struct exec_seen *x, long pid) {
  struct gbuf k;
  const char *key = exec_inputs(&k, l, x, pid);
  char *copy = key ? strdup(key) : NULL;
  gb_free(&k);
  return copy;
}

int spawned_pair(const struct launch *l, long parent, pid_t pid, const struct exec_seen *x,
                 const struct gate_ident *file) {
  if (parent <= 1 || !pairs_any(PAIRED, (pid_t)parent)) return 0;
  if (syscall(SYS_kcmp, (pid_t)parent, pid, KCMP_VM, 0, 0) != 0) return 0; /* its own memory, or unknown */
  struct gbuf k;
  const char *key = exec_inputs(&k, l, x, own_pid((pid_t)parent));
  int hit = key && pairs_take(PAIRED, (pid_t)parent, key, file, NULL);
  gb_free(&k);
  return hit;
}

void land(const struct launch *l, pid_t pid, long own, const struct exec_seen *x, const struct gate_ident *id,
          const char *token) {
  if (!id->known) return;
  /* the program left out: the kernel layer names it by the path the exec gave (landed_answer) */
  struct exec_seen unnamed = *x;
  unnamed.program = "";
  char *key = exec_inputs_dup(l, &unnamed, own), *tok = token ? strdup(token) : NULL;
  if (key && (!token || tok)) pairs_add(LANDED, pid, key, id, tok);
  else { /* not landed: the new program's constructor asks the daemon again */ free(key);
    free(tok);
  }
}
