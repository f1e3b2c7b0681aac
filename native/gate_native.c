/*
 * gate_native — the calls Node cannot make: receive descriptors (SCM_RIGHTS) on a Unix stream socket and
 * read the peer's credentials (SO_PEERCRED), for the escalation runner on escalate.sock; a plain pipe,
 * so a child's stdout and stderr can share one (gate-sh's merged relay keeps their interleaving exact); and
 * the session lock, an open-file-description lock the kernel holds (src/daemon/lock.ts).
 * N-API, no state; the socket stays owned by Node's net.Socket (paused while we read from it).
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#define MAX_FDS 8

static napi_value throw_errno(napi_env env, const char *what, int e) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(e));
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static int arg_int(napi_env env, napi_callback_info info, int32_t *out, size_t want) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) return -1;
  for (size_t i = 0; i < want; i++) if (napi_get_value_int32(env, argv[i], &out[i]) != napi_ok) return -1;
  return 0;
}

/* recvFds(fd, maxBytes) → { data: Buffer, fds: number[] } | null when nothing is ready (EAGAIN). An empty
 * data Buffer means the peer closed. Received descriptors are close-on-exec. */
static napi_value recv_fds(napi_env env, napi_callback_info info) {
  int32_t a[2];
  if (arg_int(env, info, a, 2) || a[1] <= 0 || a[1] > (1 << 20)) { napi_throw_type_error(env, NULL, "recvFds(fd, maxBytes)"); return NULL; }
  void *data;
  napi_value buf;
  if (napi_create_buffer(env, (size_t)a[1], &data, &buf) != napi_ok) return NULL;
  struct iovec iov = { data, (size_t)a[1] };
  union { char b[CMSG_SPACE(MAX_FDS * sizeof(int))]; struct cmsghdr align; } u;
  struct msghdr mh = { 0 };
  mh.msg_iov = &iov; mh.msg_iovlen = 1;
  mh.msg_control = u.b; mh.msg_controllen = sizeof u.b;
  ssize_t n;
  do n = recvmsg(a[0], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC); while (n < 0 && errno == EINTR);
  if (n < 0) {
    napi_value nul;
    if (errno == EAGAIN || errno == EWOULDBLOCK) { napi_get_null(env, &nul); return nul; }
    return throw_errno(env, "recvmsg", errno);
  }
  napi_value fds, out, slice;
  napi_create_array(env, &fds);
  uint32_t k = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int *p = (int *)CMSG_DATA(c);
    for (size_t i = 0; i < cnt; i++) {
      napi_value v;
      napi_create_int32(env, p[i], &v);
      napi_set_element(env, fds, k++, v);
    }
  }
  if (mh.msg_flags & MSG_CTRUNC) {
    /* more descriptors than we accept: close what arrived and refuse */
    for (uint32_t i = 0; i < k; i++) { napi_value v; int32_t fd; napi_get_element(env, fds, i, &v); napi_get_value_int32(env, v, &fd); close(fd); }
    napi_throw_error(env, NULL, "too many descriptors in one message");
    return NULL;
  }
  void *sd;
  napi_create_buffer_copy(env, (size_t)n, data, &sd, &slice);
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "data", slice);
  napi_set_named_property(env, out, "fds", fds);
  return out;
}

/* peerCred(fd) → { pid, uid, gid } of the process at the other end (as the kernel saw it at connect). */
static napi_value peer_cred(napi_env env, napi_callback_info info) {
  int32_t fd;
  if (arg_int(env, info, &fd, 1)) { napi_throw_type_error(env, NULL, "peerCred(fd)"); return NULL; }
  struct ucred cr;
  socklen_t len = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len)) return throw_errno(env, "SO_PEERCRED", errno);
  napi_value out, v;
  napi_create_object(env, &out);
  napi_create_int32(env, cr.pid, &v); napi_set_named_property(env, out, "pid", v);
  napi_create_uint32(env, cr.uid, &v); napi_set_named_property(env, out, "uid", v);
  napi_create_uint32(env, cr.gid, &v); napi_set_named_property(env, out, "gid", v);
  return out;
}

/* pipe() → [readFd, writeFd], both close-on-exec (a child gets the write end only where spawn puts it). */
static napi_value make_pipe(napi_env env, napi_callback_info info) {
  (void)info;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC)) return throw_errno(env, "pipe2", errno);
  napi_value out, v;
  napi_create_array_with_length(env, 2, &out);
  for (uint32_t i = 0; i < 2; i++) {
    napi_create_int32(env, fds[i], &v);
    napi_set_element(env, out, i, v);
  }
  return out;
}

/* One write lock on the whole file, owned by the open file description (F_OFD_*): released when the last
 * descriptor closes or the process dies, whatever PID namespace looked at it. */
static struct flock whole_file(void) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  return fl;
}

/* tryLock(fd): true when taken, false when another open file description holds it (never waits). */
static napi_value try_lock(napi_env env, napi_callback_info info) {
  int32_t fd;
  if (arg_int(env, info, &fd, 1)) { napi_throw_type_error(env, NULL, "tryLock(fd)"); return NULL; }
  struct flock fl = whole_file();
  napi_value out;
  if (fcntl(fd, F_OFD_SETLK, &fl) == 0) { napi_get_boolean(env, true, &out); return out; }
  if (errno == EAGAIN || errno == EACCES) { napi_get_boolean(env, false, &out); return out; }
  return throw_errno(env, "fcntl(F_OFD_SETLK)", errno);
}

/* isLocked(fd): does another open file description hold the lock? Asks without taking it (F_OFD_GETLK). */
static napi_value is_locked(napi_env env, napi_callback_info info) {
  int32_t fd;
  if (arg_int(env, info, &fd, 1)) { napi_throw_type_error(env, NULL, "isLocked(fd)"); return NULL; }
  struct flock fl = whole_file();
  if (fcntl(fd, F_OFD_GETLK, &fl)) return throw_errno(env, "fcntl(F_OFD_GETLK)", errno);
  napi_value out;
  napi_get_boolean(env, fl.l_type != F_UNLCK, &out);
  return out;
}

/* takeLineInput(fd, eofByte) → Buffer | null. What a terminal in canonical mode holds for its reader (whole
 * lines, and the EOF marks a Ctrl-D left), read before gate-sh switches that terminal to raw mode: the
 * kernel keeps an EOF mark in the queue as a NUL byte and, once the terminal is raw, hands that NUL out as
 * input (the `^@` a PTY-hosted script echoed with stdin at end of file). Each EOF mark becomes eofByte in
 * the result. null when fd is no terminal or not in canonical mode (then nothing is read). poll() first, so
 * no read can block and the descriptor's flags stay as they are (they are shared with the caller). */
static napi_value take_line_input(napi_env env, napi_callback_info info) {
  int32_t a[2];
  if (arg_int(env, info, a, 2) || a[1] < 0 || a[1] > 255) { napi_throw_type_error(env, NULL, "takeLineInput(fd, eofByte)"); return NULL; }
  napi_value out;
  struct termios t;
  if (tcgetattr(a[0], &t) != 0 || !(t.c_lflag & ICANON)) { napi_get_null(env, &out); return out; }
  /* the line discipline holds at most 4096 bytes; a bound here all the same (a writer keeps typing) */
  char buf[16384];
  size_t n = 0;
  int marks = 0;
  while (n + 4096 <= sizeof buf && marks < 64) {
    struct pollfd p = { .fd = a[0], .events = POLLIN, .revents = 0 };
    int r = poll(&p, 1, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)) || !(p.revents & POLLIN)) break;
    ssize_t k = read(a[0], buf + n, 4096);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) break;
    if (k == 0) { buf[n++] = (char)a[1]; marks++; }
    else n += (size_t)k;
  }
  void *data;
  napi_create_buffer_copy(env, n, buf, &data, &out);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback fn;
  } fns[] = {
      {"recvFds", recv_fds},   {"peerCred", peer_cred},         {"pipe", make_pipe},
      {"tryLock", try_lock},   {"isLocked", is_locked},         {"takeLineInput", take_line_input},
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f);
    napi_set_named_property(env, exports, fns[i].name, f);
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
