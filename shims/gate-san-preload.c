/*
 * Linked only into the AddressSanitizer test build (`make SANITIZE=address`, shims/Makefile) of the
 * programs the installed build links statically: gate-launch, gate-sh-native, gate-session, gate-netbridge.
 * Static, no LD_PRELOAD is ever loaded into them; AddressSanitizer supports no static program, so this
 * build links them dynamically, and the run's LD_PRELOAD (`<asan runtime>:<dir>/libgate.so`, the caller's
 * own entries after it) would load libgate.so into the supervisor, the holder and the bridge: the
 * LD_PRELOAD layer would gate the gate's own execs and take the run's marks out of their environment.
 *
 * So before any library's constructor runs (.preinit_array: the executable's, run by the loader before
 * every shared library's initialiser, libgate.so's included), a process started with LD_PRELOAD execs
 * itself again without it, the value kept in GATE_SAN_PRELOAD; the new image (no preloads: the runtime is
 * its first needed library) puts LD_PRELOAD back into its environment, so that what it starts sees the
 * run's LD_PRELOAD exactly as the static program's children do. libgate.so's code never runs in these
 * programs; only its pages are mapped, for the instant before the exec.
 * No instrumentation and no libc beyond raw syscalls here: the sanitizers' runtime may not be initialised
 * yet, and libgate.so's execve is not to be called.
 * Trust: GATE_SAN_PRELOAD comes from the environment, which the caller controls; honoured only in an image
 * started without LD_PRELOAD, it sets for the children what the caller could have set as LD_PRELOAD itself.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STASH "GATE_SAN_PRELOAD="
#define PRELOAD "LD_PRELOAD="
#define NO_SAN __attribute__((no_sanitize_address, no_sanitize_undefined, noinline))

NO_SAN static int starts(const char *s, const char *prefix) {
  while (*prefix)
    if (*s++ != *prefix++) return 0;
  return 1;
}

NO_SAN static size_t len(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}

NO_SAN static void fail(const char *why) {
  static const char head[] = "gate-sh: sanitizer build: cannot re-exec without LD_PRELOAD: ";
  syscall(SYS_write, 2, head, sizeof head - 1);
  syscall(SYS_write, 2, why, len(why));
  syscall(SYS_write, 2, "\n", 1);
  syscall(SYS_exit_group, 126);
}

NO_SAN static void keep_preload_out(int argc, char **argv, char **envp) {
  (void)argc;
  size_t n = 0;
  char **preload = NULL, **stash = NULL;
  for (; envp && envp[n]; n++) {
    if (starts(envp[n], PRELOAD)) preload = &envp[n];
    if (starts(envp[n], STASH)) stash = &envp[n];
  }
  if (!preload || !(*preload)[sizeof PRELOAD - 1]) {
    /* the image started again: LD_PRELOAD back for the children, the stash gone */
    if (stash && starts(*stash + sizeof STASH - 1, PRELOAD)) {
      *stash += sizeof STASH - 1;
    } else if (stash) {
      for (char **e = stash; *e; e++) e[0] = e[1];
    }
    return;
  }
  char self[4096];
  long got = syscall(SYS_readlink, "/proc/self/exe", self, sizeof self - 1);
  if (got <= 0) fail("/proc/self/exe unreadable");
  self[got] = 0;
  size_t vlen = len(*preload);
  char kept[sizeof STASH + vlen];
  char *env[n + 1];
  size_t o = 0;
  for (size_t i = 0; i < n; i++)
    if (&envp[i] != preload && &envp[i] != stash) env[o++] = envp[i];
  for (size_t i = 0; i < sizeof STASH - 1; i++) kept[i] = STASH[i];
  for (size_t i = 0; i <= vlen; i++) kept[sizeof STASH - 1 + i] = (*preload)[i];
  env[o++] = kept;
  env[o] = NULL;
  syscall(SYS_execve, self, argv, env);
  fail(self);
}

__attribute__((section(".preinit_array"), used)) static void (*const gate_san_preinit)(int, char **,
                                                                                       char **) = keep_preload_out;
