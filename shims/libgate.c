/*
 * libgate.so — the exec-time gate (LD_PRELOAD). Every exec of this process is checked with the gate-sh
 * daemon: Run (exec in place), Deny (fail with EACCES, say why on stderr) or Escalate (the daemon
 * runs the command with our stdin/stdout/stderr and we exit with its status). In a kernel-gated run
 * (GATE_KERNEL_SOCK) the kernel layer decides an exec first and hands a Deny or Escalate back here
 * (GATE_EXEC_ASK, gate-common.h); elsewhere, and for spawns, this layer asks before the exec.
 *
 * Marks: an exec the gate allowed carries GATE_CHECKED=<pid>:<program>, so the new process's constructor
 * does not ask again; a process started any other way (glibc-internal spawns, raw syscalls from a dynamic
 * parent) is checked by the constructor. The constructor removes the marks from the environment, and every
 * allowed exec gets the gate's variables back (LD_PRELOAD, GATE_*), so `env -i` and friends keep the gate.
 */
#define _GNU_SOURCE
#include "gate-preload.h"
#include "gate-proto.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Only the hooks are visible to the programs the library is loaded into (built -fvisibility=hidden). */
#define EXPORT __attribute__((visibility("default")))
/* The path of every exec from a shell's forked child, kept together in one page-aligned section (about 3 KiB):
 * such a child shares no page table entries of this library's code with its parent, so each page of it that
 * it runs is a page fault of its own (docs/history/2026-11-measurements.md). HOT_FIRST aligns the section, and
 * the library is compiled in source order (-fno-toplevel-reorder), so the first of them is its start. */
#define HOT __attribute__((section(".text.gate_exec")))
#define HOT_FIRST __attribute__((section(".text.gate_exec"), aligned(4096)))

#define MAX_SAVED 16
/* An exec's environment is built on the stack up to this size (gated_env), on the heap beyond it: room for about
 * 200 variables, and no deeper a frame than that needs (each stack page first written in a forked child is a
 * page fault). */
#define ENV_ON_STACK 2048
/* Ordered so that what the constructor writes in every process shares as few pages as possible (each
 * page first written is a page fault, in every process). */
static struct {
  int nsaved;
  const char *kernel; /* a kernel-gated run: GATE_KERNEL_SOCK's value (that layer decides each exec first) */
  /* the process this program was exec'd in, when the supervisor marked it below a program running its own
   * files (GATE_OWN): what its forked children exec gets no LD_PRELOAD layer (gated_env); 0 otherwise */
  pid_t below;
  /* the Landlock domain (own_domain) not entered yet: this marked program is a system tool that reads other
   * processes (inspector); entered before anything it starts, in the child that execs or here */
  int domain_later;
  char *saved[MAX_SAVED]; /* "GATE_X=value" captured at start, put back into every exec */
  size_t dirlen; /* length of lib's folder with its slash: <dir>/bin/ holds the shims */
  size_t arena_used;
  char arena[2048]; /* the saved strings (strdup beyond it): no malloc in the constructor */
  char lib[PATH_MAX]; /* this library's path, first in every exec's LD_PRELOAD */
  char then[PATH_MAX]; /* one exec allowed without asking (the sandbox wrapper's inner program) */
} G;

/* ---------- helpers ---------- */

static void own_domain(void);

/* The domain this marked program put off (G.domain_later), entered now, before it starts anything: a forked
 * child about to exec enters it for itself, a spawn, system() or popen() makes the program enter it. */
static void domain_now(void) {
  if (!G.domain_later) return;
  G.domain_later = 0;
  own_domain();
}

static void *real(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) gate_die(126, "exec gate: cannot find the real ", name, NULL, NULL);
  return f;
}

static int same_file(const char *a, const char *b) {
  struct stat x, y;
  return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static void absolute(char *out, size_t n, const char *path) {
  if (path[0] == '/') {
    gate_join(out, n, path, NULL, NULL, NULL);
    return;
  }
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
  gate_join(out, n, strcmp(cwd, "/") ? cwd : "", "/", path, NULL);
}

/* PATH search the way execvp does it (the caller's PATH, default /bin:/usr/bin). 0 or -1 with errno. */
static int search_path(const char *file, char *out, size_t n) {
  if (!*file) {
    errno = ENOENT;
    return -1;
  }
  if (strchr(file, '/')) {
    gate_join(out, n, file, NULL, NULL, NULL);
    return 0;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/bin:/usr/bin";
  int saw_eacces = 0;
  for (const char *s = path;;) {
    size_t l = strcspn(s, ":");
    char cand[PATH_MAX];
    size_t dl = l < sizeof cand - 1 ? l : sizeof cand - 1;
    memcpy(cand, s, dl);
    gate_join(cand + dl, sizeof cand - dl, l ? "/" : "", file, NULL, NULL);
    struct stat st;
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
      if (access(cand, X_OK) == 0) {
        gate_join(out, n, cand, NULL, NULL, NULL);
        return 0;
      }
      saw_eacces = 1;
    }
    if (!s[l]) break;
    s += l + 1;
  }
  errno = saw_eacces ? EACCES : ENOENT;
  return -1;
}

/* ---------- environments ---------- */

static inline __attribute__((always_inline)) int own_var(const char *e) {
  return !strncmp(e, "GATE_", 5) || !strncmp(e, "LD_PRELOAD=", 11);
}

/* The exec's environment with the gate put back: saved GATE_* vars, our library first in LD_PRELOAD,
 * the caller's other LD_PRELOAD entries kept (the daemon saw them), and the marks. Left out (an exec below a
 * program running its own files, which no rule can take out of the sandbox: the kernel layer alone decides
 * it and says its denials): without this library and the marks it reads, the caller's own entries kept.
 * One block holds the
 * array and the strings it adds: the caller's stack buffer when it fits (room bytes), else one malloc.
 * Why: this runs in a shell's freshly forked child just before its exec, where every heap or stack page
 * first written is a copy-on-write fault (costly on virtual machines); one small block on the stack
 * touches one page where malloc touched several (docs/history/2026-11-measurements.md). */
HOT_FIRST static char **gated_env(char *const envp[], const char *checked, const char *escalate_token, int ask,
                                  int left_out, char *stack, size_t room) {
  size_t n = 0, lib = strlen(G.lib), foreign_len = 0;
  const char *foreign = NULL;
  for (int i = 0; envp && envp[i]; i++) {
    n++;
    if (!strncmp(envp[i], "LD_PRELOAD=", 11)) foreign = envp[i] + 11;
  }
  if (foreign) foreign_len = strlen(foreign);
  char pid[24] = "";
  if (!left_out) gate_num(pid, (unsigned long)getpid(), 10); /* (for the marks only: none when left out) */
  size_t mark = (checked ? strlen(checked) : 0) + sizeof GATE_VAR_CHECKED + sizeof GATE_MARK_ASK + strlen(pid) + 2;
  size_t first = sizeof GATE_PRELOAD_FIRST - 1; /* a sanitizer build's runtime, before us (gate-preload.h) */
  size_t need = (n + MAX_SAVED + 5) * sizeof(char *) + 11 + first + 1 + lib + 2 * foreign_len + 2 + 2 * mark +
      (escalate_token ? strlen(escalate_token) + sizeof GATE_VAR_ESCALATE + strlen(pid) + 2 : 0);
  /* the top of the caller's buffer, nearest its frame: the fewest new stack pages touched (the stack grows down) */
  char *block = need <= room ? stack + ((room - need) & ~(sizeof(char *) - 1)) : malloc(need);
  if (!block) return NULL;
  char **out = (char **)(void *)block;
  char *w = block + (n + MAX_SAVED + 5) * sizeof(char *);
  size_t o = 0;
  for (int i = 0; envp && envp[i]; i++)
    if (!own_var(envp[i])) out[o++] = envp[i];
  for (int i = 0; i < G.nsaved; i++) out[o++] = G.saved[i];
  char *preload = out[o++] = w;
  memcpy(w, "LD_PRELOAD=", 11);
  w += 11;
  if (first && !left_out) {
    memcpy(w, GATE_PRELOAD_FIRST ":", first + 1);
    w += first + 1;
  }
  if (!left_out) {
    memcpy(w, G.lib, lib);
    w += lib;
  }
  for (const char *s = foreign; s && *s;) {
    size_t l = gate_preload_entry(s);
    int self = l == lib;
    for (size_t k = 0; self && k < l; k++) self = s[k] == G.lib[k];
    if (l && !self && !gate_preload_first(s, l)) {
      if (w > preload + 11) *w++ = ':';
      memcpy(w, s, l);
      w += l;
    }
    s += l;
    if (*s) s++;
  }
  *w++ = 0;
  if (left_out && w == preload + 12) o--; /* nothing left to preload */
  if (left_out) checked = NULL;
  if (checked) {
    out[o++] = w;
    w += gate_join(w, mark, GATE_VAR_CHECKED "=", pid, ":", checked) + 1;
  }
  if (ask && checked) {
    out[o++] = w;
    w += gate_join(w, mark, GATE_MARK_ASK, pid, ":", checked) + 1;
  }
  if (escalate_token) {
    out[o++] = w;
    w += gate_join(w, strlen(escalate_token) + sizeof GATE_VAR_ESCALATE + strlen(pid) + 2, GATE_VAR_ESCALATE "=", pid,
                   ":", escalate_token) +
        1;
  }
  out[o] = NULL;
  return out;
}

/* What gated_env took (after an exec that returned). */
static void free_env(char **env, const char *stack, size_t room) {
  const char *at = (const char *)(void *)env;
  if (!stack || at < stack || at >= stack + room) free(env);
}

/* Put the gate back into this process's own environment (before system()/popen(), whose children
 * inherit environ). */
static void restore_environ(void) {
  for (int i = 0; i < G.nsaved; i++) {
    char *eq = strchr(G.saved[i], '=');
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(eq - G.saved[i]), G.saved[i]);
    const char *cur = getenv(name);
    if (!cur || strcmp(cur, eq + 1)) setenv(name, eq + 1, 1);
  }
  const char *pre = getenv("LD_PRELOAD"), *own = pre;
  size_t first = sizeof GATE_PRELOAD_FIRST - 1; /* a sanitizer build's runtime, before us (gate-preload.h) */
  if (own && first && gate_preload_first(own, gate_preload_entry(own))) own += first + !!own[first];
  if (!pre || strncmp(own, G.lib, strlen(G.lib))) {
    struct gbuf b;
    gb_init(&b);
    if (first) gb_puts(&b, GATE_PRELOAD_FIRST ":");
    gb_puts(&b, G.lib);
    if (pre && *pre) {
      gb_puts(&b, ":");
      gb_puts(&b, pre);
    }
    if (!b.oom) setenv("LD_PRELOAD", b.p, 1);
    gb_free(&b);
  }
}

/* ---------- the check ---------- */

static void release_at_exit(void);

enum verdict { V_RUN, V_DENY, V_ESCALATE, V_ERROR };

/* The gate's own nested-shell shims (bin/ and gate-shell beside this library) run without asking: they
 * send the script to the daemon's pre-flight themselves. */
HOT static int is_shim(const char *program) {
  size_t l = G.dirlen;
  if (!l || strncmp(program, G.lib, l)) return 0;
  return !strncmp(program + l, "bin/", 4) || !strcmp(program + l, "gate-shell");
}

/* A message about one exec, "<a><cmd><b><c>": the command is described only when there is something to say. */
static void say(char *const argv[], const char *program, const char *a, const char *b, const char *c) {
  char cmd[512];
  gate_describe(cmd, sizeof cmd, argv, program);
  gate_msg(a, cmd, b, c);
}

/* Ask the daemon about one exec. On V_ESCALATE, token holds the one-time escalation token. */
static enum verdict check(const char *program, char *const argv[], char *const envp[], char *token, size_t tlen) {
  char err[1200], cwd[PATH_MAX], shimpath[PATH_MAX], id[96];
  struct gate_conf c;
  if (gate_conf_from_list(&c, G.saved, G.nsaved, err, sizeof err)) {
    say(argv, program, "exec gate: ", ": not run: ", err);
    return V_ERROR;
  }
  if (!getcwd(cwd, sizeof cwd)) {
    say(argv, program, "exec gate: ", ": not run: the current directory is gone", NULL);
    return V_ERROR;
  }
  gate_new_id(id, sizeof id);
  /* the shims' folder as it appears in PATH: <dir>/bin */
  size_t dl = G.dirlen < sizeof shimpath - 4 ? G.dirlen : 0;
  memcpy(shimpath, G.lib, dl);
  memcpy(shimpath + dl, "bin", 4);
  struct gbuf msg;
  gb_init(&msg);
  gate_exec_request(&msg, &c, id, program, argv, cwd, envp, G.lib, dl ? shimpath : NULL);
  struct gate_reply r; /* small: see gate-proto.h */
  gate_reply_init(&r, NULL, NULL);
  enum verdict v = V_ERROR;
  release_at_exit();
  if (gate_request(&c, id, &msg, &r, err, sizeof err)) {
    say(argv, program, "exec gate: ", ": ", err);
    goto out;
  }
  if (strcmp(r.type, GATE_MSG_EXEC)) {
    say(argv, program, "exec gate: ", ": not run: unexpected reply type ", r.type);
    goto out;
  }
  switch (r.action) {
  case GA_RUN: v = V_RUN; break;
  case GA_DENY:
    say(argv, program, "denied: ", ": ", r.reason[0] ? r.reason : "denied by policy");
    v = V_DENY;
    break;
  case GA_ESCALATE:
    if (!r.token[0]) {
      say(argv, program, "exec gate: ", ": not run: Escalate without an escalation token", NULL);
      break;
    }
    gate_join(token, tlen, r.token, NULL, NULL, NULL);
    v = V_ESCALATE;
    break;
  default: say(argv, program, "exec gate: ", ": not run: malformed reply from the daemon (no action)", NULL);
  }
out:
  gb_free(&msg);
  return v;
}

/* Run an escalated command with this process's stdio and exit with its status. */
static void escalate_and_exit(const char *token, char *const envp[], char *const argv[], const char *program) {
  struct gate_conf c;
  char err[1200], cmd[512];
  gate_describe(cmd, sizeof cmd, argv, program);
  if (gate_conf_from_list(&c, G.saved, G.nsaved, err, sizeof err))
    gate_die(126, "exec gate: ", cmd, ": not run: ", err);
  gate_reply_release();
  int st = gate_escalate(&c, token, envp, err, sizeof err);
  if (st < 0) gate_die(126, "exec gate: ", cmd, ": ", err);
  _exit(st);
}

/* Whether the exec's request fits a datagram with room to spare (escaping, base64): a larger one goes to
 * the daemon over stream.sock, past the supervisor that holds the kernel layer's decision, so such an exec
 * is asked first (the daemon pairs it with the kernel layer's report itself, src/daemon/exec-pairs.ts). */
HOT static int small(const char *program, char *const argv[], char *const envp[]) {
  size_t n = strlen(program) + PATH_MAX;
  for (int i = 0; argv && argv[i]; i++) n += strlen(argv[i]) + 4;
  for (int i = 0; envp && envp[i]; i++) n += strlen(envp[i]) + 4;
  return n * 2 < GATE_MAX_DATAGRAM;
}

/* The common path of every exec: decide, then run the real exec with the gated environment. */
typedef int (*execve_fn)(const char *, char *const[], char *const[]);

/* The layer's own question, where it asks (outside a kernel-gated run, or for what that layer hands back): with
 * escalate, an Escalate escalates and never returns. Apart from the common path, whose frame (in a freshly
 * forked child, where each stack page first written is a fault) it would deepen by its buffer. */
__attribute__((noinline)) static enum verdict asked(const char *program, char *const argv[], char *const envp[],
                                                    int escalate) {
  char token[256] = "";
  enum verdict v = check(program, argv, envp, token, sizeof token);
  if (v == V_ESCALATE && escalate) escalate_and_exit(token, envp, argv, program);
  return v;
}

HOT static int gated_execve(const char *path, const char *program, char *const argv[], char *const envp[],
                            int (*doit)(const char *, char *const[], char *const[], void *), void *ctx) {
  _Alignas(char *) char stack[ENV_ON_STACK];
  /* nothing there: the exec would fail anyway, so fail the same way without asking (and without ever
   * calling the real exec: no window for the file to appear between a check and the exec). dash and
   * execvp try every PATH entry; this keeps that cheap and quiet. */
  if (path && *path && access(program, F_OK) != 0) return -1;
  int trusted = is_shim(program) || (G.then[0] && same_file(program, G.then));
  if (trusted) G.then[0] = 0;
  /* in a kernel-gated run the kernel layer decides the exec itself: it runs what may run, and fails with
   * GATE_EXEC_ASK what this layer must act on (a denial said here, an escalation with our descriptors) */
  int first = G.kernel && !trusted && small(program, argv, envp);
  enum verdict v = trusted || first ? V_RUN : asked(program, argv, envp, 1);
  for (int tries = 0;; tries++) {
    if (v == V_DENY || v == V_ERROR) {
      errno = EACCES;
      return -1;
    }
    /* a forked child of a program marked below a program running its own files: the layer left out (gated_env) */
    int left_out = G.below && getpid() != G.below;
    domain_now();
    char **env = gated_env(envp, program, NULL, first, left_out, stack, sizeof stack);
    if (!env) {
      errno = ENOMEM;
      return -1;
    }
    gate_reply_release(); /* a kept reply socket would outlive the exec as a file */
    int r = doit(path, argv, env, ctx);
    int e = errno;
    free_env(env, stack, sizeof stack);
    errno = e;
    /* ENOSYS: the kernel's answer when the run's supervisor is gone; asking says so in our words */
    if (first && e == ENOSYS && asked(program, argv, envp, 0) != V_RUN) errno = EACCES;
    if (!first || e != GATE_EXEC_ASK) return r;
    /* the supervisor holds its decision for this very exec: asked again (once), it answers with it */
    if (tries) {
      errno = EACCES;
      return -1;
    }
    v = asked(program, argv, envp, 1);
  }
}

/* The next execve in the chain (libc's, or another preloaded library's), looked up by the constructor:
 * a shell forks a fresh child for every command, and a lookup there would be paid (with the loader's
 * page faults) once per exec instead of once per process. */
static execve_fn real_execve;

HOT static int do_execve(const char *path, char *const argv[], char *const env[], void *ctx) {
  (void)ctx;
  if (!real_execve) real_execve = (execve_fn)real("execve");
  return real_execve(path, argv, env);
}

/* A relative path made absolute first (apart from execve: its PATH_MAX buffer would be in execve's frame). */
__attribute__((noinline)) static int execve_relative(const char *path, char *const argv[], char *const envp[]) {
  char program[PATH_MAX];
  absolute(program, sizeof program, path);
  return gated_execve(path, program, argv, envp, do_execve, NULL);
}

HOT EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  /* an absolute path as it is: no copy, and a small frame (a shell's forked child execs from here, where each
   * stack page first written is a copy-on-write fault) */
  if (path[0] != '/') return execve_relative(path, argv, envp);
  size_t n = 0;
  while (n < PATH_MAX && path[n]) n++;
  if (n >= PATH_MAX) return execve_relative(path, argv, envp); /* truncated, as before: the exec fails */
  return gated_execve(path, path, argv, envp, do_execve, NULL);
}

EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  char found[PATH_MAX];
  if (search_path(file, found, sizeof found)) return -1;
  int rc = execve(found, argv, envp);
  if (rc < 0 && errno == ENOEXEC) {
    /* like execvp: a file without a #! line runs under /bin/sh (same decision: same command) */
    int n = 0;
    while (argv[n]) n++;
    char **sh = malloc((n + 2) * sizeof *sh);
    if (!sh) return -1;
    sh[0] = (char *)"/bin/sh";
    sh[1] = found;
    for (int i = 1; i <= n; i++) sh[i + 1] = argv[i];
    /* (in a kernel-gated run that layer decides the shell's exec as any other: what it holds is acted on) */
    if (G.kernel) gated_execve("/bin/sh", "/bin/sh", sh, envp, do_execve, NULL);
    else {
      char **env = gated_env(envp, found, NULL, 0, 0, NULL, 0);
      if (env) do_execve("/bin/sh", sh, env, NULL);
      free_env(env, NULL, 0);
    }
    free(sh);
    errno = ENOEXEC;
    return -1;
  }
  return rc;
}

EXPORT int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

static char **collect(const char *arg0, va_list ap, char ***envp) {
  size_t n = 1, cap = 16;
  char **v = malloc(cap * sizeof *v);
  if (!v) return NULL;
  v[0] = (char *)arg0;
  for (;;) {
    char *a = va_arg(ap, char *);
    if (n + 1 >= cap) {
      cap *= 2;
      char **w = realloc(v, cap * sizeof *v);
      if (!w) {
        free(v);
        return NULL;
      }
      v = w;
    }
    v[n++] = a;
    if (!a) break;
  }
  if (envp) *envp = va_arg(ap, char **);
  return v;
}

/* execl, execlp and execle: the list collected into an argv, then the v form (f) with environ, or with
 * the environment that follows the list's NULL (execle). */
static int exec_list(execve_fn f, const char *path, const char *arg, va_list ap, int with_env) {
  const char *volatile a0 = arg; /* glibc declares arg nonnull, callers may still pass NULL */
  char **envp = environ;
  char **v = a0 ? collect(a0, ap, with_env ? &envp : NULL) : NULL;
  if (!a0 && with_env) envp = va_arg(ap, char **);
  if (a0 && !v) {
    errno = ENOMEM;
    return -1;
  }
  char *none[] = {NULL};
  int rc = f(path, v ? v : none, envp);
  free(v);
  return rc;
}

EXPORT int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(execve, path, arg, ap, 0);
  va_end(ap);
  return rc;
}

EXPORT int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(execvpe, file, arg, ap, 0);
  va_end(ap);
  return rc;
}

EXPORT int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(execve, path, arg, ap, 1);
  va_end(ap);
  return rc;
}

/* What descriptor fd names (its /proc/self/fd link) into out; -1 with EBADF. */
static int fd_path(int fd, char *out, size_t n) {
  char link[64], num[24];
  gate_join(link, sizeof link, "/proc/self/fd/", gate_num(num, (unsigned long)fd, 10), NULL, NULL);
  ssize_t l = fd >= 0 ? readlink(link, out, n - 1) : -1;
  if (l < 0) {
    errno = EBADF;
    return -1;
  }
  out[l] = 0;
  return 0;
}

struct fd_ctx {
  int fd;
};
static int do_fexecve(const char *path, char *const argv[], char *const env[], void *ctx) {
  (void)path;
  static int (*f)(int, char *const[], char *const[]);
  if (!f) f = real("fexecve");
  return f(((struct fd_ctx *)ctx)->fd, argv, env);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  char program[PATH_MAX];
  if (fd_path(fd, program, sizeof program)) return -1;
  struct fd_ctx c = {fd};
  return gated_execve(NULL, program, argv, envp, do_fexecve, &c);
}

struct at_ctx {
  int dirfd, flags;
};
static int do_execveat(const char *path, char *const argv[], char *const env[], void *ctx) {
  static int (*f)(int, const char *, char *const[], char *const[], int);
  if (!f) f = real("execveat");
  struct at_ctx *c = ctx;
  return f(c->dirfd, path, argv, env, c->flags);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
  char program[PATH_MAX], base[PATH_MAX] = "";
  if (path[0] != '/') {
    if (dirfd == AT_FDCWD) {
      if (!getcwd(base, sizeof base)) base[0] = 0;
    } else if (fd_path(dirfd, base, sizeof base)) return -1;
  }
  if (path[0] == '/') snprintf(program, sizeof program, "%s", path);
  else if (!path[0]) snprintf(program, sizeof program, "%s", base);
  else snprintf(program, sizeof program, "%s/%s", base, path);
  struct at_ctx c = {dirfd, flags};
  return gated_execve(path, program, argv, envp, do_execveat, &c);
}

/* ---------- spawns in a new process: decide here, the child's constructor honours the mark ---------- */

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);

static int gated_spawn(pid_t *pid, const char *path, const char *program, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[], char *const envp[]) {
  static spawn_fn f; /* posix_spawnp's search is done here, so both end in the real posix_spawn */
  if (!f) f = (spawn_fn)real("posix_spawn");
  char token[256] = "";
  if (access(program, F_OK) != 0) return errno;
  domain_now(); /* the child is made by libc, where nothing of this library runs */
  /* in a kernel-gated run the child's exec is decided by the kernel layer first, as in gated_execve; a
   * Deny or Escalate comes back as the spawn's error, and the held answer is asked for from here */
  int shim = is_shim(program), first = G.kernel && !shim && small(program, argv, envp);
  enum verdict v = shim || first ? V_RUN : check(program, argv, envp, token, sizeof token);
  for (int tries = 0;; tries++) {
    if (v == V_DENY || v == V_ERROR) return EACCES;
    int ask = first && v == V_RUN; /* an escalation's child carries its token, not the question */
    /* (the child is this process's: left out below a program running its own files, unless it escalates) */
    char **env = gated_env(envp, program, v == V_ESCALATE ? token : NULL, ask, G.below && v != V_ESCALATE, NULL, 0);
    if (!env) return ENOMEM;
    int r = f(pid, path, fa, at, argv, env);
    free_env(env, NULL, 0);
    if (!ask || (r != GATE_EXEC_ASK && r != ENOSYS)) return r;
    /* ENOSYS: the run's supervisor is gone; asking says so in our words */
    if (r == ENOSYS) return check(program, argv, envp, token, sizeof token) == V_RUN ? r : EACCES;
    if (tries) return EACCES;
    v = check(program, argv, envp, token, sizeof token);
  }
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
                       char *const argv[], char *const envp[]) {
  char program[PATH_MAX];
  absolute(program, sizeof program, path);
  return gated_spawn(pid, path, program, fa, at, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
                        char *const argv[], char *const envp[]) {
  char found[PATH_MAX], program[PATH_MAX];
  if (search_path(file, found, sizeof found)) return errno;
  absolute(program, sizeof program, found);
  return gated_spawn(pid, found, program, fa, at, argv, envp);
}

/* system() and popen() spawn /bin/sh -c through glibc internals: decide here, mark the child through
 * this process's environment for the duration of the call. shell_begin: 0 when the command may run (the
 * marks are set), -1 with errno EACCES when not; shell_end takes the marks out again, errno kept. */
static int shell_begin(const char *command) {
  restore_environ();
  domain_now();
  char *argv[] = {(char *)"sh", (char *)"-c", (char *)command, NULL};
  char token[256] = "", v[PATH_MAX + 300], pid[24];
  enum verdict d = check("/bin/sh", argv, environ, token, sizeof token);
  if (d == V_DENY || d == V_ERROR) {
    errno = EACCES;
    return -1;
  }
  gate_num(pid, (unsigned long)getpid(), 10);
  if (d == V_ESCALATE) {
    gate_join(v, sizeof v, pid, ":", token, NULL);
    setenv(GATE_VAR_ESCALATE, v, 1);
  } else {
    gate_join(v, sizeof v, pid, ":/bin/sh", NULL, NULL);
    setenv(GATE_VAR_CHECKED, v, 1);
  }
  return 0;
}

static void shell_end(void) {
  int e = errno;
  unsetenv(GATE_VAR_ESCALATE);
  unsetenv(GATE_VAR_CHECKED);
  errno = e;
}

EXPORT int system(const char *command) {
  static int (*f)(const char *);
  if (!f) f = real("system");
  if (!command) return f(command);
  if (shell_begin(command)) return -1;
  int rc = f(command);
  shell_end();
  return rc;
}

EXPORT FILE *popen(const char *command, const char *type) {
  static FILE *(*f)(const char *, const char *);
  if (!f) f = real("popen");
  if (shell_begin(command)) return NULL;
  FILE *rc = f(command, type);
  shell_end();
  return rc;
}

/* ---------- the constructor: every new process ---------- */

/* "<decimal pid>:<rest>": the pid, and rest in *after; -1 when malformed. */
static long mark_pid(const char *mark, const char **after) {
  long pid = 0;
  const char *s = mark;
  for (; *s >= '0' && *s <= '9' && s - mark < 12; s++) pid = pid * 10 + (*s - '0');
  if (s == mark || *s != ':') return -1;
  *after = s + 1;
  return pid;
}

/* GATE_CHECKED=<pid>:<program> is ours when pid is this process (exec), its parent (spawn) or 0 (the run's
 * first process, started by gate-sh or the daemon), and the program is what runs now: the executable, the
 * script an interpreter was started for, or bubblewrap wrapping it (then its one exec of the program is
 * let through: it was decided already).
 *
 * Why honouring the mark is sound (one round trip per exec, not two): the mark only ever saves a check
 * that the parent's hook has just made for this very pid and program, and it cannot reach any other
 * process by accident — the constructor takes it out of the environment before main runs, so nothing
 * this process later execs, by any route, inherits it; the hooks add a fresh one only to an exec they
 * allowed. The constructor check exists for benign routes around the hooks (glibc-internal spawns, a
 * raw execve syscall in a runtime or library, a static parent): none of them writes GATE_CHECKED, so
 * each arrives unmarked and is checked. A process that deliberately forges a mark could as well drop
 * LD_PRELOAD, use a static binary or a raw syscall with a clean environment: the exec gate does not
 * stand against hostile code in the process (no check inside that process could; only the daemon and
 * the kernel are outside it) — the turn's sandbox does (docs/exec-gate.md, "What is covered"). */
static int marked(const char *mark, char **argv) {
  const char *program;
  long pid = mark_pid(mark, &program);
  if (pid < 0 || (pid != 0 && pid != getpid() && pid != getppid())) return 0;
  if (same_file(program, "/proc/self/exe")) return 1;
  for (int i = 1; argv && i < 3 && argv[i - 1]; i++)
    if (argv[i] && !strcmp(argv[i], program)) return 1;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 6 && (exe[n] = 0, !strcmp(exe + n - 6, "/bwrap")) && !G.then[0]) {
    gate_join(G.then, sizeof G.then, program, NULL, NULL, NULL);
    return 1;
  }
  return 0;
}

/* A copy that outlives any change to the environment (some programs overwrite their environment block
 * to set their process title): in G.arena while it lasts, so the constructor does not start malloc. */
static char *keep(const char *e) {
  size_t n = strlen(e) + 1;
  if (n > sizeof G.arena - G.arena_used) return strdup(e);
  char *p = G.arena + G.arena_used;
  memcpy(p, e, n);
  G.arena_used += n;
  return p;
}

/* This library's path, as the loader was given it (gate-sh gives LD_PRELOAD an absolute path, and the
 * shims' PATH entry is built from the same folder, so the two compare equal as strings). */
static void find_self(void) {
  Dl_info info;
  if (!dladdr((void *)find_self, &info) || !info.dli_fname) return;
  if (info.dli_fname[0] == '/') gate_join(G.lib, sizeof G.lib, info.dli_fname, NULL, NULL, NULL);
  else if (!realpath(info.dli_fname, G.lib)) absolute(G.lib, sizeof G.lib, info.dli_fname);
  char *slash = strrchr(G.lib, '/');
  G.dirlen = slash ? (size_t)(slash - G.lib) + 1 : 0;
}

/* Landlock's system calls (the same numbers on every architecture) and the few constants used below. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif
#define LANDLOCK_CREATE_RULESET_VERSION_ (1U << 0)
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET_ (1ULL << 0)

/* A program the supervisor marked below a program running its own files enters a Landlock domain of its own,
 * which its descendants inherit: a process in a domain cannot ptrace, open /proc/<pid>/mem of, or
 * process_vm_writev into a process outside it (Landlock's ptrace rule, whatever the domain restricts), so a
 * build cannot take over the model's own shell, whose rule-allowed commands leave the sandbox, and make it run
 * a command of the build's (docs/exec-gate.md, "Below a program running its own files"). A domain must restrict
 * something; this one takes the least a build notices: connecting to an abstract Unix socket that a process
 * outside it made (Landlock ABI 6, Linux 6.12). Not file-system rights: a domain that handles any refuses
 * mounts, and moves between folders (EXDEV: cargo's and pip's renames) wherever no rule allows them on that
 * very mount. Not signals: `kill` of the model's own server (`make stop`) would fail. An older kernel: no
 * domain, and that route stays open there. Needs no_new_privs, which the kernel layer's filter sets. */
static void own_domain(void) {
  struct {
    unsigned long long handled_access_fs, handled_access_net, scoped;
  } ruleset = {0, 0, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET_};
  if (syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION_) < 6) return;
  long fd = syscall(SYS_landlock_create_ruleset, &ruleset, sizeof ruleset, 0);
  if (fd < 0) return;
  syscall(SYS_landlock_restrict_self, (int)fd, 0);
  close((int)fd);
}

/* The system tools that read other processes' /proc entries (their fd/, exe, cwd, environ: Landlock's ptrace
 * rule keeps a domain from them), run by the model as its own commands: `lsof -t -i :3000`, `ss -ltnp`,
 * `fuser`, `ls -l /proc/$$/fd` work as under bash. They run no file's code in their own process, and one
 * installed in a system folder is out of the sandbox's reach, so such a program enters its domain only before
 * it starts anything (domain_now): whatever it starts is in the domain, and a process already in one (a
 * build's `lsof`) stays there. Its own path, as the kernel has it; the name it was called by first, so that
 * the other marked programs (a build's every compiler) pay no system call for it. */
static int inspector(const char *argv0) {
  static const char *const names[] = {"lsof",  "ss",  "fuser", "netstat", "ps",       "pstree",   "pgrep", "pkill",
                                      "pidof", "top", "ls",    "cat",     "readlink", "realpath", "stat",  NULL};
  static const char *const dirs[] = {"/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/", NULL};
  const char *called = argv0 ? strrchr(argv0, '/') : NULL;
  called = called ? called + 1 : argv0;
  int named = 0;
  for (int i = 0; called && names[i] && !named; i++) named = !strcmp(called, names[i]);
  if (!named) return 0;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = 0;
  const char *name = strrchr(exe, '/') + 1;
  size_t dirlen = (size_t)(name - exe);
  int in_system = 0;
  for (int i = 0; dirs[i] && !in_system; i++) in_system = strlen(dirs[i]) == dirlen && !strncmp(exe, dirs[i], dirlen);
  for (int i = 0; in_system && names[i]; i++)
    if (!strcmp(name, names[i])) return 1;
  return 0;
}

/* Work done in every process that loads the library: keep it to a few syscalls (getpid, two stats) and
 * no malloc, stdio or environment functions, whose first use costs symbol binding and page faults. */
__attribute__((constructor)) static void gate_init(int argc, char **argv, char **envp) {
  (void)argc;
  (void)envp;
  find_self();
  real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
  const char *checked = NULL, *escalate = NULL, *then = NULL;
  int below = 0;
  char **w = environ;
  for (char **e = environ; e && *e; e++) {
    /* the marks are for this process only: taken out, so descendants never inherit them */
    if (!strncmp(*e, GATE_VAR_CHECKED "=", sizeof GATE_VAR_CHECKED)) {
      checked = *e + sizeof GATE_VAR_CHECKED;
      continue;
    }
    if (!strncmp(*e, GATE_VAR_ESCALATE "=", sizeof GATE_VAR_ESCALATE)) {
      escalate = *e + sizeof GATE_VAR_ESCALATE;
      continue;
    }
    if (!strncmp(*e, GATE_VAR_INNER_PROGRAM "=", sizeof GATE_VAR_INNER_PROGRAM)) {
      then = *e + sizeof GATE_VAR_INNER_PROGRAM;
      continue;
    }
    if (!strncmp(*e, GATE_MARK_ASK, sizeof GATE_MARK_ASK - 1)) continue;
    if (!strncmp(*e, GATE_VAR_BELOW "=", sizeof GATE_VAR_BELOW)) {
      below = 1;
      continue;
    }
    if (!strncmp(*e, "GATE_", 5) && G.nsaved < MAX_SAVED) {
      G.saved[G.nsaved++] = keep(*e);
      if (!strncmp(*e, GATE_VAR_KERNEL_SOCK "=", sizeof GATE_VAR_KERNEL_SOCK) && (*e)[sizeof GATE_VAR_KERNEL_SOCK])
        G.kernel = G.saved[G.nsaved - 1] + sizeof GATE_VAR_KERNEL_SOCK;
    }
    *w++ = *e;
  }
  if (w) *w = NULL;
  /* (the marks' strings stay where they are: only their environ slots were reused) */
  /* only the supervisor rewrites a mark into GATE_OWN; one written by the process itself only leaves this layer
   * out of its children, whose execs the kernel layer decides all the same (no such mark outside a kernel-gated run) */
  if (below && G.kernel) {
    G.below = getpid();
    if (inspector(argv ? argv[0] : NULL)) G.domain_later = 1;
    else own_domain();
  }
  if (escalate) {
    const char *token;
    if (mark_pid(escalate, &token) == getppid()) escalate_and_exit(token, environ, argv, "?");
  }
  if (then) gate_join(G.then, sizeof G.then, then, NULL, NULL, NULL);
  if (checked && marked(checked, argv)) return;
  G.then[0] = 0;
  /* in a kernel-gated run that layer decided this exec already: only an Escalate it let go on in place
   * waits for this program to ask (its file, gate-common.h); a Run needs no word */
  if (G.kernel) {
    char esc[PATH_MAX], n[24];
    gate_join(esc, sizeof esc, G.kernel, GATE_ESCALATING, gate_num(n, (unsigned long)getpid(), 10), NULL);
    if (access(esc, F_OK) != 0) return;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n < 0) {
    say(argv, "?", "exec gate: ", ": not run: cannot read /proc/self/exe", NULL);
    _exit(126);
  }
  exe[n] = 0;
  if (is_shim(exe)) return;
  char token[256] = "";
  char *none[] = {exe, NULL};
  char **args = argv && argv[0] ? argv : none;
  enum verdict v = check(exe, args, environ, token, sizeof token);
  if (v == V_RUN) return;
  if (v == V_ESCALATE) escalate_and_exit(token, environ, args, exe);
  _exit(126);
}

/* exit() and returning from main: a kept reply socket is removed (after _exit or a kill it stays behind
 * as a dead file in the client folder). Registered by the first request this process makes (check), not
 * as a destructor: a destructor runs in every process that exits, a shell's forked subshells included,
 * and there its first touch of this library's pages is a page fault each (docs/history/2026-11-measurements.md). */
extern int __cxa_atexit(void (*f)(void *), void *arg, void *dso);
static void gate_fini(void *unused) {
  (void)unused;
  gate_reply_release();
}
static void release_at_exit(void) {
  static int registered; /* inherited by a fork together with the registration itself */
  if (!registered) registered = __cxa_atexit(gate_fini, NULL, NULL) == 0;
}
