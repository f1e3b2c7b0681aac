/* Test program: re-exec itself N times (one process, N execs), then print "chain done". */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  if (n <= 0) { puts("chain done"); return 0; }
  char num[32];
  snprintf(num, sizeof num, "%ld", n - 1);
  char *next[] = { argv[0], num, NULL };
  execv("/proc/self/exe", next);
  perror("chain: execv");
  return 126;
}
