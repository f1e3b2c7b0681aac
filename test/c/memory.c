/*
 * Unit tests of the supervisor's reader of another process's memory (shims/launch/memory.c): read_str,
 * read_ptr, read_vec over this process's own pages and a child's, at page edges, over unmapped pages and
 * past the bounds (MAX_STRING, MAX_TOTAL); pages read ahead (proc_prefetch, read_vecs); proc_strings, ids_of
 * and ids_own over /proc and pidfds, for a process and a thread. The memory read is the
 * trust boundary: every case here is one a hostile process can set up. TAP on stdout (tap.h).
 */
#define _GNU_SOURCE
#include "launch/launch.h"
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ADDR(p) ((uint64_t)(uintptr_t)(p))

/* Two pages, the second unmapped: a string or array can run into the hole. */
static char *page_before_hole(void) {
  char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  munmap(m + PAGE, PAGE);
  memset(m, 'x', PAGE);
  return m;
}

static void strings(void) {
  struct proc p = {.pid = getpid()};
  char *s = read_str(&p, ADDR("hello"));
  is_str(s, "hello", "read_str reads a string of this process");
  ok(p.total == 6 && p.error == 0, "its bytes are counted with the NUL (%zu)", p.total);
  free(s);
  s = read_str(&p, ADDR(""));
  is_str(s, "", "an empty string is an empty string, not a failure");
  free(s);
  proc_done(&p);

  char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  memcpy(m + PAGE - 2, "abc", 4);
  p = (struct proc){.pid = getpid()};
  s = read_str(&p, ADDR(m + PAGE - 2));
  is_str(s, "abc", "a string across a page boundary is read whole");
  free(s);
  proc_done(&p);
  munmap(m, 2 * PAGE);

  char *h = page_before_hole();
  memcpy(h + PAGE - 3, "xy", 3);
  p = (struct proc){.pid = getpid()};
  s = read_str(&p, ADDR(h + PAGE - 3));
  is_str(s, "xy", "a string that ends on the last byte before an unmapped page is read");
  free(s);
  proc_done(&p);
  /* (a new reading: within one, a page is read once and kept, as the process stands still in its exec) */
  h[PAGE - 1] = 'z';
  p = (struct proc){.pid = getpid()};
  s = read_str(&p, ADDR(h + PAGE - 3));
  ok(s == NULL, "a string that runs into an unmapped page is a failure, not a guess");
  free(s);
  ok(p.error == EFAULT, "and the reading says why (errno %d)", p.error);
  proc_done(&p);
  p = (struct proc){.pid = getpid()};
  ok(read_str(&p, 0) == NULL && read_str(&p, ADDR(h + PAGE)) == NULL, "NULL and unmapped addresses are failures");
  proc_done(&p);
  munmap(h, PAGE);

  char *big = malloc(MAX_STRING + 2);
  memset(big, 'a', MAX_STRING + 1);
  big[MAX_STRING + 1] = 0;
  p = (struct proc){.pid = getpid()};
  ok(read_str(&p, ADDR(big)) == NULL, "a string over MAX_STRING is refused");
  proc_done(&p);
  big[MAX_STRING] = 0;
  p = (struct proc){.pid = getpid()};
  s = read_str(&p, ADDR(big));
  ok(s && strlen(s) == MAX_STRING, "a string of exactly MAX_STRING is read");
  free(s);
  proc_done(&p);
  free(big);
}

static void pointers(void) {
  char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  uint64_t want = 0x1122334455667788ULL, got = 0;
  memcpy(m + PAGE - 3, &want, 8); /* unaligned, across the page boundary */
  struct proc p = {.pid = getpid()};
  ok(read_ptr(&p, ADDR(m + PAGE - 3), &got) == 0 && got == want, "an unaligned pointer across pages is read");
  proc_done(&p);
  munmap(m + PAGE, PAGE);
  p = (struct proc){.pid = getpid()};
  ok(read_ptr(&p, ADDR(m + PAGE - 3), &got) == -1, "a pointer cut by an unmapped page is a failure");
  proc_done(&p);
  munmap(m, PAGE);
}

static void vectors(void) {
  int ok1 = -1;
  struct proc p = {.pid = getpid()};
  char **v = read_vec(&p, 0, &ok1);
  ok(v && !v[0] && ok1 == 1, "a NULL array is an empty one, read whole");
  free_vec(v);
  const char *argv[] = {"ls", "-l", "/tmp", NULL};
  v = read_vec(&p, ADDR(argv), &ok1);
  ok(ok1 == 1 && vec_len(v) == 3 && vec_eq(v, (char **)argv), "an argv is read whole");
  free_vec(v);
  proc_done(&p);

  /* more strings than the first allocation holds, on more pages than are cached */
  enum { N = 100 };
  char *pages = mmap(NULL, (size_t)N * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char *many[N + 1];
  for (int i = 0; i < N; i++) {
    many[i] = pages + (size_t)i * PAGE + (size_t)(i % 50);
    snprintf(many[i], 32, "arg%d", i);
  }
  many[N] = NULL;
  p = (struct proc){.pid = getpid()};
  v = read_vec(&p, ADDR(many), &ok1);
  ok(ok1 == 1 && vec_len(v) == N && vec_eq(v, many), "100 strings on 100 pages (the cache holds %d) are read",
     CACHED_PAGES);
  free_vec(v);
  proc_done(&p);
  munmap(pages, (size_t)N * PAGE);

  /* an array with no NULL before an unmapped page */
  char *h = page_before_hole();
  char **arr = (char **)(h + PAGE - 2 * sizeof(char *));
  arr[0] = "one";
  arr[1] = "two";
  p = (struct proc){.pid = getpid()};
  v = read_vec(&p, ADDR(arr), &ok1);
  ok(ok1 == 0 && v && vec_len(v) == 2, "an array that runs into an unmapped page is not read whole");
  free_vec(v);
  proc_done(&p);
  /* a pointer to nowhere */
  arr[0] = "one";
  arr[1] = h + PAGE;
  p = (struct proc){.pid = getpid()};
  v = read_vec(&p, ADDR(arr), &ok1);
  ok(ok1 == 0 && v && vec_len(v) == 1, "an array with a pointer to an unmapped page is not read whole");
  free_vec(v);
  proc_done(&p);
  munmap(h, PAGE);

  /* MAX_TOTAL: 70 strings of 120 KiB are 8.4 MiB */
  enum { K = 70, LEN = 120 * 1024 };
  char *blob = malloc((size_t)K * (LEN + 1));
  char *big[K + 1];
  for (int i = 0; i < K; i++) {
    big[i] = blob + (size_t)i * (LEN + 1);
    memset(big[i], 'b', LEN);
    big[i][LEN] = 0;
  }
  big[K] = NULL;
  p = (struct proc){.pid = getpid()};
  v = read_vec(&p, ADDR(big), &ok1);
  ok(ok1 == 0 && v && vec_len(v) < K && p.total <= MAX_TOTAL + MAX_STRING + 1,
     "more than MAX_TOTAL bytes of strings are refused (%zu strings read)", v ? vec_len(v) : 0);
  free_vec(v);
  proc_done(&p);
  free(blob);
}

static void other_processes(void) {
  static char shared[64] = "parent";
  int go[2], ready[2];
  if (pipe(go) || pipe(ready)) return;
  pid_t c = fork();
  if (c == 0) {
    char b;
    strcpy(shared, "child's own copy");
    if (write(ready[1], "r", 1) != 1 || read(go[0], &b, 1) < 0) _exit(1);
    _exit(0);
  }
  char b;
  ok(read(ready[0], &b, 1) == 1, "a child is ready");
  struct proc p = {.pid = c};
  char *s = read_str(&p, ADDR(shared));
  is_str(s, "child's own copy", "read_str reads the child's memory, not this process's");
  free(s);
  proc_done(&p);
  char **cmd = proc_strings(c, "cmdline");
  ok(cmd && cmd[0], "proc_strings reads a child's cmdline");
  free_vec(cmd);
  struct ids ids = ids_of(c);
  ok(ids.parent == getpid() && ids.tgid == c, "ids_of: its parent and thread group (%ld, %ld)", ids.parent, ids.tgid);
  ok(ids_own(&ids) == c, "ids_own: its own pid, read when asked for (%ld)", ids.own);
  if (write(go[1], "g", 1) != 1) kill(c, SIGKILL);
  int st;
  waitpid(c, &st, 0);
  p = (struct proc){.pid = c};
  ok(read_str(&p, ADDR(shared)) == NULL && p.error == ESRCH, "a process gone: a failure, ESRCH (%d)", p.error);
  proc_done(&p);
  ok(proc_strings(c, "cmdline") == NULL, "and its /proc files are unreadable");
  char link[64];
  ok(read_link("/proc/self/exe", link, 4) == -1, "read_link refuses a target longer than its room");
}

static void *sleeper(void *arg) {
  pid_t *tid = arg;
  __atomic_store_n(tid, gettid(), __ATOMIC_RELEASE);
  pause();
  return NULL;
}

static void threads(void) {
  pid_t tid = 0;
  pthread_t t;
  if (pthread_create(&t, NULL, sleeper, &tid)) return;
  while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE)) sched_yield();
  struct ids ids = ids_of(tid);
  ok(ids.tgid == getpid() && ids.parent == getppid() && ids.pid == tid,
     "ids_of a thread: its process's thread group and parent (%ld, %ld)", ids.tgid, ids.parent);
  ok(ids_own(&ids) == tid, "and its own pid is the thread's (%ld)", ids.own);
  pthread_cancel(t);
  pthread_join(t, NULL);
}

/* Pages read ahead together: the ones before an unreadable page are kept; that one is left to the reading that
 * needs it, which fails there and says why; the ones after it are still read when needed. */
static void read_ahead(void) {
  char *m = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  strcpy(m, "first");
  strcpy(m + PAGE, "second");
  strcpy(m + 3 * PAGE, "fourth");
  munmap(m + 2 * PAGE, PAGE);
  struct proc p = {.pid = getpid()};
  const uint64_t at[4] = {ADDR(m), ADDR(m + PAGE), ADDR(m + 2 * PAGE), ADDR(m + 3 * PAGE)};
  proc_prefetch(&p, at, 4);
  ok(p.used == 2 && p.error == 0, "the two pages before the hole are read ahead (%d kept)", p.used);
  strcpy(m, "changed");
  char *s = read_str(&p, ADDR(m));
  is_str(s, "first", "a page read ahead is the reading's: read once, kept");
  free(s);
  ok(read_str(&p, ADDR(m + 2 * PAGE)) == NULL && p.error == EFAULT, "the unmapped page fails where it is read");
  s = read_str(&p, ADDR(m + 3 * PAGE));
  is_str(s, "fourth", "a page after it is still read when needed");
  free(s);
  proc_done(&p);

  /* argv and envp read together: the same strings as read one after the other */
  const char *argv[] = {m + PAGE, "-l", NULL}, *envp[] = {"A=1", m + 3 * PAGE, NULL};
  p = (struct proc){.pid = getpid()};
  const uint64_t vecs[2] = {ADDR(argv), ADDR(envp)};
  char **v[2];
  int oks[2];
  ok(read_vecs(&p, 2, vecs, v, oks) == 0 && oks[0] == 1 && oks[1] == 1, "read_vecs reads two arrays whole");
  ok(vec_eq(v[0], (char **)argv) && vec_eq(v[1], (char **)envp), "each as it is");
  free_vec(v[0]);
  free_vec(v[1]);
  proc_done(&p);
  /* the second one cut short by the hole: the first is still whole */
  envp[1] = m + 2 * PAGE;
  p = (struct proc){.pid = getpid()};
  ok(read_vecs(&p, 2, vecs, v, oks) == 0 && oks[0] == 1 && oks[1] == 0 && vec_len(v[1]) == 1,
     "an array with a pointer into the hole is not whole; the other is");
  free_vec(v[0]);
  free_vec(v[1]);
  proc_done(&p);
  munmap(m, 2 * PAGE);
  munmap(m + 3 * PAGE, PAGE);
}

int main(void) {
  strings();
  read_ahead();
  threads();
  pointers();
  vectors();
  other_processes();
  return tap_done();
}
