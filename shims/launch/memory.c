/*
 * Reading another process (gate-launch's supervisor): the strings and pointers of an exec's path, argv and
 * envp in its memory, its /proc files, its pids. The memory is read a page at a time and each page kept for
 * the rest of this exec's reading: argv and envp strings lie close together (a stack, or a few heap pages),
 * so an exec costs a few reads instead of two per string (each read walks the remote page tables). The reads
 * are process_vm_readv, not /proc/<pid>/mem: no file to open and close per exec; the kernel asks the same
 * ptrace access of both. The pid cannot name another process meanwhile: the notification is checked still
 * valid after the reads (decide.c). Trust boundary: every byte here comes from a process that may be
 * hostile and may rewrite it while it is read: every read is bounded (MAX_STRING, MAX_STRINGS, MAX_TOTAL),
 * and a failed read is a failure, never a guess. Unit-tested by test/c/memory.c, fuzzed by test/c/fuzz/.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

/* Each worker keeps its page buffer for every exec it reads (workers are kept: no allocation per exec). */
static __thread char (*THREAD_PAGES)[PAGE];

/* The page holding addr (NULL when unmapped or unreadable). */
static const char *page_of(struct proc *p, uint64_t addr) {
  uint64_t base = addr & ~(uint64_t)(PAGE - 1);
  for (int i = 0; i < p->used; i++)
    if (p->at[i] == base) return p->page[i];
  if (!p->page && !THREAD_PAGES) THREAD_PAGES = malloc(CACHED_PAGES * (size_t)PAGE);
  if (!p->page && !(p->page = THREAD_PAGES)) {
    if (!p->error) p->error = ENOMEM;
    return NULL;
  }
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

void proc_done(struct proc *p) { p->page = NULL; /* the thread's, kept */ }

/* A NUL-terminated string at addr (it may end just before an unmapped page). */
char *read_str(struct proc *p, uint64_t addr) {
  struct gbuf b;
  gb_init(&b);
  for (;;) {
    const char *pg = page_of(p, addr);
    if (!pg) {
      gb_free(&b);
      return NULL;
    }
    size_t off = addr & (PAGE - 1), room = PAGE - off;
    const char *z = memchr(pg + off, 0, room);
    gb_put(&b, pg + off, z ? (size_t)(z - pg - off) : room);
    if (b.oom || b.len > MAX_STRING) {
      gb_free(&b);
      return NULL;
    }
    if (z) break;
    addr += room;
  }
  if (!b.p) gb_puts(&b, "");
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

char **read_vec(struct proc *p, uint64_t addr, int *ok) {
  size_t n = 0, cap = 16;
  char **v = calloc(cap + 1, sizeof *v);
  *ok = 0;
  if (!v) return NULL;
  if (!addr) {
    *ok = 1;
    return v;
  }
  for (;;) {
    uint64_t ptr;
    if (read_ptr(p, addr + 8 * n, &ptr)) break;
    if (!ptr) {
      *ok = 1;
      break;
    }
    if (n >= MAX_STRINGS) break;
    if (n == cap) {
      char **w = realloc(v, (cap * 2 + 1) * sizeof *v);
      if (!w) break;
      v = w;
      cap *= 2;
    }
    char *s = read_str(p, ptr);
    if (!s) break;
    v[n++] = s;
    v[n] = NULL;
  }
  v[n] = NULL;
  return v;
}

int read_link(const char *path, char *out, size_t n) {
  ssize_t l = readlink(path, out, n - 1);
  if (l < 0 || (size_t)l >= n - 1) return -1;
  out[l] = 0;
  return 0;
}

/* From one read of /proc/<pid>/status. */
struct ids ids_of(pid_t pid) {
  struct ids r = {pid, -1, pid};
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

long own_pid(pid_t pid) { return ids_of(pid).own; }

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
int first_stack(pid_t pid, char ***argv, char ***envp, uint64_t *envp_at) {
#if defined(__x86_64__) || defined(__aarch64__)
  struct user_regs_struct regs;
  struct iovec io = {&regs, sizeof regs};
  if (ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &io) || io.iov_len != sizeof regs) return -1;
#if defined(__x86_64__)
  if (regs.cs != 0x33) return -1; /* not the 64-bit code segment: 4-byte pointers */
  uint64_t sp = regs.rsp;
#else
  uint64_t sp = regs.sp;
#endif
  struct proc p = {.pid = pid};
  uint64_t argc;
  int ok1 = 0, ok2 = 0;
  char **a = NULL, **e = NULL;
  if (!read_ptr(&p, sp, &argc) && argc < MAX_STRINGS) {
    a = read_vec(&p, sp + 8, &ok1);
    if (ok1 && vec_len(a) == argc) e = read_vec(&p, sp + 8 * (argc + 2), &ok2);
  }
  proc_done(&p);
  /* e is read only after argv was read whole, argc long */
  if (!e || !ok2) {
    free_vec(a);
    free_vec(e);
    return -1;
  }
  *argv = a;
  *envp = e;
  *envp_at = sp + 8 * (argc + 2);
  return 0;
#else
  (void)pid;
  (void)argv;
  (void)envp;
  (void)envp_at;
  return -1;
#endif
}

_Static_assert(sizeof GATE_VAR_BELOW == sizeof GATE_VAR_ASK, "the mark is rewritten in place");

int mark_below(pid_t pid, uint64_t envp_at, char **envp) {
  size_t i = 0, ml = sizeof GATE_MARK_ASK - 1;
  while (envp[i] && strncmp(envp[i], GATE_MARK_ASK, ml)) i++;
  if (!envp[i]) return -1;
  struct proc p = {.pid = pid};
  uint64_t at;
  char *now = read_ptr(&p, envp_at + 8 * i, &at) ? NULL : read_str(&p, at);
  proc_done(&p);
  /* the very string compared (the process has run no instruction since) */
  int same = now && !strcmp(now, envp[i]);
  free(now);
  if (!same) return -1;
  size_t n = sizeof GATE_VAR_BELOW - 1;
  struct iovec local = {(void *)GATE_VAR_BELOW, n}, remote = {(void *)at, n};
  return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)local.iov_len ? 0 : -1;
}
