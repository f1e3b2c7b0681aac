/*
 * The request channel's transport on the C side: the one request loop (gate_ask: a datagram request, its
 * resends, heartbeats and reply) for both C clients, the exec gate and the native gate-sh, each waiting as its
 * table says; the stream socket for what a datagram cannot hold; and the reply socket a process keeps when it
 * asks more than once. Trust: the sockets are the daemon's (or the run's supervisor's);
 * any failure to reach them, or a reply that does not parse, fails the request closed.
 */
#ifndef GATE_TRANSPORT_H
#define GATE_TRANSPORT_H

#include <sys/socket.h>
#include <sys/un.h>

#include "gate-request.h"

/* One datagram from fd by deadline_ms (CLOCK_MONOTONIC ms), its full length even beyond n (MSG_TRUNC,
 * so a caller sees one too large); -1 when none came in time or recv failed. Retries EINTR. from: when not
 * NULL, only a datagram sent from the socket bound there counts (a reply socket's name can be read by the
 * run, and anyone who can reach it could otherwise answer for the daemon); others are dropped. */
ssize_t gate_recv_until(int fd, void *buf, size_t n, long deadline_ms, const char *from);
/* 1 when a datagram's sender address is the socket bound at path. */
int gate_sent_from(const struct sockaddr_un *a, socklen_t len, const char *path);

/* Who asks, which decides the words of a failure: the exec gate's (the run's execs) or a call's (the native
 * gate-sh: CALL_TEXTS, the texts the Node client prints). */
enum gate_client { GATE_CLIENT_EXEC, GATE_CLIENT_CALL };
/* How a client waits for its reply (REQUEST_WAITS and EXEC_WAITS in src/protocol/shared-with-c.ts). */
struct gate_waits {
  enum gate_client client;
  long first_ms, max_ms; /* the wait after send k: first_ms doubled k times, at most max_ms */
  int retries; /* resends of the same id once a wait ends with no answer */
  long pending_ms; /* after a pending reply: the wait for the next sign; the resends are counted anew */
  long heartbeat_ms; /* 0: resend the request while pending; else a ping every heartbeat_ms while pending ... */
  long silence_ms; /* ... and the wait ends after silence_ms without a sign of life */
};
/* The native gate-sh's waits: 1, 2, 4, 4... s, a ping every 500 ms while a person is asked (as the Node client). */
extern const struct gate_waits GATE_CALL_WAITS;
/* The exec gate's waits for configuration c: each send waits its timeout, c->attempts sends in all. */
struct gate_waits gate_exec_waits(const struct gate_conf *c);

/* Where one request goes and its replies come from. */
struct gate_link {
  int fd; /* a bound datagram socket (or one end of a socket pair) */
  const struct sockaddr_un *to; /* the request socket */
  const char *from; /* only replies sent from the socket bound here count (NULL: any; a socket pair) */
  int carry; /* a descriptor sent with each request (SCM_RIGHTS: the supervisor answers on it), or -1 */
  int via_supervisor; /* `to` is the kernel layer's supervisor (for the words of a failed send) */
  void (*on_pending)(void); /* NULL, or called at the first pending reply */
};
/* Asking as gate_ask can fail besides -1: the reply is too large for the room (or a datagram): fetch it over
 * the stream socket (the exec gate only); the first send found no daemon, or a sandbox forbids its socket
 * (the native gate-sh only: it hands the call over to the Node gate-sh). */
#define GATE_ASK_BY_STREAM (-2)
#define GATE_ASK_NO_DAEMON (-3)

/* The request loop: send msg (its id: id) on link l, resend and wait as w says, and return the final reply's
 * length, its text in buf (up to room bytes) and its parts in r; -1 with err (the words of w->client), or one of
 * the GATE_ASK_* outcomes. A send waits up to GATE_EXEC_WAIT_SEND_ROOM_MS for room (gate_send_room). */
ssize_t gate_ask(const struct gate_link *l, const struct gate_waits *w, const char *id, const struct gbuf *msg,
                 char *buf, size_t room, struct gate_reply *r, char *err, size_t errlen);
/* A sandbox around this process forbids the daemon's socket (seccomp: EPERM; Landlock: EACCES; a read-only
 * runtime folder: EROFS): the native gate-sh hands over to the Node client, which says so and what to do
 * (src/client/reach.ts). */
int gate_sandbox_denied(int e);
/* A reply socket's send waits up to GATE_EXEC_WAIT_SEND_ROOM_MS for room in the daemon's full queue. */
void gate_send_room(int fd);

/* The exec gate's request: send one request (JSON, with its id) and wait for the reply with that id. Datagram up to
 * GATE_MAX_DATAGRAM, else the stream socket. 0 on success; -1 with err on any failure (fail closed). */
int gate_request(const struct gate_conf *c, const char *id, const struct gbuf *msg, struct gate_reply *r, char *err,
                 size_t errlen);

/* Close and remove this process's kept reply socket, if any (before an exec or exit: the socket file
 * would outlive it). */
void gate_reply_release(void);

/* A socket address for path; -1 with err when the path is too long. */
int gate_sock_addr(struct sockaddr_un *a, const char *path, char *err, size_t errlen);
/* err = the daemon is not reachable at path (errno e); returns -1. */
int gate_unreachable(const char *path, int e, char *err, size_t errlen);
/* A stream socket connected to path (the daemon's stream or escalation socket); -1 with err when it cannot be
 * reached (gate_unreachable's message). */
int gate_stream_connect(const char *path, char *err, size_t errlen);

#endif
