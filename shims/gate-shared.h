/*
 * Generated from src/protocol/shared-with-c.ts by scripts/gen-c-header.mjs (npm run gen:c): do not edit.
 * The constants the request channel's C side shares with its TypeScript side;
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
/* Room for a datagram reply; a larger one is fetched again over the stream socket (CLIENT_REPLY_ROOM). */
#define GATE_REPLY_ROOM 8192

/* The policy epoch's file, in the daemon's request folder (POLICY_EPOCH_FILE). */
#define GATE_POLICY_EPOCH_FILE "policy_epoch"

/* The exec gate's variables (EXEC_GATE_VARIABLES). */
#define GATE_VAR_RUN "GATE_RUN"
#define GATE_VAR_REQUEST_SOCK "GATE_REQUEST_SOCK"
#define GATE_VAR_STREAM_SOCK "GATE_STREAM_SOCK"
#define GATE_VAR_ESCALATE_SOCK "GATE_ESCALATE_SOCK"
#define GATE_VAR_CLIENT_DIR "GATE_CLIENT_DIR"
#define GATE_VAR_EXEC_TIMEOUT_MS "GATE_EXEC_TIMEOUT_MS"
#define GATE_VAR_KERNEL_SOCK "GATE_KERNEL_SOCK"

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

#endif
