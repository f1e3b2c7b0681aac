/* Test program (built with gcc -static -pthread by test/exec-gate/toctou.test.ts): the argv TOCTOU of the
 * kernel layer. Each of N attempts forks a child that starts a thread rewriting, in a loop, the memory the
 * child's execve names, then execs it:
 *
 *   race N path ALLOWED FORBIDDEN ARG...   the program path flips: execve(path, [path, ARG...])
 *   race N arg PROGRAM ALLOWED FORBIDDEN   argv[1] flips: execve(PROGRAM, [PROGRAM, arg])
 *   race N traced-path ...                 as path, each child traced by this process (PTRACE_TRACEME), as
 *                                          under a debugger: the gate cannot follow its exec
 *
 * ALLOWED and FORBIDDEN must be the same length (the buffer is rewritten in place, byte by byte as memcpy
 * does). Prints "exit=<status>:<count> ..." for the children's exit statuses (126: the exec was refused). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[4096];
static const char *a, *b;
static size_t len;

static void *flip(void *unused) {
  (void)unused;
  for (;;) {
    memcpy(buf, b, len);
    memcpy(buf, a, len);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 6) return 2;
  int n = atoi(argv[1]), traced = !strcmp(argv[2], "traced-path"), path = traced || !strcmp(argv[2], "path");
  a = argv[3 + !path]; b = argv[4 + !path];
  len = strlen(a) + 1;
  if (len != strlen(b) + 1 || len > sizeof buf) return 2;
  int counts[256] = { 0 };
  for (int i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      memcpy(buf, a, len);
      char *args[64] = { 0 };
      int k = 0;
      if (path) { args[k++] = buf; for (int j = 5; j < argc && k < 63; j++) args[k++] = argv[j]; }
      else { args[k++] = argv[3]; args[k++] = buf; }
      char *envp[] = { NULL };
      if (traced && ptrace(PTRACE_TRACEME, 0, 0, 0)) _exit(4);
      pthread_t t;
      if (pthread_create(&t, NULL, flip, NULL)) _exit(3);
      execve(path ? buf : argv[3], args, envp);
      _exit(126);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, __WALL) < 0) return 2;
    /* traced: each stop (the exec's SIGTRAP, a signal) is let go on, as a debugger's `continue` */
    while (WIFSTOPPED(st)) {
      int sig = WSTOPSIG(st);
      ptrace(PTRACE_CONT, pid, 0, sig == SIGTRAP ? 0 : sig);
      if (waitpid(pid, &st, __WALL) < 0) return 2;
    }
    counts[WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st) % 128]++;
  }
  for (int i = 0; i < 256; i++) if (counts[i]) printf("exit=%d:%d ", i, counts[i]);
  printf("\n");
  return 0;
}
