/**
 * Container environment and command expansion (the kubelet's makeEnvironmentVariables for the
 * parts a node agent without API access can resolve, and expansion.Expand for `$(VAR)`).
 *
 * Supported: `value` (with `$(VAR)` references to earlier variables), and `valueFrom.fieldRef`
 * for metadata.name/namespace/uid, metadata.labels['k']/annotations['k'], spec.nodeName,
 * spec.serviceAccountName, status.hostIP(s), status.podIP(s). `valueFrom` that needs the API
 * server (secretKeyRef, configMapKeyRef) or resource math (resourceFieldRef) is a
 * CreateContainerConfigError, as the kubelet reports an unresolvable reference. Service link
 * variables are not generated. Values are never logged.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { KeyValue } from '../../src/cri/cri-types.js';
import { podName, podNamespace, podUID } from './pod-spec.js';

export interface EnvContext {
  nodeName: string;
  hostIP: string;
  /** The sandbox's IPs, primary first (empty for host network before the sandbox is known). */
  podIPs: readonly string[];
}

export type EnvResult = { ok: true; envs: KeyValue[] } | { ok: false; message: string };

export function makeEnvironmentVariables(pod: V1Pod, container: V1Container, ctx: EnvContext): EnvResult {
  const resolved = new Map<string, string>();
  const envs: KeyValue[] = [];
  for (const e of container.env ?? []) {
    let value: string;
    if (e.valueFrom) {
      const fieldPath = e.valueFrom.fieldRef?.fieldPath;
      const v = fieldPath === undefined ? undefined : podFieldValue(pod, fieldPath, ctx);
      if (v === undefined) {
        const what = fieldPath !== undefined ? `fieldRef ${fieldPath}` : Object.keys(e.valueFrom).join(',');
        return { ok: false, message: `couldn't resolve env var ${e.name}: valueFrom ${what} is not supported by shardlet` };
      }
      value = v;
    } else {
      value = expand(e.value ?? '', (name) => resolved.get(name));
    }
    resolved.set(e.name, value);
    envs.push({ key: e.name, value });
  }
  return { ok: true, envs };
}

function podFieldValue(pod: V1Pod, fieldPath: string, ctx: EnvContext): string | undefined {
  const mapKey = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (mapKey) {
    const map = mapKey[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[mapKey[2] ?? ''] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name': return podName(pod);
    case 'metadata.namespace': return podNamespace(pod);
    case 'metadata.uid': return podUID(pod);
    case 'spec.nodeName': return pod.spec?.nodeName ?? ctx.nodeName;
    case 'spec.serviceAccountName': return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP': return ctx.hostIP;
    case 'status.hostIPs': return ctx.hostIP;
    case 'status.podIP': return ctx.podIPs[0] ?? '';
    case 'status.podIPs': return ctx.podIPs.join(',');
    default: return undefined;
  }
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
