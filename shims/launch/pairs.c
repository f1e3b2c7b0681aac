/*
 * The answers gate-launch's supervisor keeps for pairing (docs/exec-gate.md, "The kernel layer"), each for
 * one pid and one exec's inputs, used once and kept PAIR_TTL_MS: PAIRED, the LD_PRELOAD layer's Run (or
 * Escalate) for the exec the kernel reports next; LANDED, the kernel layer's own for the new program's
 * constructor; HELD, the kernel layer's Deny or Escalate of a marked exec, for that layer's request. The
 * tables are this file's alone, under its own lock; a full table drops its oldest entry. Trust boundary:
 * what is kept came from the daemon's replies; the keys are inputs read from the process or its requests,
 * matched exactly.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PAIRS 1024
#define MAX_HELD 64

/* id: the file the answer was given for (unknown: any; the LD_PRELOAD layer's program could not be told) */
struct pair {
  pid_t pid;
  long expires;
  char *key;
  struct gate_ident id;
  char *token;
};
struct held {
  pid_t pid;
  long expires;
  char *key;
  int action;
  char *text;
  struct gate_ident id;
};

static struct pair TABLES[2][MAX_PAIRS];
static struct held HELD[MAX_HELD];
static pthread_mutex_t LOCK = PTHREAD_MUTEX_INITIALIZER;

long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void pairs_add(enum pair_table which, pid_t pid, char *key, const struct gate_ident *id, char *token) {
  struct pair *t = TABLES[which];
  long now = mono_ms();
  int slot = 0;
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_PAIRS; i++) {
    if (!t[i].key || t[i].expires < now) {
      slot = i;
      break;
    }
    if (t[i].expires < t[slot].expires) slot = i; /* full: the oldest goes */
  }
  free(t[slot].key);
  free(t[slot].token);
  t[slot] = (struct pair){pid, now + PAIR_TTL_MS, key, *id, token};
  pthread_mutex_unlock(&LOCK);
}

int pairs_take(enum pair_table which, pid_t pid, const char *key, const struct gate_ident *id, char **token) {
  struct pair *t = TABLES[which];
  long now = mono_ms();
  int hit = 0;
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_PAIRS && !hit; i++) {
    if (!t[i].key || t[i].pid != pid || strcmp(t[i].key, key)) continue;
    if (t[i].id.known && !gate_ident_eq(&t[i].id, id)) continue;
    hit = t[i].expires >= now;
    free(t[i].key);
    t[i].key = NULL;
    if (hit && token) *token = t[i].token;
    else free(t[i].token);
    t[i].token = NULL;
  }
  pthread_mutex_unlock(&LOCK);
  return hit;
}

int pairs_any(enum pair_table which, pid_t pid) {
  struct pair *t = TABLES[which];
  long now = mono_ms();
  int any = 0;
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_PAIRS && !any; i++) any = t[i].key && (!pid || t[i].pid == pid) && t[i].expires >= now;
  pthread_mutex_unlock(&LOCK);
  return any;
}

void held_add(pid_t pid, char *key, int action, const char *text, const struct gate_ident *id) {
  long now = mono_ms();
  char *copy = strdup(text ? text : "");
  if (!copy) { /* not held: the layer's request is asked of the daemon again, as any other */
    free(key);
    return;
  }
  int slot = 0;
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_HELD; i++) {
    if (!HELD[i].key || HELD[i].expires < now) {
      slot = i;
      break;
    }
    if (HELD[i].expires < HELD[slot].expires) slot = i;
  }
  free(HELD[slot].key);
  free(HELD[slot].text);
  HELD[slot] = (struct held){pid, now + PAIR_TTL_MS, key, action, copy, *id};
  pthread_mutex_unlock(&LOCK);
}

int held_take(pid_t pid, const char *inputs, size_t n, char **text, struct gate_ident *file) {
  long now = mono_ms();
  int action = -1;
  *text = NULL;
  pthread_mutex_lock(&LOCK);
  for (int i = 0; i < MAX_HELD && action < 0; i++) {
    struct held *h = &HELD[i];
    if (!h->key || h->pid != pid || strlen(h->key) != n || memcmp(h->key, inputs, n)) continue;
    if (h->expires >= now) {
      action = h->action;
      *text = h->text;
      h->text = NULL;
      *file = h->id;
    }
    free(h->key);
    free(h->text);
    *h = (struct held){0};
  }
  pthread_mutex_unlock(&LOCK);
  return action;
}
