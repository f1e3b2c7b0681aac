/* Configuration, request ids and strings without stdio for the exec gate's C side. See gate-common.h. */
#define _GNU_SOURCE
#include "gate-common.h"
#include "gate-json.h"
#include "gate-shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>
#include <unistd.h>

/* ---------- configuration ---------- */

static const char *lookup(char *const vars[], int n, const char *name) {
  if (!vars) return getenv(name);
  size_t l = strlen(name);
  for (int i = 0; i < n; i++)
    if (!strncmp(vars[i], name, l) && vars[i][l] == '=') return vars[i] + l + 1;
  return NULL;
}

static const char *need(char *const vars[], int n, const char *name, char *err, size_t errlen) {
  const char *v = lookup(vars, n, name);
  if (!v || !*v) {
    gate_fail(err, errlen, "%s is not set (the run's exec gate is incomplete)", name);
    return NULL;
  }
  return v;
}

int gate_conf_from_list(struct gate_conf *c, char *const vars[], int n, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  if (!(c->request_sock = need(vars, n, GATE_VAR_REQUEST_SOCK, err, errlen))) return -1;
  if (!(c->stream_sock = need(vars, n, GATE_VAR_STREAM_SOCK, err, errlen))) return -1;
  if (!(c->escalate_sock = need(vars, n, GATE_VAR_ESCALATE_SOCK, err, errlen))) return -1;
  if (!(c->client_dir = need(vars, n, GATE_VAR_CLIENT_DIR, err, errlen))) return -1;
  if (!(c->run_id = need(vars, n, GATE_VAR_RUN, err, errlen))) return -1;
  /* under the kernel layer, requests go through the run's supervisor, which pairs the answer with the
   * exec the kernel then reports (shims/launch/pairing.c); replies come back the same way */
  const char *k = lookup(vars, n, GATE_VAR_KERNEL_SOCK);
  if (k && *k == '/') {
    c->request_sock = k;
    c->via_supervisor = 1;
  }
  const char *t = lookup(vars, n, GATE_VAR_EXEC_TIMEOUT_MS);
  c->timeout_ms = t && atoi(t) > 0 ? atoi(t) : GATE_EXEC_WAIT_TIMEOUT_MS;
  c->attempts = GATE_EXEC_WAIT_ATTEMPTS;
  return 0;
}

int gate_conf_from_env(struct gate_conf *c, char *err, size_t errlen) {
  return gate_conf_from_list(c, NULL, 0, err, errlen);
}

/* Unique per daemon lifetime (the daemon caches replies by id): pid, time, a counter and random bits
 * (pids repeat across pid namespaces). Also the reply socket's file name. */
void gate_new_id(char *out, size_t n) {
  static unsigned counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r) r = (unsigned)ts.tv_nsec;
  char pid[24], sec[24], ns[24], cnt[24], rnd[24], a[80], b[80];
  gate_join(a, sizeof a, "g", gate_num(pid, (unsigned long)getpid(), 16), "-",
            gate_num(sec, (unsigned long)ts.tv_sec, 16));
  gate_join(b, sizeof b, gate_num(ns, (unsigned long)ts.tv_nsec, 16), "-", gate_num(cnt, ++counter, 16), "-");
  gate_join(out, n, a, b, gate_num(rnd, r, 16), NULL);
}

int gate_own_var(const char *e) { return !strncmp(e, "GATE_", 5); }

/* ---------- strings without stdio ---------- */

size_t gate_join(char *out, size_t n, const char *a, const char *b, const char *c, const char *d) {
  const char *parts[4] = {a, b, c, d};
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
  do {
    tmp[i++] = "0123456789abcdef"[v % (unsigned)base];
    v /= (unsigned)base;
  } while (v);
  for (int j = 0; j < i; j++) out[j] = tmp[i - 1 - j];
  out[i] = 0;
  return out;
}

int gate_in_gated_tree(void) {
  /* a NULL program: outside the gate's filter the kernel answers EFAULT (or EACCES without no_new_privs)
   * and installs nothing; inside it, the filter answers first */
  long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, NULL);
  return r < 0 && errno == GATE_NESTED_ERRNO;
}
