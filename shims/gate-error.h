/*
 * The C side's one way to report a failure (as bubblewrap's utils.c: die, die_with_error, and a function that
 * returns its error to a caller who knows more). Three forms, each failure path spelled out where it happens:
 *   - a function that cannot go on and has a caller: `return gate_fail(err, errlen, fmt, ...)` writes why into
 *     the caller's buffer and returns -1; the caller adds what it knows, or prints it;
 *   - where a person reads it: gate_msg / gate_msgf print one `gate-sh: ` line on stderr and go on;
 *   - where nothing above can do better: gate_die / gate_die_errno print that line and _exit(status).
 * gate_msg, gate_die and gate_die_errno take string parts, not a format: they run in forked children and on
 * the exec path, where printf's code costs page faults. Pure apart from writing stderr and exiting; no trust
 * boundary (it only formats what its callers say). The session holder's error lines are its protocol to the
 * daemon, not a person's (gate-session.c), and the Node addon's become JavaScript exceptions (native/).
 */
#ifndef GATE_ERROR_H
#define GATE_ERROR_H

#include <stddef.h>

/* err = the formatted reason (truncated to errlen - 1); returns -1, for `return gate_fail(...)`. */
__attribute__((format(printf, 3, 4))) int gate_fail(char *err, size_t errlen, const char *fmt, ...);

/* "gate-sh: " + the parts (NULL parts skipped) as one line on stderr, in one write: no stdio, safe after fork,
 * works when stdout is redirected. */
void gate_msg(const char *a, const char *b, const char *c, const char *d);
/* The same for a format (a call's texts, GATE_TEXT_*), truncated to 4 KiB. */
__attribute__((format(printf, 1, 2))) void gate_msgf(const char *fmt, ...);

/* gate_msg's line, then _exit(status). gate_die_errno adds ": <strerror(errno)>" after the parts. */
_Noreturn void gate_die(int status, const char *a, const char *b, const char *c, const char *d);
_Noreturn void gate_die_errno(int status, const char *a, const char *b, const char *c);

/* Ends this process by signal sig, as the command it ran ended (its caller then sees a signal, not 128+n), with
 * no core file of its own: the command's was dumped already, if it was going to be. Returns only where the
 * signal cannot end it. */
void gate_end_by_signal(int sig);

#endif
