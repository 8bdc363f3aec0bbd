/**
 * A parsed YAML/JSON value → a typed v1 Pod, the way the API server's JSON decoder does it,
 * driven by the generated model's attribute maps (@kubernetes/client-node `getAttributeTypeMap`:
 * JSON name, TS name, type, format):
 *
 * - A value of the wrong JSON type is an error with its field path
 *   (`spec.containers[0].args: Invalid value: "…": must be a list of strings`). A string where a
 *   list or map is expected is never split into characters; a number, nested list, map or
 *   `!!binary` value where a string is expected never reaches the runtime.
 * - int32/int64 fields must be integers in their range (Go's unmarshalling into int32/int64):
 *   `timeoutSeconds: 9223372036854775808` is rejected here, before anything schedules a timer.
 * - Fields unknown to the model are dropped without being visited (the non-strict decoder).
 * - A {@link DecodeBudget} bounds the walk. js-yaml keeps an alias as a reference to the
 *   anchored value, so parsing a 540-byte "billion laughs" document is cheap; this walk is the
 *   first thing that would expand it. It counts values and string characters as if the input
 *   were written out without aliases and stops at the budget with one error: nothing is built
 *   beyond it, so no later step (cloning, hashing, sending to another thread) ever sees the
 *   expansion.
 * - Nesting is bounded: a value deeper than {@link MAX_DECODE_DEPTH} levels below the document
 *   root (in practice a free-form field such as `metadata.managedFields[].fieldsV1`) is an error
 *   naming the field and the bound. Nothing deeper is kept, so no reply that crosses a thread
 *   (structured clone, whose deserializer recurses) and no later walk ever meets deep nesting.
 *
 * Never throws. The result is plain data (objects, arrays, strings, numbers, booleans, Dates).
 */
import * as models from '@kubernetes/client-node/dist/gen/models/all.js';
import type { V1Pod } from '@kubernetes/client-node';
import { truncateText } from '../logging/bounded-text.js';
import { fieldErr, type FieldError } from './field-error.js';

/** One attribute of a generated model class. */
interface AttributeType {
  name: string;
  baseName: string;
  type: string;
  format: string;
}

/** Limits on what one manifest may expand to; shared by all documents of the manifest. */
export interface DecodeBudget {
  /** Values (objects, list items, scalars) left. */
  nodes: number;
  /** String characters left (keys and values). */
  chars: number;
}

export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;
/** int64 bounds as doubles: 2^63 itself is out of range (9223372036854775808 parses to it). */
const INT64_LIMIT = 2 ** 63;

/** Longest map key shown in a field path. */
const MAX_KEY_IN_PATH = 64;

const ARRAY_PREFIX = 'Array<';
const MAP_PREFIX = '{ [key: string]: ';
const MAP_SUFFIX = '; }';

/**
 * Deepest nesting accepted, in levels below the document root. The v1 Pod model itself needs
 * about ten; the rest is headroom for free-form fields. The API server's own JSON limit is far
 * higher, but a node agent has no use for more and every consumer of the result recurses.
 */
export const MAX_DECODE_DEPTH = 100;

/** Thrown (internally only) when the budget runs out; caught in {@link decodeTypedPod}. */
class BudgetExhausted extends Error {}

/** Thrown (internally only) by the free-form walk past {@link MAX_DECODE_DEPTH}; caught in value(). */
class NestingTooDeep extends Error {}

const TOO_DEEP = `must not be nested deeper than ${MAX_DECODE_DEPTH} levels`;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v) || v instanceof Date) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** `field[key]` with the key shortened: keys come from the input too. */
export function keyPath(field: string, key: string): string {
  return `${field}[${truncateText(key, MAX_KEY_IN_PATH)}]`;
}

function attributesOf(type: string): readonly AttributeType[] | undefined {
  const cls: unknown = Reflect.get(models, type);
  if (typeof cls !== 'function') return undefined;
  const getMap: unknown = Reflect.get(cls, 'getAttributeTypeMap');
  if (typeof getMap !== 'function') return undefined;
  const map: unknown = Reflect.apply(getMap, cls, []);
  return Array.isArray(map) ? (map as AttributeType[]) : undefined;
}

/** A short description of a value's JSON type, for messages ("a string", "a list", ...). */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (ArrayBuffer.isView(v)) return 'binary data';
  if (v instanceof Date) return 'a timestamp';
  if (typeof v === 'object') return 'a map';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return 'a number';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v;
}

class Walker {
  readonly errs: FieldError[] = [];
  readonly #budget: DecodeBudget;

  constructor(budget: DecodeBudget) {
    this.#budget = budget;
  }

  #spend(chars: number): void {
    this.#budget.nodes -= 1;
    this.#budget.chars -= chars;
    if (this.#budget.nodes < 0 || this.#budget.chars < 0) throw new BudgetExhausted();
  }

  #wrongType(field: string, v: unknown, want: string): undefined {
    this.errs.push(fieldErr.invalid(field, typeof v === 'object' && v !== null ? `<${kindOf(v)}>` : v, `must be ${want}, not ${kindOf(v)}`));
    return undefined;
  }

  /**
   * Decodes `v` as `type`; undefined when absent or wrong (the error is recorded). `depth`: the
   * levels above `v` (0 for the document).
   */
  value(v: unknown, type: string, format: string, field: string, depth = 0): unknown {
    if (v === undefined || v === null) return undefined;
    this.#spend(typeof v === 'string' ? v.length : 0);
    if (depth > MAX_DECODE_DEPTH) return void this.errs.push(fieldErr.invalid(field, '<nested value>', TOO_DEEP));
    if (type.startsWith(ARRAY_PREFIX)) {
      const sub = type.slice(ARRAY_PREFIX.length, -1);
      if (!Array.isArray(v)) return this.#wrongType(field, v, 'a list');
      const out: unknown[] = [];
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (item === null || item === undefined) {
          // Go decodes a null list item as the zero value; a null in a list of objects or
          // strings is never useful here, so it is an error rather than a silent default.
          this.errs.push(fieldErr.invalid(`${field}[${i}]`, null, `must be ${sub === 'string' ? 'a string' : 'an object'}, not null`));
          continue;
        }
        out.push(this.value(item, sub, format, `${field}[${i}]`, depth + 1));
      }
      return out;
    }
    if (type.startsWith(MAP_PREFIX)) {
      const sub = type.slice(MAP_PREFIX.length, -MAP_SUFFIX.length);
      if (!isPlainObject(v)) return this.#wrongType(field, v, 'a map');
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) {
        this.#spend(k.length);
        // `key:` with no value is null; Go decodes it into a string map as "".
        if ((v[k] === null || v[k] === undefined) && sub === 'string') out[k] = '';
        const d = this.value(v[k], sub, format, keyPath(field, k), depth + 1);
        if (d !== undefined) out[k] = d;
      }
      return out;
    }
    switch (type) {
      case 'string':
        return typeof v === 'string' ? v : this.#wrongType(field, v, 'a string');
      case 'boolean':
        return typeof v === 'boolean' ? v : this.#wrongType(field, v, 'a boolean');
      case 'number':
        return this.#number(v, format, field);
      case 'Date':
        return this.#date(v, field);
      case 'IntOrString':
        if (typeof v === 'string') return v;
        if (typeof v === 'number') return this.#number(v, 'int32', field);
        return this.#wrongType(field, v, 'an integer or a string');
      case 'any':
        // Free-form (only in fields shardlet does not use); kept as parsed, counted by size.
        try {
          this.#countAny(v, depth);
        } catch (e) {
          if (e instanceof NestingTooDeep) return void this.errs.push(fieldErr.invalid(field, '<nested value>', TOO_DEEP));
          throw e;
        }
        return v;
      default:
        return this.#model(v, type, field, depth);
    }
  }

  #number(v: unknown, format: string, field: string): number | undefined {
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.#wrongType(field, v, format === '' ? 'a number' : 'an integer');
    if (format === 'int32' || format === 'int64') {
      if (!Number.isInteger(v)) return void this.errs.push(fieldErr.invalid(field, v, 'must be an integer'));
      const [lo, hi, bits] = format === 'int32' ? [INT32_MIN, INT32_MAX, 32] : [-INT64_LIMIT, INT64_LIMIT - 1, 64];
      // v < INT64_LIMIT rather than v <= hi: as doubles, 2^63 - 1 rounds to 2^63.
      if (v < lo || (format === 'int32' ? v > hi : v >= INT64_LIMIT)) {
        return void this.errs.push(fieldErr.invalid(field, v, `must be a ${bits}-bit integer (between ${lo} and ${format === 'int32' ? hi : '9223372036854775807'})`));
      }
    }
    return v;
  }

  #date(v: unknown, field: string): Date | undefined {
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? this.#wrongType(field, v, 'an RFC 3339 timestamp') : new Date(v.getTime());
    if (typeof v !== 'string') return this.#wrongType(field, v, 'an RFC 3339 timestamp');
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) return void this.errs.push(fieldErr.invalid(field, v, 'must be an RFC 3339 timestamp'));
    return d;
  }

  #countAny(v: unknown, depth: number): void {
    if (typeof v === 'string') return this.#spend(v.length);
    if (depth > MAX_DECODE_DEPTH && typeof v === 'object' && v !== null) throw new NestingTooDeep();
    if (Array.isArray(v)) for (const x of v) this.#spend(0), this.#countAny(x, depth + 1);
    else if (isPlainObject(v)) for (const [k, x] of Object.entries(v)) this.#spend(k.length), this.#countAny(x, depth + 1);
  }

  #model(v: unknown, type: string, field: string, depth: number): Record<string, unknown> | undefined {
    const attrs = attributesOf(type);
    if (attrs === undefined) {
      // A type the generated models do not describe: keep nothing rather than guess.
      return undefined;
    }
    if (!isPlainObject(v)) return this.#wrongType(field, v, 'an object');
    const out: Record<string, unknown> = {};
    for (const a of attrs) {
      if (!Object.hasOwn(v, a.baseName)) continue;
      const d = this.value(v[a.baseName], a.type, a.format, field === '' ? a.baseName : `${field}.${a.baseName}`, depth + 1);
      if (d !== undefined) out[a.name] = d;
    }
    return out;
  }
}

export type TypedPodResult = { ok: true; pod: V1Pod } | { ok: false; errors: FieldError[]; budgetExhausted: boolean };

/**
 * Decodes one Pod object (apiVersion/kind already checked) against the v1 model. `budget` is
 * shared with the other pods of the same manifest and is decremented.
 */
export function decodeTypedPod(obj: Record<string, unknown>, budget: DecodeBudget): TypedPodResult {
  const w = new Walker(budget);
  try {
    const pod = w.value(obj, 'V1Pod', '', '');
    if (w.errs.length > 0 || pod === undefined) return { ok: false, errors: w.errs, budgetExhausted: false };
    return { ok: true, pod: pod as V1Pod };
  } catch (e) {
    if (e instanceof BudgetExhausted) return { ok: false, errors: w.errs, budgetExhausted: true };
    // RangeError: a structure nested deeper than the stack (a fuzzed document can be).
    return { ok: false, errors: [fieldErr.invalid('', '<document>', `cannot decode: ${e instanceof Error ? truncateText(e.message) : 'unknown error'}`)], budgetExhausted: false };
  }
}
