/* Test program (built with gcc -static by test/exec-gate/kernel.test.ts): execve(PROGRAM, ARGV..., {})
 * with an empty environment, the way a statically linked tool would, out of reach of LD_PRELOAD. */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  char *envp[] = { NULL };
  execve(argv[1], argv + 2, envp);
  perror("static-exec: execve");
  return 126;
}
