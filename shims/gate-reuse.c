/* The supervisor's table of reusable answers and the policy epoch (gate-reuse.h says what and why). */
#define _GNU_SOURCE
#include "gate-reuse.h"
#include "gate-common.h"
#include "gate-shared.h"
#include "gate-json.h"
#include "gate-request.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_REUSE 256
/* scoped grants looked at for one exec (the same program below several processes: configure, each make) */
#define MAX_SCOPES 16
/* how far up the walk from an exec to a grant's process goes */
#define MAX_DEPTH 64

/* head and tail: the audit record's encoded fields (NULL: the daemon is told of each reuse) */
struct reuse {
  char *run, *program, *head, *tail;
  struct gate_ident id;
  unsigned long long epoch;
  char grant[48];
  struct gate_reuse_scope scope;
  int below;
};
static struct reuse TABLE[MAX_REUSE];
static int NEXT; /* the slot a full table gives up next */
static pthread_mutex_t LOCK = PTHREAD_MUTEX_INITIALIZER;
static const volatile uint64_t *EPOCH;
/* the daemon's audit log, opened at the first grant that names it (the only one written here) */
static char *AUDIT_PATH;
static int AUDIT_FD = -1;

/* The log the daemon named, opened for appending once: 1 when the records of this grant go there. */
static int audit_log(const char *path) {
  if (AUDIT_PATH) return AUDIT_FD >= 0 && !strcmp(path, AUDIT_PATH);
  AUDIT_PATH = strdup(path);
  if (!AUDIT_PATH || path[0] != '/') return 0;
  /* the daemon made it: never created, nor followed through a link, here */
  int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
    close(fd);
    fd = -1;
  }
  AUDIT_FD = fd;
  return fd >= 0;
}

void gate_ident_of(struct gate_ident *id, const struct stat *st) {
  id->dev = st->st_dev;
  id->ino = st->st_ino;
  id->size = st->st_size;
  id->mtime = st->st_mtim;
  id->ctime = st->st_ctim;
  id->known = 1;
}

int gate_ident_eq(const struct gate_ident *a, const struct gate_ident *b) {
  return a->known && b->known && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
      a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
      a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

int gate_reuse_open(const char *request_sock) {
  char path[512];
  const char *slash = strrchr(request_sock, '/');
  if (!slash || (size_t)(slash - request_sock) + sizeof GATE_POLICY_EPOCH_FILE + 1 >= sizeof path) return -1;
  memcpy(path, request_sock, (size_t)(slash - request_sock) + 1);
  strcpy(path + (slash - request_sock) + 1, GATE_POLICY_EPOCH_FILE);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  void *m = fstat(fd, &st) == 0 && st.st_size >= 8 ? mmap(NULL, 8, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  if (m == MAP_FAILED) return -1;
  EPOCH = m;
  return 0;
}

static int current(unsigned long long epoch) { return EPOCH && epoch && *EPOCH == epoch; }

static int same_scope(const struct gate_reuse_scope *a, const struct gate_reuse_scope *b) {
  return a->pid == b->pid && a->ppid == b->ppid && a->start == b->start;
}

static void clear(struct reuse *r) {
  free(r->run);
  free(r->program);
  free(r->head);
  free(r->tail);
  memset(r, 0, sizeof *r);
}

void gate_reuse_add(const char *run, const char *program, const struct gate_ident *id, const char *grant,
                    unsigned long long epoch, const struct gate_reused_audit *audit,
                    const struct gate_reuse_scope *scope, int below) {
  static const struct gate_reuse_scope everywhere = {0, 0, 0};
  if (!scope) scope = &everywhere;
  if (!EPOCH || !id->known || !grant[0] || strlen(grant) >= sizeof TABLE[0].grant || scope->pid < 0) return;
  pthread_mutex_lock(&LOCK);
  int logged = audit && audit->log[0] && audit_log(audit->log);
  int slot = -1;
  for (int i = 0; i < MAX_REUSE && slot < 0; i++)
    if (!TABLE[i].run || !current(TABLE[i].epoch) ||
        (!strcmp(TABLE[i].run, run) && !strcmp(TABLE[i].program, program) && same_scope(&TABLE[i].scope, scope)))
      slot = i;
  if (slot < 0) slot = NEXT++ % MAX_REUSE;
  struct reuse *r = &TABLE[slot];
  free(r->run);
  free(r->program);
  free(r->head);
  free(r->tail);
  r->run = strdup(run);
  r->program = strdup(program);
  r->head = logged ? strdup(audit->head) : NULL;
  r->tail = logged ? strdup(audit->tail) : NULL;
  if (!r->head || !r->tail) {
    free(r->head);
    free(r->tail);
    r->head = r->tail = NULL;
  }
  if (!r->run || !r->program) clear(r);
  else {
    r->id = *id;
    r->epoch = epoch;
    strcpy(r->grant, grant);
    r->scope = *scope;
    r->below = below;
  }
  pthread_mutex_unlock(&LOCK);
}

/* Is the process one of gate-sh's own (PROVENANCE_PLUMBING), or one whose program cannot be told (as the
 * daemon's reading of it, src/daemon/provenance.ts, takes it)? */
static int plumbing(long pid) {
  char link[64], exe[PATH_MAX];
  snprintf(link, sizeof link, "/proc/%ld/exe", pid);
  ssize_t n = readlink(link, exe, sizeof exe - 1);
  if (n <= 0) return 1;
  exe[n] = 0;
  static const char deleted[] = " (deleted)";
  size_t dl = sizeof deleted - 1;
  if ((size_t)n > dl && !strcmp(exe + n - dl, deleted)) exe[n - dl] = 0;
  const char *slash = strrchr(exe, '/'), *base = slash ? slash + 1 : exe;
#define X(name) \
  if (!strcmp(base, name)) return 1;
  GATE_PROVENANCE_PLUMBING(X)
#undef X
  return 0;
}

/* A process's parent and start time from /proc/<pid>/stat (fields 4 and 22, counted after the last ')',
 * for the command name may hold anything): 0, or -1. */
static int stat_of(long pid, long *ppid, unsigned long long *start) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *s = strrchr(buf, ')');
  if (!s) return -1;
  s++;
  for (int field = 3; field <= 22; field++) {
    while (*s == ' ') s++;
    if (!*s) return -1;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (field == 4) *ppid = (long)v;
    if (field == 22) {
      *start = v;
      return end == s ? -1 : 0;
    }
    s = strchr(s, ' ');
    if (!s) return -1;
  }
  return -1;
}

/* The index of the scope in want that pid's exec is made below: walked up from its parent through processes
 * none of which is gate-sh's plumbing (pid itself included); -1 when none is found that way. */
static int below(pid_t pid, long parent, const struct gate_reuse_scope *want, int n) {
  unsigned long long own_start;
  if (plumbing(pid) || (parent == GATE_PARENT_UNREAD && stat_of(pid, &parent, &own_start))) return -1;
  long at = parent;
  for (int depth = 0; depth < MAX_DEPTH && at > 1; depth++) {
    long ppid = -1;
    unsigned long long start = 0;
    if (stat_of(at, &ppid, &start)) return -1;
    for (int k = 0; k < n; k++)
      if (want[k].pid == at && want[k].start == start && want[k].ppid == ppid) return k;
    if (plumbing(at)) return -1;
    at = ppid;
  }
  return -1;
}

static void fill(struct gate_reuse_hit *hit, const struct reuse *r) {
  strcpy(hit->grant, r->grant);
  hit->below = r->below || r->scope.pid > 0;
  /* what the reply carried fits these (gate-request.c leaves out a longer one) */
  hit->audit = r->head && strlen(r->head) < sizeof hit->head && strlen(r->tail) < sizeof hit->tail;
  if (hit->audit) {
    strcpy(hit->head, r->head);
    strcpy(hit->tail, r->tail);
  }
}

/* The entry for (run, program, file, scope) that answers now, or NULL (the lock held). */
static struct reuse *entry(const char *run, const char *program, const struct gate_ident *id,
                           const struct gate_reuse_scope *scope) {
  for (int i = 0; i < MAX_REUSE; i++) {
    struct reuse *r = &TABLE[i];
    if (r->run && !strcmp(r->program, program) && !strcmp(r->run, run) && same_scope(&r->scope, scope) &&
        current(r->epoch) && gate_ident_eq(&r->id, id))
      return r;
  }
  return NULL;
}

int gate_reuse_find(const char *run, const char *program, const struct gate_ident *id, pid_t pid, long parent,
                    struct gate_reuse_hit *hit) {
  if (!EPOCH || !id->known) return 0;
  static const struct gate_reuse_scope everywhere = {0, 0, 0};
  struct gate_reuse_scope want[MAX_SCOPES];
  int n = 0;
  pthread_mutex_lock(&LOCK);
  struct reuse *r = entry(run, program, id, &everywhere);
  if (r) fill(hit, r);
  for (int i = 0; !r && pid > 0 && i < MAX_REUSE && n < MAX_SCOPES; i++) {
    struct reuse *s = &TABLE[i];
    if (s->run && s->scope.pid > 0 && !strcmp(s->program, program) && !strcmp(s->run, run) && current(s->epoch) &&
        gate_ident_eq(&s->id, id))
      want[n++] = s->scope;
  }
  pthread_mutex_unlock(&LOCK);
  if (r) return 1;
  /* (the walk reads /proc: not under the lock) */
  int k = n ? below(pid, parent, want, n) : -1;
  if (k < 0) return 0;
  pthread_mutex_lock(&LOCK);
  r = entry(run, program, id, &want[k]); /* still kept (its process may have exec'd meanwhile) */
  if (r) fill(hit, r);
  pthread_mutex_unlock(&LOCK);
  return r != NULL;
}

void gate_reuse_exec(long tgid) {
  if (tgid <= 1) return;
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_REUSE; i++)
    if (TABLE[i].run && TABLE[i].scope.pid == tgid) clear(&TABLE[i]);
  pthread_mutex_unlock(&LOCK);
}

static void json_str(struct gbuf *b, const char *s, int *ok) {
  size_t n = strlen(s);
  if (!gate_utf8_valid(s, n)) *ok = 0;
  gb_json_str(b, s, n, 0);
}

int gate_reuse_audits(const struct gate_reuse_hit *hit) { return hit->audit && AUDIT_FD >= 0; }

/* (the line's head, time and cwd, is at most this long beside the head the reply carried) */
#define RECORD_FRONT (64 + 6 * PATH_MAX)

int gate_reuse_record(const struct gate_reuse_hit *hit, const char *program, char *const argv[], struct gbuf *rest) {
  int ok = gate_reuse_audits(hit);
  gb_init(rest);
  gb_puts(rest, GATE_KEY(GATE_F_ARGV) "[");
  json_str(rest, program, &ok);
  for (int i = 1; argv[0] && argv[i]; i++) {
    gb_puts(rest, ",");
    json_str(rest, argv[i], &ok);
  }
  gb_puts(rest, "],");
  gb_puts(rest, hit->tail);
  gb_puts(rest, "}\n");
  return ok && !rest->oom && rest->len + strlen(hit->head) + RECORD_FRONT <= GATE_MAX_AUDIT_RECORD ? 0 : -1;
}

int gate_reuse_append(const struct gate_reuse_hit *hit, const char *cwd, const struct gbuf *rest) {
  struct timespec now;
  struct tm tm;
  char stamp[64];
  clock_gettime(CLOCK_REALTIME, &now);
  gmtime_r(&now.tv_sec, &tm);
  snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
           tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(now.tv_nsec / 1000000));
  /* as the daemon writes an ExecReused's: {"time",<head>,"cwd","argv":[program, argv[1]...],<tail>} */
  int ok = 1;
  struct gbuf m;
  gb_init(&m);
  gb_puts(&m, "{\"time\":\"");
  gb_puts(&m, stamp);
  gb_puts(&m, "\",");
  gb_puts(&m, hit->head);
  gb_puts(&m, GATE_KEY(GATE_F_CWD));
  json_str(&m, cwd, &ok);
  struct iovec line[2] = {{m.p, m.len}, {rest->p, rest->len}};
  size_t len = m.len + rest->len;
  ssize_t w = -1;
  /* one writev of the whole line, appended where the file ends: Linux takes the file's inode lock for the whole
   * of a write to a regular file, and O_APPEND places it at the end under that lock, so the line lands in one
   * piece between the daemon's (which writes its lines so too) whatever its length; a short write is only a full
   * disk or a file size limit, which the daemon's own lines meet alike. Up to the record size the daemon keeps
   * whole (GATE_MAX_AUDIT_RECORD): a longer one the daemon cuts, so it is told of it instead. */
  if (ok && !m.oom && !rest->oom && len <= GATE_MAX_AUDIT_RECORD) do
      w = writev(AUDIT_FD, line, 2);
    while (w < 0 && errno == EINTR);
  gb_free(&m);
  return w == (ssize_t)len ? 0 : -1;
}

int gate_reuse_audit(const struct gate_reuse_hit *hit, const char *cwd, const char *program, char *const argv[]) {
  struct gbuf rest;
  int r = gate_reuse_record(hit, program, argv, &rest) || gate_reuse_append(hit, cwd, &rest) ? -1 : 0;
  gb_free(&rest);
  return r;
}

int gate_same_name(const char *argv0, const char *program) {
  const char *a = strrchr(argv0, '/'), *p = strrchr(program, '/');
  return !strcmp(a ? a + 1 : argv0, p ? p + 1 : program);
}
