/* Test program (built by test/exec-gate/pairing.test.ts): tries to forge the pairing of the two exec-gate
 * layers. It sends the request the LD_PRELOAD layer sends for `true` (to the run's supervisor,
 * GATE_KERNEL_SOCK, from a reply socket in GATE_CLIENT_DIR, as the layer does), is told Run, and then execs
 * another program by a raw syscall, from itself or from a vfork child (the pid the pairing remembers, and
 * a child sharing its memory):
 *
 *   forge self|vfork PROGRAM ARGV...
 *
 * Prints "asked=Run" (or the reply) for the forged request; exits 126 when the exec failed. Plain ASCII
 * paths only (the JSON is written by hand). */
#define _GNU_SOURCE
#include "asked.h"
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int ask_true(void) {
  const char *k = getenv("GATE_KERNEL_SOCK"), *dir = getenv("GATE_CLIENT_DIR"), *run = getenv("GATE_RUN");
  char cwd[PATH_MAX], msg[8192];
  if (!k || !dir || !run || !getcwd(cwd, sizeof cwd)) { fprintf(stderr, "forge: not in a kernel-gated run\n"); return -1; }
  /* ids are unique per daemon lifetime: pids repeat across the runs' pid namespaces */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(msg, sizeof msg,
           "{\"v\":1,\"id\":\"forge-%d-%lx-%lx\",\"type\":\"exec\",\"run_id\":\"%s\",\"program\":\"/bin/true\",\"argv\":[\"true\"],"
           "\"cwd\":\"%s\",\"pid\":%d}", (int)getpid(), (long)ts.tv_sec, (long)ts.tv_nsec, run, cwd, (int)getpid());
  struct sockaddr_un me = { .sun_family = AF_UNIX }, to = { .sun_family = AF_UNIX };
  snprintf(me.sun_path, sizeof me.sun_path, "%s/forge-%d-%lx.sock", dir, (int)getpid(), (long)ts.tv_nsec);
  snprintf(to.sun_path, sizeof to.sun_path, "%s", k);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  unlink(me.sun_path);
  if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof me) ||
      sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&to, sizeof to) < 0) { perror("forge: send"); return -1; }
  print_answer(fd, "forge");
  close(fd);
  unlink(me.sun_path);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4 || ask_true()) return 2;
  if (!strcmp(argv[1], "vfork")) {
    int st;
    pid_t pid = vfork();
    if (pid == 0) { syscall(SYS_execve, argv[2], argv + 3, environ); _exit(126); }
    if (pid < 0 || waitpid(pid, &st, 0) < 0) return 2;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  syscall(SYS_execve, argv[2], argv + 3, environ);
  fprintf(stderr, "forge: execve: %s\n", strerror(errno));
  return 126;
}
