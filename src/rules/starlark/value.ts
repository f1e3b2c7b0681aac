/** Runtime values of the Starlark subset, with Starlark's type names and repr (used in error texts). */
export interface ListValue {
  kind: 'list';
  items: Value[];
}
export interface TupleValue {
  kind: 'tuple';
  items: Value[];
}
export interface BuiltinValue {
  kind: 'builtin';
  name: string;
}
export type Value = string | number | boolean | null | ListValue | TupleValue | BuiltinValue;

export function typeName(v: Value): string {
  if (v === null) return 'NoneType';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'int';
    case 'boolean':
      return 'bool';
    default:
      return v.kind === 'builtin' ? 'function' : v.kind;
  }
}

export function repr(v: Value): string {
  if (v === null) return 'None';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return String(v);
    case 'boolean':
      return v ? 'True' : 'False';
    default:
      if (v.kind === 'builtin') return `<built-in function ${v.name}>`;
      if (v.kind === 'list') return `[${v.items.map(repr).join(', ')}]`;
      return v.items.length === 1 ? `(${repr(v.items[0])},)` : `(${v.items.map(repr).join(', ')})`;
  }
}
