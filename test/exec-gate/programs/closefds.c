/* Test program: close every descriptor (stdio included), then execve(PROGRAM, ARGV...). Exit 126 when the
 * exec fails. */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  syscall(SYS_close_range, 0u, ~0u, 0u);
  char *envp[] = { NULL };
  execve(argv[1], argv + 2, envp);
  return 126;
}
