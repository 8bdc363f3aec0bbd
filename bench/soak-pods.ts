/**
 * The soak's pods, as static-pod manifests (the bench's pod source, pod-manifests.ts): steady
 * sleepers, and three kinds of churn pod, one lifecycle each (created, lives its lifetime, its
 * manifest deleted):
 *   crashloop   restartPolicy Always, exits 1 at once: restarts under the crash-loop backoff,
 *               leaving dead instances for the container GC
 *   completion  restartPolicy Never, exits 0: Succeeded, then deleted
 *   running     sleeps until deleted (SIGTERM ends it: shared PID namespace)
 * Churn pods use a rotating image tag (a new one every `lifecyclesPerImage` lifecycles), so
 * unused images pile up unless the image GC (by age) removes them.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { BENCH_NAMESPACE } from './pod-manifests.js';

export type SoakPodKind = 'steady' | 'crashloop' | 'completion' | 'running';

export const SOAK_BASE_IMAGE = 'docker.io/local/busybox:1';

export function soakImage(index: number, perImage: number): string {
  return `docker.io/local/soak-${Math.floor(index / perImage)}:1`;
}

export function soakManifest(name: string, kind: SoakPodKind, image: string): object {
  const command = kind === 'crashloop' ? ['sh', '-c', 'exit 1'] : kind === 'completion' ? ['sh', '-c', 'exit 0'] : ['sleep', '100000'];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: BENCH_NAMESPACE, labels: { app: 'shardlet-soak', kind } },
    spec: {
      hostNetwork: true,
      restartPolicy: kind === 'completion' ? 'Never' : 'Always',
      shareProcessNamespace: true,
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'c', image, imagePullPolicy: 'IfNotPresent', command }],
    },
  };
}

/** Writes a manifest atomically (dot-name, then rename: the file source ignores hidden files). */
export async function writeManifest(dir: string, name: string, manifest: object): Promise<void> {
  const tmp = path.join(dir, `.${name}.json.tmp`);
  await fs.writeFile(tmp, JSON.stringify(manifest));
  await fs.rename(tmp, path.join(dir, `${name}.json`));
}

export async function deleteManifest(dir: string, name: string): Promise<void> {
  await fs.rm(path.join(dir, `${name}.json`), { force: true });
}
