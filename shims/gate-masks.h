/*
 * Host sockets' masks (src/sandbox/sockets.ts; the spelling: SOCKET_MASK in src/protocol/shared-with-c.ts):
 * a plan masks every host socket its sandbox could reach with `--ro-bind-try /dev/null <socket>` among
 * bubblewrap's options. Sockets come and go on the host while a sandbox is planned and built; a socket
 * removed while bubblewrap mounted its mask failed the whole run ("Can't bind mount /oldroot/dev/null on
 * /newroot/...", "Unable to find ... in mount table", "Can't create file") or, where the sandbox's view is
 * writable, left an empty file on the host in its place. So bubblewrap is not given them:
 * - gate-launch's supervisor mounts them itself in the sandbox's mount namespace before the first exec
 *   inside it is let through (launch/masks.c), and a command joining a session sandbox's held mounts mounts
 *   them in its own (gate-join.c); both with gate_masks_mount below, which masks each socket still there,
 *   skips one that is gone (a mask over nothing hides nothing) and fails when a socket that is there cannot
 *   be masked: then nothing of the run is let through (fail closed);
 * - the session holder's mounts carry none (gate-session.c): they are each command's, mounted as it joins;
 * - only where the supervisor cannot enter the sandbox (no exec filter of its own: a launcher inside a
 *   gated tree; a setuid bubblewrap run by another user) does bubblewrap get them, as before, without the
 *   masks of sockets gone by then (gate_without_gone_masks).
 * The helpers below read the spelling alone, among the options before "--": every other /dev/null bind (a
 * protected missing file, a hidden secret) is `--ro-bind` and always bubblewrap's.
 * Header-only, but for gate_masks_mount (gate-masks.c, linked into the launcher only). Pure but for
 * lstat(2). Trust: the argv is the daemon's own plan; the host's file system is only looked at.
 */
#ifndef GATE_MASKS_H
#define GATE_MASKS_H

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "gate-shared.h"

/* Whether in[i..i+2] is a socket's mask. */
static inline int gate_mask_at(char *const in[], int i) {
  return !strcmp(in[i], GATE_SOCKET_MASK_OPTION) && in[i + 1] && !strcmp(in[i + 1], GATE_SOCKET_MASK_SOURCE) &&
      in[i + 2] && strcmp(in[i + 2], "--");
}

/* Whether in[i..i+2] is a socket's mask whose socket is gone (nothing at that path, or no folder for it). */
static inline int gate_mask_gone(char *const in[], int i) {
  struct stat st;
  if (!gate_mask_at(in, i)) return 0;
  return lstat(in[i + 2], &st) && (errno == ENOENT || errno == ENOTDIR);
}

/* Copies in (from index `from`, NULL-terminated) to out without the socket masks among the options before
 * "--": all of them (gone_only 0; their paths, in order, to paths when not NULL), or only those whose socket
 * is gone (gone_only 1). out (and paths) have room for as many entries as in. Returns how many entries it
 * wrote to out (NULL excluded); *npaths, when not NULL, how many paths. */
static inline int gate_without_masks(char *const in[], int from, char **out, int gone_only, char **paths, int *npaths) {
  int n = 0, np = 0, options = 1;
  for (int i = from; in[i]; i++) {
    if (options && !strcmp(in[i], "--")) options = 0;
    if (options && (gone_only ? gate_mask_gone(in, i) : gate_mask_at(in, i))) {
      if (paths) paths[np] = in[i + 2];
      np++;
      i += 2;
      continue;
    }
    out[n++] = in[i];
  }
  out[n] = NULL;
  if (paths) paths[np] = NULL;
  if (npaths) *npaths = np;
  return n;
}

/* The former launchers' copy: without the masks of gone sockets only (bubblewrap mounts the others). */
static inline int gate_without_gone_masks(char *const in[], int from, char **out) {
  return gate_without_masks(in, from, out, 1, NULL, NULL);
}

/* gate-masks.c. In this process's mount namespace (and root): the empty device (/dev/null as this view has
 * it: checked to be the null device) bound read-only, nosuid, nodev, noexec over each of paths[0..n) that is
 * a socket, so connect() to it is refused; a path with nothing there (or no socket any more) is skipped,
 * and so is a socket removed while it was masked. 0 when done; else the errno, with the index of the path
 * that could not be masked in *failed (-1: the null device itself). Safe in a child forked from threads:
 * system calls only. Needs CAP_SYS_ADMIN over the namespace. */
int gate_masks_mount(char *const paths[], int n, int *failed);

#endif
