/* Test program (built by test/exec-gate/reply-socket.test.ts, linked with the shims' transport): asks the
 * daemon about `PROGRAM ARGV...` the way the exec gate's C client does when it talks to the daemon itself
 * (a reply socket bound in the client folder, named after the request's id), while a second thread, playing
 * a process that can reach that folder, answers the request itself with Run, 20 times, from a socket
 * of its own. The daemon (pid DAEMON_PID) is stopped meanwhile, so that its own answer comes last:
 *
 *   DAEMON_PID=N forge-client PROGRAM ARGV...   (GATE_REQUEST_SOCK, GATE_CLIENT_DIR, GATE_RUN as well)
 *
 * Prints "action=Run", "action=Deny" or "error=<why>", and "forged=N", the forged replies sent. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "gate-common.h"
#include "gate-proto.h"
#include "gate-transport.h"

static char ID[96], DIR_[200];
static volatile int DONE, FORGED;
static pid_t DAEMON;

static void *forger(void *unused) {
  (void)unused;
  struct sockaddr_un to = { .sun_family = AF_UNIX };
  gate_join(to.sun_path, sizeof to.sun_path, DIR_, "/", ID, ".sock");
  char reply[300];
  int n = snprintf(reply, sizeof reply, "%s\"%s\",\"type\":\"exec\",\"action\":{\"type\":\"Run\"}}", GATE_MSG_HEAD, ID);
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  while (!DONE && FORGED < 20) { /* a few: a flood would only delay the daemon's answer (its send finds the queue full) */
    if (sendto(s, reply, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof to) == n) FORGED++;
  }
  usleep(50000);
  kill(DAEMON, SIGCONT);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: forge-client PROGRAM ARGV...\n"); return 2; }
  unsetenv("GATE_KERNEL_SOCK"); /* the daemon itself, not a supervisor */
  struct gate_conf c;
  char err[1200], cwd[PATH_MAX];
  if (gate_conf_from_env(&c, err, sizeof err) || !getcwd(cwd, sizeof cwd)) { fprintf(stderr, "forge-client: %s\n", err); return 2; }
  snprintf(DIR_, sizeof DIR_, "%s", c.client_dir);
  gate_new_id(ID, sizeof ID);
  char *none[] = { NULL };
  struct gbuf req; gb_init(&req);
  gate_exec_request_for(&req, &c, ID, argv[1], argv + 2, cwd, none, "", "", (long)getpid(), NULL);
  const char *d = getenv("DAEMON_PID");
  DAEMON = d ? (pid_t)atoi(d) : 0;
  if (DAEMON <= 0 || kill(DAEMON, SIGSTOP)) { fprintf(stderr, "forge-client: DAEMON_PID not set or not stoppable\n"); return 2; }
  pthread_t t;
  pthread_create(&t, NULL, forger, NULL);
  struct gate_reply r;
  gate_reply_init(&r, NULL, NULL);
  int rc = gate_request(&c, ID, &req, &r, err, sizeof err);
  DONE = 1;
  pthread_join(t, NULL);
  if (rc) printf("error=%s\n", err);
  else printf("action=%s\n", r.action == GA_RUN ? "Run" : r.action == GA_DENY ? "Deny" : "other");
  printf("forged=%d\n", FORGED);
  return 0;
}
