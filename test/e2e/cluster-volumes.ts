/**
 * The pod and objects of the cluster volume scenarios, shared by the sim and containerd tests:
 * a configMap and a secret, and a pod with the default kube-api-access projected volume, a
 * configMap volume, a secret volume, an emptyDir shared by two containers and env from both;
 * plus ExecSync `cat` through CRI (what `kubectl exec cat` would show).
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { TEST_IMAGE } from './cluster-harness.js';

export const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export async function createAppObjects(core: CoreV1Api, namespace: string, conf: string): Promise<void> {
  await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'app-config', namespace }, data: { 'app.conf': conf, mode: 'fast' } } });
  await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'app-secret', namespace }, data: { password: Buffer.from('s3cret').toString('base64') } } });
}

/** The volumes pod: `writer` puts a file in the shared emptyDir, `reader` keeps running. */
export function volumesPod(name: string, namespace: string, nodeName: string, o: { podNetwork?: boolean } = {}): V1Pod {
  const mounts = [
    { name: 'cfg', mountPath: '/etc/app' },
    { name: 'sec', mountPath: '/etc/secret' },
    { name: 'scratch', mountPath: '/scratch' },
  ];
  const env = [
    { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'mode' } } },
    { name: 'PASS', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } },
  ];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      nodeName,
      hostNetwork: o.podNetwork !== true,
      shareProcessNamespace: true,
      terminationGracePeriodSeconds: 2,
      volumes: [
        { name: 'cfg', configMap: { name: 'app-config' } },
        { name: 'sec', secret: { secretName: 'app-secret' } },
        { name: 'scratch', emptyDir: {} },
      ],
      containers: [
        { name: 'writer', image: TEST_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '100000'], env, volumeMounts: mounts },
        { name: 'reader', image: TEST_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '100000'], envFrom: [{ configMapRef: { name: 'app-config' }, prefix: 'CM_' }], volumeMounts: [{ name: 'scratch', mountPath: '/shared', readOnly: true }] },
      ],
    },
  };
}

/** ExecSync in the running container `name` of pod `uid`. */
export async function execIn(endpoint: string, uid: string, name: string, cmd: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const cri = new CriClient({ endpoint, timeoutMs: 30_000 });
  try {
    const cs = await cri.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': name } });
    const c = cs.find((x) => x.state === 'CONTAINER_RUNNING');
    if (!c) throw new Error(`no running container ${name} in pod ${uid}`);
    const r = await cri.execSync({ containerId: c.id, cmd, timeout: 10 });
    return { stdout: Buffer.from(r.stdout).toString(), stderr: Buffer.from(r.stderr).toString(), exitCode: r.exitCode };
  } finally {
    cri.close();
  }
}
