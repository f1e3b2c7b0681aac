/*
 * gate-sh-native — gate-sh's entry point (bin/gate-sh links here): the non-interactive forms (`-c`, `-lc`,
 * a script file, a script on stdin that is not a terminal) without starting Node. One pre-flight round
 * trip to the warm daemon carries the script, gate-sh's arguments, environment and inherited descriptors;
 * the daemon decides and builds the run plan with the same TypeScript builders the Node gate-sh uses
 * (src/exec/client-plan.ts), and this program runs exactly that plan: bash's exit status, forwarded
 * signals, inherited descriptors and output untouched, stderr relayed only where the on-failure rerun
 * needs it, the rerun itself as the daemon's plan says.
 * With no daemon yet it starts one itself, as the Node gate-sh's autostart would, in the plain case.
 * Everything else — a terminal (interactive use, PTY hosting), --help/--version, bad escalation flags, an
 * autostart that is not plain, bytes that are not UTF-8, large scripts, GATE_SH_NODE=1 — is handed to the
 * Node gate-sh (bin/gate-sh-node) before anything runs.
 * Trust: this runs as the caller, outside any sandbox; the daemon's answer is the only thing that makes
 * anything run. Fail closed: any failure after the hand-over point prints `gate-sh: ...` and exits 126.
 */
#define _GNU_SOURCE
#include "gate-proto.h"
#include "gate-launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* the call's constants and texts: src/protocol/shared-with-c.ts, through gate-shared.h */
#define EXIT_DENIED GATE_CALL_EXIT_DENIED
#define TAIL_BYTES GATE_CALL_STDERR_TAIL_BYTES
#ifndef GATE_NODE
#define GATE_NODE ""
#endif
/* Larger scripts (GATE_CALL_NATIVE_MAX_SCRIPT) and requests (GATE_MAX_DATAGRAM) go to the Node gate-sh, which
 * has the stream path and the script-descriptor plan for them. */

static char **g_argv;
static int g_argc;
static char g_name[PATH_MAX]; /* $0 when none is given: what Node's process.argv[1] would be */
static char g_root[PATH_MAX]; /* the installation: <root>/shims/gate-sh-native */
static char g_cwd[PATH_MAX]; /* the working directory, as getcwd() gives it */

/* ---------- hand-over to the Node gate-sh ---------- */

/* Exec the Node gate-sh with the same arguments. `script`: a script already read from stdin, put back as
 * stdin so Node reads the same bytes (an unlinked in-memory file at offset 0). Never returns. */
static void reply_release(void);

static void handover(const char *script, size_t len) {
  reply_release(); /* the Node gate-sh binds its own */
  if (script) {
    int fd = memfd_create("gate-sh-script", 0);
    size_t off = 0;
    while (fd >= 0 && off < len) {
      ssize_t w = write(fd, script + off, len - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        close(fd);
        fd = -1;
        break;
      }
      off += (size_t)w;
    }
    if (fd < 0 || lseek(fd, 0, SEEK_SET) || dup2(fd, 0) < 0)
      gate_die(EXIT_DENIED, "cannot hand the script over to the Node gate-sh; nothing ran", NULL, NULL, NULL);
    if (fd != 0) close(fd);
  }
  char launcher[PATH_MAX + 32];
  gate_join(launcher, sizeof launcher, g_root, "/bin/gate-sh-node", NULL, NULL);
  char **av = calloc((size_t)g_argc + 2, sizeof *av);
  if (!av) _exit(EXIT_DENIED);
  av[0] = "node";
  av[1] = launcher;
  for (int i = 1; i < g_argc; i++) av[i + 1] = g_argv[i];
  setenv("GATE_SH_ARGV0", g_name, 1);
  /* the node this install was built with (an agent's PATH need not have one), else node on PATH */
  if (GATE_NODE[0]) execv(GATE_NODE, av);
  execvp("node", av);
  gate_die(EXIT_DENIED, "cannot start the Node gate-sh (node: ", strerror(errno), "); nothing ran", NULL);
}

/* ---------- small helpers ---------- */

/* Node's path.resolve(cwd, p): absolute, no '.', '..', empty or trailing components. */
static void resolve_path(const char *cwd, const char *p, char *out, size_t n) {
  char tmp[PATH_MAX * 2];
  if (p[0] == '/') gate_join(tmp, sizeof tmp, p, NULL, NULL, NULL);
  else gate_join(tmp, sizeof tmp, cwd, "/", p, NULL);
  size_t o = 0;
  out[0] = 0;
  for (char *s = tmp; *s;) {
    while (*s == '/') s++;
    size_t l = strcspn(s, "/");
    if (l == 0) break;
    if (l == 1 && s[0] == '.') {
    } else if (l == 2 && s[0] == '.' && s[1] == '.') {
      while (o > 0 && out[o - 1] != '/') o--;
      if (o > 0) o--;
      out[o] = 0;
    } else if (o + l + 2 < n) {
      out[o++] = '/';
      memcpy(out + o, s, l);
      o += l;
      out[o] = 0;
    }
    s += l;
  }
  if (o == 0) {
    out[0] = '/';
    out[1] = 0;
  }
}

static const char *env_nonempty(const char *k) {
  const char *v = getenv(k);
  return v && *v ? v : NULL;
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static double now_msf(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static int valid_session(const char *s) {
  size_t l = strlen(s);
  if (l < 1 || l > 32 || !strcmp(s, ".") || !strcmp(s, "..")) return 0;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
          *c == '-'))
      return 0;
  return 1;
}

/* ---------- arguments: only what decides native vs Node, and where the script is ---------- */

struct inv {
  enum { SRC_COMMAND, SRC_FILE, SRC_STDIN } source;
  const char *script_arg; /* -c's STRING, or the script file */
  int login;
  int escalation; /* --escalate, --with-permissions, --justification or --sandbox: the daemon reads them */
};

/* The same reading as src/exec/gate-sh-args.ts (the daemon parses the argv again and refuses to plan when
 * the two disagree). Returns 0 when the native path can run it, -1 for anything to hand over. */
static int classify(int argc, char **argv, struct inv *inv) {
  static const char *const plain_long[] = {"--noprofile",       "--norc",       "--posix",     "--noediting",
                                           "--verbose",         "--restricted", "--debugger",  "--dump-strings",
                                           "--dump-po-strings", "--wordexp",    "--protected", NULL};
  int i = 1;
  inv->login = 0;
  inv->escalation = 0;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--") || strncmp(a, "--", 2)) break;
    if (!strcmp(a, "--login")) {
      inv->login = 1;
      continue;
    }
    if (!strcmp(a, "--rcfile") || !strcmp(a, "--init-file")) {
      if (i + 1 >= argc) return -1;
      i++;
      continue;
    }
    if (!strcmp(a, "--escalate")) {
      inv->escalation = 1;
      continue;
    }
    if (!strcmp(a, "--with-permissions") || !strcmp(a, "--justification") || !strcmp(a, "--sandbox")) {
      if (i + 1 >= argc) return -1;
      inv->escalation = 1;
      i++;
      continue;
    }
    int known = 0;
    for (int k = 0; plain_long[k]; k++) known |= !strcmp(a, plain_long[k]);
    if (!known) return -1; /* --help, --version, --pty, --escalate, ... and errors: Node */
  }
  int command = 0, read_stdin = 0;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--") || !strcmp(a, "-")) {
      i++;
      break;
    }
    if (strlen(a) < 2 || (a[0] != '-' && a[0] != '+')) break;
    int on = a[0] == '-';
    for (const char *c = a + 1; *c; c++) {
      if (*c == 'c' && on) command = 1;
      else if (*c == 's' && on) read_stdin = 1;
      else if (*c == 'i' && on) return -1; /* interactive: Node */
      else if (*c == 'l' && on) inv->login = 1;
      else if (*c == 'o' || *c == 'O') {
        if (i + 1 >= argc) return -1;
        i++;
      } else if (!strchr("abefhkmnprtuvxBCDEHPT", *c)) return -1; /* invalid option: Node says so */
    }
  }
  if (command) {
    if (i >= argc) return -1;
    inv->source = SRC_COMMAND;
    inv->script_arg = argv[i];
  } else if (read_stdin || i >= argc) {
    inv->source = SRC_STDIN;
  } else {
    inv->source = SRC_FILE;
    inv->script_arg = argv[i];
  }
  return 0;
}

/* ---------- reading the script ---------- */

static int read_all(int fd, struct gbuf *b) {
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      struct pollfd pf = {fd, POLLIN, 0};
      poll(&pf, 1, 5);
      continue;
    }
    if (n < 0) return -1;
    if (n == 0) return b->oom ? -1 : 0;
    gb_put(b, chunk, (size_t)n);
  }
}

/* ---------- the request ---------- */

struct paths {
  char request_sock[256], stream_sock[256], client_dir[256], start_up_key[256];
};

/* A folder this user alone can create entries in (privateDirProblem in src/paths/paths.ts). */
static int private_dir(const char *dir) {
  struct stat st;
  return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && !(st.st_mode & 022);
}

/* The runtime folder as runtimeDir() in src/paths/paths.ts finds it; -1 for anything unusual (the Node
 * gate-sh then says what is wrong). The daemon checks the plan's sockets against its own. */
static int runtime_dir(char *out, size_t n) {
  char num[24], real[PATH_MAX], cand[64];
  const char *x = env_nonempty("XDG_RUNTIME_DIR");
  if (x) {
    if (x[0] != '/' || !realpath(x, real)) return -1;
    gate_join(out, n, real, "/" GATE_PATH_FOLDER, NULL, NULL);
    return 0;
  }
  gate_join(cand, sizeof cand, GATE_PATH_RUN_USER "/", gate_num(num, (unsigned long)getuid(), 10), NULL, NULL);
  if (private_dir(cand) && realpath(cand, real)) {
    gate_join(out, n, real, "/" GATE_PATH_FOLDER, NULL, NULL);
    return 0;
  }
  gate_join(out, n, GATE_PATH_TMP_FOLDER, num, NULL, NULL);
  struct stat st;
  return lstat(out, &st) == 0 && !private_dir(out) ? -1 : 0;
}

static int gate_paths(struct paths *p) {
  char runtime[PATH_MAX * 2], tmp[PATH_MAX * 2];
  if (runtime_dir(tmp, sizeof tmp)) return -1;
  const char *session = env_nonempty("GATE_SESSION");
  if (!session) session = GATE_PATH_DEFAULT_SESSION;
  if (!valid_session(session)) return -1;
  gate_join(runtime, sizeof runtime, tmp, "/", session, "/" GATE_PATH_REQUEST_DIR);
  char norm[PATH_MAX];
  /* path.join normalises; relative runtime folders are Node's business */
  if (runtime[0] != '/') return -1;
  resolve_path("/", runtime, norm, sizeof norm);
  /* the longest reply socket this client binds must fit sun_path (107 bytes) */
  if (strlen(norm) + strlen("/" GATE_PATH_CLIENT_DIR "/") + 64 > 107) return -1;
  gate_join(p->request_sock, sizeof p->request_sock, norm, "/" GATE_PATH_REQUEST_SOCK, NULL, NULL);
  gate_join(p->stream_sock, sizeof p->stream_sock, norm, "/" GATE_PATH_STREAM_SOCK, NULL, NULL);
  gate_join(p->client_dir, sizeof p->client_dir, norm, "/" GATE_PATH_CLIENT_DIR, NULL, NULL);
  /* <session>/approval/start-up.key (src/daemon/start-up.ts): never visible inside a sandbox */
  size_t l = strlen(norm) - strlen("/" GATE_PATH_REQUEST_DIR);
  gate_join(p->start_up_key, sizeof p->start_up_key, "", NULL, NULL, NULL);
  memcpy(p->start_up_key, norm, l);
  p->start_up_key[l] = 0;
  gate_join(p->start_up_key + l, sizeof p->start_up_key - l, "/" GATE_PATH_APPROVAL_DIR "/" GATE_PATH_START_UP_KEY,
            NULL, NULL, NULL);
  return 0;
}

/* connect() on a datagram socket to the request socket (no round trip): 0 when a daemon is bound there,
 * else the errno (ENOENT: no socket; ECONNREFUSED: a stale one), or -1 when no socket could be made. */
static int connect_error(const struct paths *p) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  strcpy(a.sun_path, p->request_sock);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int err = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : errno;
  close(fd);
  return err;
}

/* Is a daemon bound at the request socket? */
static int daemon_bound(const struct paths *p) { return connect_error(p) == 0; }

/* ---------- autostart ---------- */

/* No daemon bound yet: start one as gate-sh's autostart does (src/client/autostart.ts: `node bin/gate daemon
 * run` in a session of its own, its output appended to <session>/daemon.log, this process's environment),
 * without first starting the Node gate-sh, whose start the first call would otherwise wait for before the
 * daemon's own (docs/startup.md, "Cold start"). The plain case only: anything that names autostart
 * (GATE_AUTOSTART, GATE_NO_AUTOSTART, the word anywhere in config.toml), a folder or log that cannot be
 * made, a daemon that exits or has not bound its socket within GATE_AUTOSTART_WAIT_MS returns 0, and the
 * caller hands over to the Node gate-sh before anything ran: it waits for a daemon being started, or says
 * why none can be. 1 when a daemon is bound. Nothing of the script runs here. */
static int autostart(const struct paths *p) {
  if (getenv("GATE_AUTOSTART") || getenv("GATE_NO_AUTOSTART")) return 0;
  /* down for sure (src/client/reach.ts): no socket or a stale one, and nobody holds the session lock
   * (a daemon starting or stopping, or one this process cannot reach: the Node gate-sh tells which) */
  int err = connect_error(p);
  if (err != ENOENT && err != ECONNREFUSED) return 0;
  char conf[PATH_MAX + 32];
  const char *gh = env_nonempty("GATE_HOME"), *home = env_nonempty("HOME");
  if (gh) gate_join(conf, sizeof conf, gh, "/" GATE_PATH_CONFIG_FILE, NULL, NULL);
  else if (home) gate_join(conf, sizeof conf, home, "/" GATE_PATH_HOME "/" GATE_PATH_CONFIG_FILE, NULL, NULL);
  else return 0;
  int cfd = open(conf, O_RDONLY | O_CLOEXEC);
  if (cfd < 0 && errno != ENOENT) return 0;
  if (cfd >= 0) {
    struct gbuf c;
    gb_init(&c);
    int named = read_all(cfd, &c) || c.oom || (c.p && memmem(c.p, c.len, "autostart", 9));
    close(cfd);
    gb_free(&c);
    if (named) return 0;
  }
  /* <runtime>/<session>/req/request.sock: the session folder and the runtime folder above it */
  char session[256], runtime[256], log[300];
  gate_join(session, sizeof session, p->request_sock, NULL, NULL, NULL);
  for (int up = 0; up < 2; up++) {
    char *s = strrchr(session, '/');
    if (!s || s == session) return 0;
    *s = 0;
  }
  gate_join(runtime, sizeof runtime, session, NULL, NULL, NULL);
  char *s = strrchr(runtime, '/');
  if (!s || s == runtime) return 0;
  *s = 0;
  if ((mkdir(runtime, 0700) && errno != EEXIST) || (mkdir(session, 0700) && errno != EEXIST)) return 0;
  char lockf[300];
  gate_join(lockf, sizeof lockf, session, "/" GATE_PATH_LOCK_FILE, NULL, NULL);
  int lk = open(lockf, O_RDONLY | O_CLOEXEC);
  if (lk < 0 && errno != ENOENT) return 0;
  if (lk >= 0) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    int held = fcntl(lk, F_OFD_GETLK, &fl) < 0 || fl.l_type != F_UNLCK;
    close(lk);
    if (held) return 0;
  }
  gate_join(log, sizeof log, session, "/" GATE_PATH_LOG_FILE, NULL, NULL);
  int lfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (lfd < 0) return 0;
  char gate[PATH_MAX + 16];
  gate_join(gate, sizeof gate, g_root, "/bin/gate", NULL, NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(lfd);
    return 0;
  }
  if (pid == 0) {
    setsid();
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0) _exit(126);
    /* nothing of the caller's but the environment: a descriptor held by the daemon would keep a pipe open */
    if (syscall(SYS_close_range, 3u, ~0u, 0u))
      for (int fd = 3; fd < 1024; fd++) close(fd);
    char *av[] = {"node", gate, "daemon", "run", NULL};
    if (GATE_NODE[0]) execv(GATE_NODE, av);
    execvp("node", av);
    _exit(127);
  }
  close(lfd);
  long deadline = now_ms() + GATE_AUTOSTART_WAIT_MS;
  while (now_ms() < deadline) {
    if (daemon_bound(p)) return 1;
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) return daemon_bound(p);
    poll(NULL, 0, GATE_AUTOSTART_POLL_MS);
  }
  return 0;
}

/* A bubblewrap where gate-sh trusts one (TRUSTED_BWRAP_DIRS, src/protocol/shared-with-c.ts), as this process
 * sees the filesystem: the daemon builds the plan in its own view, which a mount namespace can change. */
static int bwrap_here(void) {
#define BWRAP_IN(dir) dir "/bwrap",
  static const char *const dirs[] = {GATE_TRUSTED_BWRAP_DIRS(BWRAP_IN) NULL};
#undef BWRAP_IN
  struct stat st;
  for (int i = 0; dirs[i]; i++)
    if (stat(dirs[i], &st) == 0 && S_ISREG(st.st_mode) && access(dirs[i], X_OK) == 0) return 1;
  return 0;
}

static char g_last_code[24]; /* the code of the last error reply */

static int g_fds[256];
static int g_nfds;

/* Descriptors above 2 open at start: inherited (this program opens nothing before looking). */
static void inherited_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  int own = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) && g_nfds < 256) {
    int fd = atoi(e->d_name);
    if (fd > 2 && fd != own) g_fds[g_nfds++] = fd;
  }
  closedir(d);
  for (int i = 1; i < g_nfds; i++) /* sorted, as the Node client sends them */
    for (int j = i; j > 0 && g_fds[j - 1] > g_fds[j]; j--) {
      int t = g_fds[j];
      g_fds[j] = g_fds[j - 1];
      g_fds[j - 1] = t;
    }
}

static void json_str(struct gbuf *b, const char *s) { gb_json_str(b, s, strlen(s), 0); }

/* The daemon's start-up key, trimmed, or "" when it cannot be read (the run then has no start-up phase). */
static void read_key(const char *path, char *out, size_t n) {
  out[0] = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t got = read(fd, out, n - 1);
  close(fd);
  if (got <= 0) {
    out[0] = 0;
    return;
  }
  out[got] = 0;
  char *s = out;
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
  size_t l = strlen(s);
  while (l && (s[l - 1] == ' ' || s[l - 1] == '\n' || s[l - 1] == '\t' || s[l - 1] == '\r')) l--;
  memmove(out, s, l);
  out[l] = 0;
}

/* The pre-flight with its plan request. rerun_why/justification: the on-failure rerun's question. */
static void build_preflight(struct gbuf *m, const char *id, const struct inv *inv, const char *script, const char *cwd,
                            const char *justification, const char *rerun_why, const char *key) {
  char num[32];
  gb_puts(m, GATE_MSG_HEAD);
  json_str(m, id);
  gb_puts(m,
          GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_PREFLIGHT) GATE_KEY(GATE_F_SHELL) "\"bash\"" GATE_KEY(GATE_F_FLAG));
  gb_puts(m, inv->login ? "\"-lc\"" : "\"-c\"");
  gb_puts(m, GATE_KEY(GATE_F_SCRIPT));
  json_str(m, script);
  gb_puts(m, GATE_KEY(GATE_F_CWD));
  json_str(m, cwd);
  gb_puts(m, GATE_KEY(GATE_F_PID));
  gb_puts(m, gate_num(num, (unsigned long)getpid(), 10));
  gb_puts(m,
          rerun_why ? GATE_KEY(GATE_F_SANDBOX_PERMISSIONS) GATE_QUOTE(GATE_VALUE_REQUIRE_ESCALATED)
                          GATE_KEY(GATE_F_JUSTIFICATION)
                    : GATE_KEY(GATE_F_SANDBOX_PERMISSIONS) GATE_QUOTE(GATE_VALUE_USE_DEFAULT));
  if (rerun_why) json_str(m, justification);
  gb_puts(m, GATE_KEY(GATE_F_PLAN) "{" GATE_KEY1(GATE_F_ARGV) "[");
  for (int i = 1; i < g_argc; i++) {
    if (i > 1) gb_puts(m, ",");
    json_str(m, g_argv[i]);
  }
  gb_puts(m, "],\"argv0\":");
  json_str(m, g_name);
  gb_puts(m, GATE_KEY(GATE_F_ENV) "[");
  for (char **e = environ; *e; e++) {
    if (e != environ) gb_puts(m, ",");
    json_str(m, *e);
  }
  gb_puts(m, "]" GATE_KEY(GATE_F_FDS) "[");
  for (int i = 0; i < g_nfds; i++) {
    if (i) gb_puts(m, ",");
    gb_puts(m, gate_num(num, (unsigned long)g_fds[i], 10));
  }
  gb_puts(m, "]" GATE_KEY(GATE_F_SHIMS));
  char shims[PATH_MAX + 8];
  gate_join(shims, sizeof shims, g_root, "/shims", NULL, NULL);
  json_str(m, shims);
  if (rerun_why) {
    gb_puts(m, GATE_KEY(GATE_F_RERUN_WHY));
    json_str(m, rerun_why);
  }
  if (key && *key) {
    gb_puts(m, GATE_KEY(GATE_F_START_UP_KEY));
    json_str(m, key);
  }
  gb_puts(m, "}}");
}

/* "waiting for approval" once, 300 ms after the daemon first said a person is being asked (a signal handler:
 * one write of a constant line, not gate_msg) */
static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = GATE_TEXT_PREFIX GATE_TEXT_WAITING "\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
}

static void notice_arm(void) {
  static int armed;
  if (armed) return;
  armed = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 0}, {0, GATE_CALL_NOTICE_DELAY_MS * 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
}

static void notice_stop(void) {
  struct itimerval it = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &it, NULL);
  signal(SIGALRM, SIG_DFL);
}

/* The daemon's request socket (to) and this client's own socket for request id (me), in the client folder. */
static void addresses(const struct paths *p, const char *id, struct sockaddr_un *to, struct sockaddr_un *me) {
  memset(to, 0, sizeof *to);
  to->sun_family = AF_UNIX;
  strcpy(to->sun_path, p->request_sock);
  memset(me, 0, sizeof *me);
  me->sun_family = AF_UNIX;
  gate_join(me->sun_path, sizeof me->sun_path, p->client_dir, "/", id, ".sock");
}

/* The reply socket: one per gate-sh, bound at the first request and kept for the pre-flight, the start-up
 * phase's end, run-finished and the rerun's questions (replies are told apart by id), as the Node client
 * keeps one; a socket file bound on the runtime folder's filesystem per request cost a bind and an unlink
 * each (docs/startup.md). Removed at exit and before a hand-over, by this process only (a forked child
 * leaves it). */
static int g_reply = -1;
static pid_t g_reply_owner;
static char g_reply_path[sizeof((struct sockaddr_un *)0)->sun_path];

static void reply_release(void) {
  if (g_reply < 0 || getpid() != g_reply_owner) return;
  close(g_reply);
  g_reply = -1;
  unlink(g_reply_path);
}

/* The reply socket (made and bound on first use) and the daemon's address in *to: the descriptor; -2 when
 * a sandbox forbids it (hand over: the Node client explains); -1 with the message in err. */
static int reply_socket(const struct paths *p, struct sockaddr_un *to, char *err, size_t errlen) {
  struct sockaddr_un me;
  char id[96];
  gate_new_id(id, sizeof id);
  addresses(p, id, to, &me);
  if (g_reply >= 0) return g_reply;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0 && gate_sandbox_denied(errno)) return -2;
  if (fd < 0) return gate_fail(err, errlen, "cannot create a datagram socket (%s)", strerror(errno));
  mode_t old = umask(077);
  int b = bind(fd, (struct sockaddr *)&me, sizeof me);
  umask(old);
  if (b && gate_sandbox_denied(errno)) {
    close(fd);
    return -2;
  }
  if (b) {
    gate_fail(err, errlen, "cannot bind a reply socket at %s (%s); check 'gate status'", me.sun_path, strerror(errno));
    close(fd);
    return -1;
  }
  gate_send_room(fd);
  g_reply = fd;
  g_reply_owner = getpid();
  memcpy(g_reply_path, me.sun_path, sizeof g_reply_path);
  static int registered;
  if (!registered) registered = atexit(reply_release) == 0;
  return fd;
}

/* One request, waited for as the Node client waits (GATE_CALL_WAITS, the one request loop in
 * gate-transport.c): resends of the same id after 1, 2, 4, 4... s (35 s in all), a heartbeat ping every
 * 500 ms while a person is asked, a daemon that vanishes meanwhile noticed at once. 0 with the final reply's
 * text in `out`; -1 with the message printed by the caller in err; 1 when the daemon is not running at the
 * first send (hand over: autostart), or a sandbox forbids its socket (hand over: the Node client explains). */
static int request(const struct paths *p, const char *id, const struct gbuf *msg, int notice, struct gbuf *out,
                   char *err, size_t errlen) {
  struct sockaddr_un to;
  int fd = reply_socket(p, &to, err, errlen);
  if (fd == -2) return 1;
  if (fd < 0) return -1;
  char *buf = malloc(GATE_MAX_DATAGRAM + 1);
  if (!buf) return gate_fail(err, errlen, "out of memory");
  struct gate_reply r;
  gate_reply_init(&r, NULL, NULL);
  const struct gate_link l = {fd, &to, p->request_sock, -1, 0, notice ? notice_arm : NULL};
  ssize_t n = gate_ask(&l, &GATE_CALL_WAITS, id, msg, buf, GATE_MAX_DATAGRAM, &r, err, errlen);
  if (n == -1 && !strcmp(r.type, GATE_MSG_ERROR) && !strcmp(r.id, id))
    gate_join(g_last_code, sizeof g_last_code, r.code, NULL, NULL, NULL);
  if (n >= 0) gb_put(out, buf, (size_t)n);
  int rc = n == GATE_ASK_NO_DAEMON ? 1 : n < 0 ? -1 : out->oom ? gate_fail(err, errlen, "out of memory") : 0;
  if (notice) notice_stop();
  free(buf);
  return rc;
}

/* Fire and forget (run-finished): one datagram from the reply socket (the daemon's ack arrives unread, or
 * finds it gone once this process has exited, which it counts, as for the Node client); never waits. */
static void notify(const struct paths *p, const struct gbuf *msg) {
  struct sockaddr_un to;
  char err[256];
  int fd = reply_socket(p, &to, err, sizeof err);
  if (fd < 0) return;
  ssize_t s;
  do s = sendto(fd, msg->p, msg->len, MSG_NOSIGNAL | MSG_DONTWAIT, (struct sockaddr *)&to, sizeof to);
  while (s < 0 && errno == EINTR);
}

/* run-finished for run_id; its id in id (for the ack, when a tail asks the daemon's verdict). */
static void run_finished(struct gbuf *m, char *id, size_t idlen, const char *run_id, int status, double ms,
                         const char *tail) {
  char num[32];
  gate_new_id(id, idlen);
  gb_puts(m, GATE_MSG_HEAD);
  json_str(m, id);
  gb_puts(m, GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_RUN_FINISHED) GATE_KEY(GATE_F_RUN_ID));
  json_str(m, run_id);
  gb_puts(m, GATE_KEY(GATE_F_EXIT_STATUS));
  gb_puts(m, gate_num(num, (unsigned long)status, 10));
  gb_puts(m, GATE_KEY(GATE_F_DURATION_MS));
  gb_puts(m, gate_num(num, (unsigned long)(ms + 0.5), 10));
  if (tail) {
    gb_puts(m, GATE_KEY(GATE_F_STDERR_TAIL));
    gb_json_str(m, tail, strlen(tail), 0);
  }
  gb_puts(m, "}");
}

/* ---------- the reply ---------- */

struct strs {
  char **v;
  int n;
};

struct plan {
  char *program, *cwd, *error, *notice;
  struct strs args, env_set, env_unset, denials;
  int sandboxed, rerun, rerun_any_status, has_plan, script_fd, has_rerun_of, rerun_of_run;
  int ready_fd, go_fd; /* the start-up phase's descriptors in bash, or 0 */
};

struct preply {
  char type[24], run_id[130], why[1024], justification[1200];
  int has_action;
  struct plan plan;
};

static int str_elem(int i, struct gate_jp *p, void *ctx) {
  (void)i;
  struct strs *s = ctx;
  char **v = realloc(s->v, (size_t)(s->n + 2) * sizeof *v);
  if (!v) return -1;
  s->v = v;
  if (!(v[s->n] = gate_jstr_dup(p))) return -1;
  v[++s->n] = NULL;
  return 0;
}

static int strs_field(struct gate_jp *p, struct strs *s) { return gate_jarray(p, str_elem, s); }

static int rerun_of_field(const char *key, struct gate_jp *p, void *ctx) {
  struct plan *pl = ctx;
  if (!strcmp(key, GATE_F_RERUN)) return (pl->rerun_of_run = gate_jbool(p)) < 0 ? -1 : 0;
  if (!strcmp(key, GATE_F_NOTICE)) return (pl->notice = gate_jstr_dup(p)) ? 0 : -1;
  return gate_jskip(p);
}

static int int_value(struct gate_jp *p, int *out) {
  long v = 0;
  const char *s = p->s;
  while (s < p->e && *s >= '0' && *s <= '9' && v < 100000) v = v * 10 + (*s++ - '0');
  if (s == p->s || v >= 100000) return -1;
  p->s = s;
  *out = (int)v;
  return 0;
}

static int start_up_field(const char *key, struct gate_jp *p, void *ctx) {
  struct plan *pl = ctx;
  if (!strcmp(key, GATE_F_READY)) return int_value(p, &pl->ready_fd);
  if (!strcmp(key, GATE_F_GO)) return int_value(p, &pl->go_fd);
  return gate_jskip(p);
}

static int plan_field(const char *key, struct gate_jp *p, void *ctx) {
  struct plan *pl = ctx;
  if (!strcmp(key, GATE_F_PROGRAM)) return (pl->program = gate_jstr_dup(p)) ? 0 : -1;
  if (!strcmp(key, GATE_F_CWD)) return (pl->cwd = gate_jstr_dup(p)) ? 0 : -1;
  if (!strcmp(key, GATE_F_ERROR)) return (pl->error = gate_jstr_dup(p)) ? 0 : -1;
  if (!strcmp(key, GATE_F_NOTICE)) return (pl->notice = gate_jstr_dup(p)) ? 0 : -1;
  if (!strcmp(key, GATE_F_ARGS)) return strs_field(p, &pl->args);
  if (!strcmp(key, GATE_F_ENV_SET)) return strs_field(p, &pl->env_set);
  if (!strcmp(key, GATE_F_ENV_UNSET)) return strs_field(p, &pl->env_unset);
  if (!strcmp(key, GATE_F_DENIALS)) return strs_field(p, &pl->denials);
  if (!strcmp(key, GATE_F_SANDBOXED)) return (pl->sandboxed = gate_jbool(p)) < 0 ? -1 : 0;
  if (!strcmp(key, GATE_F_RERUN)) return (pl->rerun = gate_jbool(p)) < 0 ? -1 : 0;
  if (!strcmp(key, GATE_F_RERUN_ANY_STATUS)) return (pl->rerun_any_status = gate_jbool(p)) < 0 ? -1 : 0;
  if (!strcmp(key, GATE_F_SCRIPT_FD)) {
    pl->script_fd = 1;
    return gate_jskip(p);
  }
  if (!strcmp(key, GATE_F_RERUN_OF)) {
    pl->has_rerun_of = 1;
    return gate_jobject(p, rerun_of_field, pl);
  }
  if (!strcmp(key, GATE_F_START_UP)) return gate_jobject(p, start_up_field, pl);
  return gate_jskip(p);
}

/* Reads a JSON string into a fixed buffer, truncating as gate_join does. */
static int str_into(struct gate_jp *p, char *out, size_t n) {
  char *s = gate_jstr_dup(p);
  if (!s) return -1;
  gate_join(out, n, s, NULL, NULL, NULL);
  free(s);
  return 0;
}

static int info_field(const char *key, struct gate_jp *p, void *ctx) {
  struct preply *r = ctx;
  if (!strcmp(key, GATE_F_WHY)) return str_into(p, r->why, sizeof r->why);
  if (!strcmp(key, GATE_F_JUSTIFICATION)) return str_into(p, r->justification, sizeof r->justification);
  return gate_jskip(p);
}

static int reply_field(const char *key, struct gate_jp *p, void *ctx) {
  struct preply *r = ctx;
  if (!strcmp(key, GATE_F_TYPE)) return str_into(p, r->type, sizeof r->type);
  if (!strcmp(key, GATE_F_RUN_ID)) return str_into(p, r->run_id, sizeof r->run_id);
  if (!strcmp(key, GATE_F_ACTION)) {
    r->has_action = 1;
    return gate_jskip(p);
  }
  if (!strcmp(key, GATE_F_PLAN)) {
    r->plan.has_plan = 1;
    return gate_jobject(p, plan_field, &r->plan);
  }
  if (!strcmp(key, GATE_F_INFO)) return gate_jobject(p, info_field, r);
  return gate_jskip(p);
}

static int parse_preply(const struct gbuf *b, struct preply *r) {
  memset(r, 0, sizeof *r);
  struct gate_jp p = {b->p, b->p + b->len, 0};
  return gate_jobject(&p, reply_field, r);
}

/* ---------- running the plan ---------- */

/* The environment: the caller's, with env_unset removed, env_set replacing in place or appended in order
 * (the order a JavaScript object gives the Node client's spawn); a repeated name keeps its first entry. */
static char **plan_env(const struct plan *pl) {
  size_t n = 0;
  for (char **e = environ; *e; e++) n++;
  char **out = calloc(n + (size_t)pl->env_set.n + 1, sizeof *out);
  char *used = calloc((size_t)pl->env_set.n + 1, 1);
  if (!out || !used) return NULL;
  size_t o = 0;
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || eq == *e) continue;
    size_t kl = (size_t)(eq - *e);
    int skip = 0;
    for (size_t j = 0; j < o && !skip; j++) skip = !strncmp(out[j], *e, kl + 1);
    for (int j = 0; j < pl->env_unset.n && !skip; j++)
      skip = strlen(pl->env_unset.v[j]) == kl && !strncmp(pl->env_unset.v[j], *e, kl);
    if (skip) continue;
    char *entry = *e;
    for (int j = 0; j < pl->env_set.n; j++)
      if (!strncmp(pl->env_set.v[j], *e, kl + 1)) {
        entry = pl->env_set.v[j];
        used[j] = 1;
        break;
      }
    out[o++] = entry;
  }
  for (int j = 0; j < pl->env_set.n; j++)
    if (!used[j]) out[o++] = pl->env_set.v[j];
  out[o] = NULL;
  free(used);
  return out;
}

#define SIGNUM(s) s,
static const int FORWARDED[] = {GATE_FORWARDED_SIGNALS(SIGNUM) 0}; /* src/protocol/shared-with-c.ts */
#undef SIGNUM
static int sig_pipe[2] = {-1, -1};
static struct sigaction saved[65];

static void on_signal(int sig) {
  int e = errno;
  unsigned char b = (unsigned char)sig;
  ssize_t w = write(sig_pipe[1], &b, 1);
  (void)w;
  errno = e;
}

/* Forward signals from now on (held in the pipe until the child exists); SIGPIPE ignored here (a relay
 * write to a reader that is gone must not kill gate-sh), restored in the child. */
static int signals_install(void) {
  if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) return -1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int i = 0; FORWARDED[i]; i++) sigaction(FORWARDED[i], &sa, &saved[FORWARDED[i]]);
  sigaction(SIGCHLD, &sa, &saved[SIGCHLD]);
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &saved[SIGPIPE]);
  return 0;
}

static void signals_restore(void) {
  for (int i = 0; FORWARDED[i]; i++) sigaction(FORWARDED[i], &saved[FORWARDED[i]], NULL);
  sigaction(SIGCHLD, &saved[SIGCHLD], NULL);
  sigaction(SIGPIPE, &saved[SIGPIPE], NULL);
}

/* The command bwrap started (bwrap forwards no signals; src/exec/sandbox-signals.ts), or 0. */
static pid_t sandboxed_command(pid_t bwrap) {
  pid_t pid = bwrap;
  for (int depth = 0; depth < 6; depth++) {
    char path[64], num[24], buf[256];
    gate_join(path, sizeof path, "/proc/", gate_num(num, (unsigned long)pid, 10), "/task/", NULL);
    char full[96];
    gate_join(full, sizeof full, path, num, "/children", NULL);
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    pid_t child = (pid_t)atoi(buf);
    if (child <= 0) return 0;
    gate_join(full, sizeof full, "/proc/", gate_num(num, (unsigned long)child, 10), "/comm", NULL);
    fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0) n = 0;
    buf[n] = 0;
    /* gate-launch (the kernel layer's front and supervisor) stands above bwrap: walked through too */
    if (strcmp(buf, "bwrap\n") && strcmp(buf, "bwrap") && strcmp(buf, "gate-launch\n")) return child;
    pid = child;
  }
  return 0;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) {
      struct pollfd pf = {fd, POLLOUT, 0};
      poll(&pf, 1, 1);
      continue;
    }
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* How to see a sandbox denial without changing what the caller gets (src/cli/gate-sh.ts stderrRelay):
 * 0 none (a terminal), 1 stderr of its own, 2 stderr is stdout and a pipe, a socket or /dev/null, 3 stderr
 * is stdout and a regular file (`> f 2>&1`, how Claude Code runs its shell): nothing is relayed (a
 * background job writing there is not held), the tail is read back from the file after the run. */
static int stderr_relay(void) {
  if (isatty(2)) return 0;
  struct stat out, er, null;
  if (fstat(1, &out) || fstat(2, &er)) return 0;
  if (!(out.st_dev == er.st_dev && out.st_ino == er.st_ino)) return 1;
  if (S_ISFIFO(out.st_mode) || S_ISSOCK(out.st_mode)) return 2;
  if (S_ISCHR(out.st_mode) && !stat("/dev/null", &null) && S_ISCHR(null.st_mode) && null.st_rdev == out.st_rdev)
    return 2;
  return S_ISREG(out.st_mode) ? 3 : 0;
}

/* relay 3: the last TAIL_BYTES the run wrote to stderr's file, from `start` (its offset before the run) to
 * its offset now (shared with bash's, or the end of an O_APPEND file); the length read. */
static size_t read_back_tail(off_t start, char *tail) {
  off_t end = lseek(2, 0, SEEK_CUR);
  if (start < 0 || end <= start) return 0;
  off_t from = end - start > TAIL_BYTES ? end - TAIL_BYTES : start;
  /* stderr is open for writing only (`> f`): the file again, for reading */
  int fd = open("/proc/self/fd/2", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = pread(fd, tail, (size_t)(end - from), from);
  close(fd);
  return n > 0 ? (size_t)n : 0;
}

struct result {
  int status;
  double ms;
  char tail[TAIL_BYTES + 1];
};

/* Ends a run's start-up phase at the daemon (start-up-end); 0, or -1 with err. */
typedef int (*end_phase_fn)(void *ctx, char *err, size_t errlen);

/* Spawn the plan and wait: bash's status (128+n for signal n); with relay, stderr (or both, merged)
 * passes through this process and its last TAIL_BYTES are kept. -1 with err when it cannot start. */
/* The kernel layer's launcher (gate_launch, gate-launch.h: the same code as the gate-launch program of this
 * installation) is linked in. */

/* Whether the plan's program is this installation's own launcher, to be run in the forked child rather than
 * exec'd (GATE_LAUNCH_EXEC=1 execs it, for A/B measurements). */
static int own_launcher(const char *program) {
  char own[PATH_MAX + 32];
  const char *x = getenv("GATE_LAUNCH_EXEC");
  if (x && !strcmp(x, "1")) return 0;
  gate_join(own, sizeof own, g_root, "/shims/gate-launch", NULL, NULL);
  return !strcmp(program, own);
}

/* In the forked child, in place of exec'ing gate-launch: an exec and a static program's start cost ~0.4 ms
 * a call (docs/startup.md). First what that exec would have done: close this program's close-on-exec
 * descriptors, put handled signals back to their default (ignored ones stay ignored, the mask stays), take
 * the plan's environment; the process is named gate-launch, as the exec'd one is. Never returns. */
static void launch_here(char **av, char **envp) {
  int keep = -1;
  DIR *d = opendir("/proc/self/fd");
  if (!d) gate_die_errno(EXIT_DENIED, "cannot start the exec gate's launcher: /proc/self/fd", NULL, NULL);
  keep = dirfd(d);
  int fds[1024], n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 1024;) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == keep) continue;
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0 && (fl & FD_CLOEXEC)) fds[n++] = fd;
  }
  closedir(d);
  for (int i = 0; i < n; i++) close(fds[i]);
  for (int sig = 1; sig < NSIG; sig++) {
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) || sa.sa_handler == SIG_IGN || sa.sa_handler == SIG_DFL) continue;
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    sigaction(sig, &sa, NULL);
  }
  environ = envp;
  prctl(PR_SET_NAME, "gate-launch", 0, 0, 0);
  int argc = 0;
  while (av[argc]) argc++;
  _exit(gate_launch(argc, av));
}

/* The signal that ended the last run, or 0: its status is 128 + that signal (exit_as_run). */
static int g_signaled;

/* gate-sh ends as the run's bash ended: by the same signal when a signal ended it (`kill $$`, a last command
 * that bash ran in its place and that crashed), so that its caller sees a signal and not 128+n, as from bash.
 * No core file of gate-sh's own: the run's dumped already, if it was going to. */
static int exit_as_run(int status) {
  int sig = g_signaled;
  if (!sig || status != 128 + sig) return status;
  fflush(NULL);
  gate_end_by_signal(sig);
  return status;
}

static int run_plan(const struct plan *pl, int relay, end_phase_fn end_phase, void *end_ctx, struct result *res,
                    char *err, size_t errlen) {
  double started = now_msf();
  res->tail[0] = 0;
  char **envp = plan_env(pl);
  char **av = calloc((size_t)pl->args.n + 2, sizeof *av);
  if (!envp || !av) return gate_fail(err, errlen, "out of memory");
  av[0] = pl->program; /* argv[0] is the program's path, as the Node client's spawn gives it */
  memcpy(av + 1, pl->args.v, (size_t)pl->args.n * sizeof *av);
  int rp[2] = {-1, -1}, ep[2] = {-1, -1}, ready[2] = {-1, -1}, go[2] = {-1, -1};
  int phase = pl->ready_fd > 2 && pl->go_fd > 2;
  off_t back_from = relay == 3 ? lseek(2, 0, SEEK_CUR) : -1;
  if (relay == 3) relay = 0; /* read back after the run, nothing relayed */
  if ((relay && pipe2(rp, O_CLOEXEC)) || pipe2(ep, O_CLOEXEC) ||
      (phase && (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC))) || signals_install()) {
    return gate_fail(err, errlen, GATE_TEXT_CANNOT_START, pl->program, strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) return gate_fail(err, errlen, GATE_TEXT_CANNOT_START, pl->program, strerror(errno));
  if (pid == 0) {
    /* bwrap gets its own session so a terminal's signals do not kill it (src/exec/run-bash.ts) */
    if (pl->sandboxed) setsid();
    signals_restore();
    if (relay == 1) dup2(rp[1], 2);
    if (relay == 2) {
      dup2(rp[1], 1);
      dup2(rp[1], 2);
    }
    if (phase) {
      /* above every target first, so placing one never closes another */
      int r = fcntl(ready[1], F_DUPFD_CLOEXEC, 1000), g = fcntl(go[0], F_DUPFD_CLOEXEC, 1000);
      if (r < 0 || g < 0 || dup2(r, pl->ready_fd) < 0 || dup2(g, pl->go_fd) < 0) {
        gate_msg("cannot start ", pl->program,
                 ": the start-up phase's descriptors cannot be placed: ", strerror(errno));
        _exit(126);
      }
    }
    int e = 0;
    if (chdir(pl->cwd)) e = errno;
    else if (own_launcher(pl->program)) launch_here(av, envp);
    else {
      execve(pl->program, av, envp);
      e = errno;
    }
    ssize_t w = write(ep[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  close(ep[1]);
  if (relay) close(rp[1]);
  if (phase) {
    close(ready[1]);
    close(go[0]);
  }
  int child_err = 0;
  ssize_t got;
  do got = read(ep[0], &child_err, sizeof child_err);
  while (got < 0 && errno == EINTR);
  close(ep[0]);
  if (got == (ssize_t)sizeof child_err) {
    waitpid(pid, NULL, 0);
    signals_restore();
    return gate_fail(err, errlen, GATE_TEXT_CANNOT_START, pl->program, strerror(child_err));
  }
  int to = relay == 2 ? 1 : 2, rfd = relay ? rp[0] : -1, exited = 0, wstatus = 0;
  int ready_r = phase ? ready[0] : -1;
  size_t tl = 0;
  int drains = 0;
  while (!exited || rfd >= 0) {
    /* once bash has ended, the pipe is only drained of what is already in it (no waiting) */
    int after = exited;
    struct pollfd pf[3] = {{sig_pipe[0], POLLIN, 0}, {rfd, POLLIN, 0}, {ready_r, POLLIN, 0}};
    if (poll(pf, 3, after ? 0 : -1) < 0 && errno != EINTR) break;
    if (ready_r >= 0 && (pf[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      /* bash read its start-up files: end the phase at the daemon, then let the script start. If bash ended
       * first nothing is sent; if the phase cannot be ended, go is never written and bash exits 126. */
      char b;
      ssize_t n = read(ready_r, &b, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n == 1) {
        char perr[1024];
        if (end_phase(end_ctx, perr, sizeof perr)) gate_msgf(GATE_TEXT_START_UP_NOT_ENDED, perr);
        else write_all(go[1], ".", 1);
      }
      close(ready_r);
      close(go[1]);
      ready_r = -1;
    }
    if (pf[0].revents & POLLIN) {
      unsigned char sigs[64];
      ssize_t ns = read(sig_pipe[0], sigs, sizeof sigs);
      for (ssize_t i = 0; i < ns; i++) {
        if (sigs[i] == SIGCHLD) continue;
        if (exited) continue;
        pid_t target = pl->sandboxed ? sandboxed_command(pid) : 0;
        if (!target || kill(target, sigs[i])) kill(pid, sigs[i]);
      }
      if (!exited && waitpid(pid, &wstatus, WNOHANG) == pid) exited = 1;
    }
    if (rfd >= 0 && after && (!pf[1].revents || ++drains > 64)) {
      /* bash has ended, and everything it wrote was in the pipe before this poll and is read (or 4 MiB of
       * a job's output were): what still holds the pipe is a background job (session sandboxes,
       * docs/sandbox.md). Return now, as bash does, and leave the rest of the relay to a child of our own,
       * so the caller's stderr stays open for the job as it would under bash. */
      pid_t r = fork();
      if (r == 0) {
        /* it holds the relay pipe and the caller's stream it copies to, nothing else of the caller's (a
         * stdout the job does not hold closes now, as under bash) */
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; fd++)
          if (fd != to && null >= 0) dup2(null, fd);
        if (rfd != 3) {
          dup2(rfd, 3);
          rfd = 3;
        }
        if (syscall(SYS_close_range, 4u, ~0u, 0u))
          for (int fd = 4; fd < 1024; fd++) close(fd);
        char buf[65536];
        for (;;) {
          ssize_t n = read(rfd, buf, sizeof buf);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0 || write_all(to, buf, (size_t)n)) _exit(0);
        }
      }
      if (r > 0) {
        close(rfd);
        rfd = -1;
        continue;
      }
    }
    if (rfd >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      char chunk[65536];
      ssize_t n = read(rfd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(rfd);
        rfd = -1;
        continue;
      }
      /* the caller stopped reading (`| head`): close our end too, so the script meets the same EPIPE */
      if (write_all(to, chunk, (size_t)n) && relay == 2) {
        close(rfd);
        rfd = -1;
      }
      if ((size_t)n >= TAIL_BYTES) {
        memcpy(res->tail, chunk + n - TAIL_BYTES, TAIL_BYTES);
        tl = TAIL_BYTES;
      } else {
        if (tl + (size_t)n > TAIL_BYTES) {
          size_t drop = tl + (size_t)n - TAIL_BYTES;
          memmove(res->tail, res->tail + drop, tl - drop);
          tl -= drop;
        }
        memcpy(res->tail + tl, chunk, (size_t)n);
        tl += (size_t)n;
      }
      res->tail[tl] = 0;
    }
  }
  if (!exited) waitpid(pid, &wstatus, 0);
  if (ready_r >= 0) {
    close(ready_r);
    close(go[1]);
  }
  signals_restore();
  free(envp);
  free(av);
  res->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : 126;
  g_signaled = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
  res->ms = now_msf() - started;
  if (back_from >= 0) {
    tl = read_back_tail(back_from, res->tail);
    res->tail[tl] = 0;
  }
  /* the tail as UTF-8 text: the daemon reads it as a JSON string */
  if (tl && !gate_utf8_valid(res->tail, tl)) {
    size_t k = 0;
    while (k < tl && !gate_utf8_valid(res->tail + k, tl - k)) k++;
    memmove(res->tail, res->tail + k, tl - k + 1);
    tl -= k;
  }
  return 0;
}

struct phase_ctx {
  const struct paths *paths;
  const char *run_id;
};

static int end_phase(void *ctx, char *err, size_t errlen) {
  struct phase_ctx *c = ctx;
  char id[96];
  gate_new_id(id, sizeof id);
  struct gbuf m;
  gb_init(&m);
  gb_puts(&m, GATE_MSG_HEAD);
  json_str(&m, id);
  gb_puts(&m, GATE_KEY(GATE_F_TYPE) GATE_QUOTE(GATE_MSG_START_UP_END) GATE_KEY(GATE_F_RUN_ID));
  json_str(&m, c->run_id);
  gb_puts(&m, "}");
  struct gbuf out;
  gb_init(&out);
  int rc = request(c->paths, id, &m, 0, &out, err, errlen);
  gb_free(&m);
  gb_free(&out);
  if (rc > 0) gate_fail(err, errlen, "the gate daemon is not running");
  return rc ? -1 : 0;
}

/* ---------- inside a gated run ---------- */

/* gate-sh started inside a gated run (as `bash` through PATH, a symlink or `#!/usr/bin/env bash`) is the
 * nested shell it stands for: the nested-shell shim pre-flights a -c script under the run and execs the
 * real shell in place, behind the run's own sandbox and exec gate. It never builds or joins a sandbox from
 * inside one (the session sandbox's namespaces cannot be joined from within). Only the kernel's
 * word counts (gate_in_gated_tree): GATE_RUN alone is the caller's to set. */
static void nested_shell(char **argv) {
  const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  if (*base == '-') base++; /* a login shell's -bash */
  int known = !strcmp(base, "bash") || !strcmp(base, "sh") || !strcmp(base, "zsh") || !strcmp(base, "dash");
  if (!known) argv[0] = "bash"; /* `gate-sh -c ...` stands for bash */
  char shim[PATH_MAX + 32];
  gate_join(shim, sizeof shim, g_root, "/shims/gate-shell", NULL, NULL);
  execv(shim, argv);
  gate_die_errno(EXIT_DENIED, "nested shell: cannot run ", shim, NULL);
}

/* ---------- main ---------- */

/* ---------- a forced daemon stop ---------- */

/* A run ended by 'gate daemon stop --force' says why: the daemon's note (STOP_NOTE_FILE in src/paths/paths.ts)
 * in the session folder, <runtime>/<session>/stop-note, when it was written since the run began. */
static void stop_note(const struct paths *p, time_t since) {
  char f[PATH_MAX];
  gate_join(f, sizeof f, p->request_sock, NULL, NULL, NULL);
  for (int up = 0; up < 2; up++) {
    char *s = strrchr(f, '/');
    if (!s || s == f) return;
    *s = 0;
  }
  size_t l = strlen(f);
  if (l + sizeof "/stop-note" > sizeof f) return;
  memcpy(f + l, "/stop-note", sizeof "/stop-note");
  struct stat st;
  if (stat(f, &st) || st.st_mtime + 1 < since) return;
  int fd = open(f, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = 0;
  char *nl = strchr(buf, '\n');
  if (nl) *nl = 0;
  gate_msg(buf, NULL, NULL, NULL);
}

/* ---------- the call: src/exec/run-call.ts's states, over the daemon's plan ---------- */

/* State 1, pre-flight: the reply in *r, or the status when nothing may run (-1: go on). Hands over to the
 * Node gate-sh where it would do better: the daemon went away since the probe (it autostarts), or escalation
 * flags the daemon could not read (it says what is wrong, exit 2). */
static int preflight(const struct paths *paths, const struct inv *inv, const struct gbuf *script, const char *replay,
                     struct preply *r) {
  char id[96], err[2048], key[200];
  read_key(paths->start_up_key, key, sizeof key);
  gate_new_id(id, sizeof id);
  struct gbuf m;
  gb_init(&m);
  build_preflight(&m, id, inv, script->p, g_cwd, NULL, NULL, key);
  if (m.oom || m.len > GATE_MAX_DATAGRAM) handover(replay, script->len);
  struct gbuf raw;
  gb_init(&raw);
  int rc = request(paths, id, &m, 1, &raw, err, sizeof err);
  if (rc == 1) handover(replay, script->len);
  if (rc < 0 && inv->escalation && !strcmp(g_last_code, GATE_CODE_MALFORMED)) handover(replay, script->len);
  if (rc < 0) {
    gate_msgf(GATE_TEXT_NOTHING_RAN, err);
    return EXIT_DENIED;
  }
  if (parse_preply(&raw, r)) {
    gate_msgf(GATE_TEXT_MALFORMED_REPLY);
    return EXIT_DENIED;
  }
  if (strcmp(r->type, GATE_MSG_PREFLIGHT) || !r->has_action || !r->run_id[0]) {
    gate_msgf(GATE_TEXT_UNEXPECTED_REPLY, r->type[0] ? r->type : "undefined");
    return EXIT_DENIED;
  }
  return -1;
}

/* A reply's plan, runnable by this client (a script descriptor is the Node gate-sh's). */
static int runnable(const struct plan *pl) { return pl->program && pl->cwd && pl->args.n && !pl->script_fd; }

/* Run one plan: its result in *res, or 0 after saying why nothing ran. */
static int attempt(const struct plan *pl, int relay, struct phase_ctx *pc, struct result *res) {
  char err[2048];
  if (!run_plan(pl, relay, end_phase, pc, res, err, sizeof err)) return 1;
  gate_msgf(GATE_TEXT_NOTHING_RAN, err);
  return 0;
}

/* States 2 to 5: the plan, the run, run-finished, and the rerun when the daemon reads a denial. */
static int run_call(const struct paths *paths, const struct inv *inv, const struct gbuf *script) {
  const char *replay = inv->source == SRC_STDIN ? script->p : NULL;
  struct preply r;
  int st = preflight(paths, inv, script, replay, &r);
  if (st >= 0) return st;
  struct plan *pl = &r.plan;
  if (pl->denials.n) {
    for (int i = 0; i < pl->denials.n; i++) gate_msg(pl->denials.v[i], NULL, NULL, NULL);
    return EXIT_DENIED;
  }
  if (pl->error) {
    gate_msgf(GATE_TEXT_NOTHING_RAN, pl->error);
    return EXIT_DENIED;
  }
  if (!pl->has_plan || !runnable(pl)) {
    gate_msgf(GATE_TEXT_NO_PLAN);
    return EXIT_DENIED;
  }
  if (pl->notice) gate_msg(pl->notice, NULL, NULL, NULL); /* an escalation kept in the turn sandbox: why */
  int relay = pl->rerun ? stderr_relay() : 0;
  static struct result res;
  struct phase_ctx pc = {paths, r.run_id};
  time_t began = time(NULL);
  if (!attempt(pl, relay, &pc, &res)) return EXIT_DENIED;
  if (res.status != 0) stop_note(paths, began);
  struct gbuf fin;
  gb_init(&fin);
  /* a failed turn-sandbox attempt: the daemon reads its stderr for a sandbox denial (the on-failure rerun);
   * after a 0 too when the daemon ran it stricter than the turn's sandbox (its verdict decides) */
  int verdict = relay && res.status != 127 && (res.status != 0 || pl->rerun_any_status);
  char fid[96];
  run_finished(&fin, fid, sizeof fid, r.run_id, res.status, res.ms, verdict ? res.tail : NULL);
  if (!verdict) {
    notify(paths, &fin);
    return res.status;
  }
  char err[2048];
  struct gbuf ack;
  gb_init(&ack);
  struct preply a;
  if (request(paths, fid, &fin, 0, &ack, err, sizeof err) || parse_preply(&ack, &a) || !a.why[0]) return res.status;
  /* State 5, the rerun: ask to escalate with the denial as justification, rerun as the daemon's plan says */
  char id2[96];
  gate_new_id(id2, sizeof id2);
  struct gbuf m2;
  gb_init(&m2);
  build_preflight(&m2, id2, inv, script->p, g_cwd, a.justification, a.why, NULL);
  struct gbuf raw2;
  gb_init(&raw2);
  struct preply r2;
  int rc = request(paths, id2, &m2, 1, &raw2, err, sizeof err);
  if (rc == 0 && parse_preply(&raw2, &r2)) {
    rc = -1;
    gate_fail(err, sizeof err, "malformed reply");
  }
  if (rc == 0 && (strcmp(r2.type, GATE_MSG_PREFLIGHT) || !r2.has_action)) {
    rc = -1;
    gate_fail(err, sizeof err, GATE_TEXT_UNEXPECTED_RERUN_REPLY, r2.type);
  }
  if (rc) {
    gate_msgf(GATE_TEXT_RERUN_NOT_ASKED, a.why, err);
    return res.status;
  }
  struct plan *p2 = &r2.plan;
  if (p2->notice) gate_msg(p2->notice, NULL, NULL, NULL);
  if (p2->error) {
    gate_msgf(GATE_TEXT_NOTHING_RAN, p2->error);
    return EXIT_DENIED;
  }
  if (!p2->has_rerun_of || !p2->rerun_of_run) return res.status;
  if (!runnable(p2)) {
    gate_msgf(GATE_TEXT_NO_PLAN);
    return EXIT_DENIED;
  }
  static struct result res2;
  if (!attempt(p2, 0, &pc, &res2)) return EXIT_DENIED;
  struct gbuf fin2;
  gb_init(&fin2);
  run_finished(&fin2, fid, sizeof fid, r2.run_id, res2.status, res2.ms, NULL);
  notify(paths, &fin2);
  return res2.status;
}

int main(int argc, char **argv) {
  inherited_fds(); /* before this program opens anything of its own */
  g_argc = argc;
  g_argv = argv;
  char *cwd = g_cwd;
  char self[PATH_MAX];
  if (!realpath("/proc/self/exe", self)) {
    gate_msg("cannot find its own installation; nothing ran", NULL, NULL, NULL);
    return EXIT_DENIED;
  }
  resolve_path("/", self, g_root, sizeof g_root);
  for (int up = 0; up < 2; up++) {
    char *s = strrchr(g_root, '/');
    if (s && s != g_root) *s = 0;
  }
  int have_cwd = getcwd(cwd, sizeof g_cwd) != NULL;
  const char *execfn = (const char *)getauxval(AT_EXECFN);
  resolve_path(have_cwd ? cwd : "/", execfn && *execfn ? execfn : argv[0], g_name, sizeof g_name);

  if (getenv(GATE_VAR_RUN) && gate_in_gated_tree()) nested_shell(argv);
  const char *force = getenv("GATE_SH_NODE");
  if ((force && *force && strcmp(force, "0")) || getenv(GATE_VAR_RUN) || !have_cwd) handover(NULL, 0);
  struct inv inv;
  if (classify(argc, argv, &inv)) handover(NULL, 0);
  if (inv.source == SRC_STDIN && isatty(0) && isatty(2)) handover(NULL, 0); /* interactive */
  if (isatty(0) && isatty(1)) handover(NULL, 0); /* PTY hosting */
  struct paths paths;
  if (gate_paths(&paths)) handover(NULL, 0); /* Node says why */
  if (!daemon_bound(&paths) && !autostart(&paths)) handover(NULL, 0); /* Node waits, or says why not */
  if (!bwrap_here()) handover(NULL, 0); /* Node says what to install, or runs without a sandbox */

  for (int i = 0; i < argc; i++)
    if (!gate_utf8_valid(argv[i], strlen(argv[i]))) handover(NULL, 0);
  for (char **e = environ; *e; e++)
    if (!gate_utf8_valid(*e, strlen(*e))) handover(NULL, 0);
  if (!gate_utf8_valid(cwd, strlen(cwd)) || !gate_utf8_valid(g_name, strlen(g_name))) handover(NULL, 0);

  struct gbuf script;
  gb_init(&script);
  if (inv.source == SRC_COMMAND) gb_puts(&script, inv.script_arg);
  else if (inv.source == SRC_FILE) {
    int fd = open(inv.script_arg, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || read_all(fd, &script))
      handover(NULL, 0); /* Node's messages */
    close(fd);
  } else if (read_all(0, &script)) {
    gate_msg("cannot read the script from stdin: ", strerror(errno), NULL, NULL);
    return EXIT_DENIED;
  }
  if (!script.p) gb_puts(&script, "");
  const char *replay = inv.source == SRC_STDIN ? script.p : NULL;
  if (script.oom || script.len > GATE_CALL_NATIVE_MAX_SCRIPT || memchr(script.p, 0, script.len) ||
      !gate_utf8_valid(script.p, script.len))
    handover(replay, script.len);

  return exit_as_run(run_call(&paths, &inv, &script));
}
