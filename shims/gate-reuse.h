/* The supervisor's reuse of the daemon's answers (issue 16; docs/exec-gate.md, "Answers reused"). The daemon
 * marks a Run that holds for any argv of one program in one run (src/decide/reuse.ts) with a grant and the
 * policy epoch it was decided under; the supervisor keeps it here for that run, path and very file
 * (device, inode, size, modification and change times) and answers a later exec of them itself while the
 * epoch file still says the same epoch, telling the daemon of each such exec (it is audited there).
 * Thread-safe (one lock); no I/O but the epoch file's mapping. Trust boundary: what is kept came from the
 * daemon's own replies; what is looked up was read by the supervisor from the process, never taken from it. */
#ifndef GATE_REUSE_H
#define GATE_REUSE_H

#include <sys/stat.h>

/* A file as the kernel would run it: a replaced, rewritten or touched file is another one. */
struct gate_ident { dev_t dev; ino_t ino; off_t size; struct timespec mtime, ctime; int known; };

void gate_ident_of(struct gate_ident *id, const struct stat *st);
int gate_ident_eq(const struct gate_ident *a, const struct gate_ident *b);

/* Map the policy epoch file beside request_sock (read-only); 0, or -1 when it cannot be (no reuse then). */
int gate_reuse_open(const char *request_sock);
/* Keep the daemon's grant for (run, program, file) at epoch. */
void gate_reuse_add(const char *run, const char *program, const struct gate_ident *id, const char *grant, unsigned long long epoch);
/* 1 with the grant (room for 48 bytes) when (run, program, file) has one for the current epoch. */
int gate_reuse_find(const char *run, const char *program, const struct gate_ident *id, char *grant);
/* basename(argv0) is basename(program): the exec calls the program by its own name. */
int gate_same_name(const char *argv0, const char *program);

#endif
