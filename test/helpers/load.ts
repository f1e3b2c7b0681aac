/**
 * How hard the load parts of a test push: `npm test` keeps to its time budget with a tenth of the load,
 * `npm run test:load` (GATE_TEST_LOAD=1, in CI) runs the full counts. The behaviour checked is the same at
 * both sizes; only the counts differ. Pure.
 */
export const FULL_LOAD = process.env.GATE_TEST_LOAD === '1';

/** `full` under test:load, else `quick`. */
export function loadCount(full: number, quick: number): number {
  return FULL_LOAD ? full : quick;
}

/** 10000 → "10,000" (test titles name the count they run). */
export function counted(n: number): string {
  return n.toLocaleString('en-US');
}
