import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpSource } from '../../../src/main/config/source-http.js';
import { PodConfig } from '../../../src/main/config/pod-config.js';
import type { PodUpdate } from '../../../src/shared/manifest/pod-update.js';
import type { ConfigError } from '../../../src/shared/manifest/config-errors.js';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';

interface Reply {
  status: number;
  body: string;
  /** Never answer (to exercise the timeout). */
  hang?: boolean;
}

async function server(): Promise<{ url: string; reply: Reply; requests: http.IncomingHttpHeaders[]; close(): Promise<void> }> {
  const state = { reply: { status: 200, body: '' } as Reply, requests: [] as http.IncomingHttpHeaders[] };
  const hung: http.ServerResponse[] = [];
  const srv = http.createServer((req, res) => {
    state.requests.push(req.headers);
    if (state.reply.hang) return void hung.push(res);
    res.writeHead(state.reply.status, { 'content-type': 'application/yaml' });
    res.end(state.reply.body);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/pods`,
    get reply() {
      return state.reply;
    },
    set reply(r: Reply) {
      state.reply = r;
    },
    requests: state.requests,
    close: () => {
      for (const h of hung) h.destroy();
      srv.closeAllConnections();
      return new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

const pod = (name: string, image = 'nginx:1'): object => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image }] } });
const summary = (u: PodUpdate | undefined): string => `${u?.op}:${u?.pods.map((p) => p.metadata?.name).join(',')}`;

async function rig(opts: { maxBytes?: number } = {}) {
  const srv = await server();
  const clock = new FakeClock();
  const cfg = new PodConfig({ clock, logger: silentLogger });
  const errors: ConfigError[] = [];
  const src = createHttpSource({
    url: srv.url, nodeName: 'n1', sink: cfg.channel('http'), clock, logger: silentLogger, onError: (e) => errors.push(e),
    headers: { 'x-test': 'yes' }, timeoutMs: 5_000, ...(opts.maxBytes ? { maxBytes: opts.maxBytes } : {}),
  });
  return { srv, clock, cfg, errors, src, close: async () => { await src.close(); cfg.close(); await srv.close(); } };
}

test('single pod, PodList and multi-document YAML; unchanged body → nothing new; errors keep the previous pods', async () => {
  const r = await rig();
  try {
    r.srv.reply = { status: 200, body: JSON.stringify(pod('web')) };
    await r.src.pollNow();
    assert.equal(r.cfg.sourcesReady(), true);
    const add = r.cfg.tryNext();
    assert.equal(summary(add), 'ADD:web-n1');
    assert.equal(add?.pods[0]?.metadata?.annotations?.['kubernetes.io/config.source'], 'http');
    assert.equal(r.srv.requests[0]?.['x-test'], 'yes');

    await r.src.pollNow(); // same body
    assert.equal(r.cfg.queued, 0);

    r.srv.reply = { status: 200, body: JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [pod('web'), pod('api')] }) };
    await r.src.pollNow();
    assert.equal(summary(r.cfg.tryNext()), 'ADD:api-n1'); // web is the same pod from the same URL: same uid
    assert.equal(r.cfg.queued, 0);

    for (const blip of [{ status: 500, body: 'oops' }, { status: 404, body: '' }]) {
      r.srv.reply = blip;
      await r.src.pollNow();
    }
    await r.srv.close(); // connection refused
    await r.src.pollNow();
    assert.equal(r.cfg.queued, 0, 'server errors never drop pods');
    assert.deepEqual(r.errors.map((e) => e.code), ['ERR_MANIFEST_FETCH', 'ERR_MANIFEST_FETCH', 'ERR_MANIFEST_FETCH']);
    assert.match(r.errors[0]?.message ?? '', /\/pods: 500 Internal Server Error$/);
    assert.equal(r.cfg.mergedState().length, 2);
  } finally {
    await r.close();
  }
});

test('invalid content is reported with URL and field, the last valid pods stay; YAML multi-doc replaces them', async () => {
  const r = await rig();
  try {
    r.srv.reply = { status: 200, body: JSON.stringify(pod('web')) };
    await r.src.pollNow();
    r.cfg.tryNext();
    r.srv.reply = { status: 200, body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'c' }] } }) };
    await r.src.pollNow();
    assert.equal(r.cfg.queued, 0);
    assert.equal(r.errors[0]?.code, 'ERR_MANIFEST_INVALID');
    assert.equal(r.errors[0]?.message, `${r.srv.url}: spec.containers[0].image: Required value`);

    r.srv.reply = { status: 200, body: `apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: "x:1"}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c, image: "x:1"}]}\n` };
    await r.src.pollNow();
    assert.deepEqual([summary(r.cfg.tryNext()), summary(r.cfg.tryNext())], ['REMOVE:web-n1', 'ADD:a-n1,b-n1']);

    r.srv.reply = { status: 200, body: '' }; // the kubelet treats an empty 200 as "no pods"
    await r.src.pollNow();
    assert.equal(summary(r.cfg.tryNext()), 'REMOVE:a-n1,b-n1');
  } finally {
    await r.close();
  }
});

test('polls on the injected clock; request timeout and size limit are enforced', async () => {
  const r = await rig({ maxBytes: 1024 });
  try {
    r.srv.reply = { status: 200, body: JSON.stringify(pod('web')) };
    r.src.start();
    assert.equal(summary(await r.cfg.next()), 'ADD:web-n1');
    r.srv.reply = { status: 200, body: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pod('web'), pod('late')] }) };
    await r.clock.runUntil(() => r.cfg.queued > 0, { stepMs: 1_000, maxMs: 25_000 });
    assert.equal(summary(r.cfg.tryNext()), 'ADD:late-n1');
    assert.equal(r.srv.requests.length, 2);

    r.srv.reply = { status: 200, body: '', hang: true };
    const polling = r.src.pollNow();
    r.clock.step(5_000);
    await polling;
    assert.equal(r.errors.at(-1)?.code, 'ERR_MANIFEST_FETCH');
    assert.match(r.errors.at(-1)?.message ?? '', /timed out/);

    r.srv.reply = { status: 200, body: 'x'.repeat(4096) };
    await r.src.pollNow();
    assert.equal(r.errors.at(-1)?.code, 'ERR_MANIFEST_TOO_LARGE');
    assert.equal(r.cfg.mergedState().length, 2);
  } finally {
    await r.close();
  }
});
