/*
 * What an exec names (gate-launch's supervisor): the program as the process sees it (an absolute path), the
 * file the supervisor opens to know it (through /proc/<pid>/, so the process's own root, cwd and descriptors
 * count, not the supervisor's), the form of that file the daemon reads, and the marks the LD_PRELOAD layer
 * left on the exec (GATE_ASK, GATE_CHECKED). Not pure: readlink of /proc. Trust boundary: the path, the
 * descriptor number and the environment are the process's own words; they only name files the process can
 * reach, and a mark can only make its own exec quieter (pairing.c says why).
 */
#define _GNU_SOURCE
#include "launch.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Relative paths against the process's cwd or the descriptor's folder; AT_EMPTY_PATH: the descriptor's own
 * target. */
int exec_program(pid_t pid, int at, int dirfd, const char *path, int flags, const char *cwd, char *out, size_t n) {
  char link[64], base[PATH_MAX];
  if (at && !path[0]) {
    if (!(flags & AT_EMPTY_PATH)) return -1;
    snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, dirfd);
    return read_link(link, out, n);
  }
  if (path[0] == '/') {
    gate_join(out, n, path, NULL, NULL, NULL);
    return 0;
  }
  if (at && dirfd != AT_FDCWD) {
    snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, dirfd);
    if (read_link(link, base, sizeof base)) return -1;
  } else gate_join(base, sizeof base, cwd, NULL, NULL, NULL);
  gate_join(out, n, strcmp(base, "/") ? base : "", "/", path, NULL);
  return 0;
}

/* The process's own /proc/self, /proc/thread-self and /dev/fd name it, not this supervisor. */
void exec_file(pid_t pid, int at, int dirfd, const char *path, const char *program, char *out, size_t n) {
  if (at && !path[0]) snprintf(out, n, "/proc/%d/fd/%d", (int)pid, dirfd);
  else if (!strncmp(program, "/proc/self/", 11)) snprintf(out, n, "/proc/%d/%s", (int)pid, program + 11);
  else if (!strncmp(program, "/proc/thread-self/", 18)) snprintf(out, n, "/proc/%d/%s", (int)pid, program + 18);
  else if (!strncmp(program, "/dev/fd/", 8)) snprintf(out, n, "/proc/%d/fd/%s", (int)pid, program + 8);
  else snprintf(out, n, "/proc/%d/root%s", (int)pid, program);
}

/* The forms the daemon reads (src/protocol/validate.ts); another /proc/self name goes by the process's root. */
void program_file(pid_t pid, const char *file, const char *program, char *out, size_t n) {
  char pidp[48];
  int plen = snprintf(pidp, sizeof pidp, "/proc/%d/", (int)pid);
  const char *rest = file + plen;
  if (strncmp(rest, "fd/", 3) && strncmp(rest, "root/", 5) && strncmp(rest, "cwd/", 4) && strcmp(rest, "exe"))
    snprintf(out, n, "/proc/%d/root%s", (int)pid, program);
  else snprintf(out, n, "%s", file);
}

/* Made by the LD_PRELOAD layer without asking (docs/exec-gate.md, "The kernel layer decides first"):
 * nothing to pair; a Deny or Escalate is held for it to act on, and its new program does not ask (its mark).
 * Both marks name this program, and this pid or (posix_spawn) the parent whose memory this task shares; a
 * static program keeps the marks of its own exec, which name its own path. */
void exec_marks(pid_t pid, struct ids *ids, const char *program, char **envp, struct marks *m) {
  static const char checked[] = GATE_VAR_CHECKED "=";
  size_t ml = sizeof GATE_MARK_ASK - 1, cl = sizeof checked - 1;
  *m = (struct marks){0, 0, pid, 0}; /* asker_own: the pid's own, read at the first mark that names program */
  for (char **e = envp; *e; e++) {
    const char *v = !strncmp(*e, GATE_MARK_ASK, ml) ? *e + ml : !strncmp(*e, checked, cl) ? *e + cl : NULL;
    if (!v) continue;
    char *colon;
    long named = strtol(v, &colon, 10);
    if (colon == v || *colon != ':' || strcmp(colon + 1, program)) continue;
    long own = ids_own(ids);
    if (!m->asker_own) m->asker_own = own;
    if (named != own && m->asker != pid && named != m->asker_own) continue;
    if (named != own && m->asker == pid) {
      /* a spawn: the parent's layer marked its child's exec with its own pid */
      if (ids->parent <= 1 || named != own_pid((pid_t)ids->parent)) continue;
      if (syscall(SYS_kcmp, (pid_t)ids->parent, pid, KCMP_VM, 0, 0) != 0) continue;
      m->asker = (pid_t)ids->parent;
      m->asker_own = named;
    }
    if (v == *e + ml) m->asks = 1;
    else m->marked = 1;
  }
}
