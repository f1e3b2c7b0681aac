/* Test program (built with gcc -static by test/exec-gate/decides-first.test.ts): execv(PROGRAM, ARGV...)
 * with GATE_ASK=<its own pid> added to its environment, the mark of an exec the LD_PRELOAD layer left to
 * the kernel layer, forged by a program without that layer. Prints the exec's error and exits 126. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  char mark[32];
  snprintf(mark, sizeof mark, "%d", (int)getpid());
  if (setenv("GATE_ASK", mark, 1)) return 2;
  execv(argv[1], argv + 2);
  perror("forge-ask: execv");
  return 126;
}
