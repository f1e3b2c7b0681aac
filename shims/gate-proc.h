/*
 * Reading /proc for the static helpers that watch processes (gate-launch's supervisor, gate-session's
 * holder): one field of /proc/<pid>/status, and a process's children. Header-only so gate-session links nothing of the request channel.
 * Trust: /proc of a process that may be hostile; a field it cannot read is "unknown", never a guess.
 */
#ifndef GATE_PROC_H
#define GATE_PROC_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The value of a field of /proc/<pid>/status (field as "\nPPid:"), terminated at its line's end, in buf;
 * NULL when the file or the field cannot be read. */
static inline char *gate_status_field(long pid, const char *field, char *buf, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/status", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n <= 0) return NULL;
  buf[n] = 0;
  char *l = strstr(buf, field);
  if (!l) return NULL;
  char *v = l + strlen(field);
  char *end = strchr(v, '\n');
  if (end) *end = 0;
  return v;
}

/* The children of pid's main thread (/proc/<pid>/task/<pid>/children: pids separated by spaces) in buf;
 * 0 when there are none or the file cannot be read. */
static inline ssize_t gate_children(long pid, char *buf, size_t size) {
  char path[96];
  snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", pid, pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  return n;
}

#endif
