/* Test program (built dynamically by test/exec-gate/pairing.test.ts, so the LD_PRELOAD layer is loaded
 * into it): starts a program the ways a dynamic program does, each of which both exec-gate layers see.
 *
 *   spawner spawn PROGRAM ARGV...   posix_spawn (glibc: a CLONE_VM|CLONE_VFORK child execs)
 *   spawner system COMMAND          system()
 *   spawner popen COMMAND           popen(), its output copied to stdout
 *   spawner raw PROGRAM ARGV...     syscall(SYS_execve) with this process's environment (no libc hook)
 *
 * Prints "status=N" for the started command (spawn, system, popen), exits 126 when the start failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *mode = argv[1];
  int st = 0;
  if (!strcmp(mode, "spawn")) {
    pid_t pid;
    int e = posix_spawn(&pid, argv[2], NULL, NULL, argv + 3, environ);
    if (e) { fprintf(stderr, "spawner: posix_spawn: %s\n", strerror(e)); return 126; }
    if (waitpid(pid, &st, 0) < 0) return 126;
  } else if (!strcmp(mode, "system")) {
    st = system(argv[2]);
    if (st < 0) { fprintf(stderr, "spawner: system: %s\n", strerror(errno)); return 126; }
  } else if (!strcmp(mode, "popen")) {
    FILE *f = popen(argv[2], "r");
    if (!f) { fprintf(stderr, "spawner: popen: %s\n", strerror(errno)); return 126; }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
    st = pclose(f);
  } else if (!strcmp(mode, "raw")) {
    syscall(SYS_execve, argv[2], argv + 3, environ);
    fprintf(stderr, "spawner: execve: %s\n", strerror(errno));
    return 126;
  } else return 2;
  printf("status=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  return 0;
}
