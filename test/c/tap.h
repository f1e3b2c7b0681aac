/*
 * A plain TAP harness for the C unit tests (test/c/): one `ok N - what` or `not ok N - what` line per
 * check, `1..N` at the end, exit 1 when any failed. test/c/unit.test.ts builds the tests (make -C test/c)
 * and runs them under node:test, plain and under AddressSanitizer and UndefinedBehaviorSanitizer.
 * Pure apart from writing stdout.
 */
#ifndef GATE_TAP_H
#define GATE_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) \
  do { \
    int ok_ = !!(cond); \
    printf("%s %d - ", ok_ ? "ok" : "not ok", ++tap_n); \
    printf(__VA_ARGS__); \
    printf("\n"); \
    if (!ok_) { \
      tap_failed++; \
      printf("#   at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    } \
  } while (0)

/* Two C strings are equal (either may be NULL). */
#define is_str(got, want, ...) \
  do { \
    const char *g_ = (got), *w_ = (want); \
    ok((g_ == NULL && w_ == NULL) || (g_ && w_ && !strcmp(g_, w_)), __VA_ARGS__); \
    if (!((g_ == NULL && w_ == NULL) || (g_ && w_ && !strcmp(g_, w_)))) \
      printf("#   got: %s\n#   want: %s\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
  } while (0)

static int tap_done(void) {
  printf("1..%d\n", tap_n);
  fflush(stdout);
  return tap_failed ? 1 : 0;
}

#endif
