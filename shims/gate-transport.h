/*
 * The request channel's transport on the exec gate's C side: one datagram request and its reply with
 * bounded retries, the stream socket for what a datagram cannot hold, and the reply socket a process
 * keeps when it asks more than once. Trust: the sockets are the daemon's (or the run's supervisor's);
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

/* Send one request (JSON, with its id) and wait for the reply with that id. Datagram up to
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
