/*
 * Fuzz target: the daemon's reply as the gate parses it (gate_parse_reply, shims/gate-request.c), with room
 * for denials, a grant's audit and its presets. Whatever the bytes, the parse stays inside them (the buffer
 * is exactly n bytes: AddressSanitizer sees any read past it), leaves every string field NUL-terminated inside
 * its room and keeps only whole presets. Built with libFuzzer (clang) or with driver.c (any compiler).
 */
#include "gate-request.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TERMINATED(f) (memchr((f), 0, sizeof(f)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  struct gate_reply r;
  gate_denial denied[GATE_MAX_DENIED];
  struct gate_reused_audit audit;
  static struct gate_presets presets;
  char err[256];
  gate_reply_init(&r, denied, &audit);
  r.presets = &presets;
  if (gate_parse_reply((const char *)data, n, &r, err, sizeof err)) {
    if (!TERMINATED(err) || !err[0]) abort();
    return 0;
  }
  if (!TERMINATED(r.type) || !TERMINATED(r.id) || !TERMINATED(r.reason) || !TERMINATED(r.token)) abort();
  if (!TERMINATED(r.run_id) || !TERMINATED(r.code) || !TERMINATED(r.grant)) abort();
  if (!r.type[0] || !r.id[0] || r.deny_count < 0 || r.deny_count > GATE_MAX_DENIED) abort();
  for (int i = 0; i < r.deny_count; i++)
    if (!TERMINATED(denied[i])) abort();
  if (audit.log[0] && (!TERMINATED(audit.log) || !TERMINATED(audit.head) || !TERMINATED(audit.tail))) abort();
  if (r.grant[0] && !r.epoch) abort(); /* a grant comes with its epoch, or not at all */
  if (presets.n < 0 || presets.n > GATE_MAX_PRESETS) abort();
  for (int i = 0; i < presets.n; i++) {
    const struct gate_preset *e = &presets.e[i];
    if (!TERMINATED(e->program) || !TERMINATED(e->grant) || !TERMINATED(e->file)) abort();
    if (e->program[0] != '/' || !e->grant[0] || !e->file[0]) abort(); /* whole entries only */
  }
  return 0;
}
