/* The supervisor's table of reusable answers and the policy epoch (gate-reuse.h says what and why). */
#define _GNU_SOURCE
#include "gate-reuse.h"
#include "gate-common.h"
#include "gate-shared.h"
#include "gate-json.h"
#include "gate-request.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_REUSE 256

/* head and tail: the audit record's encoded fields (NULL: the daemon is told of each reuse) */
struct reuse { char *run, *program, *head, *tail; struct gate_ident id; unsigned long long epoch; char grant[48]; };
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
  if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) { close(fd); fd = -1; }
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

void gate_reuse_add(const char *run, const char *program, const struct gate_ident *id, const char *grant, unsigned long long epoch,
                    const struct gate_reused_audit *audit) {
  if (!EPOCH || !id->known || !grant[0] || strlen(grant) >= sizeof TABLE[0].grant) return;
  pthread_mutex_lock(&LOCK);
  int logged = audit && audit->log[0] && audit_log(audit->log);
  int slot = -1;
  for (int i = 0; i < MAX_REUSE && slot < 0; i++)
    if (!TABLE[i].run || (!strcmp(TABLE[i].run, run) && !strcmp(TABLE[i].program, program)) || !current(TABLE[i].epoch)) slot = i;
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
  if (!r->head || !r->tail) { free(r->head); free(r->tail); r->head = r->tail = NULL; }
  if (!r->run || !r->program) { free(r->run); free(r->program); r->run = r->program = NULL; }
  else { r->id = *id; r->epoch = epoch; strcpy(r->grant, grant); }
  pthread_mutex_unlock(&LOCK);
}

int gate_reuse_find(const char *run, const char *program, const struct gate_ident *id, struct gate_reuse_hit *hit) {
  if (!EPOCH || !id->known) return 0;
  int found = 0;
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_REUSE && !found; i++) {
    struct reuse *r = &TABLE[i];
    if (!r->run || strcmp(r->program, program) || strcmp(r->run, run)) continue;
    found = current(r->epoch) && gate_ident_eq(&r->id, id);
    if (found) {
      strcpy(hit->grant, r->grant);
      /* what the reply carried fits these (gate-request.c leaves out a longer one) */
      hit->audit = r->head && strlen(r->head) < sizeof hit->head && strlen(r->tail) < sizeof hit->tail;
      if (hit->audit) { strcpy(hit->head, r->head); strcpy(hit->tail, r->tail); }
    }
    break; /* one entry per run and program */
  }
  pthread_mutex_unlock(&LOCK);
  return found;
}

static void json_str(struct gbuf *b, const char *s, int *ok) {
  size_t n = strlen(s);
  if (!gate_utf8_valid(s, n)) *ok = 0;
  gb_json_str(b, s, n, 0);
}

int gate_reuse_audit(const struct gate_reuse_hit *hit, const char *cwd, const char *program, char *const argv[]) {
  if (!hit->audit || AUDIT_FD < 0) return -1;
  struct timespec now;
  struct tm tm;
  char stamp[64];
  clock_gettime(CLOCK_REALTIME, &now);
  gmtime_r(&now.tv_sec, &tm);
  snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
           tm.tm_min, tm.tm_sec, (int)(now.tv_nsec / 1000000));
  /* as the daemon writes an ExecReused's: {"time",<head>,"cwd","argv":[program, argv[1]...],<tail>} */
  int ok = 1;
  struct gbuf m; gb_init(&m);
  gb_puts(&m, "{\"time\":\"");
  gb_puts(&m, stamp);
  gb_puts(&m, "\",");
  gb_puts(&m, hit->head);
  gb_puts(&m, GATE_KEY(GATE_F_CWD));
  json_str(&m, cwd, &ok);
  gb_puts(&m, GATE_KEY(GATE_F_ARGV) "[");
  json_str(&m, program, &ok);
  for (int i = 1; argv[0] && argv[i]; i++) { gb_puts(&m, ","); json_str(&m, argv[i], &ok); }
  gb_puts(&m, "],");
  gb_puts(&m, hit->tail);
  gb_puts(&m, "}\n");
  ssize_t w = -1;
  /* one write of the whole line, appended where the file ends (not interleaved with another writer's) */
  if (ok && !m.oom && m.len <= 4096) do w = write(AUDIT_FD, m.p, m.len); while (w < 0 && errno == EINTR);
  size_t len = m.len;
  gb_free(&m);
  return w == (ssize_t)len ? 0 : -1;
}

int gate_same_name(const char *argv0, const char *program) {
  const char *a = strrchr(argv0, '/'), *p = strrchr(program, '/');
  return !strcmp(a ? a + 1 : argv0, p ? p + 1 : program);
}
