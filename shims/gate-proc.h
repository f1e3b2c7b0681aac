/*
 * Reading /proc for the static helpers that watch processes (gate-launch's supervisor, gate-session's
 * holder): one field of /proc/<pid>/status, and a process's children. Header-only so gate-session links nothing of
 * the request channel.
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

/* The mounts of the mount namespace this process is in, told by self/mountinfo of the procfs at proc (a
 * descriptor, or AT_FDCWD for /proc: a procfs of a pid namespace this process is not in has no "self"
 * for it, so a look from outside uses one opened before entering the mounts): FNV-1a over the
 * first `count` lines' mount id, parent id, device, root and mount point (count < 0: every line), in
 * *digest; returns how many lines there are, -1 when the file cannot be read. A session sandbox's holder
 * records it when the namespace is built (shims/gate-session) and a command joining it checks it
 * (shims/gate-launch): a mount gone since (a protected folder removed and made again on the host, whose
 * read-only mount the kernel then detaches here too) changes the lines, and the command gets a sandbox of
 * its own instead. Mounts added later (propagated from the host) come after the first `count` lines. */
static inline long gate_mounts_digest(int proc, long count, unsigned long long *digest) {
  int fd = openat(proc, proc == AT_FDCWD ? "/proc/self/mountinfo" : "self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  unsigned long long h = 1469598103934665603ULL;
  long lines = 0;
  int field = 0;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < n; i++) {
      char c = buf[i];
      int counted = count < 0 || lines < count;
      if (c == ' ') field++;
      /* a counted line's first five fields (with the spaces between them) and its end */
      if (counted && (c == '\n' || field < 5)) {
        h ^= (unsigned char)c;
        h *= 1099511628211ULL;
      }
      if (c == '\n') {
        lines++;
        field = 0;
      }
    }
  close(fd);
  if (n < 0) return -1;
  *digest = h;
  return lines;
}

#endif
