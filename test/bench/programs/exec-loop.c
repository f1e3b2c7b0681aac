/* Benchmark program (built with gcc -static by test/bench/kernel-gate.bench.ts): fork and execv PROGRAM
 * N times, one after another, and print each fork+exec+wait's wall time in milliseconds, one per line. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int n = atoi(argv[1]);
  for (int i = 0; i < n; i++) {
    double t0 = now_ms();
    pid_t p = fork();
    if (p == 0) { execv(argv[2], argv + 2); _exit(126); }
    int st;
    if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) { fprintf(stderr, "exec-loop: iteration %d failed\n", i); return 1; }
    printf("%.4f\n", now_ms() - t0);
  }
  return 0;
}
