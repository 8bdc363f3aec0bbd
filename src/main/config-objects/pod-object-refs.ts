/**
 * Which API objects a pod refers to (the kubelet's podutil.VisitPodSecretNames /
 * VisitPodConfigmapNames, for what a node agent reads): configMaps and secrets of configMap,
 * secret and projected volumes, env valueFrom and envFrom; and the service-account tokens of
 * projected serviceAccountToken sources. Pure.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { DEFAULT_TOKEN_EXPIRATION_SECONDS, tokenKey } from '../../shared/protocol/api-object-snapshot.js';

export interface TokenRef {
  audience: string;
  expirationSeconds: number;
}

export interface PodObjectRefs {
  configMaps: Set<string>;
  secrets: Set<string>;
  /** By tokenKey(audience, expirationSeconds). */
  tokens: Map<string, TokenRef>;
}

function containers(pod: V1Pod): V1Container[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
}

export function podObjectRefs(pod: V1Pod): PodObjectRefs {
  const refs: PodObjectRefs = { configMaps: new Set(), secrets: new Set(), tokens: new Map() };
  const cm = (n: string | undefined): void => void (n ? refs.configMaps.add(n) : undefined);
  const sec = (n: string | undefined): void => void (n ? refs.secrets.add(n) : undefined);
  for (const v of pod.spec?.volumes ?? []) {
    cm(v.configMap?.name);
    sec(v.secret?.secretName);
    for (const s of v.projected?.sources ?? []) {
      cm(s.configMap?.name);
      sec(s.secret?.name);
      const t = s.serviceAccountToken;
      if (t) {
        const ref = { audience: t.audience ?? '', expirationSeconds: t.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS };
        refs.tokens.set(tokenKey(ref.audience, ref.expirationSeconds), ref);
      }
    }
  }
  for (const c of containers(pod)) {
    for (const e of c.envFrom ?? []) {
      cm(e.configMapRef?.name);
      sec(e.secretRef?.name);
    }
    for (const e of c.env ?? []) {
      cm(e.valueFrom?.configMapKeyRef?.name);
      sec(e.valueFrom?.secretKeyRef?.name);
    }
  }
  return refs;
}
