/*
 * The escalation handshake on the exec gate's C side: the daemon runs an approved command outside the
 * sandbox with the caller's stdin/stdout/stderr (passed by SCM_RIGHTS), and the caller waits for its exit
 * status, passing its signals on. Trust: the token is the daemon's one-time answer to this exec; the
 * daemon checks it, this side only presents it.
 */
#ifndef GATE_ESCALATE_H
#define GATE_ESCALATE_H

#include "gate-common.h"

/* Escalate: present the token with fds 0/1/2 and the exec's environment on escalate.sock, wait for the
 * exit status. Returns the status to exit with (0..255), or -1 with err. */
int gate_escalate(const struct gate_conf *c, const char *token, char *const envp[], char *err, size_t errlen);

#endif
