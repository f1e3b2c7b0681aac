/*
 * gate-launch: the kernel layer of the exec gate (docs/exec-gate.md, "The kernel layer").
 *
 *   gate-launch [--session-ns PID:PIDNS:NETNS] [--argv0 NAME] PROGRAM [ARGS...]
 *
 * Starts PROGRAM (bubblewrap or bash, as the run plan says) under a seccomp filter that hands every
 * execve and execveat of its whole process tree to a supervisor as a user notification, and the
 * supervisor asks the daemon's one decision engine (the request channel's ExecRequest, "layer":"kernel")
 * before the kernel may go on. Three processes:
 *
 *   front (this pid: what gate-sh, the pty host or the escalation runner spawned and signals)
 *     └─ supervisor (forked before any filter exists: never filtered; a child subreaper, so every process
 *        │            of the tree stays its descendant and its memory stays readable under Yama;
 *        │            not dumpable: the tree can neither ptrace it nor open its /proc files)
 *        └─ tree root (sets no_new_privs, installs the filter, passes the listener to the supervisor over
 *                      a socketpair, closes its own copy, execs PROGRAM)
 *
 * An exec let through is followed to its end with ptrace, and killed before its first instruction if the
 * kernel took another program or other arguments than were checked ("after the exec").
 *
 * The front forwards signals to the tree root and exits with its status. Trust boundary: everything the
 * supervisor reads from the tree (paths, argv, environment, descriptors) is data from a process that may be
 * hostile; it is bounded, and any failure to read or to ask answers EACCES (fail closed). Statically linked
 * so that LD_PRELOAD (the LD_PRELOAD layer, in the run's environment) never loads into it.
 */
#define _GNU_SOURCE
#include "gate-proto.h"
#include "gate-proc.h"
#include "gate-reuse.h"
#include "gate-join.h"
#include "gate-guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <elf.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define GATE_AUDIT_ARCH AUDIT_ARCH_X86_64
#define COMPAT_AUDIT_ARCH AUDIT_ARCH_I386
#define COMPAT_EXECVE 11
#define COMPAT_EXECVEAT 358
#define COMPAT_SECCOMP 354
#define X32_BIT 0x40000000u
#elif defined(__aarch64__)
#define GATE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_AUDIT_ARCH AUDIT_ARCH_ARM
#define COMPAT_EXECVE 11
#define COMPAT_EXECVEAT 387
#define COMPAT_SECCOMP 383
#else
#error "gate-launch knows the system call numbers of x86_64 and aarch64 only"
#endif

/* The errno a nested launcher gets when it asks for a second listener: it is already inside a gated tree
 * whose supervisor sees every exec (gate-common.h). */
#define NESTED_ERRNO GATE_NESTED_ERRNO
_Static_assert(GATE_NESTED_ERRNO == EXDEV, "GATE_NESTED_ERRNO is EXDEV");
/* Notifications decided at once; more wait in the kernel's queue. */
#define MAX_WORKERS 64
/* Bounds on what is read from a process: the kernel's own limits are 128 KiB per string and about a
 * quarter of the stack limit in all, at most 6 MiB; at 10 bytes a string at least ("1", its NUL and its
 * pointer) that is some 630,000 strings, so the count stays above what the kernel can accept. */
#define MAX_STRING (128 * 1024)
#define MAX_STRINGS (1024 * 1024)
#define MAX_TOTAL (8 * 1024 * 1024)

/* The supervisor's parent-death signal (blocked, read from its signalfd). */
#define FRONT_GONE (SIGRTMIN + 1)

static const int FORWARDED[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, 0 };

static void die126(const char *a, const char *b, const char *c) {
  gate_msg("exec gate: ", a, b, c);
  _exit(126);
}

/* ---------- the filter ---------- */

#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))

/* Jump offsets from instruction `at` to labels (BPF jumps are relative to the next instruction). */
enum { L_COMPAT = 7, L_CHECK = 11, L_ALLOW = 15, L_NOTIF = 16, L_NESTED = 17, L_DENY = 18 };
#define TO(label, at) ((label) - (at) - 1)

static int install_filter(void) {
  struct sock_filter f[] = {
    /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, GATE_AUDIT_ARCH, 0, TO(L_COMPAT, 1)),
    /* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef X32_BIT
    /* 3: x32 system calls are refused altogether (the supervisor reads no x32 pointers) */
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, TO(L_DENY, 3), 0),
#else
    /* 3 */ BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
    /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, TO(L_NOTIF, 4), 0),
    /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, TO(L_NOTIF, 5), 0),
    /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_seccomp, TO(L_CHECK, 6), TO(L_ALLOW, 6)),
    /* 7: compat (i386 on x86_64, arm32 on aarch64): its execs are refused (32-bit pointers unread) */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_EXECVE, TO(L_DENY, 8), 0),
    /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_EXECVEAT, TO(L_DENY, 9), 0),
    /* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_SECCOMP, 0, TO(L_ALLOW, 10)),
    /* 11: seccomp(SECCOMP_SET_MODE_FILTER, flags with NEW_LISTENER): a listener of the tree's own would
     * take precedence over the supervisor's for the same syscalls, so it is refused */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
    /* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_SET_MODE_FILTER, 0, TO(L_ALLOW, 12)),
    /* 13 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
    /* 14 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SECCOMP_FILTER_FLAG_NEW_LISTENER, TO(L_NESTED, 14), TO(L_ALLOW, 14)),
    /* 15 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 16 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
    /* 17 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | NESTED_ERRNO),
    /* 18 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
  };
  struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
  const char *sim = getenv("GATE_TEST_SECCOMP");
  /* test hook: behave as a kernel without user notification (it can only make the run fail) */
  if (sim && !strcmp(sim, "unavailable")) { errno = EINVAL; return -1; }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

/* ---------- passing the listener ---------- */

static int send_fd(int sock, int fd) {
  char byte = 'L';
  struct iovec iov = { &byte, 1 };
  union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
  struct msghdr m = { 0 };
  m.msg_iov = &iov; m.msg_iovlen = 1;
  m.msg_control = u.buf; m.msg_controllen = sizeof u.buf;
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET; c->cmsg_type = SCM_RIGHTS; c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* The listener, or -1 with *why: an errno from the tree root ('E' + errno) when it could not install. */
static int recv_fd(int sock, int *why) {
  char byte = 0;
  int e = 0;
  struct iovec iov[2] = { { &byte, 1 }, { &e, sizeof e } };
  union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
  struct msghdr m = { 0 };
  m.msg_iov = iov; m.msg_iovlen = 2;
  m.msg_control = u.buf; m.msg_controllen = sizeof u.buf;
  ssize_t n;
  do n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC); while (n < 0 && errno == EINTR);
  *why = 0;
  if (n <= 0) return -1;
  if (byte == 'E' || byte == 'N') { *why = byte == 'N' ? -1 : e; return -1; }
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  if (byte != 'L' || !c || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

/* ---------- reading the notifying process ---------- */

/* The process's memory is read a page at a time and each page kept for the rest of this exec's reading:
 * argv and envp strings lie close together (a stack, or a few heap pages), so an exec costs a few reads
 * instead of two per string (each read walks the remote page tables). The reads are process_vm_readv, not
 * /proc/<pid>/mem: no file to open and close per exec; the kernel asks the same ptrace access of both. The
 * pid cannot name another process meanwhile: the notification is checked still valid after the reads
 * (the process is still waiting in its exec, so it was alive, and its pid its own, all along). */
#define PAGE 4096
#define CACHED_PAGES 16

struct proc {
  pid_t pid;   /* as the supervisor sees it */
  int error;   /* errno of the first read that failed, 0 when none did */
  size_t total;
  int used, next;
  uint64_t at[CACHED_PAGES];
  char (*page)[PAGE]; /* the worker's CACHED_PAGES pages (THREAD_PAGES) */
};

/* Each worker keeps its page buffer for every exec it reads (workers are kept: no allocation per exec). */
static __thread char (*THREAD_PAGES)[PAGE];

/* The page holding addr (NULL when unmapped or unreadable). */
static const char *page_of(struct proc *p, uint64_t addr) {
  uint64_t base = addr & ~(uint64_t)(PAGE - 1);
  for (int i = 0; i < p->used; i++) if (p->at[i] == base) return p->page[i];
  if (!p->page && !(p->page = THREAD_PAGES ? THREAD_PAGES : (THREAD_PAGES = malloc(CACHED_PAGES * (size_t)PAGE)))) return NULL;
  int slot = p->used < CACHED_PAGES ? p->used++ : (p->next++ % CACHED_PAGES);
  struct iovec here = { p->page[slot], PAGE }, there = { (void *)(uintptr_t)base, PAGE };
  if (process_vm_readv(p->pid, &here, 1, &there, 1, 0) != PAGE) {
    if (!p->error) p->error = errno ? errno : EFAULT;
    p->at[slot] = 1; /* 1: no page's address */
    return NULL;
  }
  p->at[slot] = base;
  return p->page[slot];
}

static void proc_done(struct proc *p) {
  p->page = NULL; /* the thread's, kept */
}

/* A NUL-terminated string at addr (it may end just before an unmapped page). */
static char *read_str(struct proc *p, uint64_t addr) {
  struct gbuf b; gb_init(&b);
  for (;;) {
    const char *pg = page_of(p, addr);
    if (!pg) { gb_free(&b); return NULL; }
    size_t off = addr & (PAGE - 1), room = PAGE - off;
    const char *z = memchr(pg + off, 0, room);
    gb_put(&b, pg + off, z ? (size_t)(z - pg - off) : room);
    if (b.oom || b.len > MAX_STRING) { gb_free(&b); return NULL; }
    if (z) break;
    addr += room;
  }
  if (!b.p) gb_puts(&b, "");
  p->total += b.len + 1;
  if (b.oom || p->total > MAX_TOTAL) { gb_free(&b); return NULL; }
  return b.p;
}

/* A pointer at addr (8-byte aligned in every ABI we read; an unaligned one is read across pages). */
static int read_ptr(struct proc *p, uint64_t addr, uint64_t *out) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) {
    const char *pg = page_of(p, addr + (uint64_t)i);
    if (!pg) return -1;
    b[i] = (unsigned char)pg[(addr + (uint64_t)i) & (PAGE - 1)];
  }
  memcpy(out, b, 8);
  return 0;
}

static void free_vec(char **v) {
  if (!v) return;
  for (char **s = v; *s; s++) free(*s);
  free(v);
}

/* A NULL-terminated array of strings at addr (argv, envp); a NULL pointer is an empty array. */
static char **read_vec(struct proc *p, uint64_t addr, int *ok) {
  size_t n = 0, cap = 16;
  char **v = calloc(cap + 1, sizeof *v);
  *ok = 0;
  if (!v) return NULL;
  if (!addr) { *ok = 1; return v; }
  for (;;) {
    uint64_t ptr;
    if (read_ptr(p, addr + 8 * n, &ptr)) break;
    if (!ptr) { *ok = 1; break; }
    if (n >= MAX_STRINGS) break;
    if (n == cap) {
      char **w = realloc(v, (cap * 2 + 1) * sizeof *v);
      if (!w) break;
      v = w; cap *= 2;
    }
    char *s = read_str(p, ptr);
    if (!s) break;
    v[n++] = s;
    v[n] = NULL;
  }
  v[n] = NULL;
  return v;
}

static int read_link(const char *path, char *out, size_t n) {
  ssize_t l = readlink(path, out, n - 1);
  if (l < 0 || (size_t)l >= n - 1) return -1;
  out[l] = 0;
  return 0;
}

/* A process's pids, from one read of /proc/<pid>/status: own is the pid as the process knows itself
 * (innermost namespace: what the LD_PRELOAD layer reports; pid when unknown), parent its parent's as the
 * supervisor sees it (-1 when unknown). */
struct ids { long own, parent; };

static struct ids ids_of(pid_t pid) {
  struct ids r = { pid, -1 };
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return r;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return r;
  buf[n] = 0;
  char *pp = strstr(buf, "\nPPid:");
  if (pp) r.parent = strtol(pp + 6, NULL, 10);
  char *l = strstr(buf, "\nNSpid:");
  if (!l) return r;
  l += 7;
  for (;;) {
    while (*l == ' ' || *l == '\t') l++;
    if (*l < '0' || *l > '9') break;
    r.own = strtol(l, &l, 10);
  }
  return r;
}

static long own_pid(pid_t pid) { return ids_of(pid).own; }

/* ---------- the supervisor ---------- */

static struct {
  int listener;
  struct seccomp_notif_sizes sizes;
  struct gate_conf conf;
  char own_preload[PATH_MAX], own_path[PATH_MAX];
  /* the first execs are the plan's own (decided by pre-flight): the tree root's exec of PROGRAM, then
   * (under bubblewrap) bwrap's exec of the command after `--` */
  pid_t root;
  const char *expect[2];
  int nexpect;
  pthread_mutex_t lock;
  pthread_cond_t freed;
  int workers;
  /* the relay (see "pairing" below) */
  int ksock, dsock;
  char kpath[108], dpath[108];
  /* execs are followed to their end with ptrace (see "after the exec"); needs the children lists */
  int trace;
} S;

/* ---------- pairing: one decision per exec ----------
 *
 * The LD_PRELOAD layer's requests reach the daemon through this supervisor (GATE_KERNEL_SOCK, a datagram
 * socket in the client folder): the supervisor learns the sender's pid from the kernel (SCM_CREDENTIALS,
 * in its own pid namespace: the pid the notification names), forwards the request and relays every reply
 * back. An answer Run is remembered for that pid with the request's decision inputs (the request text after
 * its id: run, program, argv, cwd, pid, code-loading variables). When the kernel then stops that pid in
 * execve, the supervisor builds the same text from what it reads itself in the process's memory; if it is
 * identical, the exec continues without asking again. A remembered answer is used once and kept 30 s. A
 * request forged from inside the run can only pair an exec the daemon has just answered Run for with
 * exactly these inputs; anything that does not match is asked like any other exec.
 *
 * Two more routes each exec would otherwise be decided twice by:
 *  - posix_spawn, system() and popen(): the layer asks from the parent, and glibc's child, made with
 *    clone(CLONE_VM|CLONE_VFORK), execs. An exec whose own pid has no pair is tried once more as its
 *    parent's (PPid), only when the exec'ing task shares the parent's address space (kcmp KCMP_VM: a vfork
 *    or CLONE_VM child, whose memory is the parent's), with the parent's pid in the inputs, as its request
 *    said. The inputs are still read from the exec'ing task and must match exactly.
 *  - an exec the layer did not see (a raw execve syscall, a static parent keeping LD_PRELOAD): the kernel
 *    layer asks, and the new program's constructor would ask again. The daemon's Run (or Escalate, with the
 *    token it granted) for the kernel layer is remembered for that pid ("landed", 30 s, once) with the
 *    inputs and the file's device and inode; the constructor's request from that pid (SCM_CREDENTIALS),
 *    naming the same inputs and a program that is the file the kernel ran (/proc/<pid>/exe, which is the
 *    file decided), gets that answer here. It only spares the new program's own check of an exec the kernel
 *    layer has already let through; it pairs nothing (the next exec is asked as usual).
 * An Escalate is paired like a Run: the kernel layer lets it go on in place either way (the LD_PRELOAD
 * layer escalates, with the caller's descriptors). */

#define MAX_PAIRS 1024
#define MAX_PENDING 1024
#define PAIR_TTL_MS 30000

/* id: the file the answer was given for (unknown: any; the LD_PRELOAD layer's program could not be told) */
struct pair { pid_t pid; long expires; char *key; struct gate_ident id; char *token; };
/* the LD_PRELOAD layer's Run answers, and the kernel layer's own (see above) */
static struct pair PAIRS[MAX_PAIRS], LANDED[MAX_PAIRS];
/* the kernel layer's Deny and Escalate for an exec the LD_PRELOAD layer made (see "decides first") */
#define MAX_HELD 64
struct held { pid_t pid; long expires; char *key; int action; char *text; struct gate_ident id; };
static struct held HELD[MAX_HELD];
/* where a reply goes: the socket the request came with (SCM_RIGHTS), else the sender's bound address */
struct peer { int fd; struct sockaddr_un addr; socklen_t len; };
/* run, program, file: what the request asked about (for its answer's reuse), when it could be told */
struct pending { char id[130]; struct peer to; pid_t pid; char *key; long at; char *run, *program; struct gate_ident file; };
static struct pending PENDING[MAX_PENDING];

static long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void peer_send(const struct peer *to, const char *msg, size_t n) {
  ssize_t s;
  if (to->fd >= 0) { do s = send(to->fd, msg, n, MSG_NOSIGNAL | MSG_DONTWAIT); while (s < 0 && errno == EINTR); }
  else { do s = sendto(S.ksock, msg, n, MSG_NOSIGNAL, (const struct sockaddr *)&to->addr, to->len); while (s < 0 && errno == EINTR); }
}

static void peer_close(struct peer *to) {
  if (to->fd >= 0) close(to->fd);
  to->fd = -1;
}

/* The text after a request's id (`{"v":1,"id":"<id>"` then the rest): its decision inputs. NULL if the
 * request does not start that way. */
static const char *after_id(const char *msg, size_t n, char *id, size_t idn) {
  static const char head[] = GATE_MSG_HEAD "\"";
  size_t h = sizeof head - 1;
  if (n <= h || memcmp(msg, head, h)) return NULL;
  const char *q = memchr(msg + h, '"', n - h);
  if (!q || (size_t)(q - msg - h) >= idn) return NULL;
  memcpy(id, msg + h, (size_t)(q - msg - h));
  id[q - msg - h] = 0;
  return q + 1;
}

static void pair_add(struct pair *t, pid_t pid, char *key, const struct gate_ident *id, char *token) {
  long now = mono_ms();
  int slot = 0;
  pthread_mutex_lock(&S.lock);
  for (int i = 0; i < MAX_PAIRS; i++) {
    if (!t[i].key || t[i].expires < now) { slot = i; break; }
    if (t[i].expires < t[slot].expires) slot = i; /* full: the oldest goes */
  }
  free(t[slot].key);
  free(t[slot].token);
  t[slot] = (struct pair){ pid, now + PAIR_TTL_MS, key, *id, token };
  pthread_mutex_unlock(&S.lock);
}

/* Take the entry for pid and key (and the file, when the entry knows it); 1 when it was there in time,
 * with its escalation token in *token (NULL: Run) when token is not NULL. */
static int pair_take(struct pair *t, pid_t pid, const char *key, const struct gate_ident *id, char **token) {
  long now = mono_ms();
  int hit = 0;
  pthread_mutex_lock(&S.lock);
  for (int i = 0; i < MAX_PAIRS && !hit; i++) {
    if (!t[i].key || t[i].pid != pid || (t[i].id.known && !gate_ident_eq(&t[i].id, id)) || strcmp(t[i].key, key)) continue;
    hit = t[i].expires >= now;
    free(t[i].key);
    t[i].key = NULL;
    if (hit && token) *token = t[i].token;
    else free(t[i].token);
    t[i].token = NULL;
  }
  pthread_mutex_unlock(&S.lock);
  return hit;
}

static int pair_any(struct pair *t, pid_t pid) {
  long now = mono_ms();
  int any = 0;
  pthread_mutex_lock(&S.lock);
  for (int i = 0; i < MAX_PAIRS && !any; i++) any = t[i].key && t[i].pid == pid && t[i].expires >= now;
  pthread_mutex_unlock(&S.lock);
  return any;
}

/* An exec request answered by the supervisor itself: Run, or Escalate with token. */
static void answer_here(const struct peer *to, const char *id, const char *token) {
  struct gbuf r; gb_init(&r);
  gb_puts(&r, GATE_MSG_HEAD "\"");
  gb_puts(&r, id);
  gb_puts(&r, token ? "\",\"type\":\"exec\",\"action\":{\"type\":\"Escalate\"},\"escalation_token\":" : "\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"}");
  if (token) gb_json_str(&r, token, strlen(token), 0);
  gb_puts(&r, "}");
  if (!r.oom) peer_send(to, r.p, r.len);
  gb_free(&r);
}

/* ---------- the kernel layer decides first ----------
 *
 * In a kernel-gated run the LD_PRELOAD layer does not ask before an exec: it marks the exec
 * (GATE_ASK=<pid>:<program>, gate-common.h) and lets this layer decide. A Run goes on as any
 * other. A Deny or an Escalate of a marked exec is held here for that pid and those inputs (30 s, once) and
 * the exec fails with GATE_EXEC_ASK; the layer then asks, as it used to before the exec, and gets the held
 * answer: it says the denial in the process's own words, or escalates with its descriptors (the kernel
 * layer cannot). One decision, and no request at all for the execs that run. A mark forged by a process
 * without the layer only turns its own denial into a quiet one, or its escalation into a failed exec. */

static void held_add(pid_t pid, char *key, int action, const char *text, const struct gate_ident *id) {
  long now = mono_ms();
  char *copy = strdup(text ? text : "");
  if (!copy) { free(key); return; }
  int slot = 0;
  pthread_mutex_lock(&S.lock);
  for (int i = 0; i < MAX_HELD; i++) {
    if (!HELD[i].key || HELD[i].expires < now) { slot = i; break; }
    if (HELD[i].expires < HELD[slot].expires) slot = i;
  }
  free(HELD[slot].key);
  free(HELD[slot].text);
  HELD[slot] = (struct held){ pid, now + PAIR_TTL_MS, key, action, copy, *id };
  pthread_mutex_unlock(&S.lock);
}

/* A request from pid with exactly the inputs of a held decision: answered with it, 1; else 0. */
static int held_answer(const char *id, const char *rest, const char *end, pid_t pid, const struct peer *to) {
  long now = mono_ms();
  int action = -1;
  char *text = NULL;
  struct gate_ident file = { 0 };
  size_t n = (size_t)(end - rest);
  pthread_mutex_lock(&S.lock);
  for (int i = 0; i < MAX_HELD && action < 0; i++) {
    struct held *h = &HELD[i];
    if (!h->key || h->pid != pid || strlen(h->key) != n || memcmp(h->key, rest, n)) continue;
    if (h->expires >= now) { action = h->action; text = h->text; h->text = NULL; file = h->id; }
    free(h->key);
    free(h->text);
    *h = (struct held){ 0 };
  }
  pthread_mutex_unlock(&S.lock);
  if (action < 0) return 0;
  /* an escalated spawn is made again, its child carrying the token: that exec is paired with this answer
   * (as when the layer asked first), not decided a second time */
  char *key = action == GA_ESCALATE ? strndup(rest, n) : NULL;
  if (key) pair_add(PAIRS, pid, key, &file, NULL);
  if (action == GA_ESCALATE) answer_here(to, id, text);
  else {
    struct gbuf r; gb_init(&r);
    gb_puts(&r, GATE_MSG_HEAD "\"");
    gb_puts(&r, id);
    gb_puts(&r, "\",\"type\":\"exec\",\"action\":{\"type\":\"Deny\",\"reason\":");
    gb_json_str(&r, text, strlen(text), 0);
    gb_puts(&r, "}}");
    if (!r.oom) peer_send(to, r.p, r.len);
    gb_free(&r);
  }
  free(text);
  return 1;
}

static void escalating(long own, int on);

/* A request from pid for the program the kernel layer has just let it exec (LANDED, see above): answered
 * Run here, 1; else 0 (the request goes to the daemon). rest: the request after its id. */
static int landed_answer(const char *id, const char *rest, const char *end, pid_t pid, const struct peer *from) {
  static const char prog[] = ",\"program\":";
  if (!pair_any(LANDED, pid) || strncmp(rest, ",\"type\":\"exec\"", 14)) return 0;
  /* the field order is gate_exec_request_for's; `,"` never occurs inside a JSON string (its quotes are
   * escaped), so the first match is the field. A base64 request is left to the daemon. */
  const char *at = strstr(rest, prog), *enc = strstr(rest, ",\"encoding\":");
  if (!at || (enc && enc < at)) return 0;
  struct gate_jp jp = { at + sizeof prog - 1, end, 0 };
  char *program = gate_jstr_dup(&jp);
  if (!program || program[0] != '/') { free(program); return 0; }
  /* the program it names is the file this pid now runs */
  char path[PATH_MAX + 64];
  struct stat named, running;
  snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, program);
  free(program);
  int same = stat(path, &named) == 0 && (snprintf(path, sizeof path, "/proc/%d/exe", (int)pid), stat(path, &running) == 0) &&
             named.st_dev == running.st_dev && named.st_ino == running.st_ino;
  if (!same) return 0;
  /* the inputs with the program left out (the kernel layer named it by the path the exec gave) */
  struct gbuf key; gb_init(&key);
  gb_put(&key, rest, (size_t)(at + sizeof prog - 1 - rest));
  gb_puts(&key, "\"\"");
  gb_put(&key, jp.s, (size_t)(end - jp.s));
  char *token = NULL;
  struct gate_ident rid;
  gate_ident_of(&rid, &running);
  int hit = !key.oom && pair_take(LANDED, pid, key.p, &rid, &token);
  gb_free(&key);
  if (!hit) return 0;
  /* the daemon's answer to the kernel layer: Run, or Escalate with the token it granted */
  answer_here(from, id, token);
  if (token) escalating(own_pid(pid), 0);
  free(token);
  return 1;
}

static void pending_clear(struct pending *p) {
  free(p->key);
  free(p->run);
  free(p->program);
  p->key = p->run = p->program = NULL;
  p->id[0] = 0;
}

/* ---------- answers reused (gate-reuse.h) ----------
 *
 * A Run the daemon marked with a grant holds for any argv of that program in that run (src/decide/reuse.ts):
 * kept with the very file it was given for, it answers a later exec of the same run, path, name and file
 * here, without the daemon's round trip, while the policy epoch stays the one it came with. Each such exec
 * is told to the daemon (ExecReused, no reply; audited there); when that notice cannot be sent at once, the
 * exec is asked as usual. Files are told by device, inode, size and both times, read before the question
 * and again when its answer came: a file changed meanwhile is never kept. */

/* A request's run, program and argv[0] (plain text only: a base64 request is left to the daemon). */
struct asked { char *run, *program, *argv0; int exec, other; };

static int asked_argv0(int i, struct gate_jp *p, void *ctx) {
  struct asked *a = ctx;
  if (i == 0 && !a->argv0) return (a->argv0 = gate_jstr_dup(p)) ? 0 : -1;
  return gate_jskip(p);
}

static int asked_field(const char *key, struct gate_jp *p, void *ctx) {
  struct asked *a = ctx;
  if (!strcmp(key, "type")) { char t[16]; if (gate_jstr(p, t, sizeof t)) return -1; a->exec = !strcmp(t, "exec"); return 0; }
  if (!strcmp(key, "run_id") && !a->run) return (a->run = gate_jstr_dup(p)) ? 0 : -1;
  if (!strcmp(key, "program") && !a->program) return (a->program = gate_jstr_dup(p)) ? 0 : -1;
  if (!strcmp(key, "argv") && *p->s == '[') return gate_jarray(p, asked_argv0, a);
  /* (a real_program is a symlink's target: the file's identity, read through the symlink, is what counts) */
  if (!strcmp(key, "encoding") || !strcmp(key, "layer")) a->other = 1;
  return gate_jskip(p);
}

static void asked_free(struct asked *a) { free(a->run); free(a->program); free(a->argv0); }

/* The file a process names by an absolute program path, as it sees it; unknown for names that are the
 * process's own (/proc/self, /dev/fd) or not absolute. */
static void file_of(pid_t pid, const char *program, struct gate_ident *id) {
  char path[PATH_MAX + 64];
  struct stat st;
  id->known = 0;
  if (program[0] != '/' || !strncmp(program, "/proc/", 6) || !strncmp(program, "/dev/fd/", 8)) return;
  if ((size_t)snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, program) >= sizeof path) return;
  if (stat(path, &st) == 0) gate_ident_of(id, &st);
}

/* Tell the daemon of an exec answered with grant: the request's inputs (rest: its text after the id,
 * starting with its type) as an ExecReused. 0 when sent. */
static int tell_reused(const char *grant, const char *rest, const char *end) {
  static const char type[] = ",\"type\":\"exec\"";
  size_t tn = sizeof type - 1;
  if ((size_t)(end - rest) < tn || memcmp(rest, type, tn)) return -1;
  char id[96];
  gate_new_id(id, sizeof id);
  struct gbuf m; gb_init(&m);
  gb_puts(&m, GATE_MSG_HEAD "\"");
  gb_puts(&m, id);
  gb_puts(&m, "\",\"type\":\"exec-reused\",\"grant\":\"");
  gb_puts(&m, grant); /* base64url: nothing to escape */
  gb_puts(&m, "\"");
  gb_put(&m, rest + tn, (size_t)(end - rest - (ptrdiff_t)tn));
  /* to the supervisors' notice socket, <session>/notice.sock beside the request folder
   * (src/daemon/notice-channel.ts): every sandbox hides it, so no gated run can tell of an exec it did not
   * make; the request channel takes no such notice. None (an older daemon): the exec is asked instead. */
  struct sockaddr_un to = { .sun_family = AF_UNIX };
  const char *req_slash = strrchr(S.conf.request_sock, '/');
  const char *dir_slash = req_slash;
  while (dir_slash && dir_slash > S.conf.request_sock && dir_slash[-1] != '/') dir_slash--;
  size_t at = dir_slash && dir_slash > S.conf.request_sock ? (size_t)(dir_slash - S.conf.request_sock) : 0;
  static const char notice[] = "notice.sock";
  if (!at || at + sizeof notice > sizeof to.sun_path) { gb_free(&m); return -1; }
  memcpy(to.sun_path, S.conf.request_sock, at);
  memcpy(to.sun_path + at, notice, sizeof notice);
  ssize_t sent = -1;
  if (!m.oom && m.len <= GATE_MAX_DATAGRAM)
    do sent = sendto(S.dsock, m.p, m.len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to); while (sent < 0 && errno == EINTR);
  gb_free(&m);
  return sent < 0 ? -1 : 0;
}

/* A request of the LD_PRELOAD layer answered here from a kept grant: Run, paired with its exec; 1, or 0
 * (asked of the daemon), with what it asks about in *a and the file it names in *file. */
static int reused_answer(const char *msg, size_t n, const char *id, const char *rest, pid_t pid, const struct peer *from, struct asked *a, struct gate_ident *file) {
  struct gate_jp jp = { msg, msg + n, 0 };
  file->known = 0;
  if (gate_jobject(&jp, asked_field, a) || !a->exec || a->other || !a->run || !a->program || !a->argv0) return 0;
  file_of(pid, a->program, file);
  struct gate_reuse_hit hit;
  if (!file->known || !gate_same_name(a->argv0, a->program) || !gate_reuse_find(a->run, a->program, file, &hit)) return 0;
  char *key = strndup(rest, (size_t)(msg + n - rest));
  if (!key || tell_reused(hit.grant, rest, msg + n)) { free(key); return 0; }
  pair_add(PAIRS, pid, key, file, NULL);
  answer_here(from, id, NULL);
  return 1;
}

/* A request from the tree: remember who sent it, forward it to the daemon. The reply socket is this
 * function's to close (or to keep in PENDING until the final reply). */
static void relay_request(const char *msg, size_t n, struct peer *from, pid_t pid) {
  char id[130];
  const char *rest = after_id(msg, n, id, sizeof id);
  /* not a request we relay, or nowhere to answer: dropped (the sender times out, fails closed) */
  if (!rest || (from->fd < 0 && from->len <= offsetof(struct sockaddr_un, sun_path))) { peer_close(from); return; }
  if (held_answer(id, rest, msg + n, pid, from)) { peer_close(from); return; }
  if (landed_answer(id, rest, msg + n, pid, from)) { peer_close(from); return; }
  struct asked a = { 0 };
  struct gate_ident file;
  if (reused_answer(msg, n, id, rest, pid, from, &a, &file)) { asked_free(&a); peer_close(from); return; }
  long now = mono_ms();
  int slot = -1, oldest = 0;
  for (int i = 0; i < MAX_PENDING; i++) {
    if (PENDING[i].id[0] && !strcmp(PENDING[i].id, id)) { slot = i; break; } /* a resend */
    if (slot < 0 && !PENDING[i].id[0]) slot = i;
    if (PENDING[i].at < PENDING[oldest].at) oldest = i;
  }
  if (slot < 0) slot = oldest;
  struct pending *p = &PENDING[slot];
  if (strcmp(p->id, id)) {
    free(p->key);
    p->key = NULL;
    if (!strncmp(rest, ",\"type\":\"exec\"", 14)) p->key = strndup(rest, (size_t)(msg + n - rest));
    free(p->run);
    free(p->program);
    p->run = a.run;
    p->program = a.program;
    a.run = a.program = NULL;
    p->file = file;
  }
  asked_free(&a);
  if (p->id[0]) peer_close(&p->to); /* a resend comes with a new reply socket; an evicted request's goes */
  memcpy(p->id, id, strlen(id) + 1);
  p->to = *from;
  from->fd = -1;
  p->pid = pid;
  p->at = now;
  struct sockaddr_un to = { .sun_family = AF_UNIX };
  gate_join(to.sun_path, sizeof to.sun_path, S.conf.request_sock, NULL, NULL, NULL);
  ssize_t s;
  /* an exec request goes on with the sender's pid as the daemon sees it (host_pid): where the daemon reads
   * how the asking process was started (src/daemon/provenance.ts); the original text if it cannot be added */
  struct gbuf withpid; gb_init(&withpid);
  if (!strncmp(rest, ",\"type\":\"exec\"", 14) && n > 1 && msg[n - 1] == '}') {
    char tail[40];
    gb_put(&withpid, msg, n - 1);
    snprintf(tail, sizeof tail, ",\"host_pid\":%d}", (int)pid);
    gb_puts(&withpid, tail);
  }
  const char *out = withpid.len && !withpid.oom ? withpid.p : msg;
  size_t outn = withpid.len && !withpid.oom ? withpid.len : n;
  do s = sendto(S.dsock, out, outn, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to); while (s < 0 && errno == EINTR);
  if (s < 0 && errno == EMSGSIZE && out != msg)
    do s = sendto(S.dsock, msg, n, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to); while (s < 0 && errno == EINTR);
  gb_free(&withpid);
  if (s >= 0 || errno == EAGAIN || errno == ENOBUFS) return; /* a full queue: the sender's retry resends */
  /* the daemon is gone: say so at once, as the sender would have found it talking to the daemon itself */
  char why[400];
  snprintf(why, sizeof why, "the gate-sh daemon is not reachable at %s (%s); nothing was run: start it with 'gate daemon start' and check 'gate status'",
           S.conf.request_sock, strerror(errno));
  struct gbuf e; gb_init(&e);
  gb_puts(&e, GATE_MSG_HEAD);
  gb_json_str(&e, id, strlen(id), 0);
  gb_puts(&e, ",\"type\":\"error\",\"code\":\"unreachable\",\"message\":");
  gb_json_str(&e, why, strlen(why), 0);
  gb_puts(&e, "}");
  if (!e.oom) peer_send(&p->to, e.p, e.len);
  gb_free(&e);
  peer_close(&p->to);
  pending_clear(p);
}


/* A reply from the daemon: pair an exec's Run with its pid (and keep a grant), pass the reply on. */
static void relay_reply(const char *msg, size_t n) {
  struct gate_reply r;
  struct gate_reused_audit audit;
  char err[256];
  gate_reply_init(&r, NULL, &audit);
  if (gate_parse_reply(msg, n, &r, err, sizeof err)) {
    /* whose it is cannot be told: every waiting sender gets it, and fails closed on it as it would have */
    for (int i = 0; i < MAX_PENDING; i++) {
      struct pending *p = &PENDING[i];
      if (!p->id[0]) continue;
      peer_send(&p->to, msg, n);
      peer_close(&p->to);
      pending_clear(p);
    }
    return;
  }
  for (int i = 0; i < MAX_PENDING; i++) {
    struct pending *p = &PENDING[i];
    if (!p->id[0] || strcmp(p->id, r.id)) continue;
    int final = strcmp(r.type, "pending") != 0;
    /* Escalate too: the kernel layer lets it go on in place either way (the layer escalates, or a spawned
     * child's constructor does with its mark) */
    if (final && !strcmp(r.type, "exec") && (r.action == GA_RUN || r.action == GA_ESCALATE) && p->key) {
      pair_add(PAIRS, p->pid, p->key, &p->file, NULL);
      p->key = NULL;
      /* kept only when the file is still the one asked about (so the one the daemon judged) */
      struct gate_ident now;
      if (r.action == GA_RUN && r.grant[0] && p->run && p->program && p->file.known && (file_of(p->pid, p->program, &now), gate_ident_eq(&now, &p->file)))
        gate_reuse_add(p->run, p->program, &p->file, r.grant, r.epoch, &audit);
    }
    peer_send(&p->to, msg, n);
    if (final) { peer_close(&p->to); pending_clear(p); }
    break;
  }
}

static void *relay(void *unused) {
  (void)unused;
  static char buf[GATE_MAX_DATAGRAM + 1];
  for (;;) {
    struct pollfd pf[2] = { { S.ksock, POLLIN, 0 }, { S.dsock, POLLIN, 0 } };
    if (poll(pf, 2, -1) < 0) { if (errno == EINTR) continue; break; }
    if (pf[0].revents & POLLIN) {
      struct peer from = { .fd = -1 };
      union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))]; } u;
      struct iovec iov = { buf, sizeof buf - 1 };
      struct msghdr m = { .msg_name = &from.addr, .msg_namelen = sizeof from.addr, .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
      ssize_t n = recvmsg(S.ksock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      from.len = n >= 0 ? m.msg_namelen : 0;
      int credited = 0;
      struct ucred cr;
      for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET) continue;
        if (c->cmsg_type == SCM_CREDENTIALS) { memcpy(&cr, CMSG_DATA(c), sizeof cr); credited = 1; }
        if (c->cmsg_type == SCM_RIGHTS) {
          /* the reply socket: one descriptor; any more are closed, and a second one replaces nothing */
          size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
          for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
            struct stat st;
            int sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
            if (from.fd < 0 && sock && i == 0) from.fd = fd;
            else close(fd);
          }
        }
      }
      if (n > 0 && credited && !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        buf[n] = 0;
        relay_request(buf, (size_t)n, &from, cr.pid);
      } else peer_close(&from);
    }
    if (pf[1].revents & POLLIN) {
      /* only the daemon answers: this socket's name is known inside the run (the request side's with one
       * letter changed), and a reply a process of the run made for its own request would pair its exec */
      struct sockaddr_un from;
      socklen_t flen = sizeof from;
      ssize_t n = recvfrom(S.dsock, buf, sizeof buf - 1, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
      if (n > 0 && gate_sent_from(&from, flen, S.conf.request_sock)) { buf[n] = 0; relay_reply(buf, (size_t)n); }
    }
  }
  return NULL;
}

/* The relay's two sockets in the client folder (reachable at the same path inside the sandbox). */
static int relay_open(char *err, size_t errlen) {
  char id[96];
  gate_new_id(id, sizeof id);
  gate_join(S.kpath, sizeof S.kpath, S.conf.client_dir, "/k", id, ".sock");
  gate_join(S.dpath, sizeof S.dpath, S.conf.client_dir, "/d", id, ".sock");
  S.ksock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  S.dsock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int one = 1;
  struct sockaddr_un a = { .sun_family = AF_UNIX }, b = { .sun_family = AF_UNIX };
  gate_join(a.sun_path, sizeof a.sun_path, S.kpath, NULL, NULL, NULL);
  gate_join(b.sun_path, sizeof b.sun_path, S.dpath, NULL, NULL, NULL);
  /* 0666 on the request side: inside the sandbox the tree may be another uid (user namespace) */
  mode_t old = umask(077);
  int ok = S.ksock >= 0 && S.dsock >= 0 && setsockopt(S.ksock, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) == 0 &&
           bind(S.ksock, (struct sockaddr *)&a, sizeof a) == 0 && bind(S.dsock, (struct sockaddr *)&b, sizeof b) == 0;
  umask(old);
  if (!ok) { snprintf(err, errlen, "cannot open the supervisor's sockets in %s: %s", S.conf.client_dir, strerror(errno)); return -1; }
  return 0;
}

static void respond(uint64_t id, int error) {
  struct seccomp_notif_resp *r = calloc(1, S.sizes.seccomp_notif_resp);
  if (!r) return; /* the notifying exec waits until the tree is gone: never let it through */
  r->id = id;
  if (error) r->error = -error;
  else r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  /* ENOENT: the process died or its syscall was interrupted meanwhile; nothing to answer */
  ioctl(S.listener, SECCOMP_IOCTL_NOTIF_SEND, r);
  free(r);
}

static int still_valid(uint64_t id) { return ioctl(S.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

/* The inputs of an exec (its request after the id, as the LD_PRELOAD layer builds it) into k; NULL when
 * out of memory. */
static const char *inputs(struct gbuf *k, const struct gate_conf *as, const char *program, char **argv, const char *cwd, char **envp, long pid) {
  char none[4];
  gb_init(k);
  gate_exec_request_for(k, as, "", program, argv, cwd, envp, S.own_preload, S.own_path, pid, NULL);
  return k->oom ? NULL : after_id(k->p, k->len, none, sizeof none);
}

/* posix_spawn, system(), popen(): the exec'ing task is a child sharing its parent's address space (glibc's
 * clone(CLONE_VM|CLONE_VFORK)), and the parent's LD_PRELOAD layer asked, with the parent's pid. */
static int spawned_pair(long parent, pid_t pid, const struct gate_conf *as, const char *program, char **argv, const char *cwd, char **envp, const struct gate_ident *file) {
  if (parent <= 1 || !pair_any(PAIRS, (pid_t)parent)) return 0;
  if (syscall(SYS_kcmp, (pid_t)parent, pid, KCMP_VM, 0, 0) != 0) return 0; /* its own memory, or unknown */
  struct gbuf k;
  const char *key = inputs(&k, as, program, argv, cwd, envp, own_pid((pid_t)parent));
  int hit = key && pair_take(PAIRS, (pid_t)parent, key, file, NULL);
  gb_free(&k);
  return hit;
}

/* The kernel layer let pid exec file on the daemon's Run, or Escalate (token): the new program's own check
 * is answered with it (LANDED). */
static void land(pid_t pid, long own, const struct gate_conf *as, char **argv, const char *cwd, char **envp, const struct gate_ident *id, const char *token) {
  struct gbuf k;
  if (!id->known) return;
  const char *key = inputs(&k, as, "", argv, cwd, envp, own);
  char *copy = key ? strdup(key) : NULL, *tok = token ? strdup(token) : NULL;
  if (copy && (!token || tok)) pair_add(LANDED, pid, copy, id, tok);
  else { free(copy); free(tok); }
  gb_free(&k);
}

/* An Escalate the kernel layer let go on in place is the one answer a new program's constructor must ask
 * for (it escalates with the token; a Run it need not hear of): the supervisor says so with a file named
 * <GATE_KERNEL_SOCK>.e<pid> (the pid as the process knows itself) while that answer waits in LANDED, and
 * a constructor that finds none does not ask (gate-common.h, GATE_ESCALATING). A file made or removed by
 * the run itself only adds a question or turns an escalation into a run in place, inside the sandbox. */
static void escalating(long own, int on) {
  char path[sizeof S.kpath + 32], n[24];
  gate_join(path, sizeof path, S.kpath, GATE_ESCALATING, gate_num(n, (unsigned long)own, 10), NULL);
  if (!on) { unlink(path); return; }
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd >= 0) close(fd);
}

/* The escalation files of answers nobody asked for, when the supervisor ends. */
static void escalations_gone(void) {
  const char *base = strrchr(S.kpath, '/');
  DIR *d = base ? opendir(S.conf.client_dir) : NULL;
  if (!d) return;
  char prefix[128];
  size_t pl = gate_join(prefix, sizeof prefix, base + 1, GATE_ESCALATING, NULL, NULL);
  for (struct dirent *e; (e = readdir(d));)
    if (!strncmp(e->d_name, prefix, pl)) unlinkat(dirfd(d), e->d_name, 0);
  closedir(d);
}

/* The inputs of an exec as its LD_PRELOAD layer will ask about it, for holding (a copy; NULL: no memory). */
static char *held_inputs(const struct gate_conf *as, const char *program, char **argv, const char *cwd, char **envp, long own) {
  struct gbuf k;
  const char *key = inputs(&k, as, program, argv, cwd, envp, own);
  char *copy = key ? strdup(key) : NULL;
  gb_free(&k);
  return copy;
}

/* The program an exec names, as the process sees it: an absolute path (relative ones against its cwd or
 * the descriptor's folder; AT_EMPTY_PATH: the descriptor's own target). -1 when it cannot be told. */
static int exec_program(pid_t pid, int at, int dirfd, const char *path, int flags, const char *cwd, char *out, size_t n) {
  char link[64], base[PATH_MAX];
  if (at && !path[0]) {
    if (!(flags & AT_EMPTY_PATH)) return -1;
    snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, dirfd);
    return read_link(link, out, n);
  }
  if (path[0] == '/') { gate_join(out, n, path, NULL, NULL, NULL); return 0; }
  if (at && dirfd != AT_FDCWD) {
    snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, dirfd);
    if (read_link(link, base, sizeof base)) return -1;
  } else gate_join(base, sizeof base, cwd, NULL, NULL, NULL);
  gate_join(out, n, strcmp(base, "/") ? base : "", "/", path, NULL);
  return 0;
}

/* ---------- after the exec ----------
 *
 * The supervisor decides on the path, argv and envp it read from the process's memory; answered, the
 * kernel reads them again from that memory, and another thread (or a vfork sibling, io_uring, a shared
 * mapping) may have rewritten them in between: a program could have `ls` checked and `rm` run. So a worker
 * that lets an exec go on first seizes the process (ptrace, PTRACE_O_TRACEEXEC: no stop, no signal), then
 * follows the exec to its end: a successful exec stops at PTRACE_EVENT_EXEC, before the new program's first
 * instruction, with its new memory private (other threads gone, vfork parent released). There the
 * supervisor compares what the kernel took (/proc/<pid>/exe, the new argv and environment) with what was decided;
 * anything else and the process is killed before it runs. A failed exec returns to the program, where a
 * PTRACE_INTERRUPT sent after the answer stops it; either way the process is let go (PTRACE_DETACH). */

/* id: the file decided on (id.known: it could be told); script: it starts with #!; then kargv: the argv
 * the kernel builds in front of the exec's argv[1..] (interpreter, its argument, the script, at each level:
 * fs/binfmt_script.c), read here before asking and sent to the daemon, which judges that very argv
 * (src/decide/shebang.ts), and interp: the file that runs in the end (NULL kargv: it could not be read so,
 * and the check after the exec fails) */
struct decided { struct gate_ident id; int script; char **kargv; struct gate_ident interp; };

#define SCRIPT_HEAD 256 /* BINPRM_BUF_SIZE: what the kernel reads of a #! line */
#define SCRIPT_DEPTH 5  /* interpreters that are scripts, as deep as the kernel follows them */

static int spacetab(char c) { return c == ' ' || c == '\t'; }
static int terminator(char c) { return c == ' ' || c == '\t' || c == 0; }

/* The #! line of a file's first n bytes as the kernel reads it: 1 with the interpreter name and its optional
 * argument (malloc'd), 0 when it is not a script the kernel runs. */
static int script_line(const char *buf, size_t n, char **name, char **arg) {
  *name = *arg = NULL;
  if (n < 2 || buf[0] != '#' || buf[1] != '!') return 0;
  const char *nl = memchr(buf, '\n', n);
  size_t end;
  if (nl) end = (size_t)(nl - buf);
  else {
    size_t first = 2, t;
    while (first < n && spacetab(buf[first])) first++;
    if (first >= n) return 0;
    for (t = first; t < n && !terminator(buf[t]); t++) {}
    if (t >= n && n >= SCRIPT_HEAD) return 0; /* the name itself cut by the buffer */
    end = n >= SCRIPT_HEAD ? SCRIPT_HEAD - 1 : n;
  }
  while (end > 2 && spacetab(buf[end - 1])) end--;
  size_t i = 2;
  while (i < end && spacetab(buf[i])) i++;
  if (i >= end) return 0;
  size_t sep = i;
  while (sep < end && !terminator(buf[sep])) sep++;
  *name = strndup(buf + i, sep - i);
  if (sep < end && buf[sep]) {
    size_t a = sep;
    while (a < end && spacetab(buf[a])) a++;
    if (a < end) *arg = strndup(buf + a, end - a); /* (strndup stops at a NUL, as the kernel's string does) */
    if (*arg && !**arg) { free(*arg); *arg = NULL; }
  }
  return *name != NULL;
}

/* The kernel's argv prefix for the #! script open on fd (named `path` by the exec) and the identity of the
 * file it finally runs, each interpreter opened as the process would (its root, its cwd): 0, or -1 when it
 * cannot be read so (too deep, unreadable, out of memory). fd stays open. */
static int script_chain(pid_t pid, const char *cwd, int fd, const char *path, char ***out, struct gate_ident *final) {
  char buf[SCRIPT_HEAD], file[PATH_MAX + 64];
  size_t np = 0;
  char **pre = calloc(1, sizeof *pre);
  const char *named = path; /* the name the kernel puts in argv for the file it opens next */
  int cur = fd, rc = -1;
  for (int depth = 0; pre && depth <= SCRIPT_DEPTH; depth++) {
    ssize_t n = pread(cur, buf, sizeof buf, 0);
    char *name = NULL, *arg = NULL;
    struct stat st;
    if (n < 0) break;
    if (!script_line(buf, (size_t)n, &name, &arg)) {
      if (depth > 0 && fstat(cur, &st) == 0) { gate_ident_of(final, &st); rc = 0; }
      free(name); free(arg);
      break;
    }
    /* the kernel drops argv[0] and puts the interpreter, its argument and the name it opened in front */
    char **next = depth < SCRIPT_DEPTH ? calloc(np + 4, sizeof *next) : NULL;
    char *was = next ? strdup(named) : NULL;
    if (!was) { free(next); free(name); free(arg); break; }
    size_t k = 0;
    next[k++] = name;
    if (arg) next[k++] = arg;
    next[k++] = was;
    for (size_t j = depth == 0 ? 0 : 1; j < np; j++) next[k++] = pre[j];
    if (depth > 0) free(pre[0]); /* the previous interpreter's name: copied into `was` */
    free(pre);
    pre = next;
    np = k;
    named = name;
    if (name[0] == '/') snprintf(file, sizeof file, "/proc/%d/root%s", (int)pid, name);
    else snprintf(file, sizeof file, "/proc/%d/root%s/%s", (int)pid, strcmp(cwd, "/") ? cwd : "", name);
    if (cur != fd) close(cur);
    cur = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (cur < 0) break;
  }
  if (cur >= 0 && cur != fd) close(cur);
  if (pre) pre[np] = NULL;
  if (rc || !pre) { free_vec(pre); return -1; }
  *out = pre;
  return 0;
}

/* A /proc file of NUL-terminated strings (cmdline, environ) as a vector; NULL when unreadable. */
static char **proc_strings(pid_t pid, const char *what) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct gbuf b; gb_init(&b);
  char chunk[65536];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof chunk)) > 0 && !b.oom && b.len <= MAX_TOTAL + MAX_STRING) gb_put(&b, chunk, (size_t)n);
  close(fd);
  if (n < 0 || b.oom) { gb_free(&b); return NULL; }
  size_t count = 0;
  for (size_t i = 0; i < b.len; i++) count += b.p[i] == 0;
  char **v = calloc(count + 2, sizeof *v);
  size_t k = 0, start = 0;
  for (size_t i = 0; v && i < b.len; i++)
    if (b.p[i] == 0) { v[k++] = strdup(b.p + start); start = i + 1; }
  if (v && start < b.len) v[k++] = strndup(b.p + start, b.len - start);
  gb_free(&b);
  if (v) for (size_t i = 0; i < k; i++) if (!v[i]) { free_vec(v); return NULL; }
  return v;
}

static size_t vec_len(char **v) { size_t n = 0; while (v[n]) n++; return n; }

/* The argv and envp a process stopped at PTRACE_EVENT_EXEC starts with, read from its first stack: argc
 * at the stack pointer, then the argv pointers, NULL, the envp pointers, NULL, pointing at the strings the
 * kernel copied (what /proc/<pid>/cmdline and environ show; the program has run no instruction yet). 0,
 * or -1 where it cannot be read that way (another ABI, a 32-bit program, memory this user may not read):
 * then /proc is read instead. */
static int first_stack(pid_t pid, char ***argv, char ***envp) {
#if defined(__x86_64__) || defined(__aarch64__)
  struct user_regs_struct regs;
  struct iovec io = { &regs, sizeof regs };
  if (ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &io) || io.iov_len != sizeof regs) return -1;
#if defined(__x86_64__)
  if (regs.cs != 0x33) return -1; /* not the 64-bit code segment: 4-byte pointers */
  uint64_t sp = regs.rsp;
#else
  uint64_t sp = regs.sp;
#endif
  struct proc p = { .pid = pid };
  uint64_t argc;
  int ok1 = 0, ok2 = 0;
  char **a = NULL, **e = NULL;
  if (!read_ptr(&p, sp, &argc) && argc < MAX_STRINGS) {
    a = read_vec(&p, sp + 8, &ok1);
    if (ok1 && vec_len(a) == argc) e = read_vec(&p, sp + 8 * (argc + 2), &ok2);
  }
  proc_done(&p);
  if (!e || !ok2) { free_vec(a); free_vec(e); return -1; } /* e is read only after argv read whole, argc long */
  *argv = a;
  *envp = e;
  return 0;
#else
  (void)pid; (void)argv; (void)envp;
  return -1;
#endif
}

static int vec_eq(char **a, char **b) {
  for (; *a && *b; a++, b++) if (strcmp(*a, *b)) return 0;
  return !*a && !*b;
}

/* What the stopped process (at PTRACE_EVENT_EXEC) runs is what was decided: 1; 0 when it is not; -1 when
 * it cannot be told (its /proc files are closed to this user: the program it now runs is not readable). */
static int ran_as_decided(pid_t pid, const struct decided *d, const char *path, char **argv, char **envp) {
  char exe[64];
  struct stat st;
  snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
  char **c = NULL, **e = NULL;
  if (first_stack(pid, &c, &e)) { c = proc_strings(pid, "cmdline"); e = proc_strings(pid, "environ"); }
  int seen = e != NULL && stat(exe, &st) == 0;
  if (!seen && errno == EACCES) { free_vec(c); free_vec(e); return -1; }
  int ok = c && e && d->id.known && seen && vec_eq(e, envp);
  (void)path;
  if (ok) {
    size_t nc = vec_len(c), na = vec_len(argv), np = d->kargv ? vec_len(d->kargv) : 0;
    if (st.st_dev == d->id.dev && st.st_ino == d->id.ino) ok = na ? vec_eq(c, argv) : nc == 1 && !c[0][0]; /* an empty argv gets "" */
    /* a #! script: the interpreter read before asking (the one the daemon judged) runs, with the very argv
     * the kernel builds from the #! lines read then (interpreter, argument, script, at each level) and the
     * exec's arguments; anything else is a script or interpreter changed meanwhile */
    else {
      ok = d->script && d->kargv && d->interp.known && st.st_dev == d->interp.dev && st.st_ino == d->interp.ino && na >= 1 &&
           nc == np + na - 1 && vec_eq(c + np, argv + 1);
      for (size_t i = 0; ok && i < np; i++) ok = !strcmp(c[i], d->kargv[i]);
    }
  }
  free_vec(c);
  free_vec(e);
  return ok;
}

/* The processes a worker follows now. A process whose exec failed at once (execvp trying each PATH entry)
 * can be in its next execve before the worker's PTRACE_INTERRUPT lands; that exec's worker waits until the
 * first has let the process go (the interrupt withdraws the waiting notification, the exec is made again)
 * instead of answering it: answered, it would run while still traced by the first worker, whose check of
 * its end compares it with the failed exec's inputs and kills it. */
static pid_t FOLLOWING[MAX_WORKERS];
static pthread_cond_t FOLLOWED = PTHREAD_COND_INITIALIZER;

static int following(pid_t pid) {
  for (int i = 0; i < MAX_WORKERS; i++) if (FOLLOWING[i] == pid) return 1;
  return 0;
}

/* Wait until no other worker follows pid; then this worker does (1), or 0 when no slot was free. */
static int follow_begin(pid_t pid) {
  int slot = -1;
  pthread_mutex_lock(&S.lock);
  while (following(pid)) pthread_cond_wait(&FOLLOWED, &S.lock);
  for (int i = 0; i < MAX_WORKERS && slot < 0; i++) if (!FOLLOWING[i]) slot = i;
  if (slot >= 0) FOLLOWING[slot] = pid;
  pthread_mutex_unlock(&S.lock);
  return slot >= 0;
}

static void follow_end(pid_t pid) {
  pthread_mutex_lock(&S.lock);
  for (int i = 0; i < MAX_WORKERS; i++) if (FOLLOWING[i] == pid) FOLLOWING[i] = 0;
  pthread_cond_broadcast(&FOLLOWED);
  pthread_mutex_unlock(&S.lock);
}

static void after_exec(pid_t pid, const struct decided *d, const char *path, char **argv, char **envp) {
  ptrace(PTRACE_INTERRUPT, pid, 0, 0);
  for (;;) {
    int st;
    pid_t w = waitpid(-1, &st, __WALL | __WNOTHREAD); /* this thread's tracee only: this process */
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 || !WIFSTOPPED(st)) return; /* gone */
    int as = st >> 16 == PTRACE_EVENT_EXEC ? ran_as_decided(w, d, path, argv, envp) : 1;
    if (as != 1) {
      char cmd[512];
      gate_describe(cmd, sizeof cmd, argv, path);
      kill(w, SIGKILL);
      if (as < 0)
        gate_msg("exec gate: ", cmd, ": not run: what the kernel runs cannot be checked after the exec (the program is not readable by this user, mode --x, so its arguments cannot be compared with what was decided); the process was killed; make the program readable", NULL);
      else
        gate_msg("exec gate: ", cmd, ": not run: the kernel was about to run something other than what was checked (its program or arguments were rewritten during the check, by another thread or a process sharing its memory); the process was killed", NULL);
      while (waitpid(w, &st, __WALL) < 0 && errno == EINTR) {}
      return;
    }
    /* run as decided; or the exec failed and the program stopped on its way back (a signal stop passes
     * its signal on) */
    int sig = st >> 16 == 0 && WSTOPSIG(st) != SIGTRAP ? WSTOPSIG(st) : 0;
    ptrace(PTRACE_DETACH, w, 0, sig);
    return;
  }
}

/* One exec: read what it names, ask the daemon, answer. The answer is EACCES unless the daemon said the
 * program may run. */
static void decide(struct seccomp_notif *req, int seq) {
  pid_t pid = (pid_t)req->pid;
  int nr = req->data.nr, at = nr == __NR_execveat;
  uint64_t a0 = req->data.args[0], a1 = req->data.args[1], a2 = req->data.args[2], a3 = req->data.args[3];
  uint64_t pathp = at ? a1 : a0, argvp = at ? a2 : a1, envpp = at ? a3 : a2;
  int dirfd = (int)a0, flags = at ? (int)req->data.args[4] : 0;
  char cwdl[64], cwd[PATH_MAX], program[PATH_MAX], cmd[512], err[1200], id[96];
  char *path = NULL, **argv = NULL, **envp = NULL;
  int ok1 = 0, ok2 = 0, error = EACCES, expected = 0;
  struct proc p = { .pid = pid };
  char file[PATH_MAX + 64];
  struct decided decided = { 0 };
  char *held; /* the inputs of a Deny or Escalate held for the LD_PRELOAD layer (see "decides first") */
  snprintf(cwdl, sizeof cwdl, "/proc/%d/cwd", (int)pid);
  path = read_str(&p, pathp);
  argv = read_vec(&p, argvp, &ok1);
  envp = read_vec(&p, envpp, &ok2);
  if (read_link(cwdl, cwd, sizeof cwd)) strcpy(cwd, "/");
  /* the pid may have died and been reused while it was read: a still valid id after the reads = it was
   * the waiting process all along (an exec no longer waiting is not answered, nor reported: nobody waits) */
  if (!still_valid(req->id)) goto done;
  if (p.error == EPERM || p.error == EACCES || p.error == ESRCH) {
    char pidn[24];
    gate_msg("exec gate: an exec of process ", gate_num(pidn, (unsigned long)own_pid(pid), 10), " not run: its memory cannot be read: ", strerror(p.error));
    goto done;
  }
  if (!path || !ok1 || !ok2) {
    gate_describe(cmd, sizeof cmd, argv, path ? path : "?");
    gate_msg("exec gate: ", cmd, ": not run: its arguments could not be read (or are too large for the gate)", NULL);
    goto done;
  }
  if (exec_program(pid, at, dirfd, path, flags, cwd, program, sizeof program)) {
    gate_describe(cmd, sizeof cmd, argv, path);
    gate_msg("exec gate: ", cmd, ": not run: the program it names could not be told", NULL);
    goto done;
  }
  if (!still_valid(req->id)) goto done;
  if (seq < S.nexpect && !strcmp(program, S.expect[seq]) && (seq > 0 || pid == S.root)) { error = 0; expected = 1; goto done; }
  /* every other exec is answered by a worker: it follows the exec to its end (see "after the exec") */
  /* the file decided on, as the process names it: what the kernel runs must be this very file */
  /* (the process's own /proc/self, /proc/thread-self and /dev/fd name it, not this supervisor) */
  if (at && !path[0]) snprintf(file, sizeof file, "/proc/%d/fd/%d", (int)pid, dirfd);
  else if (!strncmp(program, "/proc/self/", 11)) snprintf(file, sizeof file, "/proc/%d/%s", (int)pid, program + 11);
  else if (!strncmp(program, "/proc/thread-self/", 18)) snprintf(file, sizeof file, "/proc/%d/%s", (int)pid, program + 18);
  else if (!strncmp(program, "/dev/fd/", 8)) snprintf(file, sizeof file, "/proc/%d/fd/%s", (int)pid, program + 8);
  else snprintf(file, sizeof file, "/proc/%d/root%s", (int)pid, program);
  struct stat fst;
  int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd >= 0 && fstat(fd, &fst) == 0) {
    char magic[2];
    gate_ident_of(&decided.id, &fst);
    decided.script = pread(fd, magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!';
    /* (read before asking: the daemon judges this very reading, and the exec is checked against it) */
    if (decided.script && script_chain(pid, cwd, fd, path, &decided.kargv, &decided.interp)) decided.kargv = NULL;
  }
  /* an execute-only program (mode --x, not root): the kernel runs it though nobody may read it; its
   * identity is all the checks need (a #! script it cannot be: its interpreter could not read it) */
  else if (stat(file, &fst) == 0) {
    gate_ident_of(&decided.id, &fst);
  }
  if (fd >= 0) close(fd);
  /* the LD_PRELOAD layer's answer for this very exec (see "pairing"): the request it would have sent */
  struct gate_conf as = S.conf;
  for (char **e = envp; *e; e++) if (!strncmp(*e, "GATE_RUN=", 9)) { as.run_id = *e + 9; break; }
  struct ids ids = ids_of(pid);
  /* a file without a name (memfd, deleted) is always asked about: the daemon knows it by its bytes */
  int nameless = !strncmp(program, "/memfd:", 7) || strstr(program, " (deleted)") != NULL;
  /* made by the LD_PRELOAD layer without asking (see "decides first"): nothing to pair; a Deny or Escalate
   * is held for it to act on, and its new program does not ask (its mark). Both marks name this program,
   * and this pid or (posix_spawn) the parent whose memory this task shares; a static program keeps the
   * marks of its own exec, which name its own path. */
  pid_t asker = pid;     /* who asks for a held answer, as the relay knows it (SCM_CREDENTIALS) */
  long asker_own = ids.own;
  int asks = 0, marked = 0;
  size_t ml = sizeof GATE_MARK_ASK - 1, cl = sizeof "GATE_CHECKED=" - 1;
  for (char **e = envp; *e; e++) {
    const char *v = !strncmp(*e, GATE_MARK_ASK, ml) ? *e + ml : !strncmp(*e, "GATE_CHECKED=", cl) ? *e + cl : NULL;
    if (!v) continue;
    char *colon;
    long named = strtol(v, &colon, 10);
    if (colon == v || *colon != ':' || strcmp(colon + 1, program)) continue;
    if (named != ids.own && asker != pid && named != asker_own) continue;
    if (named != ids.own && asker == pid) {
      /* a spawn: the parent's layer marked its child's exec with its own pid */
      if (ids.parent <= 1 || named != own_pid((pid_t)ids.parent) || syscall(SYS_kcmp, (pid_t)ids.parent, pid, KCMP_VM, 0, 0) != 0) continue;
      asker = (pid_t)ids.parent;
      asker_own = named;
    }
    if (v == *e + ml) asks = 1;
    else marked = 1;
  }
  /* (the new program's constructor then honours GATE_CHECKED: no LANDED answer needed for it) */
  int lands = !(asks && marked);
  int paired = 0;
  /* (a #! script is always asked: the daemon judges the #! lines read here, not those it read for the layer) */
  if (!asks && !nameless && !decided.script && pair_any(PAIRS, pid)) {
    struct gbuf same;
    const char *key = inputs(&same, &as, program, argv, cwd, envp, ids.own);
    paired = key && pair_take(PAIRS, pid, key, &decided.id, NULL);
    gb_free(&same);
  }
  if (!paired && !nameless && !asks && !decided.script) paired = spawned_pair(ids.parent, pid, &as, program, argv, cwd, envp, &decided.id);
  if (paired) { error = 0; goto done; }
  /* a Run the daemon gave for this run's program, for this very file: answered here (see "answers reused"),
   * its audit record appended to the log here before the exec goes on (where it cannot be, the daemon is
   * told of the exec below) */
  int reusable = !nameless && !decided.script && argv[0] && gate_same_name(argv[0], program);
  struct gate_reuse_hit hit;
  int kept = reusable && gate_reuse_find(S.conf.run_id, program, &decided.id, &hit);
  if (kept && !gate_reuse_audit(&hit, cwd, program, argv)) {
    error = 0;
    if (lands) land(pid, ids.own, &as, argv, cwd, envp, &decided.id, NULL);
    goto done;
  }
  gate_new_id(id, sizeof id);
  struct gbuf msg; gb_init(&msg);
  gate_exec_request_for(&msg, &S.conf, id, program, argv, cwd, envp, S.own_preload, S.own_path, ids.own, "kernel");
  /* the run the process carries: where the LD_PRELOAD layer's answer for this exec is found (pairing) */
  for (char **e = envp; *e; e++) {
    if (strncmp(*e, "GATE_RUN=", 9) || msg.len < 1 || msg.oom) continue;
    msg.len--; /* reopen the object */
    gb_puts(&msg, ",\"pair_run\":");
    gb_json_str(&msg, *e + 9, strlen(*e + 9), !gate_utf8_valid(*e + 9, strlen(*e + 9)));
    gb_puts(&msg, "}");
    break;
  }
  /* a #! script: the argv the kernel builds in front of argv[1..], as read above (src/decide/shebang.ts) */
  int kargv_text = decided.kargv != NULL;
  for (char **k = decided.kargv; k && *k; k++) kargv_text = kargv_text && gate_utf8_valid(*k, strlen(*k));
  if (kargv_text && !msg.oom && msg.len > 0) {
    msg.len--;
    gb_puts(&msg, ",\"kernel_argv\":[");
    for (char **k = decided.kargv; *k; k++) {
      if (k != decided.kargv) gb_puts(&msg, ",");
      gb_json_str(&msg, *k, strlen(*k), 0);
    }
    gb_puts(&msg, "]}");
  }
  /* the file itself, where the daemon can read it: the program known by its bytes (a copy, memfd, ...) */
  /* the forms the daemon reads (src/protocol/validate.ts); another /proc/self name goes by the process's root */
  char pidp[48];
  int plen = snprintf(pidp, sizeof pidp, "/proc/%d/", (int)pid);
  const char *rest = file + plen;
  char pfile[PATH_MAX + 64];
  if (strncmp(rest, "fd/", 3) && strncmp(rest, "root/", 5) && strncmp(rest, "cwd/", 4) && strcmp(rest, "exe"))
    snprintf(pfile, sizeof pfile, "/proc/%d/root%s", (int)pid, program);
  else snprintf(pfile, sizeof pfile, "%s", file);
  if (!msg.oom && msg.len > 0 && gate_utf8_valid(pfile, strlen(pfile))) {
    msg.len--;
    gb_puts(&msg, ",\"program_file\":");
    gb_json_str(&msg, pfile, strlen(pfile), 0);
    gb_puts(&msg, "}");
  }
  /* the exec'ing process as the daemon sees it: where it reads how that process was started (provenance) */
  if (!msg.oom && msg.len > 0) {
    char hp[40];
    msg.len--;
    snprintf(hp, sizeof hp, ",\"host_pid\":%d}", (int)pid);
    gb_puts(&msg, hp);
  }
  char asked_id[130];
  const char *inputs_text = msg.oom ? NULL : after_id(msg.p, msg.len, asked_id, sizeof asked_id);
  if (kept && inputs_text && !tell_reused(hit.grant, inputs_text, msg.p + msg.len)) {
    error = 0;
    if (lands) land(pid, ids.own, &as, argv, cwd, envp, &decided.id, NULL);
    gb_free(&msg);
    goto done;
  }
  struct gate_reply r;
  struct gate_reused_audit audit;
  gate_reply_init(&r, NULL, &audit);
  gate_describe(cmd, sizeof cmd, argv, program);
  if (gate_request(&S.conf, id, &msg, &r, err, sizeof err)) gate_msg("exec gate: ", cmd, ": ", err);
  else if (strcmp(r.type, "exec")) gate_msg("exec gate: ", cmd, ": not run: unexpected reply type ", r.type);
  else if ((r.action == GA_DENY || (r.action == GA_ESCALATE && r.token[0])) && asks && (held = held_inputs(&as, program, argv, cwd, envp, asker_own))) {
    held_add(asker, held, r.action, r.action == GA_DENY ? (r.reason[0] ? r.reason : "denied by policy") : r.token, &decided.id);
    error = GATE_EXEC_ASK;
  }
  else if (r.action == GA_DENY) gate_msg("denied: ", cmd, ": ", r.reason[0] ? r.reason : "denied by policy");
  /* Escalate: the command may run, outside the sandbox even; in place it stays inside it (the LD_PRELOAD
   * layer, where it is loaded, escalates with the caller's descriptors: before the exec, or in the new
   * program's constructor with the token the daemon granted for this exec, handed over from LANDED) */
  else if (r.action == GA_RUN || r.action == GA_ESCALATE) {
    error = 0;
    if (!nameless && lands && (r.action == GA_RUN || r.token[0])) land(pid, ids.own, &as, argv, cwd, envp, &decided.id, r.action == GA_RUN ? NULL : r.token);
    if (!nameless && lands && r.action == GA_ESCALATE && r.token[0] && decided.id.known) escalating(ids.own, 1);
    /* kept only when the file is still the one read before asking (so the one the daemon judged) */
    struct stat again;
    struct gate_ident now = { 0 };
    if (r.action == GA_RUN && r.grant[0] && reusable && inputs_text && stat(file, &again) == 0 && (gate_ident_of(&now, &again), gate_ident_eq(&now, &decided.id)))
      gate_reuse_add(S.conf.run_id, program, &decided.id, r.grant, r.epoch, &audit);
  }
  else gate_msg("exec gate: ", cmd, ": not run: malformed reply from the daemon (no action)", NULL);
  gb_free(&msg);
done:
  proc_done(&p);
  /* after the exec: the kernel reads path and argv again once answered; follow it (see "after the exec") */
  int follow = S.trace && error == 0 && !expected;
  /* (another worker may still follow this process's previous exec: see FOLLOWING) */
  if (follow && !follow_begin(pid)) error = EACCES, follow = 0; /* more followed execs than workers: never unfollowed */
  int traced = follow && still_valid(req->id) && ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXEC) == 0;
  respond(req->id, error);
  if (traced) after_exec(pid, &decided, path, argv, envp);
  if (follow) follow_end(pid);
  free_vec(decided.kargv);
  free(path);
  free_vec(argv);
  free_vec(envp);
}

/* Workers take the notifications from the kernel themselves (SECCOMP_IOCTL_NOTIF_RECV blocks until one
 * arrives and hands each to one waiting thread), so an exec waits for no hand-off inside this process. One
 * always waits: a worker that takes a notification while no other is waiting starts another, up to
 * MAX_WORKERS. S.workers counts the notifications being answered. Where no worker thread can be started at
 * all, the supervisor's own thread takes them (slower, never skipped). */
static int IDLE, THREADS, SEQ, INLINE;

static int start_worker(void);

/* One notification taken (0) into req, numbered in *seq; -1 on an error of the ioctl (errno). */
static int take_notification(struct seccomp_notif *req, int *seq, int *more) {
  memset(req, 0, S.sizes.seccomp_notif);
  pthread_mutex_lock(&S.lock);
  IDLE++;
  pthread_mutex_unlock(&S.lock);
  int r = ioctl(S.listener, SECCOMP_IOCTL_NOTIF_RECV, req), e = errno;
  pthread_mutex_lock(&S.lock);
  IDLE--;
  *more = r == 0 && !INLINE && IDLE == 0 && THREADS < MAX_WORKERS;
  if (*more) THREADS++;
  if (r == 0) { *seq = SEQ++; S.workers++; }
  pthread_mutex_unlock(&S.lock);
  errno = e;
  return r;
}

static void answered(void) {
  pthread_mutex_lock(&S.lock);
  S.workers--;
  pthread_cond_signal(&S.freed);
  pthread_mutex_unlock(&S.lock);
}

static void *worker(void *unused) {
  (void)unused;
  struct seccomp_notif *req = malloc(S.sizes.seccomp_notif);
  for (int seq, more; req;) {
    if (take_notification(req, &seq, &more)) {
      /* ENOENT: a notification went before it was taken, or (Linux 6.x) nothing is left under the filter,
       * when the ioctl no longer waits: wait here instead, and end with the hang-up (never a busy loop) */
      if (errno == ENOENT) {
        struct pollfd pf = { S.listener, POLLIN, 0 };
        if (poll(&pf, 1, -1) > 0 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL))) break;
      } else if (errno != EINTR) usleep(1000);
      continue;
    }
    if (more && start_worker()) { pthread_mutex_lock(&S.lock); THREADS--; pthread_mutex_unlock(&S.lock); }
    decide(req, seq);
    answered();
  }
  pthread_mutex_lock(&S.lock);
  THREADS--;
  pthread_mutex_unlock(&S.lock);
  return NULL;
}

static int start_worker(void) {
  pthread_attr_t attr;
  pthread_t t;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 512 * 1024);
  int r = pthread_create(&t, &attr, worker, NULL);
  pthread_attr_destroy(&attr);
  return r;
}

static void close_all_but(const int *keep, int n) {
  /* keep is sorted ascending, all > 2 */
  unsigned from = 3;
  for (int i = 0; i < n; i++) {
    if ((unsigned)keep[i] > from) syscall(__NR_close_range, from, (unsigned)keep[i] - 1, 0);
    from = (unsigned)keep[i] + 1;
  }
  syscall(__NR_close_range, from, ~0u, 0);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* joining a session sandbox (below) */
static struct gate_join J;
static void kill_command_group(pid_t root);

/* One exited child of this thread reaped (its pid; status in *st), 0 when none has exited, -1 with ECHILD
 * when there is none. A child a worker follows with ptrace (see "after the exec") is that worker's to wait
 * for: this thread is in the tracer's thread group, so waitpid(-1) here would take the child's trace stops
 * (and the worker would wait forever); each child is looked at with WNOWAIT and only an exited one reaped. */
static pid_t reap_one(int *st) {
  char path[64];
  if (!S.trace) return waitpid(-1, st, WNOHANG | __WNOTHREAD);
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)syscall(SYS_gettid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return waitpid(-1, st, WNOHANG | __WNOTHREAD);
  struct gbuf b; gb_init(&b);
  char chunk[4096];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof chunk)) > 0) gb_put(&b, chunk, (size_t)n);
  close(fd);
  gb_put(&b, "", 1);
  pid_t found = -1;
  for (char *q = b.oom ? NULL : b.p; q && *q; ) {
    char *end;
    long c = strtol(q, &end, 10);
    if (end == q) break;
    q = end;
    if (found < 0) found = 0;
    siginfo_t si;
    si.si_pid = 0;
    if (waitid(P_PID, (id_t)c, &si, WEXITED | WNOHANG | WNOWAIT | __WNOTHREAD) == 0 && si.si_pid == (pid_t)c &&
        (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) &&
        waitpid((pid_t)c, st, WNOHANG | __WNOTHREAD) == (pid_t)c) { found = (pid_t)c; break; }
  }
  gb_free(&b);
  if (found < 0) errno = ECHILD;
  return found;
}

/* Supervise until no process of the tree is left; report the tree root's wait status on status_w. */
static void supervise(int status_w, pid_t root, int sigfd) {
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) { dup2(null, 0); dup2(null, 1); close(null); }
  int keep[5] = { S.listener, status_w, sigfd, S.ksock, S.dsock };
  qsort(keep, 5, sizeof keep[0], cmp_int);
  close_all_but(keep, 5);
  int root_done = 0, hup = 0;
  char kids[64];
  snprintf(kids, sizeof kids, "/proc/self/task/%d/children", (int)syscall(SYS_gettid));
  S.trace = access(kids, R_OK) == 0;
  /* every waiting request of the tree holds its reply socket here until answered: the soft limit on
   * descriptors (often 1024) is raised to the hard one, for this process only */
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  pthread_t rt;
  if (pthread_create(&rt, NULL, relay, NULL)) { unlink(S.kpath); unlink(S.dpath); S.ksock = -1; } /* no pairing: every exec is asked */
  THREADS = 1;
  if (start_worker()) { THREADS = 0; INLINE = 1; }
  struct seccomp_notif *own = INLINE ? malloc(S.sizes.seccomp_notif) : NULL;
  if (INLINE && !own) _exit(126); /* nobody could answer an exec: the front stops the run (fail closed) */
  while (!(hup && root_done)) {
    /* after the hang-up only children are left to reap (a negative fd is skipped by poll); the workers
     * take the notifications, so this thread waits for the hang-up alone (POLLHUP is always reported) */
    struct pollfd pf[2] = { { hup ? -1 : S.listener, own ? POLLIN : 0, 0 }, { sigfd, POLLIN, 0 } };
    if (poll(pf, 2, -1) < 0 && errno != EINTR) break;
    int seq, more;
    if (!hup && own && pf[0].revents & POLLIN && take_notification(own, &seq, &more) == 0) {
      decide(own, seq);
      answered();
    } else if (!hup && pf[0].revents & (POLLHUP | POLLERR)) hup = 1; /* no filtered process left */
    if (pf[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
        /* the front is gone before the command ended (its spawner died): take the sandbox down with it,
         * as bubblewrap's --die-with-parent would have, then finish as usual */
        if ((int)si.ssi_signo == FRONT_GONE && !root_done) {
          if (J.pidns >= 0) kill_command_group(root);
          kill(root, SIGKILL);
        }
      int st;
      pid_t w;
      while ((w = reap_one(&st)) > 0) {
        if (w == root && !root_done) {
          root_done = 1;
          ssize_t wr = write(status_w, &st, sizeof st);
          (void)wr;
          /* background jobs outlive the command, and this supervisor outlives them: it lets go of the
           * caller's stderr, as bash does, so a reader of that pipe is not kept waiting by the gate itself
           * (a job's own descriptors keep it open as under bash) */
          int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
          if (null >= 0) { dup2(null, 2); close(null); }
        }
      }
      if (w < 0 && errno == ECHILD && !root_done) root_done = 1;
    }
  }
  /* the workers answering the last notifications finish before the process goes */
  pthread_mutex_lock(&S.lock);
  while (S.workers > 0) pthread_cond_wait(&S.freed, &S.lock);
  pthread_mutex_unlock(&S.lock);
  gate_reply_release(); /* the workers' kept reply socket, if they asked more than once */
  escalations_gone();
  unlink(S.kpath);
  unlink(S.dpath);
  _exit(0);
}

/* ---------- joining a session sandbox ---------- */

/* --session-ns SPEC (docs/sandbox.md, "Session sandboxes"; gate-join.h): the namespaces of the daemon's
 * holder process. The network namespace is entered before anything is forked, since bubblewrap cannot
 * join one. With the holder's mounts the command runs without bubblewrap, born in the pid namespace by the
 * supervisor's fork; otherwise the pid namespace is handed to bubblewrap (`--pidns FD`, inserted after the
 * program): only its child, the command, is born inside it (the front, the supervisor and bubblewrap stay
 * out of the sandbox's sight), and bubblewrap then mounts that namespace's own /proc — entered any other
 * way, without --unshare-pid, it would bind the host's /proc. bubblewrap leaves FD open in the command. */
static struct gate_join J = { .pidns = -1, .mntns = -1 };

/* The held mounts changed (gate-join.h): this command builds its own; the daemon has the holder look at
 * them and build them again, so the next ones enter them again. One datagram, no reply; if it is lost, the
 * next command that finds them changed says so again. Sent by the supervisor, from its bound socket. */
static void tell_stale(void) {
  char id[96], n1[24], n2[24];
  gate_new_id(id, sizeof id);
  struct gbuf m; gb_init(&m);
  gb_puts(&m, GATE_MSG_HEAD "\"");
  gb_puts(&m, id);
  gb_puts(&m, "\",\"type\":\"session-sandbox-stale\",\"pid\":");
  gb_puts(&m, gate_num(n1, (unsigned long)J.holder, 10));
  gb_puts(&m, ",\"mntns\":");
  gb_puts(&m, gate_num(n2, J.mntns_ino, 10));
  gb_puts(&m, "}");
  struct sockaddr_un to = { .sun_family = AF_UNIX };
  gate_join(to.sun_path, sizeof to.sun_path, S.conf.request_sock, NULL, NULL, NULL);
  if (!m.oom) {
    ssize_t w = sendto(S.dsock, m.p, m.len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
    (void)w;
  }
  gb_free(&m);
}

/* The front is gone before the command ended (gate-sh killed, a caller's timeout): in a session sandbox,
 * bubblewrap's death takes only the command itself (--die-with-parent), and its children would live on in
 * the sandbox. Kill the command's process group too — bubblewrap made it a session and group leader — as
 * killing the group of a bash run by the caller would: what bash started with `&` goes with it, what left
 * the group (setsid, a daemon) stays, as under bash. */
static void kill_command_group(pid_t root) {
  char buf[512];
  /* run without bubblewrap, the tree root is the command itself, its session's leader; else bubblewrap */
  if (getpgid(root) == root) kill(-root, SIGKILL);
  if (!gate_children(root, buf, sizeof buf)) return;
  for (char *p = buf, *e; *p; p = e) {
    long c = strtol(p, &e, 10);
    if (e == p) break;
    while (*e == ' ' || *e == '\n') e++;
    if (c > 0 && getpgid((pid_t)c) == (pid_t)c) kill(-(pid_t)c, SIGKILL);
  }
}

/* ---------- abstract Unix sockets (docs/sandbox.md, "Unix sockets of the host") ---------- */

/* A sandbox that keeps the host's network (no --unshare-net) shares its abstract Unix socket namespace:
 * X11's, D-Bus's, any server's @name. Landlock (ABI >= 6) scopes them: the tree can reach no abstract
 * socket made outside it. Only for bubblewrap dropping every capability (a sandbox; a danger-full-access
 * run keeps the host's sockets); a kernel that cannot scope makes such a run fail, never run unscoped. */
struct gate_landlock_attr { uint64_t handled_access_fs, handled_access_net, scoped; };
#define GATE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_restrict_self 446
#endif

static int wants_unix_scope(const char *path, char *const argv[]) {
  const char *b = strrchr(path, '/');
  if (strcmp(b ? b + 1 : path, "bwrap")) return 0;
  int caps_dropped = 0;
  for (int i = 1; argv[i] && strcmp(argv[i], "--"); i++) {
    if (!strcmp(argv[i], "--unshare-net")) return 0;
    if (!strcmp(argv[i], "--cap-drop") && argv[i + 1] && !strcmp(argv[i + 1], "ALL")) caps_dropped = 1;
  }
  return caps_dropped;
}

static void scope_abstract_unix(const char *path) {
  struct gate_landlock_attr a = { 0, 0, GATE_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET };
  int fd = (int)syscall(__NR_landlock_create_ruleset, &a, sizeof a, 0);
  if (fd < 0 || syscall(__NR_landlock_restrict_self, fd, 0))
    die126(path, ": not run: this kernel cannot keep the sandbox from the host's abstract Unix sockets (Landlock ABI 6, Linux 6.12): ",
           strerror(errno));
  close(fd);
}

/* ---------- the tree root ---------- */

static char *outer_ksock;

static void tree_root(int sock, const char *path, char *const argv[], const sigset_t *oldmask) {
  int fd = install_filter();
  if (fd < 0) {
    int e = errno;
    char byte = e == NESTED_ERRNO ? 'N' : 'E';
    struct iovec iov[2] = { { &byte, 1 }, { &e, sizeof e } };
    struct msghdr m = { 0 };
    m.msg_iov = iov; m.msg_iovlen = 2;
    ssize_t s = sendmsg(sock, &m, MSG_NOSIGNAL);
    (void)s;
    if (e != NESTED_ERRNO) _exit(126);
    /* nested: the enclosing tree's supervisor already sees every exec of this one, and pairs them */
    if (outer_ksock) setenv("GATE_KERNEL_SOCK", outer_ksock, 1);
    else unsetenv("GATE_KERNEL_SOCK");
  } else {
    if (send_fd(sock, fd)) die126(path, ": not run: cannot hand the exec filter to its supervisor: ", strerror(errno));
    close(fd);
  }
  close(sock);
  for (const int *s = FORWARDED; *s; s++) signal(*s, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, oldmask, NULL);
  /* a run without a sandbox: the gate's own state read-only, its runtime folder hidden (gate-guard.c) */
  const char *guard = getenv(GATE_GUARD_ENV);
  if (guard) {
    char why[600];
    if (gate_guard_apply(guard, why, sizeof why)) die126(path, ": not run: the gate's guard: ", why);
    unsetenv(GATE_GUARD_ENV);
  }
  /* before joining: the plan's own program and options say whether it is a sandbox on the host's network */
  if (wants_unix_scope(path, argv)) scope_abstract_unix(path);
  gate_join_enter(&J, &path, (char ***)&argv);
  execv(path, argv);
  int e = errno;
  gate_msg(path, ": ", strerror(e), NULL);
  _exit(e == ENOENT ? 127 : 126);
}

/* ---------- the front ---------- */

static int pass_on(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    struct rlimit none = { 0, 0 };
    setrlimit(RLIMIT_CORE, &none); /* the tree root dumped core already, if it was going to */
    signal(sig, SIG_DFL);
    sigset_t m; sigemptyset(&m); sigaddset(&m, sig);
    sigprocmask(SIG_UNBLOCK, &m, NULL);
    raise(sig);
    return 128 + sig;
  }
  return 126;
}

static int has_arg(char *const argv[], const char *a) {
  for (int i = 0; argv[i]; i++) if (!strcmp(argv[i], a)) return 1;
  return 0;
}

/* A closed stdin/stdout/stderr (`<&-`) is a free number the next pipe or socket would take, and
 * supervise() points 0 and 1 at /dev/null: an internal descriptor there is lost (the relay socket on fd 0
 * made every later exec fail). Hold each closed one with /dev/null, close-on-exec, so the payload still
 * starts with it closed, as under bash. */
static void hold_closed_stdio(void) {
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int n = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (n >= 0 && n != fd) close(n); /* lower ones are held already, so n == fd */
    }
}

int main(int argc, char **argv) {
  char err[1200];
  hold_closed_stdio();
  /* --argv0 NAME: the program's argv[0] when it is not the program's path (an escalated command) */
  const char *argv0 = NULL;
  const char *session = NULL;
  if (argc > 3 && !strcmp(argv[1], "--session-ns")) { session = argv[2]; argv += 2; argc -= 2; }
  if (argc > 3 && !strcmp(argv[1], "--argv0")) { argv0 = argv[2]; argv += 2; argc -= 2; }
  if (argc < 2 || argv[1][0] != '/') {
    gate_msg("exec gate: usage: gate-launch [--session-ns PID:PIDNS:NETNS] [--argv0 NAME] /absolute/program [args...]", NULL, NULL, NULL);
    return 126;
  }
  char **prog = argv + 1;
  const char *path = prog[0];
  if (session) {
    if (gate_join_open(&J, session, err, sizeof err)) die126(prog[0], ": not run: ", err);
    /* PROGRAM --pidns FD ARGS...: argv has room (the two --session-ns words before it) */
    memmove(prog - 2, prog, sizeof *prog);
    prog -= 2;
    prog[1] = "--pidns";
    prog[2] = J.pidns_arg;
  }
  /* this supervisor talks to the daemon itself; a nested launcher's tree keeps the enclosing one's */
  const char *outer = getenv("GATE_KERNEL_SOCK");
  if (outer) outer_ksock = strdup(outer);
  unsetenv("GATE_KERNEL_SOCK");
  if (gate_conf_from_env(&S.conf, err, sizeof err)) die126(prog[0], ": not run: ", err);
  /* the gate's own LD_PRELOAD and PATH entries, not reported as the caller's (libgate.so, bin/ beside us) */
  char self[PATH_MAX];
  if (read_link("/proc/self/exe", self, sizeof self)) die126(prog[0], ": not run: cannot find the gate's own folder", NULL);
  char *slash = strrchr(self, '/');
  *slash = 0;
  gate_join(S.own_preload, sizeof S.own_preload, self, "/libgate.so", NULL, NULL);
  gate_join(S.own_path, sizeof S.own_path, self, "/bin", NULL, NULL);
  S.expect[S.nexpect++] = prog[0];
  const char *then = getenv("GATE_THEN");
  if (then && *then == '/') S.expect[S.nexpect++] = then;
  pthread_mutex_init(&S.lock, NULL);
  pthread_cond_init(&S.freed, NULL);
  /* under bubblewrap's --die-with-parent the sandbox goes when its spawner does: keep that through us */
  int die_with_parent = has_arg(prog, "--die-with-parent");
  /* Joining a session sandbox (--pidns), bubblewrap forks intermediate processes that exit at once, and its
   * child sets its parent-death signal while its parent may still be such an intermediate: when that one's
   * exit comes late (a busy machine), the kernel SIGKILLs the sandbox's pid 1 and the command with it (seen
   * as exit 137 in about 1 of 1,500 concurrent runs). There the option is left out of bubblewrap's
   * arguments; the front's death still takes the command down (the supervisor kills the command's group
   * and bubblewrap), and so does the supervisor's (the front does the same). */
  if (J.pidns >= 0 && die_with_parent) {
    int o = 0, command = 0;
    for (int i = 0; prog[i]; i++) {
      command = command || !strcmp(prog[i], "--"); /* the command's own words are never touched */
      if (command || strcmp(prog[i], "--die-with-parent")) prog[o++] = prog[i];
    }
    prog[o] = NULL;
  }
  if (J.pidns >= 0) gate_join_plan(&J, prog);
  pid_t spawner = getppid();
  if (die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != spawner)) die126(prog[0], ": not run: its caller is gone", NULL);

  sigset_t fwd, oldmask;
  sigemptyset(&fwd);
  for (const int *s = FORWARDED; *s; s++) sigaddset(&fwd, *s);
  sigaddset(&fwd, SIGCHLD);
  sigaddset(&fwd, FRONT_GONE);
  sigprocmask(SIG_BLOCK, &fwd, &oldmask);

  int status[2], sp[2];
  if (pipe2(status, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp))
    die126(prog[0], ": not run: ", strerror(errno));
  pid_t front = getpid();
  pid_t sup = fork();
  if (sup < 0) die126(prog[0], ": not run: cannot start the exec supervisor: ", strerror(errno));
  if (sup == 0) {
    close(status[0]);
    /* not SIGKILL: after a normal end the supervisor still removes its sockets */
    if (die_with_parent && (prctl(PR_SET_PDEATHSIG, FRONT_GONE) || getppid() != front)) die126(prog[0], ": not run: its caller is gone", NULL);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* in a session sandbox the jobs outlive the command and their supervisor must outlive the caller's
     * process group being killed (a timeout kills the group): a group of its own */
    if (J.pidns >= 0) setpgid(0, 0);
    /* the supervisor outlives interruptions meant for the command; only the tree's end stops it */
    for (const int *s = FORWARDED; *s; s++) signal(*s, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTSTP, SIG_IGN); signal(SIGTTIN, SIG_IGN); signal(SIGTTOU, SIG_IGN);
    char rerr[512];
    if (relay_open(rerr, sizeof rerr)) {
      gate_msg("exec gate: ", prog[0], ": not run: ", rerr);
      int st = 126 << 8;
      pid_t none = 0;
      ssize_t w1 = write(status[1], &none, sizeof none), w2 = write(status[1], &st, sizeof st);
      (void)w1; (void)w2;
      _exit(0);
    }
    gate_reuse_open(S.conf.request_sock); /* no epoch file (an older daemon): nothing is reused */
    if (J.stale) tell_stale();
    int inside = gate_join_born_inside(&J, 1);
    pid_t root = fork();
    if (inside && root != 0) gate_join_born_inside(&J, 0);
    /* the plan's own first exec is the command's, not bubblewrap's */
    if (J.direct) { S.expect[0] = J.command[0]; S.nexpect = 1; }
    if (root < 0) { gate_msg("exec gate: ", prog[0], ": not run: ", strerror(errno)); _exit(126); }
    if (root == 0) {
      close(sp[0]); close(status[1]); close(S.ksock); close(S.dsock);
      setenv("GATE_KERNEL_SOCK", S.kpath, 1);
      if (argv0) prog[0] = (char *)argv0;
      tree_root(sp[1], path, prog, &oldmask);
    }
    close(sp[1]);
    ssize_t wr = write(status[1], &root, sizeof root);
    (void)wr;
    int why;
    S.listener = recv_fd(sp[0], &why);
    close(sp[0]);
    sigset_t chld; sigemptyset(&chld); sigaddset(&chld, SIGCHLD); sigaddset(&chld, FRONT_GONE);
    int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (S.listener < 0) {
      if (why > 0) gate_msg("exec gate: ", prog[0], ": not run: the kernel refused the exec filter (seccomp user notification): ", strerror(why));
      else if (why == 0) gate_msg("exec gate: ", prog[0], ": not run: the exec filter's listener did not arrive", NULL);
      if (why >= 0) kill(root, SIGKILL);
      int st;
      while (waitpid(root, &st, 0) < 0 && errno == EINTR) {}
      if (why >= 0) st = 126 << 8;
      wr = write(status[1], &st, sizeof st);
      unlink(S.kpath);
      unlink(S.dpath);
      _exit(0);
    }
    prctl(PR_SET_DUMPABLE, 0);
    S.root = root;
    if (ioctl(S.listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &(uint64_t){ 0 }) < 0 && errno == EINVAL) {} /* probe only */
    if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &S.sizes)) {
      S.sizes.seccomp_notif = sizeof(struct seccomp_notif);
      S.sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
    }
    if (S.sizes.seccomp_notif < sizeof(struct seccomp_notif)) S.sizes.seccomp_notif = sizeof(struct seccomp_notif);
    if (S.sizes.seccomp_notif_resp < sizeof(struct seccomp_notif_resp)) S.sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
    supervise(status[1], root, sigfd);
  }
  close(status[1]);
  /* the front keeps nothing of the caller's but stdio: a pipe the command holds ends when the command
   * (and what it started) lets go of it, as without the launcher */
  int keep1[1] = { status[0] };
  close_all_but(keep1, 1);
  pid_t root = 0;
  ssize_t n;
  do n = read(status[0], &root, sizeof root); while (n < 0 && errno == EINTR);
  if (n != (ssize_t)sizeof root) die126(prog[0], ": not run: the exec supervisor did not start", NULL);
  int sigfd = signalfd(-1, &fwd, SFD_CLOEXEC);
  for (;;) {
    struct pollfd pf[2] = { { status[0], POLLIN, 0 }, { sigfd, POLLIN, 0 } };
    if (poll(pf, 2, -1) < 0 && errno != EINTR) break;
    if (pf[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      if (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si && (int)si.ssi_signo != SIGCHLD && (int)si.ssi_signo != FRONT_GONE && root > 0) kill(root, (int)si.ssi_signo);
    }
    if (pf[0].revents & (POLLIN | POLLHUP)) {
      int st;
      do n = read(status[0], &st, sizeof st); while (n < 0 && errno == EINTR);
      if (n == (ssize_t)sizeof st) return pass_on(st);
      /* the supervisor is gone before the command ended: no exec can pass any more (the kernel answers
       * ENOSYS); end the command rather than leave it running half-able */
      if (root > 0 && J.pidns >= 0) kill_command_group(root);
      if (root > 0) kill(root, SIGKILL);
      gate_msg("exec gate: the exec supervisor of this run is gone; the run was stopped (nothing more could be checked)", NULL, NULL, NULL);
      return 126;
    }
  }
  return 126;
}
