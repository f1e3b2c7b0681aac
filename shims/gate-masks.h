/*
 * Host sockets' masks left out when the socket is gone (src/protocol/shared-with-c.ts, SOCKET_MASK): a plan
 * masks every host socket it sees with `--ro-bind-try /dev/null <socket>`, and a socket removed on the host
 * between the plan and bubblewrap's mounts would leave bubblewrap without a mount point ("Can't create
 * file", "Can't mkdir parents"): the run would fail for nothing, since a mask over nothing hides nothing.
 * The launchers (shims/launch/tree.c, shims/gate-session.c) copy the argv without those just before
 * bubblewrap runs. Only that exact spelling, only among the options before "--": every other /dev/null bind
 * (a protected missing file, a hidden secret) is `--ro-bind` and is always made.
 * Header-only, so gate-session links nothing more. Pure but for lstat(2).
 * Trust: the argv is the daemon's own plan; the host's file system is only looked at.
 */
#ifndef GATE_MASKS_H
#define GATE_MASKS_H

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "gate-shared.h"

/* Whether in[i..i+2] is a socket's mask whose socket is gone (nothing at that path, or no folder for it). */
static inline int gate_mask_gone(char *const in[], int i) {
  struct stat st;
  if (strcmp(in[i], GATE_SOCKET_MASK_OPTION) || !in[i + 1] || strcmp(in[i + 1], GATE_SOCKET_MASK_SOURCE) || !in[i + 2] ||
      !strcmp(in[i + 2], "--"))
    return 0;
  return lstat(in[i + 2], &st) && (errno == ENOENT || errno == ENOTDIR);
}

/* Copies in (from index `from`, NULL-terminated) to out without the masks of gone sockets among the options
 * before "--"; out has room for as many entries as in. Returns how many entries it wrote (NULL excluded). */
static inline int gate_without_gone_masks(char *const in[], int from, char **out) {
  int n = 0, options = 1;
  for (int i = from; in[i]; i++) {
    if (options && !strcmp(in[i], "--")) options = 0;
    if (options && gate_mask_gone(in, i)) {
      i += 2;
      continue;
    }
    out[n++] = in[i];
  }
  out[n] = NULL;
  return n;
}

#endif
