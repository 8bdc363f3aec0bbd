/**
 * The main-thread half of API objects: shared watches (one per referenced object, dropped with
 * its last pod), TokenRequest per pod with refresh at 80% of the lifetime, and the snapshots
 * attached to pod updates, with resyncs when an object or a token changes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { SignalClock } from '../node-status/signal-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { IssuedToken, NamespacedObjectResource, ObjectListWatchers, PodListWatcher, TokenIssuer, TokenRequestSpec } from '../../../src/main/apiserver/api-roles.js';
import type { PodDispatcher } from '../../../src/main/dispatch/pod-dispatcher.js';
import { ApiObjectDispatcher } from '../../../src/main/config-objects/api-object-dispatcher.js';
import { ObjectWatches } from '../../../src/main/config-objects/object-watches.js';
import { TokenManager } from '../../../src/main/config-objects/token-manager.js';
import type { PodUpdateMessage, WorkerThreadStats } from '../../../src/shared/protocol/pod-worker-protocol.js';
import { tokenKey } from '../../../src/shared/protocol/api-object-snapshot.js';
import { FakeListWatcher } from '../apiserver/fake-list-watcher.js';

class FakeObjectLW implements ObjectListWatchers {
  readonly watchers = new Map<string, FakeListWatcher>();
  objectListWatcher(resource: NamespacedObjectResource, namespace: string, name: string): PodListWatcher {
    const lw = new FakeListWatcher();
    this.watchers.set(`${resource}/${namespace}/${name}`, lw);
    return lw;
  }
}

interface PendingToken {
  spec: TokenRequestSpec;
  resolve(t: IssuedToken): void;
  reject(e: unknown): void;
}

class FakeIssuer implements TokenIssuer {
  readonly pending: PendingToken[] = [];
  readonly #waiters: ((p: PendingToken) => void)[] = [];
  createServiceAccountToken(spec: TokenRequestSpec): Promise<IssuedToken> {
    return new Promise((resolve, reject) => {
      const p = { spec, resolve, reject };
      const w = this.#waiters.shift();
      if (w) w(p);
      else this.pending.push(p);
    });
  }
  /** The next request (bounded wait). */
  next(ms = 5_000): Promise<PendingToken> {
    const p = this.pending.shift();
    if (p) return Promise.resolve(p);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no TokenRequest within ${ms} ms`)), ms);
      this.#waiters.push((x) => {
        clearTimeout(t);
        resolve(x);
      });
    });
  }
}

class RecordingDispatcher implements PodDispatcher {
  readonly threads = 1;
  readonly sent: PodUpdateMessage[] = [];
  #waiter: (() => void) | undefined;
  send(msg: PodUpdateMessage): void {
    this.sent.push(msg);
    this.#waiter?.();
  }
  /** Resolves once `n` messages were sent in total (bounded). */
  async until(n: number, ms = 5_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.sent.length < n) {
      if (Date.now() > deadline) throw new Error(`only ${this.sent.length} of ${n} messages sent`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, deadline - Date.now());
        this.#waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }
  async stats(): Promise<WorkerThreadStats[]> {
    return [];
  }
  async close(): Promise<void> {}
}

function apiPod(name: string): V1Pod {
  return {
    metadata: { name, namespace: 'a', uid: `uid-${name}`, annotations: { 'kubernetes.io/config.source': 'api' } },
    spec: {
      serviceAccountName: 'sa1',
      volumes: [
        { name: 'cfg', configMap: { name: 'cfg' } },
        { name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 600 } }, { configMap: { name: 'kube-root-ca.crt' } }] } },
      ],
      containers: [{ name: 'c', image: 'busybox', env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 's', key: 'p' } } }] }],
    },
  };
}

function setup() {
  const clock = new SignalClock(1_700_000_000_000);
  const lw = new FakeObjectLW();
  const issuer = new FakeIssuer();
  const inner = new RecordingDispatcher();
  let d: ApiObjectDispatcher | undefined;
  const watches = new ObjectWatches({ lw, clock, random: () => 0, logger: silentLogger, onChange: (r, ns, n) => d?.objectChanged(r, ns, n) });
  const tokens = new TokenManager({ issuer, clock, logger: silentLogger, onChange: (uid) => d?.tokenChanged(uid) });
  d = new ApiObjectDispatcher({ inner, watches, tokens });
  return { clock, lw, issuer, inner, watches, tokens, d };
}

const update = (pod: V1Pod, updateType: PodUpdateMessage['updateType'] = 'create'): PodUpdateMessage => ({ kind: 'update', uid: pod.metadata!.uid!, updateType, pod });

test('one watch per referenced object, shared by pods, dropped with the last one; snapshots follow the watch', async () => {
  const h = setup();
  const p1 = apiPod('p1');
  const p2 = apiPod('p2');
  h.d.send(update(p1));
  h.d.send(update(p2));
  assert.deepEqual([...h.lw.watchers.keys()].sort(), ['configmaps/a/cfg', 'configmaps/a/kube-root-ca.crt', 'secrets/a/s'], 'three objects, one watch each, for two pods');
  assert.equal(h.watches.size, 3);
  const first = h.inner.sent[0]!;
  assert.deepEqual(first.apiObjects?.configMaps.get('cfg'), { state: 'pending' });
  assert.deepEqual(first.apiObjects?.tokens.get(tokenKey('', 600)), { state: 'pending' });

  // The configMap is listed: both pods are resynced with its contents.
  const list = await h.lw.watchers.get('configmaps/a/cfg')!.nextList();
  list.respond({ items: [{ metadata: { name: 'cfg', resourceVersion: '5' }, data: { k: 'v1' } }], resourceVersion: '5' });
  await h.inner.until(4);
  const resyncs = h.inner.sent.slice(2);
  assert.deepEqual(resyncs.map((m) => `${m.uid}:${m.updateType}`), ['uid-p1:sync', 'uid-p2:sync']);
  assert.deepEqual(resyncs[0]!.apiObjects?.configMaps.get('cfg'), { state: 'found', object: { data: { k: 'v1' }, binaryData: {} } });

  // A watch event (an update of the configMap) resyncs them again with the new data.
  const watch = await h.lw.watchers.get('configmaps/a/cfg')!.nextWatch();
  watch.emit({ type: 'MODIFIED', object: { metadata: { name: 'cfg', resourceVersion: '6' }, data: { k: 'v2' } } });
  await h.inner.until(6);
  assert.deepEqual(h.inner.sent[5]!.apiObjects?.configMaps.get('cfg'), { state: 'found', object: { data: { k: 'v2' }, binaryData: {} } });

  // A secret that does not exist: listed empty → missing.
  const sl = await h.lw.watchers.get('secrets/a/s')!.nextList();
  sl.respond({ items: [], resourceVersion: '7' });
  await h.inner.until(8);
  assert.deepEqual(h.inner.sent[7]!.apiObjects?.secrets.get('s'), { state: 'missing' });

  // Killing one pod keeps the watches (the other still refers to them); the second drops them.
  h.d.send({ ...update(p1, 'kill'), kill: { removed: true, reason: 'deleted' } });
  assert.equal(h.watches.size, 3);
  h.d.send({ ...update(p2, 'kill'), kill: { removed: true, reason: 'deleted' } });
  assert.equal(h.watches.size, 0, 'no pod refers to them: every watch closed');
  assert.equal(watch.aborted, true, 'the open watch was aborted');
  assert.equal(h.d.trackedPods, 0);
  assert.equal(h.tokens.size, 0, 'tokens released with their pods');

  // A pod that refers to nothing passes through untouched.
  const plain: V1Pod = { metadata: { name: 'x', namespace: 'a', uid: 'uid-x' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  h.d.send(update(plain));
  assert.equal(h.inner.sent.at(-1)!.apiObjects, undefined);
  await h.watches.close();
  h.tokens.close();
});

test('a projected token is requested bound to the pod, and refreshed at 80% of its lifetime', async () => {
  const h = setup();
  const p = apiPod('tok');
  h.d.send(update(p));
  const req = await h.issuer.next();
  assert.deepEqual(req.spec, { namespace: 'a', serviceAccountName: 'sa1', audience: '', expirationSeconds: 600, pod: { name: 'tok', uid: 'uid-tok' } });
  const issuedAt = h.clock.now();
  req.resolve({ token: 'tok-1', expirationTimestamp: new Date(issuedAt + 600_000).toISOString() });
  await h.inner.until(2);
  assert.deepEqual(h.inner.sent[1]!.apiObjects?.tokens.get(tokenKey('', 600)), { state: 'found', object: { token: 'tok-1', expirationTimestamp: new Date(issuedAt + 600_000).toISOString() } });

  h.clock.step(479_000);
  assert.equal(h.issuer.pending.length, 0, 'not refreshed before 80% of 600 s');
  h.clock.step(1_000);
  const refresh = await h.issuer.next();
  // The refresh fails once: the valid token stays in use and the request is retried after 1 s.
  const retryArmed = h.clock.armed(1_000);
  refresh.reject(new Error('apiserver down'));
  await retryArmed;
  assert.equal(h.inner.sent.length, 2, 'a failed refresh does not take the valid token away');
  h.clock.step(1_000);
  const retry = await h.issuer.next();
  retry.resolve({ token: 'tok-2', expirationTimestamp: new Date(h.clock.now() + 600_000).toISOString() });
  await h.inner.until(3);
  assert.equal(h.inner.sent[2]!.updateType, 'sync');
  const t = h.inner.sent[2]!.apiObjects?.tokens.get(tokenKey('', 600));
  assert.equal(t?.state === 'found' ? t.object.token : '', 'tok-2');

  // A token the server extended to a year (kube-api-access tokens) is still refreshed after a day.
  h.clock.step(480_000);
  const third = await h.issuer.next();
  const sent = h.clock.now();
  third.resolve({ token: 'tok-3', expirationTimestamp: new Date(sent + 365 * 86_400_000).toISOString() });
  await h.inner.until(4);
  assert.equal(h.clock.nextTimerAt(), sent + 86_400_000);
  h.tokens.close();
  await h.watches.close();
});
