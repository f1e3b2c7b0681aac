/** Codex's own test vectors (test/fixtures/codex-vectors.json: cases taken from openai/codex's Rust tests; docs/codex-parity.md). */
import { readFileSync } from 'node:fs';
import { VECTORS_PATH } from './env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Vector = Record<string, any>;
export const vectors: Record<string, Vector[]> = JSON.parse(readFileSync(VECTORS_PATH, 'utf8'));
