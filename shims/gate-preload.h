/*
 * The library a sanitizer test build loads before libgate.so. `make SANITIZE=address` (shims/Makefile)
 * builds libgate.so with AddressSanitizer, whose runtime must be the first library of every process it is
 * loaded into, so that build's LD_PRELOAD is `<runtime>:<dir>/libgate.so`; the Makefile passes the
 * runtime's path here (GATE_PRELOAD_FIRST) and writes it to libgate.preload-first for the TypeScript side
 * (src/exec/preload-first.ts). Every other build defines it empty and nothing changes.
 * And how the loader splits an LD_PRELOAD list into entries (libgate writes one, the supervisor reads one).
 * Trust: a compile-time constant, never read from the environment: the gated program cannot widen it.
 * Pure.
 */
#ifndef GATE_PRELOAD_H
#define GATE_PRELOAD_H

#include <stddef.h>
#include <string.h>

#ifndef GATE_PRELOAD_FIRST
#define GATE_PRELOAD_FIRST ""
#endif

/* Is the LD_PRELOAD entry s[0..n) the sanitizer's runtime (the gate's own entry, never the caller's)? */
static inline int gate_preload_first(const char *s, size_t n) {
  return n && n == sizeof GATE_PRELOAD_FIRST - 1 && !memcmp(s, GATE_PRELOAD_FIRST, n);
}

/* The length of the LD_PRELOAD entry at s: bytes up to the first ':' or ' ' (the loader splits on both). A
 * loop of its own, not strcspn: libgate runs it in forked children, where a libc page first run is a fault. */
static inline size_t gate_preload_entry(const char *s) {
  size_t l = 0;
  while (s[l] && s[l] != ':' && s[l] != ' ') l++;
  return l;
}

#endif
