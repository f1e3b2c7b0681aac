/* The C side's one way to report a failure. See gate-error.h. */
#define _GNU_SOURCE
#include "gate-error.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

/* the prefix of every line a person reads (CALL_TEXTS.prefix in src/protocol/shared-with-c.ts) */
#include "gate-shared.h"

int gate_fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* The prefix, the parts and the tail as one line, in one writev (lines from processes that share stderr stay
 * whole). */
static void line(const char *parts[], int n, const char *tail) {
  struct iovec v[8];
  int k = 0;
  v[k++] = (struct iovec){(void *)GATE_TEXT_PREFIX, sizeof GATE_TEXT_PREFIX - 1};
  for (int i = 0; i < n; i++)
    if (parts[i]) v[k++] = (struct iovec){(void *)parts[i], strlen(parts[i])};
  if (tail) {
    v[k++] = (struct iovec){(void *)": ", 2};
    v[k++] = (struct iovec){(void *)tail, strlen(tail)};
  }
  v[k++] = (struct iovec){(void *)"\n", 1};
  ssize_t w;
  do w = writev(2, v, k);
  while (w < 0 && errno == EINTR);
}

void gate_msg(const char *a, const char *b, const char *c, const char *d) {
  const char *p[] = {a, b, c, d};
  line(p, 4, NULL);
}

void gate_msgf(const char *fmt, ...) {
  char text[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  gate_msg(text, NULL, NULL, NULL);
}

void gate_die(int status, const char *a, const char *b, const char *c, const char *d) {
  gate_msg(a, b, c, d);
  _exit(status);
}

void gate_die_errno(int status, const char *a, const char *b, const char *c) {
  const char *why = strerror(errno); /* read before anything else can change errno */
  const char *p[] = {a, b, c};
  line(p, 3, why);
  _exit(status);
}

void gate_end_by_signal(int sig) {
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
  signal(sig, SIG_DFL);
  sigset_t m;
  sigemptyset(&m);
  sigaddset(&m, sig);
  sigprocmask(SIG_UNBLOCK, &m, NULL);
  raise(sig);
}
