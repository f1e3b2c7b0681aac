/*
 * Host sockets' masks mounted by the launcher (gate-masks.h says why not by bubblewrap): in the mount
 * namespace the calling process is in, the null device bound read-only over each path that is still a
 * socket. Each mask is made whole before it is attached (a detached copy of the null device's mount, its
 * flags set, then moved over the socket found by an O_PATH descriptor): no mount point is ever made, no
 * window is left where a mask is writable, and a socket removed in between only makes the move fail, after
 * which the path is looked at again. Not pure (mounts). Trust boundary: the paths are the plan's (the
 * daemon's own scan of the host's sockets); the view they are looked up in is the sandbox's, built by
 * bubblewrap or the holder, before anything of the run has run in it.
 */
#define _GNU_SOURCE
#include "gate-masks.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* How often one path is looked at again after its socket went while being masked (and came back). */
#define MASK_TRIES 4

/* The null device's mount, copied detached, with a mask's flags (*later: a kernel without mount_setattr,
 * before 5.12, where they are set once it is attached); -1 (errno) when it cannot be had or the view's
 * /dev/null is not the null device. */
static int null_mask(int *later) {
  int m = open_tree(AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  struct stat st;
  if (m < 0) return -1;
  if (fstat(m, &st) || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
    close(m);
    errno = ENODEV;
    return -1;
  }
  struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
  *later = mount_setattr(m, "", AT_EMPTY_PATH, &a, sizeof a) != 0;
  if (*later && errno != ENOSYS) {
    int e = errno;
    close(m);
    errno = e;
    return -1;
  }
  return m;
}

/* One look at path: 1 masked or nothing to mask, 0 the socket went while it was masked (look again), -1
 * (errno) it cannot be masked, -2 (errno) the null device cannot be had. */
static int mask_one(const char *path) {
  int t = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (t < 0) return errno == ENOENT || errno == ENOTDIR ? 1 : -1;
  struct stat st;
  int r = -1, e = 0, later = 0, m = -1;
  if (fstat(t, &st)) e = errno;
  else if (!S_ISSOCK(st.st_mode)) r = 1; /* something else there now (a mask over it already, a file) */
  else if ((m = null_mask(&later)) < 0) r = errno == ENODEV ? -2 : -1, e = errno;
  else if (move_mount(m, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0) r = 1;
  else if (errno == ENOENT) r = 0; /* its socket was unlinked since it was opened */
  else e = errno;
  /* (where the flags could only be set on the attached mask, by its path: gone with its socket since, or
   * a new socket there, not a mount point, to look at again) */
  unsigned long ro = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  if (r == 1 && later && mount(NULL, path, NULL, ro, NULL))
    r = errno == ENOENT ? 1 : errno == EINVAL ? 0 : -1, e = errno;
  if (m >= 0) close(m);
  close(t);
  errno = e;
  return r;
}

int gate_masks_mount(char *const paths[], int n, int *failed) {
  for (int i = 0; i < n; i++) {
    int r = 0;
    for (int k = 0; k < MASK_TRIES && r == 0; k++) r = mask_one(paths[i]);
    if (r == 1) continue;
    *failed = r == -2 ? -1 : i;
    return r < 0 && errno ? errno : EAGAIN; /* (0 every time: a socket made again and again as it is masked) */
  }
  return 0;
}
