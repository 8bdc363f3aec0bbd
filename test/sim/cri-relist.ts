/**
 * A pod's runtime status read from CRI the way a PLEG relist caches it (sandboxes and
 * containers by UID label, newest first), for scenario tests that drive the syncer directly.
 */
import type { CriClient } from '../../src/shared/cri/cri-client.js';
import type { RuntimePodStatus } from '../../src/shared/pod-cache/runtime-pod-status.js';

/** What a PLEG relist caches: the pod's sandboxes and containers by UID label, newest first. */
export async function relist(client: CriClient, uid: string): Promise<RuntimePodStatus> {
  const sel = { labelSelector: { 'io.kubernetes.pod.uid': uid } };
  const sbs = (await client.listPodSandbox(sel)).sort((a, b) => (BigInt(b.createdAt) > BigInt(a.createdAt) ? 1 : -1));
  const sandboxes = await Promise.all(sbs.map(async (s) => {
    const st = (await client.podSandboxStatus(s.id)).status!;
    const ip = st.state === 'SANDBOX_READY' ? (st.network?.ip ?? '') : '';
    return { id: s.id, state: st.state, createdAtNs: st.createdAt, attempt: st.metadata?.attempt ?? 0, ip, ips: ip ? [ip] : [], hostNetwork: false };
  }));
  const cs = (await client.listContainers(sel)).sort((a, b) => (BigInt(b.createdAt) > BigInt(a.createdAt) ? 1 : BigInt(b.createdAt) < BigInt(a.createdAt) ? -1 : 0));
  const containers = await Promise.all(cs.map(async (c) => {
    const st = (await client.containerStatus(c.id)).status!;
    return {
      id: c.id, podSandboxId: c.podSandboxId, name: c.labels['io.kubernetes.container.name'] ?? '', state: st.state,
      createdAtNs: st.createdAt, startedAtNs: st.startedAt, finishedAtNs: st.finishedAt, exitCode: st.exitCode, reason: st.reason,
      message: st.message, image: st.image?.image ?? '', imageRef: st.imageRef, hash: c.annotations['io.kubernetes.container.hash'] ?? '',
      restartCount: Number(c.annotations['io.kubernetes.container.restartCount'] ?? 0), attempt: c.metadata?.attempt ?? 0,
    };
  }));
  return { uid, name: '', namespace: 'default', ips: sandboxes[0]?.ips ?? [], sandboxes, containers };
}

