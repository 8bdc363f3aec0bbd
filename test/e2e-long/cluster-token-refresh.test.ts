/**
 * A projected serviceAccountToken is refreshed against the real API server (kube-apiserver
 * 1.20, which refuses expirationSeconds < 600): with the shortest lifetime allowed, 600 s, the
 * agent requests a new token at 80% of it (480 s) and swaps it into the running pod's volume.
 *
 * A long, mostly idle test: it lives in test/e2e-long/, which test/run-all.ts runs in its own
 * `node --test` process concurrently with the main sequential run (see there).
 *
 * Checked: the token in the volume (host file under --root-dir and ExecSync `cat` in the
 * container) changes within 9.5 min; the new one differs, is bound to the same pod (JWT claims:
 * same subject, pod name and UID, `exp` later) and is valid (TokenReview as an admin:
 * authenticated, the service account, the pod's UID); the swap was atomic: every one of the
 * thousands of reads made while waiting saw a whole token (the old or the new), the `token`
 * entry is a link through `..data`, whose target moved to a new timestamped directory, and the
 * old directory is gone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuthenticationV1Api, type V1Pod } from '@kubernetes/client-node';
import { pollUntil } from '../harness/poll.js';
import { removeAgentRoot } from '../e2e/agent-harness.js';
import { apiPod, clusterSimFixture, coreApi, createPods, isApiRunning, PodWatchRecorder, startClusterAgent } from '../e2e/cluster-harness.js';
import { execIn } from '../e2e/cluster-volumes.js';

const NS = 'tok';
const NODE = 'node-tok';
const LIFETIME_S = 600;
/** The refresh is due at 480 s; 9.5 min leaves 90 s for the request, the resync and the write. */
const REFRESH_WAIT_MS = 570_000;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-tok-root-'));
const f = clusterSimFixture({ namespace: NS, teardown: () => removeAgentRoot(root) });

interface Claims {
  sub?: string;
  exp?: number;
  iat?: number;
  'kubernetes.io'?: { namespace?: string; pod?: { name?: string; uid?: string } };
}

function claimsOf(token: string): Claims {
  const part = token.split('.')[1];
  assert.ok(part, `a JWT: ${token.slice(0, 40)}`);
  return JSON.parse(Buffer.from(part, 'base64url').toString()) as Claims;
}

const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

function tokenPod(): V1Pod {
  const p = apiPod('token-refresh', NS, NODE);
  p.spec!.volumes = [{ name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: LIFETIME_S } }] } }];
  p.spec!.containers[0]!.volumeMounts = [{ name: 'tok', mountPath: '/var/run/tok', readOnly: true }];
  return p;
}

test('a projected serviceAccountToken (expirationSeconds 600) is refreshed at 80% of its lifetime against the real apiserver, atomically', { timeout: 15 * 60_000 }, async (t) => {
  const { cp, sim } = f;
  const { kc, core } = coreApi(cp.adminKubeconfig);
  const auth = kc.makeApiClient(AuthenticationV1Api);
  const r = (f.rec = new PodWatchRecorder(cp.adminKubeconfig, NS));
  await r.start();
  f.agent = await startClusterAgent({ cp, nodeName: NODE, endpoint: sim.endpoint, rootDir: root });
  const [pod] = await createPods(core, [tokenPod()]);
  const uid = pod!.metadata!.uid!;
  await r.waitFor(() => { const p = r.pods.get(uid); return p && isApiRunning(p) ? true : undefined; }, 'the token pod Running in the API', 60_000);

  const volDir = path.join(root, 'pods', uid, 'volumes', 'kubernetes.io~projected', 'tok');
  const tokenFile = path.join(volDir, 'token');
  const first = fs.readFileSync(tokenFile, 'utf8');
  const firstSeenAt = performance.now();
  assert.match(first, JWT);
  const inContainer = await execIn(sim.endpoint, uid, 'main', ['cat', '/var/run/tok/token']);
  assert.equal(inContainer.stdout, first, 'the container reads the host file');
  const c1 = claimsOf(first);
  assert.equal(c1.sub, `system:serviceaccount:${NS}:default`);
  assert.equal(c1['kubernetes.io']?.pod?.uid, uid);
  assert.ok(c1.exp !== undefined && c1.iat !== undefined && c1.exp - c1.iat === LIFETIME_S, `a ${LIFETIME_S} s token: iat ${c1.iat}, exp ${c1.exp}`);
  assert.equal(fs.readlinkSync(tokenFile), '..data/token', 'the token entry is a link through ..data');
  const dataBefore = fs.readlinkSync(path.join(volDir, '..data'));

  // Read the token as a container would, every 50 ms, until it changes: every read must be a
  // whole token (the old one or a new JWT), never a missing or partial file.
  let reads = 0;
  const second = await pollUntil(() => {
    const s = fs.readFileSync(tokenFile, 'utf8');
    reads++;
    if (s === first) return undefined;
    assert.match(s, JWT, `read ${reads} saw a partial or foreign token`);
    return s;
  }, { what: 'the refreshed token in the volume', timeoutMs: REFRESH_WAIT_MS, intervalMs: 50 });
  const waitedS = (performance.now() - firstSeenAt) / 1000;
  t.diagnostic(`token refreshed ${waitedS.toFixed(0)} s after the first was seen (${reads} reads, all whole tokens)`);

  const c2 = claimsOf(second);
  assert.notEqual(second, first);
  assert.equal(c2.sub, c1.sub);
  assert.deepEqual(c2['kubernetes.io']?.pod, c1['kubernetes.io']?.pod, 'bound to the same pod (name and UID)');
  assert.ok(c2.exp! > c1.exp!, `exp moved later: ${c1.exp} → ${c2.exp}`);
  // Issued near 80% of the first one's lifetime (480 s), not at once and not at expiry.
  const issuedAfter = c2.iat! - c1.iat!;
  assert.ok(issuedAfter >= 0.8 * LIFETIME_S - 5 && issuedAfter <= LIFETIME_S - 30, `refreshed ${issuedAfter} s after the first was issued`);

  const review = await auth.createTokenReview({ body: { spec: { token: second } } });
  assert.equal(review.status?.authenticated, true, `TokenReview: ${JSON.stringify(review.status)}`);
  assert.equal(review.status?.user?.username, `system:serviceaccount:${NS}:default`);
  assert.deepEqual(review.status?.user?.extra?.['authentication.kubernetes.io/pod-uid'], [uid]);

  const dataAfter = fs.readlinkSync(path.join(volDir, '..data'));
  assert.notEqual(dataAfter, dataBefore, '..data points to a new timestamped directory');
  assert.match(dataAfter, /^\.\.\d{4}_\d{2}_\d{2}_/);
  assert.equal(fs.existsSync(path.join(volDir, dataBefore)), false, 'the old version is gone');
  assert.equal(fs.readlinkSync(tokenFile), '..data/token');
  assert.equal((await execIn(sim.endpoint, uid, 'main', ['cat', '/var/run/tok/token'])).stdout, second, 'the running container reads the new token');
  assert.deepEqual(r.violations, []);
});
