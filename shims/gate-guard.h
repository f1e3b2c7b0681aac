/*
 * The gate's guard for runs without a sandbox (danger-full-access, Unsandboxed escalations): a mount
 * namespace of the run's own in which gate-sh's state (rules, config, audit log, its installation) is
 * read-only and the runtime folder hidden but for the session's request folder (docs/sandbox.md, "The
 * gate's own state under danger-full-access"). Applied by gate-launch's tree root before it execs the run.
 */
#ifndef GATE_GUARD_H
#define GATE_GUARD_H
#include <stddef.h>

#include "gate-shared.h"

/* The environment variable that carries the guard's lines (set by gate-sh's plan, removed before exec). */
#define GATE_GUARD_ENV GATE_VAR_GUARD

/* Applies the guard described by `spec` (lines "<op> <absolute path>"; src/sandbox/gate-state.ts):
 * 0, or -1 with a reason in why. */
int gate_guard_apply(const char *spec, char *why, size_t n);

#endif
