/* Test program: open PROGRAM, then execveat(fd, "", ARGV..., {}, AT_EMPTY_PATH) by raw system call. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) { perror("static-execveat: open"); return 2; }
  char *envp[] = { NULL };
  syscall(SYS_execveat, fd, "", argv + 2, envp, AT_EMPTY_PATH);
  perror("static-execveat: execveat");
  return 126;
}
