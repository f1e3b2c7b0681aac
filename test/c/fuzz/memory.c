/*
 * Fuzz target: the supervisor's reader of another process's memory (shims/launch/memory.c), over memory
 * laid out by the input in this process: three pages of the input's bytes before an unmapped page, the
 * first words rewritten into pointers inside them, into the hole, or NULL. read_vec and read_str must stay
 * within their bounds and give exactly the strings that are there: each one the C string at its address
 * when that string ends before the hole, a failure when it does not. Built with libFuzzer or driver.c.
 */
#define _GNU_SOURCE
#include "launch/launch.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define SPAN (3 * PAGE)

static char *region;

/* The string at a, as it lies in the region: its length, or -1 when it runs into the hole or is outside. */
static long expected_len(uint64_t a) {
  uint64_t base = (uint64_t)(uintptr_t)region;
  if (a < base || a >= base + SPAN) return -1;
  const char *z = memchr((const char *)(uintptr_t)a, 0, base + SPAN - a);
  return z ? (long)(z - (const char *)(uintptr_t)a) : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (!region) {
    region = mmap(NULL, SPAN + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || munmap(region + SPAN, PAGE)) abort();
  }
  if (n < 4) return 0;
  uint64_t base = (uint64_t)(uintptr_t)region;
  size_t start = ((size_t)data[0] << 8 | data[1]) % SPAN, words = data[2] % 64;
  memset(region, 0, SPAN);
  memcpy(region, data + 3, n - 3 < SPAN ? n - 3 : SPAN);
  /* the array at start: `words` pointers into the region, into the hole, or NULL (what a process can pass),
   * then NULL; an array that reaches the hole has no end */
  for (size_t i = 0; i <= words && start + 8 * i + 8 <= SPAN; i++) {
    uint64_t w;
    memcpy(&w, region + start + 8 * i, 8);
    w = i == words || w % 7 == 0 ? 0 : base + w % (SPAN + PAGE);
    memcpy(region + start + 8 * i, &w, 8);
  }
  struct proc p = {.pid = getpid()};
  int ok = 0;
  char **v = read_vec(&p, base + start, &ok);
  if (!v) abort();
  for (size_t i = 0; v[i]; i++) {
    uint64_t a;
    memcpy(&a, region + start + 8 * i, 8);
    long want = expected_len(a);
    if (want < 0 || (size_t)want != strlen(v[i]) || memcmp(v[i], (char *)(uintptr_t)a, (size_t)want)) abort();
    if (strlen(v[i]) > MAX_STRING) abort();
  }
  free_vec(v);
  proc_done(&p);
  p = (struct proc){.pid = getpid()};
  char *s = read_str(&p, base + start);
  long want = expected_len(base + start);
  if ((want < 0) != (s == NULL) || (s && (strlen(s) != (size_t)want || memcmp(s, region + start, (size_t)want))))
    abort();
  free(s);
  proc_done(&p);
  return 0;
}
