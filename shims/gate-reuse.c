/* The supervisor's table of reusable answers and the policy epoch (gate-reuse.h says what and why). */
#define _GNU_SOURCE
#include "gate-reuse.h"
#include "gate-common.h"
#include "gate-shared.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_REUSE 256

struct reuse { char *run, *program; struct gate_ident id; unsigned long long epoch; char grant[48]; };
static struct reuse TABLE[MAX_REUSE];
static int NEXT; /* the slot a full table gives up next */
static pthread_mutex_t LOCK = PTHREAD_MUTEX_INITIALIZER;
static const volatile uint64_t *EPOCH;

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

void gate_reuse_add(const char *run, const char *program, const struct gate_ident *id, const char *grant, unsigned long long epoch) {
  if (!EPOCH || !id->known || !grant[0] || strlen(grant) >= sizeof TABLE[0].grant) return;
  pthread_mutex_lock(&LOCK);
  int slot = -1;
  for (int i = 0; i < MAX_REUSE && slot < 0; i++)
    if (!TABLE[i].run || (!strcmp(TABLE[i].run, run) && !strcmp(TABLE[i].program, program)) || !current(TABLE[i].epoch)) slot = i;
  if (slot < 0) slot = NEXT++ % MAX_REUSE;
  struct reuse *r = &TABLE[slot];
  free(r->run);
  free(r->program);
  r->run = strdup(run);
  r->program = strdup(program);
  if (!r->run || !r->program) { free(r->run); free(r->program); r->run = r->program = NULL; }
  else { r->id = *id; r->epoch = epoch; strcpy(r->grant, grant); }
  pthread_mutex_unlock(&LOCK);
}

int gate_reuse_find(const char *run, const char *program, const struct gate_ident *id, char *grant) {
  if (!EPOCH || !id->known) return 0;
  int hit = 0;
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_REUSE && !hit; i++) {
    struct reuse *r = &TABLE[i];
    if (!r->run || strcmp(r->program, program) || strcmp(r->run, run)) continue;
    hit = current(r->epoch) && gate_ident_eq(&r->id, id);
    if (hit) strcpy(grant, r->grant);
    break; /* one entry per run and program */
  }
  pthread_mutex_unlock(&LOCK);
  return hit;
}

int gate_same_name(const char *argv0, const char *program) {
  const char *a = strrchr(argv0, '/'), *p = strrchr(program, '/');
  return !strcmp(a ? a + 1 : argv0, p ? p + 1 : program);
}
