/* Test programs' shared part (forge.c, forge-reply.c): wait for the final answer to a request on fd and
 * print "asked=Run", or "asked=<the reply>" for anything else; `pending` keepalives are skipped. */
#ifndef ASKED_H
#define ASKED_H
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static void print_answer(int fd, const char *who) {
  char buf[8192];
  for (;;) {
    struct pollfd pf = { fd, POLLIN, 0 };
    if (poll(&pf, 1, 10000) != 1) { fprintf(stderr, "%s: no reply\n", who); return; }
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return;
    buf[n] = 0;
    if (strstr(buf, "\"pending\"")) continue;
    printf("asked=%s\n", strstr(buf, "{\"type\":\"Run\"") ? "Run" : buf);
    fflush(stdout);
    return;
  }
}
#endif
