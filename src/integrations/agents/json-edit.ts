/**
 * Reversible edits of an agent's JSON settings: set a key, add an item to an array. Pure (objects in,
 * objects out). Each applied edit remembers what it replaced, so undo restores the old value only where
 * the edit is still in place; what the user or the agent changed since is left alone and reported.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export type JsonEdit =
  | { op: 'set'; path: string[]; value: Json }
  /** add `item` to the array at `path` unless an equal item is there */
  | { op: 'add'; path: string[]; item: Json };

/** An edit as applied: what was there before, and which containers it created (removed again on undo when empty). */
export type AppliedEdit = JsonEdit & { before?: Json; created: string[][] };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

export function getPath(root: JsonObject, path: string[]): Json | undefined {
  let cur: Json | undefined = root;
  for (const k of path) {
    if (!isObject(cur) || !Object.hasOwn(cur, k)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/** The object holding path's last key, creating objects on the way (recorded in `created`). */
function parentOf(root: JsonObject, path: string[], created: string[][]): JsonObject {
  let cur = root;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i];
    if (!Object.hasOwn(cur, k)) {
      cur[k] = {};
      created.push(path.slice(0, i + 1));
    }
    const next = cur[k];
    if (!isObject(next)) throw new Error(`'${path.slice(0, i + 1).join('.')}' is not an object (it is ${JSON.stringify(next)}); change it by hand first`);
    cur = next;
  }
  return cur;
}

/**
 * Apply edits to a copy of `root`. `previous`: the same edits as applied by an earlier set-up, whose
 * `before` values are kept (running set-up twice must not make our own value the one undo restores).
 */
export function applyEdits(root: JsonObject, edits: JsonEdit[], previous: AppliedEdit[] = []): { root: JsonObject; applied: AppliedEdit[]; changed: boolean } {
  const out = structuredClone(root);
  const applied: AppliedEdit[] = [];
  let changed = false;
  for (const e of edits) {
    const prev = previous.find((p) => p.op === e.op && jsonEqual(p.path, e.path) && (e.op === 'set' || jsonEqual((p as { item: Json }).item, e.item)));
    const created: string[][] = [];
    const parent = parentOf(out, e.path, created);
    const key = e.path[e.path.length - 1];
    if (e.op === 'set') {
      const cur = Object.hasOwn(parent, key) ? parent[key] : undefined;
      const keep = prev !== undefined && jsonEqual(cur, e.value);
      if (!jsonEqual(cur, e.value)) changed = true;
      parent[key] = structuredClone(e.value);
      const before = keep ? prev.before : cur;
      applied.push({ ...e, ...(before !== undefined ? { before } : {}), created: keep ? prev.created : created });
    } else {
      if (!Object.hasOwn(parent, key)) {
        parent[key] = [];
        created.push(e.path);
      }
      const arr = parent[key];
      if (!Array.isArray(arr)) throw new Error(`'${e.path.join('.')}' is not a list (it is ${JSON.stringify(arr)}); change it by hand first`);
      if (!arr.some((x) => jsonEqual(x, e.item))) {
        arr.push(structuredClone(e.item));
        changed = true;
      }
      applied.push({ ...e, created: prev && created.length === 0 ? prev.created : created });
    }
  }
  return { root: out, applied, changed };
}

/** Undo applied edits on a copy of `root`, last first. `kept`: edits left alone because they were changed since. */
export function undoEdits(root: JsonObject, applied: AppliedEdit[]): { root: JsonObject; kept: string[] } {
  const out = structuredClone(root);
  const kept: string[] = [];
  for (const e of [...applied].reverse()) {
    const parentPath = e.path.slice(0, -1);
    const parent = parentPath.length ? getPath(out, parentPath) : out;
    const key = e.path[e.path.length - 1];
    if (!isObject(parent)) continue;
    if (e.op === 'set') {
      if (!jsonEqual(parent[key], e.value)) {
        if (Object.hasOwn(parent, key)) kept.push(`${e.path.join('.')} (changed since set-up; left as it is)`);
        continue;
      }
      if (e.before === undefined) delete parent[key];
      else parent[key] = structuredClone(e.before);
    } else {
      const arr = parent[key];
      if (Array.isArray(arr)) parent[key] = arr.filter((x) => !jsonEqual(x, e.item));
    }
    // containers this edit created go again when nothing else was put in them (deepest first)
    for (const c of [...e.created].sort((a, b) => b.length - a.length)) {
      const v = getPath(out, c);
      const empty = (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
      if (!empty) continue;
      const p = c.length > 1 ? getPath(out, c.slice(0, -1)) : out;
      if (isObject(p)) delete p[c[c.length - 1]];
    }
  }
  return { root: out, kept };
}
