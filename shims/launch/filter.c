/*
 * The exec filter (gate-launch's kernel layer): a seccomp program that hands every execve and execveat of the
 * tree to the supervisor as a user notification, refuses the exec calls of other ABIs (their pointers are not
 * read) and a second listener inside the tree; and the hand-over of its listener from the tree root to the
 * supervisor over their socketpair. Trust boundary: the filter is what confines the tree; the hand-over is
 * between the launcher's own two processes.
 */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define GATE_AUDIT_ARCH AUDIT_ARCH_X86_64
#define COMPAT_EXECVE 11
#define COMPAT_EXECVEAT 358
#define COMPAT_SECCOMP 354
#define X32_BIT 0x40000000u
#elif defined(__aarch64__)
#define GATE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_EXECVE 11
#define COMPAT_EXECVEAT 387
#define COMPAT_SECCOMP 383
#else
#error "gate-launch knows the system call numbers of x86_64 and aarch64 only"
#endif

/* The errno a nested launcher gets when it asks for a second listener: it is already inside a gated tree
 * whose supervisor sees every exec (gate-common.h). */
_Static_assert(GATE_NESTED_ERRNO == EXDEV, "GATE_NESTED_ERRNO is EXDEV");

#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define LOAD(what) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, what)
#define IF(op, k, yes, no) BPF_JUMP(BPF_JMP | (op) | BPF_K, k, yes, no)

/* Jump offsets from instruction `at` to labels (BPF jumps are relative to the next instruction). */
enum { L_COMPAT = 7, L_CHECK = 11, L_ALLOW = 15, L_NOTIF = 16, L_NESTED = 17, L_DENY = 18 };
#define TO(label, at) ((label) - (at)-1)

int filter_install(void) {
  struct sock_filter f[] = {
      /* 0 */ LOAD(offsetof(struct seccomp_data, arch)),
      /* 1 */ IF(BPF_JEQ, GATE_AUDIT_ARCH, 0, TO(L_COMPAT, 1)),
      /* 2 */ LOAD(offsetof(struct seccomp_data, nr)),
#ifdef X32_BIT
      /* 3: x32 system calls are refused altogether (the supervisor reads no x32 pointers) */
      IF(BPF_JGE, X32_BIT, TO(L_DENY, 3), 0),
#else
      /* 3 */ BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
      /* 4 */ IF(BPF_JEQ, __NR_execve, TO(L_NOTIF, 4), 0),
      /* 5 */ IF(BPF_JEQ, __NR_execveat, TO(L_NOTIF, 5), 0),
      /* 6 */ IF(BPF_JEQ, __NR_seccomp, TO(L_CHECK, 6), TO(L_ALLOW, 6)),
      /* 7: compat (i386 on x86_64, arm32 on aarch64): its execs are refused (32-bit pointers unread) */
      LOAD(offsetof(struct seccomp_data, nr)),
      /* 8 */ IF(BPF_JEQ, COMPAT_EXECVE, TO(L_DENY, 8), 0),
      /* 9 */ IF(BPF_JEQ, COMPAT_EXECVEAT, TO(L_DENY, 9), 0),
      /* 10 */ IF(BPF_JEQ, COMPAT_SECCOMP, 0, TO(L_ALLOW, 10)),
      /* 11: seccomp(SECCOMP_SET_MODE_FILTER, flags with NEW_LISTENER): a listener of the tree's own would
     * take precedence over the supervisor's for the same syscalls, so it is refused */
      LOAD(ARG_LO(0)),
      /* 12 */ IF(BPF_JEQ, SECCOMP_SET_MODE_FILTER, 0, TO(L_ALLOW, 12)),
      /* 13 */ LOAD(ARG_LO(1)),
      /* 14 */ IF(BPF_JSET, SECCOMP_FILTER_FLAG_NEW_LISTENER, TO(L_NESTED, 14), TO(L_ALLOW, 14)),
      /* 15 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 16 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      /* 17 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | GATE_NESTED_ERRNO),
      /* 18 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
  };
  struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
  const char *sim = getenv("GATE_TEST_SECCOMP");
  /* test hook: behave as a kernel without user notification (it can only make the run fail) */
  if (sim && !strcmp(sim, "unavailable")) {
    errno = EINVAL;
    return -1;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

int filter_send(int sock, int fd) {
  char byte = 'L';
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

void filter_send_refusal(int sock, int e) {
  char byte = e == GATE_NESTED_ERRNO ? 'N' : 'E';
  struct iovec iov[2] = {{&byte, 1}, {&e, sizeof e}};
  struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
  /* unsent, the supervisor reads the socket's end: "nothing arrived", and the run fails all the same */
  if (sendmsg(sock, &m, MSG_NOSIGNAL) < 0) return;
}

int filter_recv(int sock, int *why) {
  char byte = 0;
  int e = 0;
  struct iovec iov[2] = {{&byte, 1}, {&e, sizeof e}};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  ssize_t n;
  do n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  *why = 0;
  if (n <= 0) return -1;
  if (byte == 'E' || byte == 'N') {
    *why = byte == 'N' ? -1 : e;
    return -1;
  }
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  if (byte != 'L' || !c || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}
