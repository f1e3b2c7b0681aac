/*
 * One exec, as gate-launch's supervisor decides it: read what it names from the process's memory (memory.c),
 * know the file it runs (target.c, script.c), then answer in this order: the plan's own first execs (decided
 * by pre-flight); an answer the LD_PRELOAD layer already got for this very exec (pairing.c); a grant kept for
 * this run's program and file (reuse.c); else the daemon's one decision engine (an ExecRequest with
 * "layer":"kernel"; a grant scoped to a program running its own files holds for execs below it). Every exec
 * let through is followed to its end (follow.c). The environment is read only where the decision needs it: a
 * kept grant holds whatever it is. The answer is EACCES unless the daemon said the program may
 * run. Trust boundary: everything read from the process may be hostile and
 * may change while it is read: the notification is checked still valid after the reads, any failure to
 * read or to ask is a refusal, and what the kernel finally runs is compared with what was decided.
 */
#define _GNU_SOURCE
#include "launch.h"
#include "../gate-preload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What one exec names, read from the process. */
struct exec {
  pid_t pid;
  int at, dirfd, flags;
  char *path, **argv, **envp; /* envp: NULL until read (read_env) */
  uint64_t envp_at; /* where envp lies in the process */
  size_t total; /* bytes of strings read so far (MAX_TOTAL holds for argv and envp together) */
  char cwd[PATH_MAX], program[PATH_MAX], file[PATH_MAX + 64];
  int cwd_read; /* cwd is read where it is needed (exec_cwd): a relative path, a script, a request, a record */
  int nameless; /* a file without a name (memfd, deleted): always asked about, the daemon knows it by its bytes */
  struct decided decided;
  /* answered from a kept grant before its record was written (written while the kernel execs, settle) */
  struct gate_reuse_hit hit;
  struct gbuf record; /* its record but the time and cwd (gate_reuse_record) */
  int audit_later, audit_failed;
};

/* The process's cwd, read once (its exec holds it: the same whenever it is read before the answer or during
 * the exec, but for another thread's chdir, which the record alone would show). */
static void exec_cwd(struct exec *x) {
  char cwdl[64];
  if (x->cwd_read) return;
  snprintf(cwdl, sizeof cwdl, "/proc/%d/cwd", (int)x->pid);
  if (read_link(cwdl, x->cwd, sizeof x->cwd)) strcpy(x->cwd, "/");
  x->cwd_read = 1;
}

/* Whether the reading of the waiting process stands, after its reads: 0; -1 (said why, when a person would
 * want to know) when it does not. The pid may have died and been reused while it was read: a still valid id
 * after all the reads = it was the waiting process all along (an exec no longer waiting is not answered, nor
 * reported: nobody waits). */
static int stands(const struct launch *l, const struct seccomp_notif *req, const struct exec *x, const struct proc *p) {
  if (!notif_valid(l, req->id)) return -1;
  if (p->error == EPERM || p->error == EACCES || p->error == ESRCH) {
    char pidn[24];
    gate_msg("exec gate: an exec of process ", gate_num(pidn, (unsigned long)own_pid(x->pid), 10),
             " not run: its memory cannot be read: ", strerror(p->error));
    return -1;
  }
  return 0;
}

static int unreadable(const struct exec *x) {
  char cmd[512];
  gate_describe(cmd, sizeof cmd, x->argv, x->path ? x->path : "?");
  gate_msg("exec gate: ", cmd, ": not run: its arguments could not be read (or are too large for the gate)", NULL);
  return -1;
}

/* Read the exec's path and argv, and the program it names (the environment and the cwd are read when they are
 * needed, read_env and exec_cwd): 0, or -1 (said why) when it cannot be decided on. */
static int read_exec(const struct launch *l, const struct seccomp_notif *req, struct exec *x) {
  int nr = req->data.nr, ok = 0;
  const uint64_t *a = (const uint64_t *)req->data.args;
  x->at = nr == __NR_execveat;
  x->dirfd = (int)a[0];
  x->flags = x->at ? (int)a[4] : 0;
  x->envp_at = x->at ? a[3] : a[2];
  struct proc p = {.pid = x->pid};
  const uint64_t at[2] = {x->at ? a[1] : a[0], x->at ? a[2] : a[1]};
  proc_prefetch(&p, at, 2);
  x->path = read_str(&p, at[0]);
  x->argv = read_vec(&p, at[1], &ok);
  x->total = p.total;
  proc_done(&p);
  char cmd[512];
  /* (a relative path names a program in the process's cwd, unless a descriptor's folder is named instead) */
  if (x->path && x->path[0] && x->path[0] != '/' && !(x->at && x->dirfd != AT_FDCWD)) exec_cwd(x);
  /* the program as the process names it (its cwd, dirfd, /proc/<pid>/fd): read before the check below */
  int unnamed = x->path && ok
      ? exec_program(x->pid, x->at, x->dirfd, x->path, x->flags, x->cwd, x->program, sizeof x->program)
      : -1;
  if (stands(l, req, x, &p)) return -1;
  if (!x->path || !ok) return unreadable(x);
  if (unnamed) {
    gate_describe(cmd, sizeof cmd, x->argv, x->path);
    gate_msg("exec gate: ", cmd, ": not run: the program it names could not be told", NULL);
    return -1;
  }
  return 0;
}

/* Read the exec's environment, once the decision needs it: 0, or -1 (said why). */
static int read_env(const struct launch *l, const struct seccomp_notif *req, struct exec *x) {
  int ok = 0;
  struct proc p = {.pid = x->pid, .total = x->total};
  x->envp = read_vec(&p, x->envp_at, &ok);
  proc_done(&p);
  if (stands(l, req, x, &p)) return -1;
  return ok ? 0 : unreadable(x);
}

/* The file decided on, as the process names it: what the kernel runs must be this very file; a #! script's
 * chain is read before asking (the daemon judges this very reading, and the exec is checked against it). */
static void know_file(struct exec *x) {
  struct decided *d = &x->decided;
  struct stat st;
  int fd = open(x->file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd >= 0 && fstat(fd, &st) == 0) {
    char magic[2];
    gate_ident_of(&d->id, &st);
    d->script = pread(fd, magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!';
    if (d->script) exec_cwd(x);
    if (d->script && script_chain(x->pid, x->cwd, fd, x->path, &d->kargv, &d->interp)) d->kargv = NULL;
  }
  /* an execute-only program (mode --x, not root): the kernel runs it though nobody may read it; its
   * identity is all the checks need (a #! script it cannot be: its interpreter could not read it) */
  else if (stat(x->file, &st) == 0)
    gate_ident_of(&d->id, &st);
  if (fd >= 0) close(fd);
}

/* The file is the process's own root's (not a descriptor's: /proc/<pid>/fd/..., whose errors are others). */
static int in_root(const struct exec *x) {
  char root[48];
  int n = snprintf(root, sizeof root, "/proc/%d/root/", (int)x->pid);
  return !strncmp(x->file, root, (size_t)n);
}

/* A grant kept for this very file, known by its stat alone (x->file named; *found: the stat's errno, 0): 1,
 * with the file's identity in x->decided. A grant is only ever kept for a file that is not a #! script, read
 * whole when it was asked about (ask); a file whose identity (device, inode, size, times) is the same has not
 * been written since, so its head need not be read again. The grants held for a process's execs (scoped)
 * are looked up with its parent read from /proc only when one is a candidate (gate-reuse.c). */
static int kept_file(const struct launch *l, struct exec *x, struct gate_reuse_hit *hit, int *found) {
  struct stat st;
  struct gate_ident id = {0};
  *found = stat(x->file, &st) ? errno : 0;
  if (*found || x->nameless || !x->argv[0] || !gate_same_name(x->argv[0], x->program)) return 0;
  gate_ident_of(&id, &st);
  if (!gate_reuse_find(l->conf.run_id, x->program, &id, x->pid, GATE_PARENT_UNREAD, hit)) return 0;
  x->decided.id = id;
  return 1;
}

/* Whether the exec's environment preloads the gate's library (an entry of LD_PRELOAD, which the loader splits
 * on ':' and ' '): the new program has a constructor that may ask. Not, below a program running its own files. */
static int preloads(char **envp, const char *lib) {
  size_t n = strlen(lib);
  for (char **e = envp; *e; e++) {
    if (strncmp(*e, "LD_PRELOAD=", 11)) continue;
    for (const char *s = *e + 11; *s;) {
      size_t l = gate_preload_entry(s);
      if (l == n && !strncmp(s, lib, n)) return 1;
      s += l + (s[l] != 0);
    }
  }
  return 0;
}

/* The value of the first NAME= entry of envp, or NULL. */
static const char *env_value(char **envp, const char *name) {
  size_t n = strlen(name);
  for (char **e = envp; *e; e++)
    if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
  return NULL;
}

/* The exec's request to the daemon (an ExecRequest, "layer":"kernel", with the environment envp), in msg under a
 * new id (written to id, idn bytes); the cwd read. */
static void exec_request(const struct launch *l, struct exec *x, char **envp, struct ids *ids, char *id, size_t idn,
                         struct gbuf *msg) {
  char pfile[PATH_MAX + 64];
  exec_cwd(x);
  program_file(x->pid, x->file, x->program, pfile, sizeof pfile);
  struct gate_exec_extra extra = {
      .layer = GATE_VALUE_KERNEL,
      .pair_run = env_value(envp, GATE_VAR_RUN), /* where the layer's answer for this exec is found */
      .kernel_argv = x->decided.kargv, /* a #! script: the argv the kernel builds in front of argv[1..] */
      .program_file = pfile, /* the program known by its bytes (a copy, memfd, ...) */
      .host_pid = x->pid, /* where the daemon reads how the process was started (provenance) */
  };
  gate_new_id(id, idn);
  gb_init(msg);
  gate_exec_request_for(msg, &l->conf, id, x->program, x->argv, x->cwd, envp, l->own_preload, l->own_path, ids_own(ids),
                        &extra);
}

/* Ask the daemon and act on its answer: the errno to answer the exec with. */
static int ask(const struct launch *l, struct exec *x, const struct exec_seen *seen, struct ids *ids,
               const struct marks *m, int lands, int reusable, const struct gate_reuse_hit *kept) {
  char id[96], cmd[512], err[1200], asked_id[130];
  workers_let_go(); /* (the daemon may take long: a person may be asked) */
  struct gbuf msg;
  exec_request(l, x, x->envp, ids, id, sizeof id, &msg);
  const char *inputs = msg.oom ? NULL : after_id(msg.p, msg.len, asked_id, sizeof asked_id);
  const struct gate_ident *file = &x->decided.id;
  if (kept && inputs && !tell_reused(&l->conf, kept->grant, inputs, msg.p + msg.len)) {
    x->decided.below = kept->below;
    if (lands) land(l, x->pid, ids_own(ids), seen, file, NULL);
    gb_free(&msg);
    return 0;
  }
  int error = EACCES;
  char *held;
  struct gate_reply r;
  struct gate_reused_audit audit;
  gate_reply_init(&r, NULL, &audit);
  /* other programs' answers for this run, handed over with a grant (reuse.c, keep_presets); none: asked as they come */
  r.presets = malloc(sizeof *r.presets);
  gate_describe(cmd, sizeof cmd, x->argv, x->program);
  if (gate_request(&l->conf, id, &msg, &r, err, sizeof err)) gate_msg("exec gate: ", cmd, ": ", err);
  else if (strcmp(r.type, GATE_MSG_EXEC)) gate_msg("exec gate: ", cmd, ": not run: unexpected reply type ", r.type);
  else if ((r.action == GA_DENY || (r.action == GA_ESCALATE && r.token[0])) && m->asks &&
           (held = exec_inputs_dup(l, seen, m->asker_own))) {
    /* the kernel layer decides first: the LD_PRELOAD layer asks again and gets this answer (pairing.c) */
    held_add(m->asker, held, r.action, r.action == GA_DENY ? (r.reason[0] ? r.reason : "denied by policy") : r.token,
             file);
    error = GATE_EXEC_ASK;
  } else if (r.action == GA_DENY) gate_msg("denied: ", cmd, ": ", r.reason[0] ? r.reason : "denied by policy");
  /* Escalate: the command may run, outside the sandbox even; in place it stays inside it (the LD_PRELOAD
   * layer, where it is loaded, escalates with the caller's descriptors: before the exec, or in the new
   * program's constructor with the token the daemon granted for this exec, handed over from LANDED) */
  else if (r.action == GA_RUN || r.action == GA_ESCALATE) {
    error = 0;
    x->decided.below = r.action == GA_RUN && r.below;
    int nameless = x->nameless, escalated = r.action == GA_ESCALATE && r.token[0];
    if (!nameless && lands && (r.action == GA_RUN || escalated))
      land(l, x->pid, ids_own(ids), seen, file, r.action == GA_RUN ? NULL : r.token);
    if (!nameless && lands && escalated && file->known) escalating(ids_own(ids), 1);
    /* kept only when the file is still the one read before asking (so the one the daemon judged) */
    struct stat again;
    struct gate_ident now = {0};
    int grant = r.action == GA_RUN && r.grant[0] && reusable && inputs;
    /* (a grant scoped to a process holds below it only: src/decide/reuse.ts) */
    struct gate_reuse_scope scope = {r.scope_pid, r.scope_ppid, r.scope_start};
    if (grant && stat(x->file, &again) == 0 && (gate_ident_of(&now, &again), gate_ident_eq(&now, file)))
      gate_reuse_add(l->conf.run_id, x->program, file, r.grant, r.epoch, &audit, &scope, r.grant_below);
    if (r.action == GA_RUN && r.grant[0] && r.presets) keep_presets(&l->conf, r.presets, r.epoch, &audit);
  } else gate_msg("exec gate: ", cmd, ": not run: malformed reply from the daemon (no action)", NULL);
  free(r.presets);
  gb_free(&msg);
  return error;
}

/* Whether this exec is one of the plan's own (struct launch: expect, joined): the tree root's first, then,
 * only after the tree root ran bubblewrap, bubblewrap's exec of the command. */
static int planned(const struct launch *l, const struct exec *x, int seq) {
  static int built; /* the tree root's first exec was bubblewrap's: set at seq 0, which precedes every other */
  if (seq == 0) {
    if (x->pid != l->root) return 0;
    if (l->joined && !strcmp(x->program, l->joined)) return 1;
    if (l->nexpect < 1 || strcmp(x->program, l->expect[0])) return 0;
    __atomic_store_n(&built, 1, __ATOMIC_RELEASE);
    return 1;
  }
  return seq < l->nexpect && __atomic_load_n(&built, __ATOMIC_ACQUIRE) && !strcmp(x->program, l->expect[seq]);
}

/* The exec as the LD_PRELOAD layer would ask about it, with the environment envp: the conf of the run its
 * GATE_RUN names (as), its inputs (seen), the layer's marks on it (m); and whether the new program's layer will
 * ask for it, so that a LANDED answer is left for it (land): it preloads the layer and is not marked to honour
 * the kernel layer's decision. */
static int lands_for(const struct launch *l, struct exec *x, pid_t pid, struct ids *ids, char **envp,
                     struct gate_conf *as, struct exec_seen *seen, struct marks *m) {
  *as = l->conf;
  const char *run = env_value(envp, GATE_VAR_RUN);
  if (run) as->run_id = run;
  *seen = (struct exec_seen){as, x->program, x->cwd, x->argv, envp};
  exec_marks(pid, ids, x->program, envp, m);
  return !(m->asks && m->marked) && preloads(envp, l->own_preload);
}

/* A kept grant's exec whose record this supervisor could not write (settle): the daemon is told of it as the
 * reused exec it is (tell_reused), with the environment the kernel gave the new program, which has not run yet:
 * 0, or -1 (said why) when it could not be. */
static int told_at_stop(const struct launch *l, struct exec *x, pid_t pid, char **envp) {
  char id[96], asked_id[130], cmd[512];
  workers_let_go(); /* (the daemon is told: another worker takes the next notifications meanwhile) */
  struct ids ids = ids_of(pid);
  struct gbuf msg;
  exec_request(l, x, envp, &ids, id, sizeof id, &msg);
  const char *inputs = msg.oom ? NULL : after_id(msg.p, msg.len, asked_id, sizeof asked_id);
  int told = inputs && !tell_reused(&l->conf, x->hit.grant, inputs, msg.p + msg.len);
  gb_free(&msg);
  if (told) return 0;
  gate_describe(cmd, sizeof cmd, x->argv, x->program);
  gate_msg("exec gate: ", cmd,
           ": not run: its record could not be written to the audit log, nor the daemon told of it; the process "
           "was killed",
           NULL);
  return -1;
}

/* What the LD_PRELOAD layer needs of an exec decided before its environment was read (a kept grant), settled
 * at the new program's first instruction with the environment the kernel gave it: where the new program
 * preloads the layer and is not marked to honour the kernel layer's decision, its constructor's request gets
 * this exec's Run from LANDED (as land() in settle). A spawned child's marks, which name its parent, no longer
 * show once it has its own memory: then it lands (an answer kept that nobody may take, never one withheld). */
struct later {
  const struct launch *l;
  struct exec *x;
};

static int land_later(void *ctx, pid_t pid, char **envp) {
  const struct later *w = ctx;
  const struct launch *l = w->l;
  struct exec *x = w->x;
  if (x->audit_failed && told_at_stop(l, x, pid, envp)) return -1;
  /* another thread of its group exec'd (decided as its own pid): its group's leader now, by the leader's pid */
  if (pid != x->pid) gate_reuse_exec(pid);
  if (!preloads(envp, l->own_preload)) return 0; /* no layer: a build's execs below a program */
  struct ids ids = ids_of(pid);
  struct gate_conf as;
  struct exec_seen seen;
  struct marks m;
  if (lands_for(l, x, pid, &ids, envp, &as, &seen, &m)) land(l, pid, ids_own(&ids), &seen, &x->decided.id, NULL);
  return 0;
}

/* Decide a read exec: the errno to answer it with. */
static int settle(const struct launch *l, const struct seccomp_notif *req, struct exec *x, int seq, int *expected,
                  struct later *later) {
  if (planned(l, x, seq)) {
    *expected = 1;
    return 0;
  }
  exec_file(x->pid, x->at, x->dirfd, x->path, x->program, x->file, sizeof x->file);
  int nameless = x->nameless = !strncmp(x->program, "/memfd:", 7) || strstr(x->program, " (deleted)") != NULL;
  /* a Run the daemon gave for this run's program, for this very file: answered here (reuse.c), its audit
   * record appended to the log here before the new program runs (where it cannot be, the daemon is told of the
   * exec: in ask(), or at the exec's end, told_at_stop) */
  struct gate_reuse_hit hit;
  int found, kept = kept_file(l, x, &hit, &found);
  /* nothing there: the kernel would fail the exec with ENOENT whatever was decided, so it is failed so here,
   * without asking (a program the LD_PRELOAD layer is left out of tries each PATH entry itself: gcc's
   * execvp of `as`); a file that appears meanwhile is not run by this exec (nothing was let through) */
  if (found == ENOENT && in_root(x)) return ENOENT;
  if (!kept) know_file(x);
  const struct gate_ident *file = &x->decided.id;
  int reusable = !nameless && !x->decided.script && x->argv[0] && gate_same_name(x->argv[0], x->program);
  /* the process's ids, read where they are needed: not for a kept grant's exec while the LD_PRELOAD layer has no
   * answer pending (pairing below); once it runs the new program, its process is its thread group's leader
   * (land_later) */
  struct ids ids = {.pid = x->pid, .own = 0, .parent = -1, .tgid = x->pid};
  int have_ids = !kept || pairs_any(PAIRED, 0);
  if (have_ids) ids = ids_of(x->pid);
  /* this process runs something else from now on: what was kept for execs below it ends (gate-reuse.h) */
  gate_reuse_exec(ids.tgid);
  /* Such a grant holds whatever the environment (src/decide/reuse.ts), and what the LD_PRELOAD layer needs of
   * it can wait for the new program's first instruction (land_later): unless the layer has an answer waiting
   * for this exec or its spawning parent (pairing below), the environment is not read before the answer (a
   * build's child shares its pages with its parent until it writes them: each page read copies one). */
  int waiting = pairs_any(PAIRED, x->pid) || (ids.parent > 1 && pairs_any(PAIRED, (pid_t)ids.parent));
  /* (its record is written once answered, while the kernel execs: decide) */
  if (kept && l->trace && !waiting && !gate_reuse_record(&hit, x->program, x->argv, &x->record)) {
    x->decided.below = hit.below;
    x->decided.env_unread = 1;
    x->decided.stopped = land_later;
    x->decided.ctx = later;
    x->hit = hit;
    x->audit_later = 1;
    return 0;
  }
  if (kept) gb_free(&x->record);
  if (!have_ids && (ids = ids_of(x->pid)).tgid != x->pid) gate_reuse_exec(ids.tgid);
  if (read_env(l, req, x)) return EACCES;
  exec_cwd(x);
  /* the LD_PRELOAD layer's answer for this very exec (pairing.c): the request it would have sent */
  struct gate_conf as;
  struct exec_seen seen;
  struct marks m;
  /* (the new program's constructor then honours GATE_CHECKED, or there is none: no LANDED answer needed for it) */
  int lands = lands_for(l, x, x->pid, &ids, x->envp, &as, &seen, &m);
  /* (a #! script is always asked: the daemon judges the #! lines read here, not those it read for the layer) */
  int pairable = !m.asks && !nameless && !x->decided.script;
  if (pairable && pairs_any(PAIRED, x->pid)) {
    struct gbuf same;
    const char *key = exec_inputs(&same, l, &seen, ids_own(&ids));
    int paired = key && pairs_take(PAIRED, x->pid, key, file, NULL);
    gb_free(&same);
    if (paired) return 0;
  }
  if (pairable && spawned_pair(l, ids.parent, x->pid, &seen, file)) return 0;
  if (kept && !gate_reuse_audit(&hit, x->cwd, x->program, x->argv)) {
    x->decided.below = hit.below;
    if (lands) land(l, x->pid, ids_own(&ids), &seen, file, NULL);
    return 0;
  }
  return ask(l, x, &seen, &ids, &m, lands, reusable, kept ? &hit : NULL);
}

/* An exec the follow cannot seize (why: the errno of PTRACE_SEIZE): EACCES, said why (its tracer, when it has one). */
static int unfollowable(const struct exec *x, int why) {
  if (why == ESRCH) return EACCES; /* it is going (killed while it waited): nothing to say */
  char cmd[512], path[64], buf[4096], tail[256];
  gate_describe(cmd, sizeof cmd, x->argv, x->program);
  snprintf(path, sizeof path, "/proc/%d/status", (int)x->pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  buf[n > 0 ? n : 0] = 0;
  const char *t = strstr(buf, "\nTracerPid:");
  long tracer = t ? strtol(t + 11, NULL, 10) : 0;
  if (tracer > 0)
    snprintf(tail, sizeof tail,
             "it is traced by another process (pid %ld: a debugger or strace in the run?), which could change what it "
             "runs after the check; an exec under a tracer is refused",
             tracer);
  else
    snprintf(tail, sizeof tail, "this user may not trace it (%s), so what the kernel runs could not be checked",
             strerror(why));
  gate_msg("exec gate: ", cmd, ": not run: it cannot be followed to its exec: ", tail);
  return EACCES;
}

void decide(const struct launch *l, struct seccomp_notif *req, int seq) {
  struct exec x = {.pid = (pid_t)req->pid};
  struct later later = {l, &x};
  int expected = 0;
  /* (the sandbox's host-socket masks first: nothing inside it goes on before they are in place, masks.c) */
  int error = read_exec(l, req, &x) || masks_ready(l, req, seq, x.program) ? EACCES
                                                                           : settle(l, req, &x, seq, &expected, &later);
  /* after the exec: the kernel reads path and argv again once answered; follow it (follow.c) */
  int follow = l->trace && error == 0 && !expected;
  /* (another worker may still follow this process's previous exec: follow_begin waits for it) */
  if (follow && !follow_begin(x.pid)) { /* more followed execs than workers: never unfollowed */
    error = EACCES;
    follow = 0;
  }
  int traced = follow && notif_valid(l, req->id) && ptrace(PTRACE_SEIZE, x.pid, 0, PTRACE_O_TRACEEXEC) == 0;
  /* not followed (traced by another process already: a debugger in the run, whose rewrite after the check
   * nothing would see; or a process this user may not trace): refused, fail closed */
  int why = errno;
  if (follow && !traced && notif_valid(l, req->id)) error = unfollowable(&x, why);
  notif_respond(l, req->id, error);
  /* a kept grant's record, while the kernel execs: before the new program runs (after_exec holds it) */
  if (traced && x.audit_later) {
    exec_cwd(&x);
    x.audit_failed = gate_reuse_append(&x.hit, x.cwd, &x.record) != 0;
  }
  if (x.audit_later) gb_free(&x.record);
  if (traced) after_exec(x.pid, &x.decided, x.path, x.argv, x.envp, workers_keep_turn(l));
  if (follow) follow_end(x.pid);
  free_vec(x.decided.kargv);
  free(x.path);
  free_vec(x.argv);
  free_vec(x.envp);
}
