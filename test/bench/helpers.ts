// Shared by the benchmarks (test only, not pure: prints and exits). test/bench/run.mjs reads the last
// stdout line of each benchmark as its JSON figures; no trust boundary here.

/** Runs a benchmark's main and prints its figures as one JSON line; on a failure the error goes to
 * stderr, `{ "error": ... }` to stdout, and the process exits 1. */
export function runBench(main: () => Promise<Record<string, unknown>>): void {
  main()
    .then((figures) => console.log(JSON.stringify(figures)))
    .catch((e) => {
      console.error(e);
      console.log(JSON.stringify({ error: String(e) }));
      process.exit(1);
    });
}
