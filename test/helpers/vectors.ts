/** Codex's own test vectors (copied from ../shared/reference/codex-vectors.json). */
import { readFileSync } from 'node:fs';
import { VECTORS_PATH } from './env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Vector = Record<string, any>;
export const vectors: Record<string, Vector[]> = JSON.parse(readFileSync(VECTORS_PATH, 'utf8'));
