/* Test program: fork N children at once, each execve(PROGRAM, ARGV...); wait for all and print how many
 * exited 0 ("ok=<n> of <N>"). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 4) return 2;
  int n = atoi(argv[1]), ok = 0;
  for (int i = 0; i < n; i++) {
    pid_t p = fork();
    if (p == 0) { execv(argv[2], argv + 3); _exit(126); }
    if (p < 0) { perror("storm: fork"); break; }
  }
  int st;
  while (wait(&st) > 0) if (WIFEXITED(st) && WEXITSTATUS(st) == 0) ok++;
  printf("ok=%d of %d\n", ok, n);
  return 0;
}
