/*
 * Generated from src/protocol/shared-with-c.ts by scripts/gen-c-header.mjs (npm run gen:c): do not edit.
 * The constants the C side shares with the TypeScript side;
 * test/protocol/shared-with-c.test.ts fails when this file differs from what that module gives.
 * Pure: macros only.
 */
#ifndef GATE_SHARED_H
#define GATE_SHARED_H

#define GATE_PROTOCOL_VERSION 1
/* every message starts so: {"v":<version>,"id":... */
#define GATE_MSG_HEAD "{\"v\":1,\"id\":"
#define GATE_MAX_DATAGRAM 61440
#define GATE_MAX_FRAME 67108864
/* The longest audit record kept whole (MAX_AUDIT_RECORD). */
#define GATE_MAX_AUDIT_RECORD 65536
/* Room for a datagram reply; a larger one is fetched again over the stream socket (CLIENT_REPLY_ROOM). */
#define GATE_REPLY_ROOM 8192

/* The policy epoch's file, in the daemon's request folder (POLICY_EPOCH_FILE). */
#define GATE_POLICY_EPOCH_FILE "policy_epoch"

/* One call of gate-sh (RUN_CALL), a client's waits for the daemon (REQUEST_WAITS, EXEC_WAITS), and the lines a call's
 * client prints (CALL_TEXTS: printf formats, each %s a string). */
#define GATE_CALL_EXIT_DENIED 126
#define GATE_CALL_STDERR_TAIL_BYTES 4096
#define GATE_CALL_NATIVE_MAX_SCRIPT 32768
#define GATE_CALL_NOTICE_DELAY_MS 300
#define GATE_WAIT_FIRST_MS 1000
#define GATE_WAIT_MAX_MS 4000
#define GATE_WAIT_RETRIES 9
#define GATE_WAIT_HEARTBEAT_MS 500
#define GATE_WAIT_SILENCE_MS 5000
#define GATE_EXEC_WAIT_TIMEOUT_MS 2000
#define GATE_EXEC_WAIT_ATTEMPTS 5
#define GATE_EXEC_WAIT_PENDING_FACTOR 3
#define GATE_EXEC_WAIT_SEND_ROOM_MS 1000
#define GATE_AUTOSTART_WAIT_MS 10000
#define GATE_AUTOSTART_POLL_MS 5
#define GATE_TEXT_PREFIX "gate-sh: "
#define GATE_TEXT_NOTHING_RAN "%s; nothing ran"
#define GATE_TEXT_INTERNAL_ERROR "internal error: %s; nothing ran"
#define GATE_TEXT_NO_PLAN "protocol error from the gate daemon: no run plan in the reply; nothing ran"
#define GATE_TEXT_MALFORMED_REPLY "protocol error from the gate daemon: malformed reply; nothing ran"
#define GATE_TEXT_UNEXPECTED_REPLY "protocol error: unexpected reply '%s' to preflight; nothing ran. Check 'gate status'"
#define GATE_TEXT_UNEXPECTED_RERUN_REPLY "unexpected reply '%s'"
#define GATE_TEXT_RERUN_NOT_ASKED "the sandboxed run failed (%s); could not ask to rerun it: %s"
#define GATE_TEXT_START_UP_NOT_ENDED "the start-up phase could not be ended (%s); the script did not run"
#define GATE_TEXT_CANNOT_START "cannot start %s: %s"
#define GATE_TEXT_WAITING "waiting for approval (answer with 'gate approve')..."
#define GATE_TEXT_NOT_ANSWERING "the gate daemon did not answer within %s s%s; check 'gate status', or restart it with 'gate daemon stop; gate daemon start'"
#define GATE_TEXT_SILENT "the gate daemon stopped answering while an approval was pending; check 'gate status'"
#define GATE_TEXT_DIED "the gate daemon stopped %s; start it again with 'gate daemon start' and check 'gate log'"
#define GATE_TEXT_DIED_PENDING "while an approval was pending"
#define GATE_TEXT_DIED_BEFORE "before answering"
#define GATE_TEXT_BAD_VERSION "protocol version mismatch with the gate daemon: %s"
#define GATE_TEXT_REFUSED_REQUEST "the gate daemon refused the request (%s): %s"

/* The exec gate's variables and the marks an exec carries (EXEC_GATE_VARIABLES). */
#define GATE_VAR_RUN "GATE_RUN"
#define GATE_VAR_REQUEST_SOCK "GATE_REQUEST_SOCK"
#define GATE_VAR_STREAM_SOCK "GATE_STREAM_SOCK"
#define GATE_VAR_ESCALATE_SOCK "GATE_ESCALATE_SOCK"
#define GATE_VAR_CLIENT_DIR "GATE_CLIENT_DIR"
#define GATE_VAR_EXEC_TIMEOUT_MS "GATE_EXEC_TIMEOUT_MS"
#define GATE_VAR_KERNEL_SOCK "GATE_KERNEL_SOCK"
#define GATE_VAR_CHECKED "GATE_CHECKED"
#define GATE_VAR_ESCALATE "GATE_ESCALATE"
#define GATE_VAR_INNER_PROGRAM "GATE_THEN"
#define GATE_VAR_ASK "GATE_ASK"
#define GATE_VAR_BELOW "GATE_OWN"
#define GATE_VAR_GUARD "GATE_GUARD"

/* The signals passed on to the command (FORWARDED_SIGNALS), as X(SIGINT) ... */
#define GATE_FORWARDED_SIGNALS(X) X(SIGINT) X(SIGTERM) X(SIGHUP) X(SIGQUIT) X(SIGUSR1) X(SIGUSR2) X(SIGWINCH)

/* The supervisors' notice socket, beside the request folder (NOTICE_SOCK). */
#define GATE_NOTICE_SOCK "notice.sock"

/* The runtime folder and a session's files (RUNTIME_LAYOUT, src/paths/paths.ts), and where a bubblewrap is
 * trusted to be (TRUSTED_BWRAP_DIRS), as X("/usr/bin") ... */
#define GATE_PATH_FOLDER "gate-sh"
#define GATE_PATH_RUN_USER "/run/user"
#define GATE_PATH_TMP_FOLDER "/tmp/gate-sh-"
#define GATE_PATH_DEFAULT_SESSION "default"
#define GATE_PATH_REQUEST_DIR "req"
#define GATE_PATH_REQUEST_SOCK "request.sock"
#define GATE_PATH_STREAM_SOCK "stream.sock"
#define GATE_PATH_CLIENT_DIR "c"
#define GATE_PATH_APPROVAL_DIR "approval"
#define GATE_PATH_START_UP_KEY "start-up.key"
#define GATE_PATH_LOCK_FILE "daemon.lock"
#define GATE_PATH_LOG_FILE "daemon.log"
#define GATE_PATH_HOME ".gate-sh"
#define GATE_PATH_CONFIG_FILE "config.toml"
#define GATE_TRUSTED_BWRAP_DIRS(X) \
  X("/usr/bin") X("/bin") X("/usr/local/bin") X("/usr/sbin")

/* A host socket's mask, mounted by the launcher in the built sandbox, not by bubblewrap (SOCKET_MASK). Not in
 * the guard's list: bubblewrap's options and /dev/null are common words of the C side. */
#define GATE_SOCKET_MASK_OPTION "--ro-bind-try"
#define GATE_SOCKET_MASK_SOURCE "/dev/null"

/* Message types (MESSAGE_TYPES), actions (ACTIONS), error codes (ERROR_CODES, SUPERVISOR_ERROR_CODES), field
 * values (FIELD_VALUES). */
#define GATE_MSG_EXEC "exec"
#define GATE_MSG_EXEC_REUSED "exec-reused"
#define GATE_MSG_PREFLIGHT "preflight"
#define GATE_MSG_RUN_FINISHED "run-finished"
#define GATE_MSG_START_UP_END "start-up-end"
#define GATE_MSG_SESSION_SANDBOX_STALE "session-sandbox-stale"
#define GATE_MSG_PING "ping"
#define GATE_MSG_PENDING "pending"
#define GATE_MSG_ERROR "error"
#define GATE_ACTION_RUN "Run"
#define GATE_ACTION_ESCALATE "Escalate"
#define GATE_ACTION_DENY "Deny"
#define GATE_CODE_TOO_LARGE "too-large"
#define GATE_CODE_BAD_VERSION "bad-version"
#define GATE_CODE_REFUSED "refused"
#define GATE_CODE_MALFORMED "malformed"
#define GATE_CODE_UNREACHABLE "unreachable"
#define GATE_VALUE_KERNEL "kernel"
#define GATE_VALUE_BASE64 "base64"
#define GATE_VALUE_USE_DEFAULT "use_default"
#define GATE_VALUE_REQUIRE_ESCALATED "require_escalated"

/* Field names (FIELDS, ESCALATION_FIELDS, RUN_FINISHED_INFO_FIELDS), and how JSON text is made of them: GATE_KEY(f) is ',"f":' (a
 * member after the first), GATE_KEY1(f) '"f":' (the first), GATE_QUOTE(v) '"v"'. */
#define GATE_F_TYPE "type"
#define GATE_F_ID "id"
#define GATE_F_RUN_ID "run_id"
#define GATE_F_PROGRAM "program"
#define GATE_F_REAL_PROGRAM "real_program"
#define GATE_F_ARGV "argv"
#define GATE_F_CWD "cwd"
#define GATE_F_PID "pid"
#define GATE_F_ENV "env"
#define GATE_F_ENCODING "encoding"
#define GATE_F_LAYER "layer"
#define GATE_F_PAIR_RUN "pair_run"
#define GATE_F_KERNEL_ARGV "kernel_argv"
#define GATE_F_PROGRAM_FILE "program_file"
#define GATE_F_HOST_PID "host_pid"
#define GATE_F_ACTION "action"
#define GATE_F_REASON "reason"
#define GATE_F_ESCALATION_TOKEN "escalation_token"
#define GATE_F_REUSE "reuse"
#define GATE_F_GRANT "grant"
#define GATE_F_EPOCH "epoch"
#define GATE_F_AUDIT "audit"
#define GATE_F_SCOPE "scope"
#define GATE_F_START "start"
#define GATE_F_PPID "ppid"
#define GATE_F_LOG "log"
#define GATE_F_HEAD "head"
#define GATE_F_TAIL "tail"
#define GATE_F_MESSAGE "message"
#define GATE_F_CODE "code"
#define GATE_F_SUBCOMMANDS "subcommands"
#define GATE_F_MNTNS "mntns"
#define GATE_F_SHELL "shell"
#define GATE_F_FLAG "flag"
#define GATE_F_SCRIPT "script"
#define GATE_F_SANDBOX_PERMISSIONS "sandbox_permissions"
#define GATE_F_PARENT_RUN "parent_run"
#define GATE_F_JUSTIFICATION "justification"
#define GATE_F_PLAN "plan"
#define GATE_F_EXIT_STATUS "exit_status"
#define GATE_F_DURATION_MS "duration_ms"
#define GATE_F_STDERR_TAIL "stderr_tail"
#define GATE_F_FDS "fds"
#define GATE_F_SHIMS "shims"
#define GATE_F_RERUN_WHY "rerun_why"
#define GATE_F_START_UP_KEY "start_up_key"
#define GATE_F_ARGS "args"
#define GATE_F_ENV_SET "env_set"
#define GATE_F_ENV_UNSET "env_unset"
#define GATE_F_DENIALS "denials"
#define GATE_F_SANDBOXED "sandboxed"
#define GATE_F_RERUN "rerun"
#define GATE_F_RERUN_ANY_STATUS "rerun_any_status"
#define GATE_F_SCRIPT_FD "script_fd"
#define GATE_F_RERUN_OF "rerun_of"
#define GATE_F_START_UP "start_up"
#define GATE_F_NOTICE "notice"
#define GATE_F_READY "ready"
#define GATE_F_GO "go"
#define GATE_F_INFO "info"
#define GATE_F_PRESETS "presets"
#define GATE_F_FILE "file"
#define GATE_F_BELOW_PROGRAM "below_program"
#define GATE_F_SCOPED_PRESETS "scoped_presets"
#define GATE_F_ANY_ARGV "any_argv"
#define GATE_F_TOKEN "token"
#define GATE_F_SIGNAL "signal"
#define GATE_F_ERROR "error"
#define GATE_F_WHY "why"
#define GATE_QUOTE(v) "\"" v "\""
#define GATE_KEY1(f) "\"" f "\":"
#define GATE_KEY(f) ",\"" f "\":"

/* The session holder's line protocol (HOLDER_VERBS: the daemon's; HOLDER_LINES: how the holder's lines
 * start; an error line is "error <errno> <what>: <text>"). */
#define GATE_HOLDER_CHECK "check"
#define GATE_HOLDER_KILLALL "killall"
#define GATE_HOLDER_SAYS_READY "ready"
#define GATE_HOLDER_SAYS_MOUNTS "mounts"
#define GATE_HOLDER_SAYS_JOB "job"
#define GATE_HOLDER_SAYS_EXIT "exit"
#define GATE_HOLDER_SAYS_ERROR "error"

/* The variables an ExecRequest reports, by name and by prefix (FORWARDED_NAMES, FORWARDED_PREFIXES). */
#define GATE_FORWARDED_NAMES(X) \
  X("PATH") X("ENV") X("BASH_ENV") X("PROMPT_COMMAND") X("PS4") X("SHELLOPTS") \
  X("BASHOPTS") X("ZDOTDIR") X("INPUTRC") X("GCONV_PATH") X("LOCPATH") X("HOSTALIASES") \
  X("CLASSPATH") X("PAGER") X("GH_PAGER") X("MANPAGER") X("SYSTEMD_PAGER") X("LESSOPEN") \
  X("LESSCLOSE") X("EDITOR") X("VISUAL") X("BROWSER") X("SSH_ASKPASS") X("SUDO_ASKPASS") \
  X("MAKEFLAGS") X("MFLAGS") X("GEM_PATH") X("GEM_HOME") X("CARGO_HOME") X("RUSTC_WRAPPER") \
  X("PERLLIB")
#define GATE_FORWARDED_PREFIXES(X) \
  X("LD_") X("DYLD_") X("GIT_") X("BASH_FUNC_") X("PYTHON") X("NODE_") \
  X("PERL5") X("RUBY") X("JAVA_") X("_JAVA_") X("JDK_") X("NPM_CONFIG_") \
  X("npm_config_") X("PIP_")

/* gate-sh's plumbing, by the basename of a process's exe (PROVENANCE_PLUMBING): a scoped reuse stops there. */
#define GATE_PROVENANCE_PLUMBING(X) \
  X("gate-launch") X("gate-sh") X("gate-sh-native") X("gate-join") X("gate-session") X("bwrap")

#endif
