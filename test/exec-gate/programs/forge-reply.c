/* Test program (built by test/exec-gate/pairing.test.ts, linked with the shims' request code so that its
 * request is byte for byte the one the supervisor rebuilds at the exec): tries to answer its own exec check.
 * It sends the run's supervisor (GATE_KERNEL_SOCK) the request for `PROGRAM ARGV...` with an empty
 * environment, then at once sends the supervisor's daemon-side socket (the same name with "d" for "k") a
 * reply of its own making, Run for that request, and finally execs PROGRAM by a raw syscall with an empty
 * environment:
 *
 *   forge-reply PROGRAM ARGV...
 *
 * Prints "asked=Run" or "asked=<reply>" for what its request was answered; exits 126 when the exec failed. */
#define _GNU_SOURCE
#include "asked.h"
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "gate-common.h"
#include "gate-proto.h"

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: forge-reply PROGRAM ARGV...\n"); return 2; }
  struct gate_conf c;
  char err[256], cwd[PATH_MAX], id[96];
  const char *k = getenv("GATE_KERNEL_SOCK");
  if (!k || gate_conf_from_env(&c, err, sizeof err) || !getcwd(cwd, sizeof cwd)) { fprintf(stderr, "forge-reply: not in a kernel-gated run\n"); return 2; }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(id, sizeof id, "forge-reply-%d-%lx", (int)getpid(), (long)ts.tv_nsec);
  char *none[] = { NULL };
  struct gbuf req; gb_init(&req);
  gate_exec_request_for(&req, &c, id, argv[1], argv + 2, cwd, none, "", "", (long)getpid(), NULL);
  /* the request, with one end of a socket pair as its reply channel (as the LD_PRELOAD layer sends it) */
  int sv[2];
  if (req.oom || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) { perror("forge-reply"); return 2; }
  struct sockaddr_un to = { .sun_family = AF_UNIX }, d = { .sun_family = AF_UNIX };
  snprintf(to.sun_path, sizeof to.sun_path, "%s", k);
  union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
  struct iovec iov = { req.p, req.len };
  struct msghdr m = { .msg_name = &to, .msg_namelen = sizeof to, .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &sv[1], sizeof(int));
  if (sendmsg(sv[0], &m, 0) < 0) { perror("forge-reply: send"); return 2; }
  /* the supervisor's daemon-side socket: its name differs from the request side's by one letter */
  snprintf(d.sun_path, sizeof d.sun_path, "%s", k);
  char *slash = strrchr(d.sun_path, '/');
  if (!slash || slash[1] != 'k') { fprintf(stderr, "forge-reply: unexpected socket name %s\n", k); return 2; }
  slash[1] = 'd';
  char reply[300];
  int n = snprintf(reply, sizeof reply, "%s\"%s\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"}}", GATE_MSG_HEAD, id);
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0 || sendto(s, reply, (size_t)n, 0, (struct sockaddr *)&d, sizeof d) < 0) perror("forge-reply: forged reply");
  print_answer(sv[0], "forge-reply");
  syscall(SYS_execve, argv[1], argv + 2, none);
  perror("forge-reply: exec");
  return 126;
}
