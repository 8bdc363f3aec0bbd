/**
 * Bytes → v1 Pod objects, for both the file and the HTTP source.
 *
 * YAML parsing and typing use @kubernetes/client-node's `loadAllYaml` (js-yaml + the generated
 * model serializer). We split multi-document text on `---` ourselves first, so that an error can
 * name the line in the file, an empty document (a trailing `---`) is simply skipped, and one
 * document is decoded at a time. Like the API machinery's non-strict decoder, fields unknown to
 * the v1 model are dropped. The result is converted to plain objects (structuredClone) so pods
 * can cross threads and be compared field by field.
 *
 * This module only decodes and checks kind/apiVersion; defaults and validation come after.
 */
import type { V1Pod } from '@kubernetes/client-node';
// The YAML module alone: importing the package root also loads every API client, auth plugin
// and websocket helper (~0.5 s more at startup). The package is pinned (1.4.0) and has no
// "exports" map, so this path is stable for us.
import { loadAllYaml } from '@kubernetes/client-node/dist/yaml.js';
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import { ConfigError } from './config-errors.js';
import { fieldErr } from './field-error.js';

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
  return e instanceof Error ? e.message : String(e);
}

/** Decodes one already-parsed object as a typed v1 Pod (JSON is YAML, so loadAllYaml does it). */
function typedPod(obj: Record<string, unknown>): V1Pod {
  const [typed] = loadAllYaml(JSON.stringify({ ...obj, apiVersion: 'v1', kind: 'Pod' })) as unknown[];
  return structuredClone(typed) as V1Pod;
}

/** Checks kind/apiVersion of a top-level document and returns the pods in it. */
function podsOfDocument(obj: Record<string, unknown>, doc: number, opts: DecodeOptions): DecodedPod[] | ConfigError {
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
  if (kind === 'Pod') return [{ pod: structuredClone(obj) as V1Pod, document: doc }];
  const items = obj['items'];
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) return ConfigError.invalid(opts.origin, [fieldErr.invalid(where('items'), '<object>', 'must be a list')]);
  const out: DecodedPod[] = [];
  for (const [i, item] of items.entries()) {
    if (!isRecord(item)) return ConfigError.invalid(opts.origin, [fieldErr.invalid(where(`items[${i}]`), item, 'must be a Pod object')]);
    if (item['kind'] !== undefined && item['kind'] !== 'Pod') {
      return ConfigError.invalid(opts.origin, [fieldErr.notSupported(where(`items[${i}].kind`), item['kind'], ['Pod'])]);
    }
    try {
      out.push({ pod: typedPod(item), document: doc, item: i });
    } catch (e) {
      return new ConfigError('ERR_MANIFEST_PARSE', opts.origin, `${where(`items[${i}]`)}: cannot decode as v1 Pod: ${decodeError(e)}`);
    }
  }
  return out;
}

/**
 * Decodes manifest text (YAML, possibly several documents, or JSON). All or nothing: any bad
 * document makes the whole manifest an error, so a file is always applied as one unit.
 */
export function decodeManifest(text: string, opts: DecodeOptions): DecodeResult {
  const fast = decodeJsonPod(text);
  if (fast !== undefined) return { ok: true, pods: [{ pod: fast, document: 1 }] };
  const pods: DecodedPod[] = [];
  const docs = splitYamlDocuments(text);
  for (const [di, d] of docs.entries()) {
    const docNo = di + 1;
    let objs: unknown[];
    try {
      objs = loadAllYaml(d.text) as unknown[];
    } catch (e) {
      const ym = yamlMarkOf(e);
      const detail = ym
        ? `yaml: line ${d.firstLine + ym.mark.line + 1}: ${ym.reason}`
        : `document ${docNo}: cannot decode: ${decodeError(e)}`;
      return { ok: false, error: new ConfigError('ERR_MANIFEST_PARSE', opts.origin, detail) };
    }
    for (const o of objs) {
      if (o === null || o === undefined) continue;
      if (!isRecord(o)) {
        const detail = `yaml: line ${d.firstLine + 1}: document ${docNo} is not an object`;
        return { ok: false, error: new ConfigError('ERR_MANIFEST_PARSE', opts.origin, detail) };
      }
      const r = podsOfDocument(o, docNo, opts);
      if (r instanceof ConfigError) return { ok: false, error: r };
      pods.push(...r);
    }
  }
  return { ok: true, pods };
}

/**
 * Fast path for the common machine-written case, a JSON file holding one v1 Pod: JSON.parse
 * plus the same typed deserialization loadAllYaml applies, skipping the YAML parser (~3x
 * faster). Anything else (YAML, bad JSON, other kinds) returns undefined and takes the YAML
 * path, which produces the same pod or the error with its line number.
 */
function decodeJsonPod(text: string): V1Pod | undefined {
  const t = text.trimStart();
  if (!t.startsWith('{')) return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(t);
  } catch {
    return undefined;
  }
  if (!isRecord(obj) || obj['kind'] !== 'Pod' || obj['apiVersion'] !== 'v1') return undefined;
  try {
    return structuredClone(ObjectSerializer.deserialize(obj, 'V1Pod')) as V1Pod;
  } catch {
    return undefined;
  }
}
