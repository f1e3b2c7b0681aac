/*
 * Reading another process (gate-launch's supervisor): the strings and pointers of an exec's path, argv and
 * envp in its memory, its /proc files, its pids. The memory is read by pages, each kept for the rest of this
 * exec's reading, and the pages a reading will need are read together, in one system call each time: first
 * the pages of the path and of the two pointer arrays, then those of all their strings (a build's environment
 * lies on some ten heap pages; each call costs as much again as a page). The reads are process_vm_readv, not
 * /proc/<pid>/mem: no file to open per exec (which costs more than it saves; measured, docs/history), and the
 * kernel asks the same ptrace access of both. The pid cannot name another process meanwhile: the
 * notification is checked still valid after the reads (decide.c). Trust boundary: every byte here comes from
 * a process that may be hostile and may rewrite it while it is read: every read is bounded (MAX_STRING,
 * MAX_STRINGS, MAX_TOTAL, PREFETCH_LOOK), and a failed read is a failure, never a guess. Unit-tested by
 * test/c/memory.c, fuzzed by test/c/fuzz/.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

/* How many of the addresses given are looked at for pages to read ahead. */
#define PREFETCH_LOOK 4096
/* The pages read ahead from a new program's stack pointer (its arguments and environment, as the kernel laid
 * them out above it). */
#define FIRST_STACK_PAGES 4

/* Each worker keeps its page buffer for every exec it reads (workers are kept: no allocation per exec). */
static __thread char (*THREAD_PAGES)[PAGE];

/* The reading's pages (the thread's): 0, or -1 when out of memory (said in p->error). */
static int pages(struct proc *p) {
  if (!p->page && !THREAD_PAGES) THREAD_PAGES = malloc(CACHED_PAGES * (size_t)PAGE);
  if (!p->page && !(p->page = THREAD_PAGES)) {
    if (!p->error) p->error = ENOMEM;
    return -1;
  }
  return 0;
}

static int kept(const struct proc *p, uint64_t base) {
  for (int i = 0; i < p->used; i++)
    if (p->at[i] == base) return i;
  return -1;
}

/* The page holding addr (NULL when unmapped or unreadable). */
static const char *page_of(struct proc *p, uint64_t addr) {
  uint64_t base = addr & ~(uint64_t)(PAGE - 1);
  int i = kept(p, base);
  if (i >= 0) return p->page[i];
  if (pages(p)) return NULL;
  int slot = p->used < CACHED_PAGES ? p->used++ : (p->next++ % CACHED_PAGES);
  struct iovec here = {p->page[slot], PAGE}, there = {(void *)(uintptr_t)base, PAGE};
  errno = 0;
  if (process_vm_readv(p->pid, &here, 1, &there, 1, 0) != PAGE) {
    if (!p->error) p->error = errno ? errno : EFAULT;
    p->at[slot] = 1; /* 1: no page's address */
    return NULL;
  }
  p->at[slot] = base;
  return p->page[slot];
}

void proc_prefetch(struct proc *p, const uint64_t *addrs, size_t n) {
  if (pages(p)) return;
  struct iovec here[CACHED_PAGES], there[CACHED_PAGES];
  uint64_t want[CACHED_PAGES];
  int k = 0, room = CACHED_PAGES - p->used;
  /* (a bounded look: a hostile array can point a million times at one page) */
  for (size_t i = 0; i < n && i < PREFETCH_LOOK && k < room; i++) {
    uint64_t base = addrs[i] & ~(uint64_t)(PAGE - 1);
    int dup = !base || kept(p, base) >= 0;
    for (int j = 0; j < k && !dup; j++) dup = want[j] == base;
    if (dup) continue;
    want[k] = base;
    here[k] = (struct iovec){p->page[p->used + k], PAGE};
    there[k] = (struct iovec){(void *)(uintptr_t)base, PAGE};
    k++;
  }
  if (k < 2) return; /* one page: page_of reads it when it is needed, as cheaply */
  /* the kernel copies the pages in order and stops at the first it cannot read: those before it are kept */
  ssize_t got = process_vm_readv(p->pid, here, (unsigned long)k, there, (unsigned long)k, 0);
  for (int j = 0; got > 0 && j < got / PAGE; j++) p->at[p->used++] = want[j];
}

void proc_done(struct proc *p) { p->page = NULL; /* the thread's, kept */ }

/* A NUL-terminated string at addr (it may end just before an unmapped page), in an allocation of its own size:
 * one that ends in the page it starts in (nearly all of an exec's) is copied from that page once. */
char *read_str(struct proc *p, uint64_t addr) {
  const char *pg = page_of(p, addr);
  if (!pg) return NULL;
  size_t off = addr & (PAGE - 1), room = PAGE - off;
  const char *z = memchr(pg + off, 0, room);
  if (z) {
    size_t n = (size_t)(z - pg - off);
    char *s = p->total + n + 1 <= MAX_TOTAL ? malloc(n + 1) : NULL;
    if (!s) return NULL;
    memcpy(s, pg + off, n + 1);
    p->total += n + 1;
    return s;
  }
  struct gbuf b;
  gb_init(&b);
  for (;;) {
    pg = page_of(p, addr);
    if (!pg) {
      gb_free(&b);
      return NULL;
    }
    off = addr & (PAGE - 1);
    room = PAGE - off;
    z = memchr(pg + off, 0, room);
    gb_put(&b, pg + off, z ? (size_t)(z - pg - off) : room);
    if (b.oom || b.len > MAX_STRING) {
      gb_free(&b);
      return NULL;
    }
    if (z) break;
    addr += room;
  }
  p->total += b.len + 1;
  if (b.oom || p->total > MAX_TOTAL) {
    gb_free(&b);
    return NULL;
  }
  return b.p;
}

/* A pointer at addr (8-byte aligned in every ABI we read; an unaligned one is read across pages). */
int read_ptr(struct proc *p, uint64_t addr, uint64_t *out) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) {
    const char *pg = page_of(p, addr + (uint64_t)i);
    if (!pg) return -1;
    b[i] = (unsigned char)pg[(addr + (uint64_t)i) & (PAGE - 1)];
  }
  memcpy(out, b, 8);
  return 0;
}

void free_vec(char **v) {
  if (!v) return;
  for (char **s = v; *s; s++) free(*s);
  free(v);
}

size_t vec_len(char **v) {
  size_t n = 0;
  while (v[n]) n++;
  return n;
}

int vec_eq(char **a, char **b) {
  for (; *a && *b; a++, b++)
    if (strcmp(*a, *b)) return 0;
  return !*a && !*b;
}

/* The pointers of the NULL-terminated array at addr (at most MAX_STRINGS): malloc'd, *n of them, *whole = 1
 * when its NULL was reached; NULL when out of memory. */
static uint64_t *read_ptrs(struct proc *p, uint64_t addr, size_t *n, int *whole) {
  size_t cap = 16;
  uint64_t *v = malloc(cap * sizeof *v);
  *n = 0;
  *whole = 0;
  for (uint64_t ptr; v;) {
    if (read_ptr(p, addr + 8 * *n, &ptr)) break;
    if (!ptr) {
      *whole = 1;
      break;
    }
    if (*n >= MAX_STRINGS) break;
    if (*n == cap) {
      uint64_t *w = realloc(v, cap * 2 * sizeof *v);
      if (!w) break;
      v = w;
      cap *= 2;
    }
    v[(*n)++] = ptr;
  }
  return v;
}

int read_vecs(struct proc *p, int count, const uint64_t *addr, char ***out, int *ok) {
  uint64_t *ptrs[4] = {0};
  size_t n[4] = {0}, all = 0;
  int whole[4] = {0}, failed = count > 4;
  for (int i = 0; i < count; i++) {
    out[i] = NULL;
    ok[i] = 0;
  }
  /* the arrays, then the pages of all their strings at once */
  for (int i = 0; i < count && !failed; i++) {
    if (addr[i] && !(ptrs[i] = read_ptrs(p, addr[i], &n[i], &whole[i]))) failed = 1;
    all += n[i];
  }
  uint64_t *flat = failed ? NULL : malloc((all ? all : 1) * sizeof *flat);
  for (int i = 0, k = 0; flat && i < count; i++)
    for (size_t j = 0; j < n[i]; j++) flat[k++] = ptrs[i][j];
  if (flat) proc_prefetch(p, flat, all);
  free(flat);
  for (int i = 0; i < count && !failed; i++) {
    char **v = calloc(n[i] + 1, sizeof *v);
    if (!v) {
      failed = 1;
      break;
    }
    size_t j = 0;
    for (; j < n[i] && (v[j] = read_str(p, ptrs[i][j])); j++) {}
    v[j] = NULL;
    out[i] = v;
    /* a NULL addr is an empty array, read whole */
    ok[i] = !addr[i] || (whole[i] && j == n[i]);
  }
  for (int i = 0; i < count && i < 4; i++) free(ptrs[i]);
  if (!failed) return 0;
  for (int i = 0; i < count && i < 4; i++) {
    free_vec(out[i]);
    out[i] = NULL;
    ok[i] = 0;
  }
  return -1;
}

char **read_vec(struct proc *p, uint64_t addr, int *ok) {
  char **v;
  return read_vecs(p, 1, &addr, &v, ok) ? NULL : v;
}

int read_link(const char *path, char *out, size_t n) {
  ssize_t l = readlink(path, out, n - 1);
  if (l < 0 || (size_t)l >= n - 1) return -1;
  out[l] = 0;
  return 0;
}

/* All three from one read of /proc/<pid>/status (the slow way: the kernel formats some fifty lines). */
static struct ids status_ids(pid_t pid) {
  struct ids r = {pid, -1, pid, pid};
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return r;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return r;
  buf[n] = 0;
  char *tg = strstr(buf, "\nTgid:");
  if (tg) r.tgid = strtol(tg + 6, NULL, 10);
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

/* The first fields of the kernel's struct pidfd_info (linux/pidfd.h, Linux 6.13; older headers lack it): the
 * ioctl's number carries the size, and the kernel answers any size from this one up. */
struct pidfd_info0 {
  uint64_t mask, cgroupid;
  uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  int32_t exit_code;
};
_Static_assert(sizeof(struct pidfd_info0) == 64, "PIDFD_INFO_SIZE_VER0");
#define PIDFD_GET_INFO0 _IOWR(0xFF, 11, struct pidfd_info0)
#define PIDFD_INFO_PID0 1ULL
#define PIDFD_THREAD0 O_EXCL /* a pidfd for any thread (Linux 6.9) */

struct ids ids_of(pid_t pid) {
  /* parent and thread group from a pidfd (Linux 6.13: a third of the status file's cost), in this process's
   * pid namespace as /proc shows them; the pid it knows itself by is read only when asked for (ids_own) */
  int fd = (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD0);
  struct pidfd_info0 in = {.mask = PIDFD_INFO_PID0};
  int got = fd >= 0 && ioctl(fd, PIDFD_GET_INFO0, &in) == 0 && (in.mask & PIDFD_INFO_PID0) && in.pid == (uint32_t)pid;
  if (fd >= 0) close(fd);
  if (!got) return status_ids(pid);
  return (struct ids){.pid = pid, .own = 0, .parent = in.ppid ? (long)in.ppid : -1, .tgid = in.tgid};
}

long ids_own(struct ids *ids) {
  if (!ids->own) ids->own = status_ids(ids->pid).own;
  return ids->own;
}

long own_pid(pid_t pid) { return status_ids(pid).own; }

char **proc_strings(pid_t pid, const char *what) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct gbuf b;
  gb_init(&b);
  char chunk[65536];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof chunk)) > 0 && !b.oom && b.len <= MAX_TOTAL + MAX_STRING)
    gb_put(&b, chunk, (size_t)n);
  close(fd);
  if (n < 0 || b.oom) {
    gb_free(&b);
    return NULL;
  }
  size_t count = 0;
  for (size_t i = 0; i < b.len; i++) count += b.p[i] == 0;
  char **v = calloc(count + 2, sizeof *v);
  size_t k = 0, start = 0;
  for (size_t i = 0; v && i < b.len; i++)
    if (b.p[i] == 0) {
      v[k++] = strdup(b.p + start);
      start = i + 1;
    }
  if (v && start < b.len) v[k++] = strndup(b.p + start, b.len - start);
  gb_free(&b);
  for (size_t i = 0; v && i < k; i++)
    if (!v[i]) {
      free_vec(v);
      return NULL;
    }
  return v;
}

/* argc at the stack pointer, then the argv pointers, NULL, the envp pointers, NULL, pointing at the strings
 * the kernel copied (what /proc/<pid>/cmdline and environ show; the program has run no instruction yet).
 * -1 where it cannot be read that way (another ABI, a 32-bit program, memory this user may not read): the
 * caller reads /proc instead. */
int first_stack(struct proc *p, char ***argv, char ***envp, uint64_t *envp_at) {
#if defined(__x86_64__) || defined(__aarch64__)
  struct user_regs_struct regs;
  struct iovec io = {&regs, sizeof regs};
  if (ptrace(PTRACE_GETREGSET, p->pid, NT_PRSTATUS, &io) || io.iov_len != sizeof regs) return -1;
#if defined(__x86_64__)
  if (regs.cs != 0x33) return -1; /* not the 64-bit code segment: 4-byte pointers */
  uint64_t sp = regs.rsp;
#else
  uint64_t sp = regs.sp;
#endif
  /* the arrays and their strings lie between the stack pointer and the stack's top, a few pages up: read
   * together (the read stops where the stack ends) */
  uint64_t span[FIRST_STACK_PAGES];
  for (int i = 0; i < FIRST_STACK_PAGES; i++) span[i] = sp + (uint64_t)i * PAGE;
  proc_prefetch(p, span, FIRST_STACK_PAGES);
  uint64_t argc;
  if (read_ptr(p, sp, &argc) || argc >= MAX_STRINGS) return -1;
  const uint64_t at[2] = {sp + 8, sp + 8 * (argc + 2)};
  char **v[2];
  int ok[2];
  if (read_vecs(p, 2, at, v, ok)) return -1;
  /* envp counts only after argv was read whole, argc long */
  if (!ok[0] || !ok[1] || vec_len(v[0]) != argc) {
    free_vec(v[0]);
    free_vec(v[1]);
    return -1;
  }
  *argv = v[0];
  *envp = v[1];
  *envp_at = at[1];
  return 0;
#else
  (void)p;
  (void)argv;
  (void)envp;
  (void)envp_at;
  return -1;
#endif
}

_Static_assert(sizeof GATE_VAR_BELOW == sizeof GATE_VAR_ASK, "the mark is rewritten in place");

int mark_below(struct proc *p, uint64_t envp_at, char **envp) {
  size_t i = 0, ml = sizeof GATE_MARK_ASK - 1;
  while (envp[i] && strncmp(envp[i], GATE_MARK_ASK, ml)) i++;
  if (!envp[i]) return -1;
  uint64_t at;
  char *now = read_ptr(p, envp_at + 8 * i, &at) ? NULL : read_str(p, at);
  /* the very string compared (the process has run no instruction since) */
  int same = now && !strcmp(now, envp[i]);
  free(now);
  if (!same) return -1;
  size_t n = sizeof GATE_VAR_BELOW - 1;
  struct iovec local = {(void *)GATE_VAR_BELOW, n}, remote = {(void *)at, n};
  return process_vm_writev(p->pid, &local, 1, &remote, 1, 0) == (ssize_t)local.iov_len ? 0 : -1;
}
