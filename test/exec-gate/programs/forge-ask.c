/* Test program (built with gcc -static by test/exec-gate/decides-first.test.ts): execv(PROGRAM, ARGV...)
 * with GATE_ASK=<its own pid>:<PROGRAM> added to its environment, the mark of an exec the LD_PRELOAD layer
 * left to the kernel layer, forged by a program without that layer; with --keep, its environment as it
 * came (a static program exec'ing without a fork keeps the marks of its own exec). Prints the exec's
 * error and exits 126. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int keep = argc > 1 && !strcmp(argv[1], "--keep");
  argv += keep;
  argc -= keep;
  if (argc < 3) return 2;
  char mark[4096];
  snprintf(mark, sizeof mark, "%d:%s", (int)getpid(), argv[1]);
  if (!keep && setenv("GATE_ASK", mark, 1)) return 2;
  execv(argv[1], argv + 2);
  perror("forge-ask: execv");
  return 126;
}
