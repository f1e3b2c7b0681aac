/*
 * A #! script as the kernel runs it (fs/binfmt_script.c), read by gate-launch's supervisor before it asks:
 * the argv the kernel builds in front of the exec's argv[1..] (interpreter, its argument, the script, at each
 * level) and the file that runs in the end. The daemon judges that very argv (src/decide/shebang.ts) and the
 * check after the exec (follow.c) compares with it. Not pure: opens the files as the process would (its root,
 * its cwd). Trust boundary: the script and its interpreters are the process's files, possibly hostile: the
 * line is bounded by SCRIPT_HEAD bytes and the chain by SCRIPT_DEPTH, as the kernel bounds them.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCRIPT_HEAD 256 /* BINPRM_BUF_SIZE: what the kernel reads of a #! line */
#define SCRIPT_DEPTH 5 /* interpreters that are scripts, as deep as the kernel follows them */

static int spacetab(char c) { return c == ' ' || c == '\t'; }
static int terminator(char c) { return c == ' ' || c == '\t' || c == 0; }

/* The #! line of a file's first n bytes as the kernel reads it: 1 with the interpreter name and its optional
 * argument (malloc'd), 0 when it is not a script the kernel runs. */
static int script_line(const char *buf, size_t n, char **name, char **arg) {
  *name = *arg = NULL;
  if (n < 2 || buf[0] != '#' || buf[1] != '!') return 0;
  const char *nl = memchr(buf, '\n', n);
  size_t end;
  if (nl) end = (size_t)(nl - buf);
  else {
    size_t first = 2, t;
    while (first < n && spacetab(buf[first])) first++;
    if (first >= n) return 0;
    for (t = first; t < n && !terminator(buf[t]); t++) {}
    if (t >= n && n >= SCRIPT_HEAD) return 0; /* the name itself cut by the buffer */
    end = n >= SCRIPT_HEAD ? SCRIPT_HEAD - 1 : n;
  }
  while (end > 2 && spacetab(buf[end - 1])) end--;
  size_t i = 2;
  while (i < end && spacetab(buf[i])) i++;
  if (i >= end) return 0;
  size_t sep = i;
  while (sep < end && !terminator(buf[sep])) sep++;
  *name = strndup(buf + i, sep - i);
  if (sep < end && buf[sep]) {
    size_t a = sep;
    while (a < end && spacetab(buf[a])) a++;
    if (a < end) *arg = strndup(buf + a, end - a); /* (strndup stops at a NUL, as the kernel's string does) */
    if (*arg && !**arg) {
      free(*arg);
      *arg = NULL;
    }
  }
  return *name != NULL;
}

/* The kernel's argv prefix for the #! script open on fd (named `path` by the exec) and the identity of the
 * file it finally runs, each interpreter opened as the process would (its root, its cwd): 0, or -1 when it
 * cannot be read so (too deep, unreadable, out of memory). fd stays open. */
int script_chain(pid_t pid, const char *cwd, int fd, const char *path, char ***out, struct gate_ident *final) {
  char buf[SCRIPT_HEAD], file[PATH_MAX + 64];
  size_t np = 0;
  char **pre = calloc(1, sizeof *pre);
  const char *named = path; /* the name the kernel puts in argv for the file it opens next */
  int cur = fd, rc = -1;
  for (int depth = 0; pre && depth <= SCRIPT_DEPTH; depth++) {
    ssize_t n = pread(cur, buf, sizeof buf, 0);
    char *name = NULL, *arg = NULL;
    struct stat st;
    if (n < 0) break;
    if (!script_line(buf, (size_t)n, &name, &arg)) {
      if (depth > 0 && fstat(cur, &st) == 0) {
        gate_ident_of(final, &st);
        rc = 0;
      }
      free(name);
      free(arg);
      break;
    }
    /* the kernel drops argv[0] and puts the interpreter, its argument and the name it opened in front */
    char **next = depth < SCRIPT_DEPTH ? calloc(np + 4, sizeof *next) : NULL;
    char *was = next ? strdup(named) : NULL;
    if (!was) {
      free(next);
      free(name);
      free(arg);
      break;
    }
    size_t k = 0;
    next[k++] = name;
    if (arg) next[k++] = arg;
    next[k++] = was;
    for (size_t j = depth == 0 ? 0 : 1; j < np; j++) next[k++] = pre[j];
    if (depth > 0) free(pre[0]); /* the previous interpreter's name: copied into `was` */
    free(pre);
    pre = next;
    np = k;
    named = name;
    if (name[0] == '/') snprintf(file, sizeof file, "/proc/%d/root%s", (int)pid, name);
    else snprintf(file, sizeof file, "/proc/%d/root%s/%s", (int)pid, strcmp(cwd, "/") ? cwd : "", name);
    if (cur != fd) close(cur);
    cur = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (cur < 0) break;
  }
  if (cur >= 0 && cur != fd) close(cur);
  if (pre) pre[np] = NULL;
  if (rc || !pre) {
    free_vec(pre);
    return -1;
  }
  *out = pre;
  return 0;
}
