/*
 * The parts of gate-launch (the kernel layer's launcher and supervisor; ../gate-launch.h says what it does),
 * one file per concern, and the small API each offers the others:
 *   front.c      the entry (gate_launch): arguments, the three processes, the front's signal relay
 *   tree.c       the tree root: installs the filter (filter.c), the guard, Landlock, execs the program
 *   masks.c      the host sockets' masks of a sandbox, mounted in it before its first exec goes on
 *   filter.c     the seccomp filter and the hand-over of its listener
 *   supervise.c  the supervisor's main loop: children reaped, the front told, the end
 *   workers.c    the notifications: taken by a pool of worker threads, answered
 *   decide.c     one exec: read, paired or reused or asked, answered, followed
 *   target.c     what an exec names: its program, its file, its marks
 *   script.c     a #! script's interpreter chain, as the kernel reads it
 *   follow.c     after the exec: ptrace to the new program's first instruction, compared with what was decided
 *   memory.c     reading another process's memory and /proc files
 *   relay.c      the LD_PRELOAD layer's requests through the supervisor: its sockets, its thread, answers sent
 *   pending.c    the requests forwarded to the daemon and their replies (pairing each Run with its exec)
 *   pairs.c      the tables of answers kept for pairing (one lock, a TTL)
 *   pairing.c    answers given from those tables, and the inputs an exec is paired by
 *   reuse.c      answers reused from the daemon's grants at the relay, and the notice that tells the daemon
 * Tables live in the file that owns them, behind its functions; what every part reads (struct launch) is
 * set by the front before any thread starts and read-only after.
 * Trust boundary: everything read from the tree (memory, /proc, requests on the relay socket) may come from a
 * hostile process: bounded, and any failure to read or to ask answers EACCES (fail closed).
 */
#ifndef GATE_LAUNCH_PARTS_H
#define GATE_LAUNCH_PARTS_H

#include "../gate-proto.h"
#include "../gate-reuse.h"
#include "../gate-join.h"

#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* Notifications decided at once; more wait in the kernel's queue. */
#define MAX_WORKERS 64
/* Bounds on what is read from a process: the kernel's own limits are 128 KiB per string and about a
 * quarter of the stack limit in all, at most 6 MiB; at 10 bytes a string at least ("1", its NUL and its
 * pointer) that is some 630,000 strings, so the count stays above what the kernel can accept. */
#define MAX_STRING (128 * 1024)
#define MAX_STRINGS (1024 * 1024)
#define MAX_TOTAL (8 * 1024 * 1024)
/* A remembered answer (pairing, held, landed) is used once and kept this long. */
#define PAIR_TTL_MS 30000
/* The supervisor's parent-death signal (blocked, read from its signalfd). */
#define FRONT_GONE (SIGRTMIN + 1)
/* A worker's follow has waited past its bound (follow.c): sent by its own timer to that thread alone, which
 * leaves it unblocked; its handler does nothing (the wait it ends returns EINTR). */
#define FOLLOW_BOUND (SIGRTMIN + 2)

/* The signals the front passes on to the tree root (generated: src/exec/signals.ts), 0-terminated. */
extern const int launch_forwarded[];
/* Notes which of the signals the front and the supervisor take for themselves the launcher was started
 * with ignored (tree.c): the tree root gets them back as they were. Called first thing in gate_launch. */
void launch_note_dispositions(void);

/* ---------- the run (front.c): read-only once the supervisor's threads start ---------- */
struct launch {
  struct gate_conf conf;
  /* the gate's own LD_PRELOAD and PATH entries, not reported as the caller's (libgate.so, bin/ beside us) */
  char own_preload[PATH_MAX], own_path[PATH_MAX];
  /* the first execs are the plan's own (decided by pre-flight): the tree root's exec of PROGRAM, then
   * (under bubblewrap) bwrap's exec of the command after `--`, then (network "rules") the bridge's exec of
   * its command (front.c, bridged_command); or, joining held session mounts, the tree root's exec of that
   * command itself (joined), bubblewrap's when the mounts changed as it started */
  pid_t root;
  const char *expect[3];
  int nexpect;
  const char *joined;
  int listener;
  struct seccomp_notif_sizes sizes;
  int trace; /* execs are followed to their end with ptrace (follow.c); needs the children lists */
  const char *presets; /* the plan's presets (--presets), kept once the epoch file is mapped; NULL: none */
};

/* ---------- filter.c ---------- */
/* Install the exec filter in this process (no_new_privs first): its listener, or -1 (errno; GATE_NESTED_ERRNO
 * inside a gated tree already). */
int filter_install(void);
/* The listener to the supervisor over sock: 0, or -1 (errno). */
int filter_send(int sock, int fd);
/* The filter could not be installed (errno e): told to the supervisor ('N' nested, else 'E' and e). */
void filter_send_refusal(int sock, int e);
/* The listener, or -1 with *why: the tree root's errno (> 0), -1 nested, 0 nothing arrived. */
int filter_recv(int sock, int *why);

/* ---------- memory.c ---------- */
#define PAGE 4096
#define CACHED_PAGES 64
/* One exec's reading of a process's memory: pages kept for the rest of the reading. */
struct proc {
  pid_t pid; /* as the supervisor sees it */
  int error; /* errno of the first read that failed, 0 when none did */
  size_t total; /* bytes of strings read, bounded by MAX_TOTAL */
  int used, next;
  uint64_t at[CACHED_PAGES];
  char (*page)[PAGE]; /* the worker's CACHED_PAGES pages, kept by the thread */
};
/* A NUL-terminated string at addr (malloc'd); NULL when unreadable or over a bound. */
char *read_str(struct proc *p, uint64_t addr);
/* A pointer at addr: 0, or -1 when unreadable. */
int read_ptr(struct proc *p, uint64_t addr, uint64_t *out);
/* A NULL-terminated array of strings at addr (argv, envp; NULL addr: empty). *ok = 1 when read whole; the
 * strings read so far either way (NULL only when out of memory). */
char **read_vec(struct proc *p, uint64_t addr, int *ok);
/* count (at most 4) such arrays at once, each as read_vec reads it into out[i] and ok[i], their strings' pages
 * read together: 0, or -1 when out of memory (nothing is left in out). */
int read_vecs(struct proc *p, int count, const uint64_t *addr, char ***out, int *ok);
/* Read ahead, in one system call, the pages holding these addresses that are not kept yet (as many as there
 * is room for); a page that cannot be read is left to the reading that needs it, which fails there. */
void proc_prefetch(struct proc *p, const uint64_t *addrs, size_t n);
/* The reading is over (the pages stay with the thread for its next one). */
void proc_done(struct proc *p);
void free_vec(char **v);
size_t vec_len(char **v);
int vec_eq(char **a, char **b);
/* A /proc/<pid>/<what> file of NUL-terminated strings (cmdline, environ) as a vector; NULL when unreadable. */
char **proc_strings(pid_t pid, const char *what);
/* A symbolic link's target in out (n bytes): 0, or -1 when unreadable or too long. */
int read_link(const char *path, char *out, size_t n);
/* A process's pids: own as it knows itself (innermost namespace; pid when unknown; 0 until read: ids_own),
 * parent as the supervisor sees it (-1 when unknown), its thread group's (the process a thread belongs to; pid
 * when unknown), and pid, as the supervisor sees it. */
struct ids {
  long own, parent, tgid;
  pid_t pid;
};
struct ids ids_of(pid_t pid);
/* ids->own, read now if it was not yet. */
long ids_own(struct ids *ids);
long own_pid(pid_t pid);
/* The argv and envp of a process stopped at PTRACE_EVENT_EXEC, read from its first stack: 0, or -1. */
int first_stack(struct proc *p, char ***argv, char ***envp, uint64_t *envp_at);
/* Rewrite the GATE_ASK mark among envp (read from the stack at envp_at, in the same reading p) into GATE_OWN in
 * the process's memory: 0, or -1. */
int mark_below(struct proc *p, uint64_t envp_at, char **envp);

/* ---------- pairs.c ---------- */
enum pair_table {
  PAIRED, /* the LD_PRELOAD layer's Run (or Escalate) answers, for the exec the kernel reports next */
  LANDED, /* the kernel layer's own, for the new program's constructor's request */
};
long mono_ms(void);
/* Keep key (malloc'd, taken) and token (malloc'd or NULL, taken) for pid and the file id. */
void pairs_add(enum pair_table t, pid_t pid, char *key, const struct gate_ident *id, char *token);
/* Take the entry for pid and key (and the file, when the entry knows it): 1 when it was there in time, with
 * its token in *token (NULL: Run) when token is not NULL. */
int pairs_take(enum pair_table t, pid_t pid, const char *key, const struct gate_ident *id, char **token);
/* Whether the table holds an entry in time for pid (0: for any process). */
int pairs_any(enum pair_table t, pid_t pid);
/* A Deny (text: its reason) or Escalate (text: its token) of a marked exec, held for its layer's request. */
void held_add(pid_t pid, char *key, int action, const char *text, const struct gate_ident *id);
/* The held decision for pid and exactly these inputs (n bytes), taken: its action (-1: none), *text
 * (malloc'd) and the file it was for. */
int held_take(pid_t pid, const char *inputs, size_t n, char **text, struct gate_ident *file);

/* ---------- relay.c ---------- */
/* Where a reply goes: the socket the request came with (SCM_RIGHTS), else the sender's bound address. */
struct peer {
  int fd;
  struct sockaddr_un addr;
  socklen_t len;
};
/* The relay's two socket paths in the client folder (relay_path): 0, or -1 with err. */
int relay_name(const struct launch *l, char *err, size_t errlen);
/* The relay's two sockets, bound at those paths: 0, or -1 with err. */
int relay_open(char *err, size_t errlen);
/* The relay thread: 0, or -1 (then nothing is paired: every exec is asked; the sockets are gone). */
int relay_start(void);
/* The request side's path (GATE_KERNEL_SOCK of the tree) and both descriptors (-1 when closed). */
const char *relay_path(void);
int relay_ksock(void);
int relay_dsock(void);
/* Close both sockets in this process (the tree root). */
void relay_close(void);
/* Remove the sockets' files and the escalation files (the supervisor's end). */
void relay_remove(void);
/* One datagram from the daemon side's socket to a socket of the daemon's at path, not waiting: 0 when sent. */
int relay_notify(const char *path, const char *msg, size_t n);
void peer_send(const struct peer *to, const char *msg, size_t n);
void peer_close(struct peer *to);
/* An exec request answered by the supervisor itself: Run, or Escalate with token. */
void answer_here(const struct peer *to, const char *id, const char *token);
/* <GATE_KERNEL_SOCK>.e<own>: an Escalate let go on in place, whose token its constructor asks for. */
void escalating(long own, int on);

/* ---------- pending.c (the relay thread's) ---------- */
/* A request from the tree (pid as the supervisor sees it): answered here, or forwarded to the daemon from
 * dsock; from's socket is closed, or kept until the final reply. */
void pending_request(const struct launch *l, int dsock, const char *msg, size_t n, struct peer *from, pid_t pid);
/* A reply from the daemon: passed back to its sender, an exec's Run paired with its pid. */
void pending_reply(const char *msg, size_t n);

/* ---------- pairing.c ---------- */
/* The text after a request's id (its decision inputs), the id copied into id; NULL if it is not a request. */
const char *after_id(const char *msg, size_t n, char *id, size_t idn);
/* A request from pid answered from a held decision, or from the LANDED table: 1; else 0. */
int held_answer(const char *id, const char *rest, const char *end, pid_t pid, const struct peer *to);
int landed_answer(const char *id, const char *rest, const char *end, pid_t pid, const struct peer *from);
/* What an exec is paired by: its request after the id, as the LD_PRELOAD layer builds it (as: the run's
 * configuration as the process carries it; pid as it knows itself). */
struct exec_seen {
  const struct gate_conf *as;
  const char *program, *cwd;
  char **argv, **envp;
};
/* The inputs in k (gb_free it); NULL when out of memory. */
const char *exec_inputs(struct gbuf *k, const struct launch *l, const struct exec_seen *x, long pid);
/* The same, copied (NULL: no memory). */
char *exec_inputs_dup(const struct launch *l, const struct exec_seen *x, long pid);
/* posix_spawn, system(), popen(): the exec'ing task shares its parent's memory and the parent's layer asked. */
int spawned_pair(const struct launch *l, long parent, pid_t pid, const struct exec_seen *x,
                 const struct gate_ident *file);
/* The kernel layer let pid exec file on the daemon's Run or Escalate (token): kept in LANDED. */
void land(const struct launch *l, pid_t pid, long own, const struct exec_seen *x, const struct gate_ident *id,
          const char *token);

/* ---------- reuse.c ---------- */
/* A request's run, program and argv[0] (plain text only: a base64 request is left to the daemon). */
struct asked {
  char *run, *program, *argv0;
  int exec, other;
};
void asked_free(struct asked *a);
/* The file a process names by an absolute program path, as it sees it (unknown for its own names). */
void file_of(pid_t pid, const char *program, struct gate_ident *id);
/* Tell the daemon of an exec answered with grant (rest: the request's text after its id): 0 when sent. */
int tell_reused(const struct gate_conf *c, const char *grant, const char *rest, const char *end);
/* The programs' Runs the daemon handed over with a grant at epoch (audit: how that grant's reuses are
 * audited): kept for this run, each for the very file the daemon read (gate-reuse.c holds them). */
void keep_presets(const struct gate_conf *c, const struct gate_presets *ps, unsigned long long epoch,
                  const struct gate_reused_audit *audit);
/* The presets the daemon handed over with the run's plan (the launcher's --presets: an exec reply's text whose
 * "reuse" carries them, its epoch and audit): kept as keep_presets keeps a grant's; a text that is no such reply
 * keeps nothing (every exec is then asked). */
void keep_plan_presets(const struct gate_conf *c, const char *reply);
/* A request of the LD_PRELOAD layer answered from a kept grant: 1, or 0 with what it asks in *a, *file. */
int reused_answer(const struct gate_conf *c, const char *msg, size_t n, const char *id, const char *rest, pid_t pid,
                  const struct peer *from, struct asked *a, struct gate_ident *file);

/* ---------- target.c ---------- */
/* The program an exec names, as the process sees it (absolute): 0, or -1 when it cannot be told. */
int exec_program(pid_t pid, int at, int dirfd, const char *path, int flags, const char *cwd, char *out, size_t n);
/* The file the exec runs as the supervisor can open it (/proc/<pid>/...), and the form the daemon reads. */
void exec_file(pid_t pid, int at, int dirfd, const char *path, const char *program, char *out, size_t n);
void program_file(pid_t pid, const char *file, const char *program, char *out, size_t n);
/* The marks an exec carries (GATE_ASK, GATE_CHECKED) that name this program and this process (or, for a
 * spawn, the parent whose memory it shares): who asks for a held answer (*asker, *asker_own). */
struct marks {
  int asks, marked;
  pid_t asker;
  long asker_own;
};
void exec_marks(pid_t pid, struct ids *ids, const char *program, char **envp, struct marks *m);

/* ---------- script.c ---------- */
/* The kernel's argv prefix for the #! script open on fd (named path by the exec) and the file it finally
 * runs: 0, or -1 when it cannot be read so. */
int script_chain(pid_t pid, const char *cwd, int fd, const char *path, char ***out, struct gate_ident *final);

/* ---------- follow.c ---------- */
/* What was decided: the file (id.known: it could be told); script: it starts with #!; kargv: the argv the
 * kernel builds in front of argv[1..] (NULL: unreadable, and the check after the exec fails); interp: the
 * file that runs in the end. */
struct decided {
  struct gate_ident id;
  int script;
  char **kargv;
  struct gate_ident interp;
  /* every exec below the new program is below a program running its own files (the daemon's below_program):
   * its GATE_ASK mark becomes GATE_OWN after the exec, and its LD_PRELOAD layer leaves itself out of them */
  int below;
  /* decided without the environment (a kept grant holds whatever it is): the new program's is not compared,
   * and at its first instruction `stopped` is called with it (what the LD_PRELOAD layer needs is settled there,
   * and a record not written is told); nonzero: the process is killed (it said why) */
  int env_unread;
  int (*stopped)(void *ctx, pid_t pid, char **envp);
  void *ctx;
};
/* Wait until no other worker follows pid; then this one does (1), or 0 when no slot was free. */
int follow_begin(pid_t pid);
void follow_end(pid_t pid);
/* Follow a seized pid's exec to its end; kill it if the kernel took anything but what was decided (envp: NULL
 * when the decision did not read it). hold: the calling worker keeps the receiving role through the wait
 * (workers_keep_turn), which is then bounded (FOLLOW_BOUND); else the role is let go first. */
void after_exec(pid_t pid, const struct decided *d, const char *path, char **argv, char **envp, int hold);

/* ---------- decide.c ---------- */
/* One exec: read what it names, pair or reuse or ask, answer (EACCES unless the daemon said it may run). */
void decide(const struct launch *l, struct seccomp_notif *req, int seq);

/* ---------- workers.c ---------- */
/* The pool (one waiting worker, up to MAX_WORKERS): 0, or -1 when no thread could start (then the caller
 * takes the notifications itself with workers_take_one). */
int workers_start(const struct launch *l);
/* One notification taken and decided by the calling thread: 0, or -1 (errno). */
int workers_take_one(const struct launch *l, struct seccomp_notif *req);
/* The calling worker will wait for something else than its exec's end: the next notification may be taken by
 * another. */
void workers_let_go(void);
/* Whether the calling worker keeps the receiving role through the follow it is about to wait in: it holds it
 * and no other exec is waiting (1); else the role is let go (0). */
int workers_keep_turn(const struct launch *l);
/* Wait for the notifications being answered. */
void workers_drain(void);
void notif_respond(const struct launch *l, uint64_t id, int error);
int notif_valid(const struct launch *l, uint64_t id);

/* ---------- supervise.c ---------- */
/* Supervise until no process of the tree is left; report the root's wait status on status_w. */
_Noreturn void supervise(const struct launch *l, const struct gate_join *j, int status_w, int sigfd);
/* Close every descriptor above 2 but keep (sorted ascending, all > 2). */
void close_all_but(const int *keep, int n);
/* The front is gone before the command ended: kill the command's process group too. */
void kill_command_group(pid_t root);
/* The held mounts changed (gate-join.h): the daemon is told, one datagram. */
void tell_stale(const struct launch *l, const struct gate_join *j);

/* ---------- masks.c ---------- */
/* Whether path names bubblewrap. */
int launch_is_bwrap(const char *path);
/* The plan's host-socket masks (../gate-masks.h), taken from bubblewrap's options before anything is forked;
 * whether the supervisor mounts them (not for a setuid bubblewrap run by another user: bubblewrap does). */
void masks_plan(char *const prog[]);
/* Their paths (NULL-terminated; NULL when the program is not bubblewrap), *n of them. */
char *const *masks_paths(int *n);
/* The tree root's bubblewrap argv: without the masks when the supervisor mounts them (filtered: it sees the
 * tree's execs), else without those of sockets gone by now; NULL when out of memory. */
char **masks_argv(char *const argv[], int filtered);
/* Before an exec of the tree (seq: its number; program: what it names) goes on: 0 when the sandbox's masks
 * are in place, mounted now into its mount namespace for the first exec after the tree root's own; -1 when
 * they could not be (said why): that exec and every later one are refused. */
int masks_ready(const struct launch *l, const struct seccomp_notif *req, int seq, const char *program);

/* ---------- tree.c ---------- */
/* The tree root: filter, guard, scope, join, exec. Never returns. outer_ksock: the enclosing tree's
 * GATE_KERNEL_SOCK (NULL: none), for a nested launcher's tree. */
_Noreturn void tree_root(struct gate_join *j, int sock, const char *path, char *const argv[], const sigset_t *oldmask,
                         const char *outer_ksock);

#endif
