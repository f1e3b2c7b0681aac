/*
 * gate_native — the calls Node cannot make: receive descriptors (SCM_RIGHTS) on a Unix stream socket and
 * read the peer's credentials (SO_PEERCRED), for the escalation runner on escalate.sock; a plain pipe,
 * so a child's stdout and stderr can share one (gate-sh's merged relay keeps their interleaving exact); and
 * the session lock, an open-file-description lock the kernel holds (src/client/lock.ts); and a spawn that
 * does not copy the caller (posix_spawn: clone(CLONE_VM|CLONE_VFORK), where Node's spawn forks its whole
 * address space: gate mcp's in-process calls, docs/startup.md), its end watched through a pidfd on Node's
 * own event loop. N-API; no state but the children being watched; the socket stays owned by Node's
 * net.Socket (paused while we read from it). Trust: runs as the caller; what is spawned is the caller's.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <uv.h>

#include "gate_relay.h"

/* posix_spawn_file_actions_addchdir_np (glibc 2.29) and _addclosefrom_np (2.34): without them there is no
 * spawn here and the caller uses Node's own (spawnAvailable() says which). */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)) && defined(SYS_pidfd_open)
#define GATE_SPAWN 1
#endif

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
  for (size_t i = 0; i < want; i++)
    if (napi_get_value_int32(env, argv[i], &out[i]) != napi_ok) return -1;
  return 0;
}

/* recvFds(fd, maxBytes) → { data: Buffer, fds: number[] } | null when nothing is ready (EAGAIN). An empty
 * data Buffer means the peer closed. Received descriptors are close-on-exec. */
static napi_value recv_fds(napi_env env, napi_callback_info info) {
  int32_t a[2];
  if (arg_int(env, info, a, 2) || a[1] <= 0 || a[1] > (1 << 20)) {
    napi_throw_type_error(env, NULL, "recvFds(fd, maxBytes)");
    return NULL;
  }
  void *data;
  napi_value buf;
  if (napi_create_buffer(env, (size_t)a[1], &data, &buf) != napi_ok) return NULL;
  struct iovec iov = {data, (size_t)a[1]};
  union {
    char b[CMSG_SPACE(MAX_FDS * sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = {0};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = u.b;
  mh.msg_controllen = sizeof u.b;
  ssize_t n;
  do n = recvmsg(a[0], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    napi_value nul;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      napi_get_null(env, &nul);
      return nul;
    }
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
    for (uint32_t i = 0; i < k; i++) {
      napi_value v;
      int32_t fd;
      napi_get_element(env, fds, i, &v);
      napi_get_value_int32(env, v, &fd);
      close(fd);
    }
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
  if (arg_int(env, info, &fd, 1)) {
    napi_throw_type_error(env, NULL, "peerCred(fd)");
    return NULL;
  }
  struct ucred cr;
  socklen_t len = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len)) return throw_errno(env, "SO_PEERCRED", errno);
  napi_value out, v;
  napi_create_object(env, &out);
  napi_create_int32(env, cr.pid, &v);
  napi_set_named_property(env, out, "pid", v);
  napi_create_uint32(env, cr.uid, &v);
  napi_set_named_property(env, out, "uid", v);
  napi_create_uint32(env, cr.gid, &v);
  napi_set_named_property(env, out, "gid", v);
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
  if (arg_int(env, info, &fd, 1)) {
    napi_throw_type_error(env, NULL, "tryLock(fd)");
    return NULL;
  }
  struct flock fl = whole_file();
  napi_value out;
  if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
    napi_get_boolean(env, true, &out);
    return out;
  }
  if (errno == EAGAIN || errno == EACCES) {
    napi_get_boolean(env, false, &out);
    return out;
  }
  return throw_errno(env, "fcntl(F_OFD_SETLK)", errno);
}

/* isLocked(fd): does another open file description hold the lock? Asks without taking it (F_OFD_GETLK). */
static napi_value is_locked(napi_env env, napi_callback_info info) {
  int32_t fd;
  if (arg_int(env, info, &fd, 1)) {
    napi_throw_type_error(env, NULL, "isLocked(fd)");
    return NULL;
  }
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
  if (arg_int(env, info, a, 2) || a[1] < 0 || a[1] > 255) {
    napi_throw_type_error(env, NULL, "takeLineInput(fd, eofByte)");
    return NULL;
  }
  napi_value out;
  struct termios t;
  if (tcgetattr(a[0], &t) != 0 || !(t.c_lflag & ICANON)) {
    napi_get_null(env, &out);
    return out;
  }
  /* the line discipline holds at most 4096 bytes; a bound here all the same (a writer keeps typing) */
  char buf[16384];
  size_t n = 0;
  int marks = 0;
  while (n + 4096 <= sizeof buf && marks < 64) {
    struct pollfd p = {.fd = a[0], .events = POLLIN, .revents = 0};
    int r = poll(&p, 1, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)) || !(p.revents & POLLIN)) break;
    ssize_t k = read(a[0], buf + n, 4096);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) break;
    if (k == 0) {
      buf[n++] = (char)a[1];
      marks++;
    } else n += (size_t)k;
  }
  void *data;
  napi_create_buffer_copy(env, n, buf, &data, &out);
  return out;
}

#ifdef GATE_SPAWN
/* ---------- spawn ---------- */

struct child {
  uv_poll_t poll;
  int pidfd;
  pid_t pid;
  napi_env env;
  napi_ref cb;
  napi_async_context ctx;
};

static void child_closed(uv_handle_t *h) { free(h->data); }

/* The pidfd is readable once the child has ended: reap it (it is ours alone: libuv waits only for the pids
 * of its own process handles) and call back with (code, signal), as Node's 'exit' gives them. */
static void child_ended(uv_poll_t *p, int status, int events) {
  (void)events;
  struct child *c = p->data;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int r;
  do r = waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG);
  while (r < 0 && errno == EINTR);
  if (status == 0 && r == 0 && si.si_pid == 0) return; /* not yet (spurious wake) */
  uv_poll_stop(p);
  close(c->pidfd);
  napi_env env = c->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, recv, argv[2];
  int code = -1, sig = 0;
  if (r == 0 && si.si_code == CLD_EXITED) code = si.si_status;
  else if (r == 0 && (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)) sig = si.si_status;
  else code = 126; /* cannot be told: never reported as a success */
  if (code >= 0) napi_create_int32(env, code, &argv[0]);
  else napi_get_null(env, &argv[0]);
  napi_create_int32(env, sig, &argv[1]);
  napi_get_global(env, &recv); /* napi_make_callback wants an object */
  if (napi_get_reference_value(env, c->cb, &cb) == napi_ok) napi_make_callback(env, c->ctx, recv, cb, 2, argv, NULL);
  napi_delete_reference(env, c->cb);
  napi_async_destroy(env, c->ctx);
  napi_close_handle_scope(env, scope);
  uv_close((uv_handle_t *)p, child_closed);
}

static char *str_arg(napi_env env, napi_value v) {
  size_t n;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &n) != napi_ok) return NULL;
  char *s = malloc(n + 1);
  if (s && napi_get_value_string_utf8(env, v, s, n + 1, &n) != napi_ok) {
    free(s);
    return NULL;
  }
  if (s && strlen(s) != n) {
    free(s);
    return NULL;
  } /* a NUL inside: refused */
  return s;
}

/* A JS array of strings as a NULL-terminated vector; NULL on a bad element. */
static char **strs_arg(napi_env env, napi_value a) {
  uint32_t n;
  bool is;
  if (napi_is_array(env, a, &is) != napi_ok || !is || napi_get_array_length(env, a, &n) != napi_ok || n > (1u << 20))
    return NULL;
  char **v = calloc((size_t)n + 1, sizeof *v);
  if (!v) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value e;
    if (napi_get_element(env, a, i, &e) != napi_ok || !(v[i] = str_arg(env, e))) {
      for (uint32_t j = 0; j < i; j++) free(v[j]);
      free(v);
      return NULL;
    }
  }
  return v;
}

static void free_strs(char **v) {
  if (!v) return;
  for (char **s = v; *s; s++) free(*s);
  free(v);
}

#define MAX_SLOTS 256

/* spawn(program, argv, env, cwd, fds, onExit) → pid. program: an absolute path, run as is (no PATH search);
 * argv includes argv[0]; env: "K=V" strings; fds[i]: the caller's descriptor the child gets as i, or -1:
 * /dev/null for 0-2, closed above; everything else is closed. The child starts in a session of its own,
 * with every signal at its default and none blocked (what Node's spawn with detached: true gives).
 * onExit(code | null, signal) once it ends. Throws (nothing started) when it cannot be run. */
static napi_value spawn_child(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value a[6];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 6) goto usage;
  napi_valuetype t;
  if (napi_typeof(env, a[5], &t) != napi_ok || t != napi_function) goto usage;
  char *program = str_arg(env, a[0]), *cwd = str_arg(env, a[3]);
  char **argv = strs_arg(env, a[1]), **envp = strs_arg(env, a[2]);
  uint32_t nfd = 0;
  int slots[MAX_SLOTS];
  bool is = false;
  int ok = program && cwd && argv && argv[0] && envp && program[0] == '/' && napi_is_array(env, a[4], &is) == napi_ok &&
      is && napi_get_array_length(env, a[4], &nfd) == napi_ok && nfd >= 3 && nfd <= MAX_SLOTS;
  for (uint32_t i = 0; ok && i < nfd; i++) {
    napi_value e;
    ok = napi_get_element(env, a[4], i, &e) == napi_ok && napi_get_value_int32(env, e, &slots[i]) == napi_ok &&
        slots[i] >= -1;
  }
  napi_value result = NULL;
  if (!ok) {
    napi_throw_type_error(env, NULL, "spawn(program, argv, env, cwd, fds, onExit): bad arguments");
    goto out;
  }
  /* every source is first moved above every source and target, so no move overwrites a later source */
  int hi = (int)nfd;
  for (uint32_t i = 0; i < nfd; i++)
    if (slots[i] >= hi) hi = slots[i] + 1;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  sigset_t all, none;
  /* every bit: sigfillset leaves out glibc's two internal signals, which the child would then start with
   * ignored (and keep through exec), where a forked child has them at their default */
  memset(&all, 0xff, sizeof all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  int e = posix_spawn_file_actions_addchdir_np(&fa, cwd);
  for (uint32_t i = 0; !e && i < nfd; i++) {
    if (slots[i] >= 0) e = posix_spawn_file_actions_adddup2(&fa, slots[i], hi + (int)i);
    else if (i < 3) e = posix_spawn_file_actions_addopen(&fa, hi + (int)i, "/dev/null", O_RDWR, 0);
  }
  for (uint32_t i = 0; !e && i < nfd; i++) {
    if (slots[i] >= 0 || i < 3) e = posix_spawn_file_actions_adddup2(&fa, hi + (int)i, (int)i);
    else e = posix_spawn_file_actions_addclose(&fa, (int)i);
  }
  if (!e) e = posix_spawn_file_actions_addclosefrom_np(&fa, (int)nfd);
  struct child *c = e ? NULL : calloc(1, sizeof *c);
  if (!e && !c) e = ENOMEM;
  pid_t pid = -1;
  if (!e) e = posix_spawn(&pid, program, &fa, &at, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (e) {
    free(c);
    char msg[PATH_MAX + 64];
    snprintf(msg, sizeof msg, "spawn %s %s", program, e == ENOENT ? "ENOENT" : e == EACCES ? "EACCES" : strerror(e));
    napi_throw_error(env, NULL, msg);
    goto out;
  }
  /* the child is ours until reaped, so its pid names it here; a pidfd says when it has ended */
  uv_loop_t *loop = NULL;
  napi_value name;
  c->pid = pid;
  c->env = env;
  c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (c->pidfd < 0 || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &c->poll, c->pidfd) != 0) {
    /* it cannot be watched: it does not run unwatched */
    int err = errno;
    kill(pid, SIGKILL);
    kill(-pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    if (c->pidfd >= 0) close(c->pidfd);
    free(c);
    throw_errno(env, "spawn: cannot watch the child (pidfd)", err);
    goto out;
  }
  c->poll.data = c;
  napi_create_reference(env, a[5], 1, &c->cb);
  napi_create_string_utf8(env, "gate_native.spawn", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &c->ctx);
  uv_poll_start(&c->poll, UV_READABLE, child_ended);
  napi_create_int32(env, pid, &result);
out:
  free(program);
  free(cwd);
  free_strs(argv);
  free_strs(envp);
  return result;
usage:
  napi_throw_type_error(env, NULL, "spawn(program, argv, env, cwd, fds, onExit)");
  return NULL;
}
#endif

/* spawnAvailable() → whether spawn() exists in this build and this kernel has pidfds. */
static napi_value spawn_available(napi_env env, napi_callback_info info) {
  (void)info;
  bool yes = false;
#ifdef GATE_SPAWN
  int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  yes = fd >= 0;
  if (fd >= 0) close(fd);
#endif
  napi_value out;
  napi_get_boolean(env, yes, &out);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback fn;
  } fns[] = {
      {"recvFds", recv_fds},
      {"peerCred", peer_cred},
      {"pipe", make_pipe},
      {"tryLock", try_lock},
      {"isLocked", is_locked},
      {"takeLineInput", take_line_input},
      {"spawnAvailable", spawn_available},
#ifdef GATE_SPAWN
      {"spawn", spawn_child},
#endif
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f);
    napi_set_named_property(env, exports, fns[i].name, f);
  }
  gate_relay_register(env, exports);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
