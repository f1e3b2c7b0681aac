/*
 * gate-shell — the nested-shell shim, installed as shims/bin/{bash,sh,zsh} (first on PATH in gated runs).
 * `bash -c SCRIPT ...` started by a gated script comes back to the daemon's pre-flight first: forbidden
 * subcommands are refused before anything runs and prompts are asked up front, under a run of its own
 * (linked to the parent run). Then the real shell (found by absolute path, never this program: no loops)
 * runs with the original arguments; its execs stay gated by libgate.so. Without -c the real shell runs
 * directly: each of its execs is gated anyway.
 */
#define _GNU_SOURCE
#include "gate-proto.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

/* The real shell: first <dir>/<name> on PATH (then /usr/bin, /bin) that is neither this program nor the
 * gate-sh beside it (a `bash` on PATH that is gate-sh comes back here: it would loop). */
static int real_shell(const char *name, char *out, size_t n) {
  char self[PATH_MAX], entry[PATH_MAX + 32];
  struct stat me, gsh = {0}, st;
  if (!realpath("/proc/self/exe", self) || stat(self, &me)) return -1;
  snprintf(entry, sizeof entry, "%s", self);
  char *slash = strrchr(entry, '/');
  if (slash) snprintf(slash + 1, sizeof entry - (size_t)(slash + 1 - entry), "gate-sh-native");
  int have_gsh = stat(entry, &gsh) == 0;
  const char *path = getenv("PATH");
  struct {
    const char *list;
  } order[] = {{path ? path : ""}, {"/usr/bin:/bin"}};
  for (int k = 0; k < 2; k++) {
    for (const char *s = order[k].list; *s;) {
      size_t l = strcspn(s, ":");
      if (l && s[0] == '/') {
        char cand[PATH_MAX];
        snprintf(cand, sizeof cand, "%.*s/%s", (int)l, s, name);
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0 &&
            !(st.st_dev == me.st_dev && st.st_ino == me.st_ino) &&
            !(have_gsh && st.st_dev == gsh.st_dev && st.st_ino == gsh.st_ino)) {
          snprintf(out, n, "%s", cand);
          return 0;
        }
      }
      s += l;
      if (*s) s++;
    }
  }
  return -1;
}

/* Find `-c` among the shell's options: returns the index of the script argument, or -1. */
static int find_script(int argc, char **argv, int *login) {
  int c = 0;
  *login = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) return c ? (i + 1 < argc ? i + 1 : -1) : -1;
    if (!strcmp(a, "--login")) {
      *login = 1;
      continue;
    }
    if (!strcmp(a, "--rcfile") || !strcmp(a, "--init-file")) {
      i++;
      continue;
    }
    if (!strncmp(a, "--", 2)) continue;
    if ((a[0] == '-' || a[0] == '+') && a[1]) {
      int takes = 0;
      for (const char *p = a + 1; *p; p++) {
        if (*p == 'c' && a[0] == '-') c = 1;
        if (*p == 'l' && a[0] == '-') *login = 1;
        if (*p == 'o' || *p == 'O') takes++;
      }
      i += takes;
      continue;
    }
    return c ? i : -1; /* first operand: the script when -c was given */
  }
  return -1;
}

static void set_var(char ***env, size_t *n, const char *name, const char *value) {
  size_t nl = strlen(name);
  char *v = malloc(nl + strlen(value) + 2);
  if (!v) return;
  sprintf(v, "%s=%s", name, value);
  for (size_t i = 0; i < *n; i++)
    if (!strncmp((*env)[i], name, nl) && (*env)[i][nl] == '=') {
      (*env)[i] = v;
      return;
    }
  (*env)[(*n)++] = v;
  (*env)[*n] = NULL;
}

int main(int argc, char **argv) {
  const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  if (*name == '-') name++; /* login shells are started as -bash */
  if (strcmp(name, "bash") && strcmp(name, "sh") && strcmp(name, "zsh") && strcmp(name, "dash")) name = "sh";
  char shell[PATH_MAX];
  if (real_shell(name, shell, sizeof shell)) {
    gate_msg("nested shell: cannot find the real ", name, " on PATH, /usr/bin or /bin", NULL);
    return 127;
  }
  size_t n = 0;
  for (char **e = environ; *e; e++) n++;
  char **env = malloc((n + 4) * sizeof *env);
  if (!env) {
    gate_msg("nested shell: not run: out of memory", NULL, NULL, NULL);
    return 126;
  }
  memcpy(env, environ, (n + 1) * sizeof *env);

  int login;
  int si = find_script(argc, argv, &login);
  if (si > 0 && getenv(GATE_VAR_RUN)) {
    struct gate_conf c;
    char err[1200], cwd[PATH_MAX], id[96], num[32];
    if (gate_conf_from_env(&c, err, sizeof err)) {
      gate_msg("nested shell: not run: ", err, NULL, NULL);
      return 126;
    }
    if (!getcwd(cwd, sizeof cwd)) {
      gate_msg("nested shell: not run: the current directory is gone", NULL, NULL, NULL);
      return 126;
    }
    gate_new_id(id, sizeof id);
    const char *script = argv[si];
    int b64 = !gate_utf8_valid(script, strlen(script)) || !gate_utf8_valid(cwd, strlen(cwd));
    struct gbuf m;
    gb_init(&m);
    gb_puts(&m, GATE_MSG_HEAD);
    gb_json_str(&m, id, strlen(id), 0);
    gb_puts(&m, GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_PREFLIGHT) GATE_KEY(GATE_F_SHELL));
    gb_json_str(&m, name, strlen(name), 0);
    gb_puts(&m, login ? GATE_KEY(GATE_F_FLAG) "\"-lc\"" : GATE_KEY(GATE_F_FLAG) "\"-c\"");
    if (b64) gb_puts(&m, GATE_KEY(GATE_F_ENCODING) GATE_QUOTE(GATE_VALUE_BASE64));
    gb_puts(&m, GATE_KEY(GATE_F_SCRIPT));
    gb_json_str(&m, script, strlen(script), b64);
    gb_puts(&m, GATE_KEY(GATE_F_CWD));
    gb_json_str(&m, cwd, strlen(cwd), b64);
    snprintf(num, sizeof num, GATE_KEY(GATE_F_PID) "%d", (int)getpid());
    gb_puts(&m, num);
    gb_puts(&m, GATE_KEY(GATE_F_SANDBOX_PERMISSIONS) GATE_QUOTE(GATE_VALUE_USE_DEFAULT) GATE_KEY(GATE_F_PARENT_RUN));
    gb_json_str(&m, c.run_id, strlen(c.run_id), 0);
    gb_puts(&m, "}");
    struct gate_reply *r = malloc(sizeof *r);
    static gate_denial denied[GATE_MAX_DENIED];
    if (!r) {
      gate_msg("nested shell: not run: out of memory", NULL, NULL, NULL);
      return 126;
    }
    gate_reply_init(r, denied, NULL);
    if (gate_request(&c, id, &m, r, err, sizeof err)) {
      gate_msg("nested ", name, " -c: ", err);
      return 126;
    }
    if (strcmp(r->type, GATE_MSG_PREFLIGHT) || !r->run_id[0] || r->action == GA_NONE) {
      gate_msg("nested ", name, " -c: not run: malformed pre-flight reply from the daemon", NULL);
      return 126;
    }
    if (r->action == GA_DENY) {
      for (int i = 0; i < r->deny_count; i++) gate_msg("denied: ", r->denied[i], NULL, NULL);
      if (!r->deny_count) gate_msg("denied: ", script, ": ", r->reason[0] ? r->reason : "denied by policy");
      return 126;
    }
    /* Run or Escalate: the script runs here, in place; each exec in it is decided when it happens (the
     * daemon reuses this pre-flight's answers for the same argv and cwd in this run). */
    set_var(&env, &n, GATE_VAR_RUN, r->run_id);
    gb_free(&m);
    free(r);
  }
  char mark[PATH_MAX + 32];
  snprintf(mark, sizeof mark, "%d:%s", (int)getpid(), shell);
  set_var(&env, &n, GATE_VAR_CHECKED, mark);
  /* the raw syscall: this exec is the gate's own and must not be asked about again */
  syscall(SYS_execve, shell, argv, env);
  gate_msg("nested shell: cannot run ", shell, ": ", strerror(errno));
  return 126;
}
