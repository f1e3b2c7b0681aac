/* Test program (built with gcc -static by test/exec-gate/toctou.test.ts): N times vfork, then execvp(NAME,
 * ARGS...) in the child, as a compiler driver starts its passes. Without LD_PRELOAD, glibc's execvp tries
 * each PATH entry in turn: each failed attempt is an exec the kernel layer sees and follows. Prints how
 * many children exited 0 and the first other status. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  volatile int n = atoi(argv[1]), ok = 0, first = -1;
  for (volatile int i = 0; i < n; i++) {
    pid_t p = vfork();
    if (p == 0) { execvp(argv[2], argv + 2); _exit(127); }
    int st;
    if (p < 0 || waitpid(p, &st, 0) < 0) return 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) ok++;
    else if (first < 0) first = st;
  }
  printf("ok=%d of %d", ok, n);
  if (first >= 0) printf(" first-failure=%s %d", WIFSIGNALED(first) ? "signal" : "exit", WIFSIGNALED(first) ? WTERMSIG(first) : WEXITSTATUS(first));
  printf("\n");
  return ok == n ? 0 : 1;
}
