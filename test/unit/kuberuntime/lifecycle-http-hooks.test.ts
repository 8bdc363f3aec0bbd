/**
 * httpGet and sleep lifecycle hooks through KubeRuntimeSyncer (the product path: syncPod starts
 * the container and runs postStart; terminatePod runs preStop), against a real local HTTP
 * server, with the kubelet's FailedPostStartHook / FailedPreStopHook events. The request
 * target's rules (host, port, scheme, path) are asserted on httpHookTarget itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Container } from '@kubernetes/client-node';
import { httpHookTarget } from '../../../workers/kuberuntime/lifecycle-http.js';
import { pollUntil, within } from '../../harness/poll.js';
import { container, makeHarness, makePod, summary } from './kuberuntime-harness.js';

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
}

async function server(status: number): Promise<{ port: number; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    res.writeHead(status, { 'content-type': 'text/plain' });
    // A body larger than the bounded read: the hook must not wait for (or keep) all of it.
    res.end('x'.repeat(64 * 1024));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as AddressInfo).port, seen, close: () => new Promise<void>((r) => srv.close(() => r())) };
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = await server(200);
  await s.close();
  return s.port;
}

type Event = [type: string, reason: string, message: string, fieldPath: string | undefined];

test('postStart httpGet: named port, path, headers and the lifecycle User-Agent; any HTTP status is success', async (t) => {
  const srv = await server(500);
  t.after(srv.close);
  const events: Event[] = [];
  const h = makeHarness({ events: (_p, type, reason, message, fieldPath) => void events.push([type, reason, message, fieldPath]) });
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const app: V1Container = container('app', {
    ports: [{ name: 'hooks', containerPort: srv.port }],
    lifecycle: { postStart: { httpGet: { host: '127.0.0.1', port: 'hooks', path: 'started?x=1', httpHeaders: [{ name: 'X-Token', value: 'a' }, { name: 'X-Token', value: 'b' }] } } },
  });
  const pod = makePod({ containers: [app] });
  await h.sync(pod);
  // The status of the next sync reads the runtime after the start.
  assert.equal(summary((await h.sync(pod)).apiStatus), 'Running app=running');
  assert.equal(srv.seen.length, 1);
  assert.equal(srv.seen[0]?.path, '/started?x=1');
  assert.equal(srv.seen[0]?.headers['user-agent'], 'kube-lifecycle/1.31');
  assert.equal(srv.seen[0]?.headers['accept'], '*/*');
  assert.equal(srv.seen[0]?.headers['x-token'], 'a, b');
  assert.deepEqual(events.filter((e) => e[1].startsWith('Failed')), []);
});

test('postStart httpGet to a closed port: PostStartHookError with the kubelet\'s message, a FailedPostStartHook event without it, the container killed', async (t) => {
  const port = await closedPort();
  const events: Event[] = [];
  const h = makeHarness({ events: (_p, type, reason, message, fieldPath) => void events.push([type, reason, message, fieldPath]) });
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app', { lifecycle: { postStart: { httpGet: { host: '127.0.0.1', port, path: '/hook' } } } })] });
  const out = await h.sync(pod);
  assert.equal(summary(out.apiStatus), 'Pending app=waiting:PostStartHookError');
  assert.match(
    out.apiStatus.containerStatuses![0]!.state!.waiting!.message!,
    new RegExp(`^HTTP lifecycle hook \\(/hook\\) for Container "app" in Pod "web_default\\(uid-web\\)" failed - error: Get "http://127\\.0\\.0\\.1:${port}/hook": connect ECONNREFUSED`),
  );
  assert.deepEqual(events.find((e) => e[1] === 'FailedPostStartHook'), ['Warning', 'FailedPostStartHook', 'PostStartHook failed', 'spec.containers{app}']);
  assert.ok(h.take().includes('StopContainer app 30'), 'the container is killed after its failed postStart');
});

test('preStop httpGet runs before StopContainer; a failing one records FailedPreStopHook and the stop goes on', async (t) => {
  const srv = await server(200);
  t.after(srv.close);
  const dead = await closedPort();
  const events: Event[] = [];
  const h = makeHarness({ events: (_p, type, reason, message, fieldPath) => void events.push([type, reason, message, fieldPath]) });
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({
    containers: [
      container('good', { lifecycle: { preStop: { httpGet: { host: '127.0.0.1', port: srv.port, path: '/drain' } } } }),
      container('bad', { lifecycle: { preStop: { httpGet: { host: '127.0.0.1', port: dead, path: '/drain' } } } }),
    ],
  });
  await h.sync(pod);
  h.take();
  const out = await h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 10, signal: new AbortController().signal });
  assert.equal(out.error, undefined);
  assert.deepEqual(srv.seen.map((s) => s.path), ['/drain']);
  const calls = h.take().filter((c) => c.startsWith('Stop'));
  assert.deepEqual(calls.sort(), ['StopContainer bad 10', 'StopContainer good 10', 'StopPodSandbox web']);
  assert.deepEqual(events.filter((e) => e[1] === 'FailedPreStopHook'), [['Warning', 'FailedPreStopHook', 'PreStopHook failed', 'spec.containers{bad}']]);
});

test('sleep actions: postStart sleeps before the container counts as started; preStop sleep consumes the grace period', async (t) => {
  const h = makeHarness();
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const pod = makePod({ containers: [container('app', { lifecycle: { postStart: { sleep: { seconds: 3 } }, preStop: { sleep: { seconds: 5 } } } })] });
  let synced = false;
  const first = h.sync(pod).then((o) => ((synced = true), o));
  // The hook's sleep is armed on the fake clock once the container started (bounded real-time poll).
  await pollUntil(() => (h.rt.calls.includes('StartContainer app') && h.clock.pendingTimers > 0 ? true : undefined), { what: 'the postStart sleep armed', timeoutMs: 5_000, intervalMs: 5 });
  h.clock.step(2_500);
  await new Promise<void>((r) => setImmediate(r));
  assert.equal(synced, false, 'still in postStart after 2.5 s');
  h.clock.step(500);
  await within(first, 'the sync after the postStart sleep');
  assert.equal(summary((await h.sync(pod)).apiStatus), 'Running app=running');
  h.take();
  const done = h.syncer.terminatePod({ pod, runtimeStatus: h.rt.podStatus('uid-web'), gracePeriodSeconds: 20, signal: new AbortController().signal });
  // The preStop sleep and the grace bound are armed; 5 s pass.
  await pollUntil(() => (h.clock.pendingTimers >= 2 ? true : undefined), { what: 'the preStop sleep armed', timeoutMs: 5_000, intervalMs: 5 });
  h.clock.step(5_000);
  await within(done, 'the termination after the preStop sleep');
  assert.ok(h.take().includes('StopContainer app 15'), 'a 5 s preStop leaves 15 s of the 20 s grace');
});

test('httpHookTarget: the kubelet\'s host, port, scheme and path rules; hostile paths refused', () => {
  const c: V1Container = { name: 'app', ports: [{ name: 'web', containerPort: 8080 }] };
  assert.deepEqual(httpHookTarget({ port: 'web', path: 'a' }, c, ['10.1.2.3', 'fd00::1'], '192.168.1.10', false), {
    scheme: 'http', host: '10.1.2.3', port: 8080, path: '/a', headers: { 'user-agent': 'kube-lifecycle/1.31', accept: '*/*' },
  });
  assert.equal((httpHookTarget({ port: '' }, c, ['fd00::1'], undefined, false) as { port: number }).port, 80, 'an empty port is 80');
  assert.equal((httpHookTarget({ port: '9090', scheme: 'HTTPS' }, c, ['fd00::1'], undefined, false) as { scheme: string }).scheme, 'https');
  assert.equal((httpHookTarget({ port: 1 }, c, [], '192.168.1.10', true) as { host: string }).host, '192.168.1.10', 'host network: the node IP');
  assert.deepEqual(httpHookTarget({ port: 1 }, c, [], '192.168.1.10', false), { error: 'failed to find networking container: the pod has no IP' });
  assert.match((httpHookTarget({ port: 'nope' }, c, ['10.0.0.1'], undefined, false) as { error: string }).error, /couldn't find port "nope"/);
  assert.match((httpHookTarget({ port: 70000 }, c, ['10.0.0.1'], undefined, false) as { error: string }).error, /invalid port number/);
  assert.match((httpHookTarget({ port: 80, path: '/a\r\nHost: evil' }, c, ['10.0.0.1'], undefined, false) as { error: string }).error, /invalid path/);
});

test('an HTTPS hook answered in plain HTTP is retried over HTTP without Authorization (LifecycleHTTPFallback)', async (t) => {
  const srv = await server(200);
  t.after(srv.close);
  const events: Event[] = [];
  const h = makeHarness({ events: (_p, type, reason, message, fieldPath) => void events.push([type, reason, message, fieldPath]) });
  t.after(h.cleanup);
  h.rt.addImage('busybox:1');
  const hook = { httpGet: { host: '127.0.0.1', port: srv.port, path: '/tls', scheme: 'HTTPS', httpHeaders: [{ name: 'Authorization', value: 'Bearer s3cret' }] } };
  const pod = makePod({ containers: [container('app', { lifecycle: { postStart: hook } })] });
  await h.sync(pod);
  assert.equal(summary((await h.sync(pod)).apiStatus), 'Running app=running');
  assert.equal(srv.seen.length, 1, 'the plain-HTTP retry reached the server');
  assert.equal(srv.seen[0]?.headers['authorization'], undefined, 'without the Authorization header');
  assert.deepEqual(events.filter((e) => e[1] === 'LifecycleHTTPFallback').map((e) => [e[0], e[2]]), [['Warning', `request to HTTPS lifecycle hook 127.0.0.1:${srv.port} got HTTP response, retry with HTTP succeeded`]]);
});
