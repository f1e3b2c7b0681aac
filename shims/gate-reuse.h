/* The supervisor's reuse of the daemon's answers (docs/exec-gate.md, "Answers reused"). The daemon
 * marks a Run that holds for any argv of one program in one run (src/decide/reuse.ts) with a grant and the
 * policy epoch it was decided under; the supervisor keeps it here for that run, path and very file
 * (device, inode, size, modification and change times) and answers a later exec of them itself while the
 * epoch file still says the same epoch, appending each such exec's audit record to the daemon's log itself
 * (the fields the daemon encoded around the exec's time, cwd and argv) before the new program runs, or, where it
 * cannot, telling the daemon of it. Thread-safe (one lock); its I/O: the epoch file's mapping and the
 * audit log's appends. Trust boundary: what is kept came from the daemon's own replies; what is looked up
 * and written was read by the supervisor from the process, never taken from it. */
#ifndef GATE_REUSE_H
#define GATE_REUSE_H

#include <sys/stat.h>
#include <sys/types.h>

/* A file as the kernel would run it: a replaced, rewritten or touched file is another one. */
struct gate_ident {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
  int known;
};

void gate_ident_of(struct gate_ident *id, const struct stat *st);
int gate_ident_eq(const struct gate_ident *a, const struct gate_ident *b);

/* Map the policy epoch file beside request_sock (read-only); 0, or -1 when it cannot be (no reuse then). */
int gate_reuse_open(const char *request_sock);
struct gate_reused_audit; /* gate-request.h */

/* Where a grant holds (ReuseScope, src/decide/reuse.ts): pid 0 everywhere in its run; else only for execs
 * made below that process (its start time and parent as the daemon read them), through none of gate-sh's
 * plumbing, while it runs the image it was judged by; pid -1 nowhere. */
struct gate_reuse_scope {
  long pid, ppid;
  unsigned long long start;
};

/* Keep the daemon's grant for (run, program, file, scope: NULL everywhere) at epoch, with how its reuse is
 * audited (NULL, or no log: the daemon is told of each); below: the program is a program running its own
 * files by its name alone (ExecReply.reuse.below_program). */
void gate_reuse_add(const char *run, const char *program, const struct gate_ident *id, const char *grant,
                    unsigned long long epoch, const struct gate_reused_audit *audit,
                    const struct gate_reuse_scope *scope, int below);
/* A grant kept for (run, program, file) at the current epoch that holds for an exec of process pid (whose
 * parent is parent, GATE_PARENT_UNREAD: read from /proc when a scoped grant needs it; pid 0: only a grant that
 * holds everywhere), and its record's fields when it is written here. Reads /proc for a scoped grant (outside
 * the lock). */
#define GATE_PARENT_UNREAD (-2L)
struct gate_reuse_hit {
  char grant[48];
  int below; /* every exec below the new program is below a program running its own files: the grant's
              * program is one by its name, or the grant is scoped to one above the exec */
  int audit;
  char head[512];
  char tail[512];
};
int gate_reuse_find(const char *run, const char *program, const struct gate_ident *id, pid_t pid, long parent,
                    struct gate_reuse_hit *hit);
/* Process tgid execs (any exec the supervisor is told of, before it is answered): the grants held below it
 * end, for it may run something else now (a program's child is judged by what the program is). */
void gate_reuse_exec(long tgid);
/* Append the record of an exec answered with hit to the audit log: one line, one write(2); 0, or -1 when
 * nothing could be written (no log for it, text that is not UTF-8, a record longer than GATE_MAX_AUDIT_RECORD,
 * an error). */
int gate_reuse_audit(const struct gate_reuse_hit *hit, const char *cwd, const char *program, char *const argv[]);
/* Whether the record of an exec answered with hit is for this supervisor to write (a log open for it, audit
 * fields the reply carried). */
int gate_reuse_audits(const struct gate_reuse_hit *hit);
/* The record in two steps (gate_reuse_audit's), so that most of it is made before the exec is answered and the
 * cwd read and the line written after: its argv and tail into rest (gb_init'd here; the caller frees), 0 when
 * this supervisor can write it whatever the cwd (gate_reuse_audits, UTF-8, short enough), else -1; then the
 * line with the cwd, appended: 0, or -1 (a cwd that is not UTF-8, an error). */
struct gbuf;
int gate_reuse_record(const struct gate_reuse_hit *hit, const char *program, char *const argv[], struct gbuf *rest);
int gate_reuse_append(const struct gate_reuse_hit *hit, const char *cwd, const struct gbuf *rest);
/* basename(argv0) is basename(program): the exec calls the program by its own name. */
int gate_same_name(const char *argv0, const char *program);

#endif
