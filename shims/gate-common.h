/*
 * What every part of the exec gate's C side shares (shims/): the channel's limits, where to talk (the
 * run's GATE_* variables), request ids, and string building without stdio (how a failure is said: gate-error.h).
 * No I/O here. Trust: the configuration comes from the process's environment, which the gated
 * program controls; a missing variable fails the request closed.
 */
#ifndef GATE_COMMON_H
#define GATE_COMMON_H

#include <stddef.h>
#include <sys/types.h>

/* the protocol version, size limits, variable names: generated from src/protocol/shared-with-c.ts */
#include "gate-shared.h"
/* how a failure is said: gate_fail, gate_msg, gate_die */
#include "gate-error.h"

/* Where to talk. All paths absolute; the client folder exists at the same path for the daemon. */
struct gate_conf {
  const char *request_sock, *stream_sock, *escalate_sock, *client_dir, *run_id;
  int timeout_ms; /* silence allowed before a resend (GATE_EXEC_TIMEOUT_MS, else EXEC_WAITS's) */
  int attempts; /* datagram sends of the same id before giving up (EXEC_WAITS; a pending reply counts anew) */
  int via_supervisor; /* request_sock is the kernel layer's supervisor (GATE_KERNEL_SOCK), not the daemon */
};
/* Fill from the environment (GATE_*); -1 with err when something is missing. */
int gate_conf_from_env(struct gate_conf *c, char *err, size_t errlen);
/* The same from "NAME=value" entries (the gate's variables as captured at start: the process may have
 * cleared its environment since). */
int gate_conf_from_list(struct gate_conf *c, char *const vars[], int n, char *err, size_t errlen);

void gate_new_id(char *out, size_t n);

/* An exec the LD_PRELOAD layer left to the kernel layer carries GATE_ASK=<pid>:<program> (pid: the exec'ing
 * process, as it knows itself; program: what it execs, as GATE_CHECKED names it; the new program's
 * constructor takes it out, and a static program that keeps it names its own path, not its next exec's). A Deny or
 * Escalate of such an exec
 * fails it with GATE_EXEC_ASK (an errno execve never returns by itself), and the layer then asks for the
 * decision, which the supervisor holds for that pid and those inputs (docs/exec-gate.md, "The kernel layer
 * decides first"). */
#define GATE_MARK_ASK GATE_VAR_ASK "="
#define GATE_EXEC_ASK EBADRQC
/* <GATE_KERNEL_SOCK>.e<pid>: the kernel layer let pid's exec go on in place on an Escalate, whose token
 * its new program's constructor asks for; with no such file that constructor has nothing to ask (the
 * kernel layer decided the exec, and a Run needs no word). */
#define GATE_ESCALATING ".e"

/* True for one of the gate's own variables (GATE_*), never reported or passed on as the caller's. */
int gate_own_var(const char *entry);

/* String building without stdio: the exec path runs in forked children and new processes, where
 * printf's code and first-use symbol binding cost page faults on every exec. */
/* out = a + b + c + d (NULL parts skipped), truncated to n - 1 bytes; returns the length written. */
size_t gate_join(char *out, size_t n, const char *a, const char *b, const char *c, const char *d);
/* argv joined by spaces for messages, truncated to n - 1 bytes; program when argv is empty. */
void gate_describe(char *out, size_t n, char *const argv[], const char *program);
/* v in base 10 or 16 into out (room for 24 bytes); returns out. */
char *gate_num(char *out, unsigned long v, int base);

/* The errno the gate's exec filter (launch/filter.c) gives a process of a gated tree that asks for a second
 * seccomp listener: an inner listener would take precedence over the supervisor's, so it is refused. */
#define GATE_NESTED_ERRNO 18 /* EXDEV; spelled as a number so this header needs no <errno.h> */

/* 1 when this process runs under the gate's own exec filter (the kernel's word, not an environment
 * variable the caller could set): asking for a listener fails with GATE_NESTED_ERRNO before the kernel
 * even reads the program, so nothing is installed either way. */
int gate_in_gated_tree(void);

#endif
