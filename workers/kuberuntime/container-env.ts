/**
 * Container environment and command expansion (the kubelet's makeEnvironmentVariables and
 * expansion.Expand for `$(VAR)`).
 *
 * Order (the kubelet's): `envFrom` sources first (configMapRef / secretRef, each key with the
 * source's prefix; keys that are not valid variable names are skipped), then `env` in order,
 * later entries overriding earlier ones. `value` may reference earlier variables as `$(VAR)`.
 * `valueFrom`: fieldRef (downward-api.ts), resourceFieldRef, configMapKeyRef, secretKeyRef.
 *
 * API objects come from the snapshot the main thread sent (api-object-snapshot.ts). A missing
 * non-optional object or key is a CreateContainerConfigError with the kubelet's message
 * (`configmap "N" not found`, `couldn't find key K in ConfigMap NS/N`); an optional one is
 * skipped. An object not known yet fails the same way with a "waiting" message (the next sync,
 * triggered when it arrives, starts the container). Service link variables (service-env.ts,
 * cluster mode) come last, each only when the container does not define the name itself, and
 * `$(VAR)` in a value may name one. Values are never logged.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { KeyValue } from '../../src/shared/cri/cri-types.js';
import type { ConfigMapContents, ObjectLookup, PodApiObjects, SecretContents } from '../../src/shared/protocol/api-object-snapshot.js';
import { podFieldValue, resourceFieldValue, type FieldContext } from './downward-api.js';
import { containerSpec, podNamespace } from './pod-spec.js';
import { serviceEnvOf } from './service-env.js';

/** The sandbox's IPs are primary first (empty for host network before the sandbox is known). */
export interface EnvContext extends FieldContext {
  /** configMaps and secrets the pod refers to (cluster mode); absent: none known. */
  objects?: PodApiObjects | undefined;
}

export type EnvResult = { ok: true; envs: KeyValue[] } | { ok: false; message: string };

/** The kubelet's IsEnvVarName: `[-._a-zA-Z][-._a-zA-Z0-9]*`. */
const ENV_NAME_RE = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

type Kind = 'configmap' | 'secret';

function lookupOf(ctx: EnvContext, kind: Kind, name: string): ObjectLookup<ConfigMapContents> | ObjectLookup<SecretContents> | undefined {
  return kind === 'configmap' ? ctx.objects?.configMaps.get(name) : ctx.objects?.secrets.get(name);
}

/** key → value of a found object (secret and binaryData values decoded from base64). */
function entriesOf(kind: Kind, o: ConfigMapContents | SecretContents): Map<string, string> {
  const m = new Map<string, string>();
  if (kind === 'configmap') {
    const c = o as ConfigMapContents;
    for (const [k, v] of Object.entries(c.data ?? {})) m.set(k, String(v));
    for (const [k, v] of Object.entries(c.binaryData ?? {})) m.set(k, Buffer.from(String(v), 'base64').toString());
  } else for (const [k, v] of Object.entries((o as SecretContents).data ?? {})) m.set(k, Buffer.from(String(v), 'base64').toString());
  return m;
}

/** The object's entries; undefined = optional and missing (skip); a string = the failure. */
function objectEntries(ctx: EnvContext, kind: Kind, name: string, optional: boolean): Map<string, string> | undefined | string {
  const l = lookupOf(ctx, kind, name);
  if (l?.state === 'found') return entriesOf(kind, l.object);
  if (l?.state === 'missing') return optional ? undefined : `${kind} ${JSON.stringify(name)} not found`;
  if (l?.state === 'error') return `${kind} ${JSON.stringify(name)}: ${l.message}`;
  return `waiting for ${kind} ${JSON.stringify(name)} from the API server`;
}

export function makeEnvironmentVariables(pod: V1Pod, container: V1Container, ctx: EnvContext): EnvResult {
  const services = serviceEnvOf(ctx.objects);
  if (!services.ok) return { ok: false, message: services.message };
  const resolved = new Map<string, string>();
  for (const src of container.envFrom ?? []) {
    const ref = src.configMapRef ?? src.secretRef;
    if (!ref) continue;
    const kind: Kind = src.configMapRef ? 'configmap' : 'secret';
    const entries = objectEntries(ctx, kind, ref.name ?? '', ref.optional === true);
    if (typeof entries === 'string') return { ok: false, message: entries };
    for (const [k, v] of entries ?? []) {
      const key = `${src.prefix ?? ''}${k}`;
      if (ENV_NAME_RE.test(key)) resolved.set(key, v);
    }
  }
  for (const e of container.env ?? []) {
    const vf = e.valueFrom;
    if (!vf) {
      resolved.set(e.name, expand(e.value ?? '', (name) => resolved.get(name) ?? services.vars.get(name)));
      continue;
    }
    if (vf.fieldRef) {
      const v = podFieldValue(pod, vf.fieldRef.fieldPath, ctx);
      if (v === undefined) return { ok: false, message: `couldn't resolve env var ${e.name}: unsupported fieldPath ${vf.fieldRef.fieldPath.slice(0, 128)}` };
      resolved.set(e.name, v);
    } else if (vf.resourceFieldRef) {
      const r = vf.resourceFieldRef;
      const c = r.containerName ? containerSpec(pod, r.containerName) : container;
      const v = resourceFieldValue(c, r.resource, r.divisor === undefined ? undefined : String(r.divisor));
      if (!v.ok) return { ok: false, message: `couldn't resolve env var ${e.name}: ${v.message}` };
      resolved.set(e.name, v.value);
    } else if (vf.configMapKeyRef || vf.secretKeyRef) {
      const ref = (vf.configMapKeyRef ?? vf.secretKeyRef)!;
      const kind: Kind = vf.configMapKeyRef ? 'configmap' : 'secret';
      const entries = objectEntries(ctx, kind, ref.name ?? '', ref.optional === true);
      if (typeof entries === 'string') return { ok: false, message: entries };
      if (entries === undefined) continue;
      const v = entries.get(ref.key);
      if (v === undefined) {
        if (ref.optional === true) continue;
        return { ok: false, message: `couldn't find key ${ref.key.slice(0, 253)} in ${kind === 'configmap' ? 'ConfigMap' : 'Secret'} ${podNamespace(pod)}/${ref.name ?? ''}` };
      }
      resolved.set(e.name, v);
    } else {
      return { ok: false, message: `couldn't resolve env var ${e.name}: valueFrom ${Object.keys(vf).join(',').slice(0, 64)} is not supported by shardlet` };
    }
  }
  const envs = [...resolved].map(([key, value]) => ({ key, value }));
  for (const [key, value] of services.vars) if (!resolved.has(key)) envs.push({ key, value });
  return { ok: true, envs };
}

/**
 * `$(NAME)` → the value of NAME when defined, left as written when not; `$$` → `$` (an escaped
 * reference). The kubelet's third_party/forked/golang/expansion semantics.
 */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const v = lookup(name);
      out += v ?? `$(${name})`;
      i = close;
    } else {
      out += ch;
    }
  }
  return out;
}

/** The kubelet's ExpandContainerCommandAndArgs: `$(VAR)` in command and args from the env. */
export function expandCommandAndArgs(container: V1Container, envs: readonly KeyValue[]): { command: string[]; args: string[] } {
  const vars = new Map(envs.map((kv) => [kv.key, kv.value]));
  const lookup = (name: string): string | undefined => vars.get(name);
  return {
    command: (container.command ?? []).map((s) => expand(s, lookup)),
    args: (container.args ?? []).map((s) => expand(s, lookup)),
  };
}
