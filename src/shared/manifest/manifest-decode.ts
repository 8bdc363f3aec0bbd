/**
 * Bytes → v1 Pod objects, for both the file and the HTTP source.
 *
 * YAML is parsed with js-yaml (JSON is YAML; a text starting with `{` is tried with JSON.parse
 * first, which is ~3x faster). We split multi-document text on `---` ourselves first, so that an
 * error can name the line in the file, an empty document (a trailing `---`) is simply skipped,
 * and one document is decoded at a time. Each object is then type-checked and typed against the
 * v1 model by pod-schema-decode.ts (field path in every error; unknown fields dropped, like the
 * API machinery's non-strict decoder), under one {@link DecodeBudget} for the whole manifest, so
 * alias expansion is bounded before any object is built from it.
 *
 * Bounds (hostile input is normal here): the text is at most `maxBytes` (checked before parsing);
 * the decoded pods, counted without aliases, at most about half a value per input byte and two
 * string characters per input byte (see {@link budgetFor}). This module never throws; callers
 * still run it off the main thread (manifest-decoder.ts), because parsing 10 MiB, or a YAML merge
 * key bomb, can take longer than the main thread may be blocked.
 *
 * This module only decodes and checks kind/apiVersion; defaults and validation come after.
 */
import type { V1Pod } from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { truncateText } from '../logging/bounded-text.js';
import { ConfigError } from './config-errors.js';
import { fieldErr, type FieldError } from './field-error.js';
import { decodeTypedPod, type DecodeBudget } from './pod-schema-decode.js';

export interface DecodedPod {
  pod: V1Pod;
  /** 1-based index of the YAML document the pod came from. */
  document: number;
  /** Index within a PodList/List document, when the pod came from one. */
  item?: number;
}

export type DecodeResult = { ok: true; pods: DecodedPod[] } | { ok: false; error: ConfigError };

export interface DecodeOptions {
  /** File path or URL, used to prefix error messages. */
  origin: string;
  /** Accept `kind: PodList` / `kind: List` documents (the HTTP source does; the file source does not). */
  allowLists: boolean;
  /** Longest text accepted (default {@link MAX_MANIFEST_BYTES}). */
  maxBytes?: number;
}

/** Default size limit of one manifest (the sources' own limits are the same). */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

/**
 * What a text of `length` characters may expand to. Written out without aliases, a YAML value
 * takes at least two bytes (`1,` / `a\n`), and string content is never longer than the text: a
 * document without aliases always fits; a few aliases fit; a bomb does not.
 */
export function budgetFor(length: number): DecodeBudget {
  return { nodes: Math.floor(length / 2) + 10_000, chars: 2 * length + 65_536 };
}

interface YamlDocument {
  text: string;
  /** 0-based line in the whole text where this document's text starts. */
  firstLine: number;
}

const SEPARATOR = /^(---|\.\.\.)(?=[ \t]|$)/;
const BLANK_OR_COMMENT = /^\s*(#.*)?$/;

/** Splits YAML text into documents on `---` / `...` lines, keeping line offsets. Empty documents are dropped. */
export function splitYamlDocuments(text: string): YamlDocument[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const docs: YamlDocument[] = [];
  let cur: string[] = [];
  let first = 0;
  const flush = (): void => {
    if (cur.some((l) => !BLANK_OR_COMMENT.test(l))) docs.push({ text: cur.join('\n'), firstLine: first });
  };
  lines.forEach((line, i) => {
    const m = SEPARATOR.exec(line);
    if (!m) {
      cur.push(line);
      return;
    }
    flush();
    // Content after `--- ` on the same line belongs to the next document; pad so columns match.
    cur = m[1] === '---' ? [' '.repeat(3) + line.slice(3)] : [];
    first = i;
  });
  flush();
  return docs;
}

interface YamlMark {
  line: number;
}

function yamlMarkOf(e: unknown): { mark: YamlMark; reason: string } | undefined {
  if (!(e instanceof Error) || e.name !== 'YAMLException') return undefined;
  const mark: unknown = Reflect.get(e, 'mark');
  const reason: unknown = Reflect.get(e, 'reason');
  if (typeof mark !== 'object' || mark === null) return undefined;
  const line: unknown = Reflect.get(mark, 'line');
  if (typeof line !== 'number') return undefined;
  return { mark: { line }, reason: typeof reason === 'string' ? reason : e.message };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decodeError(e: unknown): string {
  return truncateText(e instanceof Error ? e.message : String(e));
}

const BUDGET_DETAIL = 'expands to too many values (YAML aliases or a document larger than its text allows)';

/** Types one Pod object; a ConfigError names the fields (prefixed by `where`). */
function typedPod(obj: Record<string, unknown>, where: (f: string) => string, budget: DecodeBudget, origin: string): V1Pod | ConfigError {
  const r = decodeTypedPod({ ...obj, apiVersion: 'v1', kind: 'Pod' }, budget);
  if (r.ok) return r.pod;
  if (r.budgetExhausted) return new ConfigError('ERR_MANIFEST_TOO_LARGE', origin, `${where('')}${BUDGET_DETAIL}`.replace(/^: /, ''));
  return ConfigError.invalid(origin, r.errors.map((e: FieldError) => ({ ...e, field: where(e.field) })));
}

/** Checks kind/apiVersion of a top-level document and returns the pods in it. */
function podsOfDocument(obj: Record<string, unknown>, doc: number, opts: DecodeOptions, budget: DecodeBudget): DecodedPod[] | ConfigError {
  const where = (f: string): string => (doc > 1 ? `document ${doc}: ${f}` : f);
  const { kind, apiVersion } = obj;
  if (kind === undefined || kind === '') return ConfigError.invalid(opts.origin, [fieldErr.required(where('kind'))]);
  const kinds = opts.allowLists ? ['Pod', 'PodList', 'List'] : ['Pod'];
  if (typeof kind !== 'string' || !kinds.includes(kind)) {
    return ConfigError.invalid(opts.origin, [fieldErr.notSupported(where('kind'), kind, kinds)]);
  }
  if (apiVersion !== 'v1') {
    return ConfigError.invalid(opts.origin, [
      apiVersion === undefined ? fieldErr.required(where('apiVersion')) : fieldErr.notSupported(where('apiVersion'), apiVersion, ['v1']),
    ]);
  }
  if (kind === 'Pod') {
    const pod = typedPod(obj, where, budget, opts.origin);
    return pod instanceof ConfigError ? pod : [{ pod, document: doc }];
  }
  const items = obj['items'];
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) return ConfigError.invalid(opts.origin, [fieldErr.invalid(where('items'), typeof items === 'string' ? items : '<object>', 'must be a list')]);
  const out: DecodedPod[] = [];
  for (const [i, item] of items.entries()) {
    if (!isRecord(item)) return ConfigError.invalid(opts.origin, [fieldErr.invalid(where(`items[${i}]`), item, 'must be a Pod object')]);
    if (item['kind'] !== undefined && item['kind'] !== 'Pod') {
      return ConfigError.invalid(opts.origin, [fieldErr.notSupported(where(`items[${i}].kind`), item['kind'], ['Pod'])]);
    }
    const pod = typedPod(item, (f) => where(f === '' ? `items[${i}]` : `items[${i}].${f}`), budget, opts.origin);
    if (pod instanceof ConfigError) return pod;
    out.push({ pod, document: doc, item: i });
  }
  return out;
}

/**
 * Decodes manifest text (YAML, possibly several documents, or JSON). All or nothing: any bad
 * document makes the whole manifest an error, so a file is always applied as one unit.
 */
export function decodeManifest(text: string, opts: DecodeOptions): DecodeResult {
  const maxBytes = opts.maxBytes ?? MAX_MANIFEST_BYTES;
  if (text.length > maxBytes) {
    return { ok: false, error: new ConfigError('ERR_MANIFEST_TOO_LARGE', opts.origin, `manifest is ${text.length} characters, limit is ${maxBytes}`) };
  }
  const budget = budgetFor(text.length);
  const json = parseJsonObject(text);
  if (json !== undefined) {
    const r = podsOfDocument(json, 1, opts, budget);
    return r instanceof ConfigError ? { ok: false, error: r } : { ok: true, pods: r };
  }
  const pods: DecodedPod[] = [];
  const docs = splitYamlDocuments(text);
  for (const [di, d] of docs.entries()) {
    const docNo = di + 1;
    let objs: unknown[];
    try {
      objs = yaml.loadAll(d.text);
    } catch (e) {
      const ym = yamlMarkOf(e);
      const detail = ym
        ? `yaml: line ${d.firstLine + ym.mark.line + 1}: ${truncateText(ym.reason)}`
        : `document ${docNo}: cannot decode: ${decodeError(e)}`;
      return { ok: false, error: new ConfigError('ERR_MANIFEST_PARSE', opts.origin, detail) };
    }
    for (const o of objs) {
      if (o === null || o === undefined) continue;
      if (!isRecord(o)) {
        const detail = `yaml: line ${d.firstLine + 1}: document ${docNo} is not an object`;
        return { ok: false, error: new ConfigError('ERR_MANIFEST_PARSE', opts.origin, detail) };
      }
      const r = podsOfDocument(o, docNo, opts, budget);
      if (r instanceof ConfigError) return { ok: false, error: r };
      pods.push(...r);
    }
  }
  return { ok: true, pods };
}

/**
 * Fast path for the common machine-written case, a JSON object: JSON.parse, skipping the YAML
 * parser. Anything that is not valid JSON returns undefined and takes the YAML path, which
 * produces the same objects or the error with its line number.
 */
function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const t = text.trimStart();
  if (!t.startsWith('{')) return undefined;
  try {
    const obj: unknown = JSON.parse(t);
    return isRecord(obj) ? obj : undefined;
  } catch {
    return undefined;
  }
}
