/*
 * The exec gate's client side of the request channel (src/protocol/messages.ts), in C so it can run
 * inside any process: JSON building, a small JSON reader for replies, the datagram request/reply with
 * bounded retries, the stream fallback, and the escalation handshake (descriptors by SCM_RIGHTS).
 * Nothing here execs anything: the gate never gates its own traffic.
 */
#ifndef GATE_PROTO_H
#define GATE_PROTO_H

#include <stddef.h>
#include <sys/types.h>

#define GATE_PROTOCOL_VERSION 1
#define GATE_MAX_DATAGRAM (60 * 1024)
#define GATE_MAX_FRAME (64 * 1024 * 1024)
/* Room for a datagram reply; a larger one is fetched again over the stream socket (the daemon keeps
 * replies longer than this: CLIENT_REPLY_ROOM in src/protocol/messages.ts, keep the two equal). */
#define GATE_REPLY_ROOM 8192

/* A growable byte buffer. */
struct gbuf {
  char *p;
  size_t len, cap;
  int oom;
};
void gb_init(struct gbuf *b);
void gb_free(struct gbuf *b);
void gb_put(struct gbuf *b, const char *s, size_t n);
void gb_puts(struct gbuf *b, const char *s);
/* A JSON string literal; base64 of the raw bytes when b64 is set. */
void gb_json_str(struct gbuf *b, const char *s, size_t n, int b64);
int gate_utf8_valid(const char *s, size_t n);

/* The parsed parts of a reply that the gate acts on. Strings are NUL-terminated copies. Kept small (an
 * exec check holds one on its stack in a freshly forked child, where every page touched is a fault);
 * only the nested-shell shim, which reads a preflight's denials, supplies room for them. */
enum gate_action { GA_NONE, GA_RUN, GA_ESCALATE, GA_DENY };
#define GATE_MAX_DENIED 8
typedef char gate_denial[1024]; /* "<cmd>: <reason>" */
struct gate_reply {
  char type[24];          /* exec | preflight | pending | error | ... */
  char id[130];
  enum gate_action action;
  char reason[1024];      /* Deny reason, or error message */
  char token[256];        /* escalation_token */
  char run_id[130];       /* preflight run_id */
  char code[24];          /* error code (too-large, busy, ...) */
  int deny_count;         /* preflight: denied subcommands, listed in denied[] when the caller gave room */
  gate_denial *denied;    /* NULL, or room for GATE_MAX_DENIED entries (set by the caller, kept by parsing) */
};
/* Parse a reply; 0 on success, -1 when it is not a valid reply object (err says why). */
int gate_parse_reply(const char *json, size_t n, struct gate_reply *r, char *err, size_t errlen);

/* The JSON reader, for clients that read more of a reply than struct gate_reply holds (the native
 * gate-sh's run plan). A value is consumed by each call; depth is bounded. */
struct gate_jp { const char *s, *e; int depth; };
typedef int (*gate_jfield)(const char *key, struct gate_jp *p, void *ctx);
/* Call fn(key, p, ctx) at each member's value; fn must consume it. 0, or -1 when malformed. */
int gate_jobject(struct gate_jp *p, gate_jfield fn, void *ctx);
/* Call fn(i, p, ctx) at each element of a list; fn must consume it. */
typedef int (*gate_jelem)(int i, struct gate_jp *p, void *ctx);
int gate_jarray(struct gate_jp *p, gate_jelem fn, void *ctx);
int gate_jskip(struct gate_jp *p);
/* A string value, decoded into a new NUL-terminated allocation (NULL when malformed or out of memory). */
char *gate_jstr_dup(struct gate_jp *p);
/* true/false; -1 when the value is neither. */
int gate_jbool(struct gate_jp *p);

/* Where to talk. All paths absolute; the client folder exists at the same path for the daemon. */
struct gate_conf {
  const char *request_sock, *stream_sock, *escalate_sock, *client_dir, *run_id;
  int timeout_ms; /* silence allowed before a retry (pending messages reset it) */
  int attempts;   /* datagram sends of the same id before giving up */
  int via_supervisor; /* request_sock is the kernel layer's supervisor (GATE_KERNEL_SOCK), not the daemon */
};
/* Fill from the environment (GATE_*); -1 with err when something is missing. */
int gate_conf_from_env(struct gate_conf *c, char *err, size_t errlen);
/* The same from "NAME=value" entries (the gate's variables as captured at start: the process may have
 * cleared its environment since). */
int gate_conf_from_list(struct gate_conf *c, char *const vars[], int n, char *err, size_t errlen);

void gate_new_id(char *out, size_t n);

/* One datagram from fd by deadline_ms (CLOCK_MONOTONIC ms), its full length even beyond n (MSG_TRUNC,
 * so a caller sees one too large); -1 when none came in time or recv failed. Retries EINTR. */
ssize_t gate_recv_until(int fd, void *buf, size_t n, long deadline_ms);

/* Send one request (JSON, with its id) and wait for the reply with that id. Datagram up to
 * GATE_MAX_DATAGRAM, else the stream socket. 0 on success; -1 with err on any failure (fail closed). */
int gate_request(const struct gate_conf *c, const char *id, const struct gbuf *msg, struct gate_reply *r,
                 char *err, size_t errlen);

/* Close and remove this process's kept reply socket, if any (before an exec or exit: the socket file
 * would outlive it). */
void gate_reply_release(void);

/* Escalate: present the token with fds 0/1/2 and the exec's environment on escalate.sock, wait for the
 * exit status. Returns the status to exit with (0..255), or -1 with err. */
int gate_escalate(const struct gate_conf *c, const char *token, char *const envp[], char *err, size_t errlen);

/* Build an ExecRequest: program (absolute), argv, cwd, and the code-loading variables of envp (without
 * the gate's own LD_PRELOAD and PATH entries). */
void gate_exec_request(struct gbuf *b, const struct gate_conf *c, const char *id, const char *program,
                       char *const argv[], const char *cwd, char *const envp[], const char *own_preload,
                       const char *own_path);

/* The same for another process (the kernel layer's supervisor, src: gate-launch.c): its pid as it knows
 * itself, and the layer that asks ("kernel"; NULL for the LD_PRELOAD layer). */
void gate_exec_request_for(struct gbuf *b, const struct gate_conf *c, const char *id, const char *program,
                           char *const argv[], const char *cwd, char *const envp[], const char *own_preload,
                           const char *own_path, long pid, const char *layer);

/* True for a variable name that can make a program load other code (reported to the daemon). */
int gate_code_loading_name(const char *name, size_t n);

/* String building without stdio: the exec path runs in forked children and new processes, where
 * printf's code and first-use symbol binding cost page faults on every exec. */
/* out = a + b + c + d (NULL parts skipped), truncated to n - 1 bytes; returns the length written. */
size_t gate_join(char *out, size_t n, const char *a, const char *b, const char *c, const char *d);
/* argv joined by spaces for messages, truncated to n - 1 bytes; program when argv is empty. */
void gate_describe(char *out, size_t n, char *const argv[], const char *program);
/* v in base 10 or 16 into out (room for 24 bytes); returns out. */
char *gate_num(char *out, unsigned long v, int base);

/* stderr line without stdio (safe after fork, works when stdout is redirected). */
void gate_msg(const char *a, const char *b, const char *c, const char *d);

#endif
