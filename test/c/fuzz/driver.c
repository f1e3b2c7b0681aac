/*
 * The fuzz targets' own driver, for builds without libFuzzer (gcc, or clang without its runtime): runs the
 * target (LLVMFuzzerTestOneInput) over the seed files named on the command line, then over inputs made by a
 * deterministic generator (xorshift64*, seed 1, or -seed=N): seeds mutated byte by byte, and text assembled
 * from JSON tokens, up to 4 KiB. Stops after -runs=N inputs or -max_total_time=S seconds, libFuzzer's
 * flags, so the same command line drives either build. A failing input is written to crash-<n> in the
 * current folder before the target aborts, so it can be replayed. Not pure: reads seed files, writes crash
 * files.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

static uint64_t state = 1;
static uint64_t next(void) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 2685821657736338717ULL;
}

static const char *const TOKENS[] = {
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    " ",
    "\\",
    "\\u",
    "\\ud83d",
    "\\ude00",
    "\\u0000",
    "0",
    "-1",
    "1e9",
    "true",
    "false",
    "null",
    "\"type\"",
    "\"exec\"",
    "\"id\"",
    "\"x\"",
    "\"action\"",
    "\"Run\"",
    "\"Deny\"",
    "\"Escalate\"",
    "\"reason\"",
    "\"escalation_token\"",
    "\"reuse\"",
    "\"grant\"",
    "\"epoch\"",
    "\"audit\"",
    "\"log\"",
    "\"head\"",
    "\"tail\"",
    "\"subcommands\"",
    "\"argv\"",
    "\"code\"",
    "\"message\"",
    "\"run_id\"",
    "99999999999999999999",
    "\xff",
    "\xc3\xa9",
    "\x01",
};

static struct {
  uint8_t *data[256];
  size_t len[256];
  int n;
} seeds;

static void add_seed(const char *path) {
  struct stat st;
  if (stat(path, &st)) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
      if (e->d_name[0] == '.') continue;
      char sub[4096];
      snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
      add_seed(sub);
    }
    if (d) closedir(d);
    return;
  }
  FILE *f = fopen(path, "rb");
  if (!f || seeds.n >= 256) {
    if (f) fclose(f);
    return;
  }
  uint8_t *b = malloc((size_t)st.st_size + 1);
  size_t got = b ? fread(b, 1, (size_t)st.st_size, f) : 0;
  fclose(f);
  if (!b) return;
  seeds.data[seeds.n] = b;
  seeds.len[seeds.n++] = got;
}

/* One generated input into buf (room 4096): a mutated seed, or tokens. */
static size_t generate(uint8_t *buf) {
  size_t n = 0;
  if (seeds.n && next() % 2) {
    int s = (int)(next() % (uint64_t)seeds.n);
    n = seeds.len[s] < 4096 ? seeds.len[s] : 4096;
    memcpy(buf, seeds.data[s], n);
    for (uint64_t k = next() % 8; k-- && n;) {
      size_t at = next() % n;
      switch (next() % 4) {
      case 0: buf[at] = (uint8_t)next(); break;
      case 1: n = at; break; /* cut */
      case 2:
        memmove(buf + at + 1, buf + at, n - at < 4095 - at ? n - at : 4095 - at);
        buf[at] = (uint8_t)next();
        n += n < 4096;
        break;
      default: buf[at] ^= (uint8_t)(1u << (next() % 8));
      }
    }
    return n;
  }
  for (uint64_t k = next() % 200; k--;) {
    const char *t = TOKENS[next() % (sizeof TOKENS / sizeof TOKENS[0])];
    size_t l = strlen(t);
    if (n + l > 4096) break;
    memcpy(buf + n, t, l);
    n += l;
  }
  return n;
}

static void run(const uint8_t *data, size_t n, long i) {
  /* an exact-size copy: a read past the input is a read past the allocation, for AddressSanitizer */
  uint8_t *copy = malloc(n ? n : 1);
  memcpy(copy, data, n);
  char name[64];
  snprintf(name, sizeof name, "crash-%ld", i);
  FILE *f = fopen(name, "wb"); /* kept only if the target aborts */
  if (f) {
    fwrite(data, 1, n, f);
    fclose(f);
  }
  LLVMFuzzerTestOneInput(copy, n);
  remove(name);
  free(copy);
}

int main(int argc, char **argv) {
  long runs = -1, seconds = 10;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "-runs=", 6)) runs = atol(argv[i] + 6);
    else if (!strncmp(argv[i], "-max_total_time=", 16)) seconds = atol(argv[i] + 16);
    else if (!strncmp(argv[i], "-seed=", 6)) state = (uint64_t)atoll(argv[i] + 6) | 1;
    else if (argv[i][0] != '-') add_seed(argv[i]);
  }
  time_t end = time(NULL) + seconds;
  long i = 0;
  for (int s = 0; s < seeds.n; s++) run(seeds.data[s], seeds.len[s], i++);
  static uint8_t buf[4096];
  for (; runs < 0 || i < runs; i++) {
    if ((i & 255) == 0 && time(NULL) >= end) break;
    run(buf, generate(buf), i);
  }
  printf("fuzz: %ld inputs, no failure\n", i);
  return 0;
}
