/*
 * The request channel's messages on the exec gate's C side (src/protocol/messages.ts is the other side):
 * building an ExecRequest from an exec's program, argv, cwd and code-loading variables, and parsing the
 * daemon's reply into what the gate acts on. Pure except for one lstat/realpath of the program. Trust:
 * the reply comes from the daemon's socket and is parsed with bounds; the request describes the caller's
 * exec as it is, for the daemon to decide.
 */
#ifndef GATE_REQUEST_H
#define GATE_REQUEST_H

#include "gate-common.h"
#include "gate-json.h"

/* The parsed parts of a reply that the gate acts on. Strings are NUL-terminated copies. Kept small (an
 * exec check holds one on its stack in a freshly forked child, where every page touched is a fault);
 * only the nested-shell shim, which reads a preflight's denials, supplies room for them. */
enum gate_action { GA_NONE, GA_RUN, GA_ESCALATE, GA_DENY };
#define GATE_MAX_DENIED 8
typedef char gate_denial[1024]; /* "<cmd>: <reason>" */
struct gate_reply {
  char type[24]; /* exec | preflight | pending | error | ... */
  char id[130];
  enum gate_action action;
  char reason[1024]; /* Deny reason, or error message */
  char token[256]; /* escalation_token */
  char run_id[130]; /* preflight run_id */
  char code[24]; /* error code (too-large, busy, ...) */
  int deny_count; /* preflight: denied subcommands, listed in denied[] when the caller gave room */
  gate_denial *denied; /* NULL, or room for GATE_MAX_DENIED entries (set by the caller, kept by parsing) */
  char grant[48]; /* exec: the "reuse" grant (empty: none), valid while the policy epoch is `epoch` */
  unsigned long long epoch;
  /* the grant's "scope" (ReuseScope): held only below this process (pid 0: everywhere) */
  long scope_pid, scope_ppid;
  unsigned long long scope_start;
  /* below_program: the new program's descendants are all below a program running its own files (this exec);
   * the grant's program is one by its name alone (wherever the grant is reused) */
  int below, grant_below;
  struct gate_reused_audit *audit; /* NULL, or room for the grant's "audit" (set by the caller, kept by parsing) */
  struct gate_presets *presets; /* NULL, or room for the grant's "presets" (set after gate_reply_init) */
};
/* Other programs' Runs for the same run and epoch, handed over up front with a grant (ReusePreset in
 * src/protocol/messages.ts): the supervisor's alone; file is the daemon's "<dev> <ino> <size> <mtime s>
 * <mtime ns> <ctime s> <ctime ns>". Longer fields, and entries past the room, are left out. */
#define GATE_MAX_PRESETS 64
struct gate_presets {
  int n;
  /* "any_argv"'s tail: the audit record's fields after argv for its entries (empty: too long or none, and
   * those entries are then told to the daemon, not written by the supervisor) */
  char tail[512];
  struct gate_preset {
    char program[512];
    char grant[48];
    char file[160];
    int below; /* below_program, as the grant's */
    int own_tail; /* from "any_argv": audited with the tail above, not the grant's */
    /* its "scope" (ReuseScope): held only below this process; pid 0 everywhere, -1 nowhere (malformed) */
    long scope_pid, scope_ppid;
    unsigned long long scope_start;
  } e[GATE_MAX_PRESETS];
};
/* How a reused exec's audit record is written by the supervisor itself (ReusedAudit in
 * src/protocol/messages.ts): the log's path, and the encoded fields before and after cwd and argv. */
struct gate_reused_audit {
  char log[4096];
  char head[512];
  char tail[512];
};
/* Before a reply is parsed into r: the room it may fill besides its own fields (NULL: none). Every field a
 * caller supplies is a parameter here, so a caller that misses one does not compile. */
static inline void gate_reply_init(struct gate_reply *r, gate_denial *denied, struct gate_reused_audit *audit) {
  r->denied = denied;
  r->audit = audit;
  r->presets = NULL;
}
/* Parse a reply; 0 on success, -1 when it is not a valid reply object (err says why). */
int gate_parse_reply(const char *json, size_t n, struct gate_reply *r, char *err, size_t errlen);

/* Build an ExecRequest: program (absolute), argv, cwd, and the code-loading variables of envp (without
 * the gate's own LD_PRELOAD and PATH entries). */
void gate_exec_request(struct gbuf *b, const struct gate_conf *c, const char *id, const char *program,
                       char *const argv[], const char *cwd, char *const envp[], const char *own_preload,
                       const char *own_path);

/* What the kernel layer's supervisor (launch/decide.c) says besides what the LD_PRELOAD layer says: the
 * layer that asks, the run the process carries (for pairing), a #! script's argv as the kernel builds it,
 * the program's file where the daemon can read it, and the process as the daemon sees it. A NULL, or 0,
 * field is left out. */
struct gate_exec_extra {
  const char *layer;
  const char *pair_run;
  char *const *kernel_argv;
  const char *program_file;
  long host_pid;
};

/* The same for another process (the kernel layer's supervisor): its pid as it knows itself, and what that
 * layer adds (NULL: nothing; the LD_PRELOAD layer's request, as the supervisor pairs by it). Built whole,
 * in one pass: the fields in the order the relay's pairing reads them (launch/pairing.c). */
void gate_exec_request_for(struct gbuf *b, const struct gate_conf *c, const char *id, const char *program,
                           char *const argv[], const char *cwd, char *const envp[], const char *own_preload,
                           const char *own_path, long pid, const struct gate_exec_extra *extra);

/* True for a variable name that can make a program load other code (reported to the daemon). */
int gate_code_loading_name(const char *name, size_t n);

#endif
