/*
 * Linked only into the AddressSanitizer test build (`make SANITIZE=address`, shims/Makefile): into
 * libgate.so and the gate's own programs. The sanitizers' runtime calls these hooks; the environment's
 * ASAN_OPTIONS still overrides the defaults below.
 * Pure. Trust: none of it is read from anywhere; it only turns checks off that cannot work in a gated run.
 */

/* No leak check at exit in any gated process (libgate.so loads this into every one): it stops the
 * process's threads with ptrace, which spins for ever in a process the kernel layer's supervisor already
 * follows; and the gated programs' leaks are not the gate's. The runtime looks this hook up in every
 * loaded library, so it holds even for a program started with a cleared environment (no ASAN_OPTIONS). */
__attribute__((visibility("default"))) int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return 1; }

/* The gate's own programs (found first, as the executable): a report ends the process. In libgate.so the
 * runtime's own default is found first, before this one (the runtime precedes it in LD_PRELOAD). */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0:abort_on_error=1"; }
