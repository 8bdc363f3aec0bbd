/**
 * Service links on the main thread: the kubelet's FromServices / getServiceEnvVarMap (the
 * expected variables are those of the kubelet's envvars_test), the node's one Service watch
 * (list, watch events, hostile objects) and the dispatcher decorator that attaches the variables
 * to pod updates (pending until the first list, then the waiting pods resync; static pods do not
 * wait).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import type { PodListWatcher, ServiceListWatchers } from '../../../src/main/apiserver/api-roles.js';
import type { PodDispatcher } from '../../../src/main/dispatch/pod-dispatcher.js';
import { fromServices, serviceEnvVars, type ServiceInfo, type ServiceLister } from '../../../src/main/config-objects/service-env.js';
import { ServiceEnvDispatcher } from '../../../src/main/config-objects/service-env-dispatcher.js';
import { decodeService, MAX_SERVICE_PORTS, ServiceWatch } from '../../../src/main/config-objects/service-watch.js';
import type { PodUpdateMessage, WorkerThreadStats } from '../../../src/shared/protocol/pod-worker-protocol.js';
import { SignalClock } from '../node-status/signal-clock.js';
import { FakeListWatcher } from '../apiserver/fake-list-watcher.js';

const svc = (namespace: string, name: string, clusterIP: string, ports: Array<{ name?: string; port: number; protocol?: string }>): ServiceInfo => ({
  namespace, name, clusterIP, ports: ports.map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? '' })),
});

const kv = (vars: ReadonlyArray<{ key: string; value: string }>): string[] => vars.map((v) => `${v.key}=${v.value}`);

test('fromServices: the kubelet envvars_test services and variables', () => {
  const out = fromServices([
    svc('ns', 'foo-bar', '1.2.3.4', [{ port: 8080, protocol: 'TCP' }]),
    svc('ns', 'abc-123', '5.6.7.8', [{ name: 'u-d-p', port: 8081, protocol: 'UDP' }, { name: 't-c-p', port: 8081, protocol: 'TCP' }]),
    svc('ns', 'q-u-u-x', '9.8.7.6', [{ port: 8082, protocol: 'TCP' }, { name: '8083', port: 8083, protocol: 'TCP' }]),
    svc('ns', 'svrc-clusterip-none', 'None', [{ port: 8082, protocol: 'TCP' }]),
    svc('ns', 'svrc-clusterip-empty', '', [{ port: 8082, protocol: 'TCP' }]),
    svc('ns', 'super-ipv6', '2001:DB8::', [{ name: 'u-d-p', port: 8084, protocol: 'UDP' }, { name: 't-c-p', port: 8084, protocol: 'TCP' }]),
    svc('ns', 'no-proto', '10.0.0.9', [{ port: 53 }]),
  ]);
  assert.deepEqual(kv(out), [
    'FOO_BAR_SERVICE_HOST=1.2.3.4',
    'FOO_BAR_SERVICE_PORT=8080',
    'FOO_BAR_PORT=tcp://1.2.3.4:8080',
    'FOO_BAR_PORT_8080_TCP=tcp://1.2.3.4:8080',
    'FOO_BAR_PORT_8080_TCP_PROTO=tcp',
    'FOO_BAR_PORT_8080_TCP_PORT=8080',
    'FOO_BAR_PORT_8080_TCP_ADDR=1.2.3.4',
    'ABC_123_SERVICE_HOST=5.6.7.8',
    'ABC_123_SERVICE_PORT=8081',
    'ABC_123_SERVICE_PORT_U_D_P=8081',
    'ABC_123_SERVICE_PORT_T_C_P=8081',
    'ABC_123_PORT=udp://5.6.7.8:8081',
    'ABC_123_PORT_8081_UDP=udp://5.6.7.8:8081',
    'ABC_123_PORT_8081_UDP_PROTO=udp',
    'ABC_123_PORT_8081_UDP_PORT=8081',
    'ABC_123_PORT_8081_UDP_ADDR=5.6.7.8',
    'ABC_123_PORT_8081_TCP=tcp://5.6.7.8:8081',
    'ABC_123_PORT_8081_TCP_PROTO=tcp',
    'ABC_123_PORT_8081_TCP_PORT=8081',
    'ABC_123_PORT_8081_TCP_ADDR=5.6.7.8',
    'Q_U_U_X_SERVICE_HOST=9.8.7.6',
    'Q_U_U_X_SERVICE_PORT=8082',
    'Q_U_U_X_SERVICE_PORT_8083=8083',
    'Q_U_U_X_PORT=tcp://9.8.7.6:8082',
    'Q_U_U_X_PORT_8082_TCP=tcp://9.8.7.6:8082',
    'Q_U_U_X_PORT_8082_TCP_PROTO=tcp',
    'Q_U_U_X_PORT_8082_TCP_PORT=8082',
    'Q_U_U_X_PORT_8082_TCP_ADDR=9.8.7.6',
    'Q_U_U_X_PORT_8083_TCP=tcp://9.8.7.6:8083',
    'Q_U_U_X_PORT_8083_TCP_PROTO=tcp',
    'Q_U_U_X_PORT_8083_TCP_PORT=8083',
    'Q_U_U_X_PORT_8083_TCP_ADDR=9.8.7.6',
    'SUPER_IPV6_SERVICE_HOST=2001:DB8::',
    'SUPER_IPV6_SERVICE_PORT=8084',
    'SUPER_IPV6_SERVICE_PORT_U_D_P=8084',
    'SUPER_IPV6_SERVICE_PORT_T_C_P=8084',
    'SUPER_IPV6_PORT=udp://[2001:DB8::]:8084',
    'SUPER_IPV6_PORT_8084_UDP=udp://[2001:DB8::]:8084',
    'SUPER_IPV6_PORT_8084_UDP_PROTO=udp',
    'SUPER_IPV6_PORT_8084_UDP_PORT=8084',
    'SUPER_IPV6_PORT_8084_UDP_ADDR=2001:DB8::',
    'SUPER_IPV6_PORT_8084_TCP=tcp://[2001:DB8::]:8084',
    'SUPER_IPV6_PORT_8084_TCP_PROTO=tcp',
    'SUPER_IPV6_PORT_8084_TCP_PORT=8084',
    'SUPER_IPV6_PORT_8084_TCP_ADDR=2001:DB8::',
    // No protocol: TCP.
    'NO_PROTO_SERVICE_HOST=10.0.0.9',
    'NO_PROTO_SERVICE_PORT=53',
    'NO_PROTO_PORT=tcp://10.0.0.9:53',
    'NO_PROTO_PORT_53_TCP=tcp://10.0.0.9:53',
    'NO_PROTO_PORT_53_TCP_PROTO=tcp',
    'NO_PROTO_PORT_53_TCP_PORT=53',
    'NO_PROTO_PORT_53_TCP_ADDR=10.0.0.9',
  ]);
  assert.deepEqual(fromServices([svc('ns', 'portless', '10.0.0.1', [])]), [], 'a service without ports has no variables (the kubelet would index Ports[0])');
});

class StaticLister implements ServiceLister {
  constructor(readonly all: ServiceInfo[]) {}
  servicesIn(namespace: string): Iterable<ServiceInfo> {
    return this.all.filter((s) => s.namespace === namespace);
  }
}

test('getServiceEnvVarMap: the master service always, the namespace with links, headless skipped, namespace wins a name clash', () => {
  const lister = new StaticLister([
    svc('default', 'kubernetes', '10.96.0.1', [{ name: 'https', port: 443, protocol: 'TCP' }]),
    svc('default', 'other-default', '10.96.0.2', [{ port: 80 }]),
    svc('app', 'web', '10.96.1.1', [{ port: 80 }]),
    svc('app', 'headless', 'None', [{ port: 80 }]),
    svc('elsewhere', 'db', '10.96.2.2', [{ port: 5432 }]),
  ]);
  const names = (ns: string, links: boolean): string[] => serviceEnvVars(lister, ns, links).vars.map((v) => v.key).filter((k) => k.endsWith('_SERVICE_HOST'));
  assert.deepEqual(names('app', true), ['KUBERNETES_SERVICE_HOST', 'WEB_SERVICE_HOST']);
  assert.deepEqual(names('app', false), ['KUBERNETES_SERVICE_HOST'], 'enableServiceLinks false: the master service only');
  assert.deepEqual(names('default', true), ['KUBERNETES_SERVICE_HOST', 'OTHER_DEFAULT_SERVICE_HOST']);
  assert.deepEqual(names('default', false), ['KUBERNETES_SERVICE_HOST']);
  assert.deepEqual(names('empty', true), ['KUBERNETES_SERVICE_HOST']);
  const all = serviceEnvVars(lister, 'app', true).vars;
  assert.ok(all.some((v) => v.key === 'KUBERNETES_SERVICE_PORT_HTTPS' && v.value === '443'));
  assert.ok(all.some((v) => v.key === 'KUBERNETES_PORT' && v.value === 'tcp://10.96.0.1:443'));

  // A service named "kubernetes" in the pod's namespace replaces the master one (the kubelet's map).
  const clash = new StaticLister([svc('default', 'kubernetes', '10.96.0.1', [{ port: 443 }]), svc('app', 'kubernetes', '10.1.1.1', [{ port: 8443 }])]);
  const v = serviceEnvVars(clash, 'app', true).vars;
  assert.deepEqual(v.filter((x) => x.key === 'KUBERNETES_SERVICE_HOST'), [{ key: 'KUBERNETES_SERVICE_HOST', value: '10.1.1.1' }]);
  assert.equal(serviceEnvVars(clash, 'app', false).vars.find((x) => x.key === 'KUBERNETES_SERVICE_HOST')?.value, '10.96.0.1');
  // No master service in the cluster: nothing.
  assert.deepEqual(serviceEnvVars(new StaticLister([]), 'app', true).vars, []);
});

test('decodeService: what the API server validates, else left out with the field named', () => {
  const ok = decodeService({ metadata: { name: 'web', namespace: 'app' }, spec: { clusterIP: '10.0.0.1', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
  assert.deepEqual(ok, { ok: true, service: { namespace: 'app', name: 'web', clusterIP: '10.0.0.1', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
  assert.deepEqual(decodeService({ metadata: { name: 'ext', namespace: 'app' }, spec: { type: 'ExternalName', externalName: 'x.example' } }), { ok: true, service: { namespace: 'app', name: 'ext', clusterIP: '', ports: [] } });
  const why = (raw: unknown): string => {
    const d = decodeService(raw);
    return d.ok ? 'ok' : d.why;
  };
  const base = { metadata: { name: 'web', namespace: 'app' }, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80 }] } };
  assert.equal(why(null), 'not an object');
  assert.equal(why({ ...base, metadata: { name: '../etc', namespace: 'app' } }), 'metadata.name: not a DNS label');
  assert.equal(why({ ...base, metadata: { name: 'a'.repeat(64), namespace: 'app' } }), 'metadata.name: not a DNS label');
  assert.equal(why({ ...base, metadata: { name: 'web', namespace: 7 } }), 'metadata.namespace: not a DNS label');
  assert.equal(why({ ...base, spec: { clusterIP: '$(rm -rf /)', ports: [{ port: 80 }] } }), 'spec.clusterIP: not an IP address');
  assert.equal(why({ ...base, spec: { clusterIP: '10.0.0.1', ports: [{ port: 0 }] } }), 'spec.ports[0].port: not in [1, 65535]');
  assert.equal(why({ ...base, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80 }, { port: 1.5 }] } }), 'spec.ports[1].port: not in [1, 65535]');
  assert.equal(why({ ...base, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80, protocol: 'tcp; echo' }] } }), 'spec.ports[0].protocol: not TCP, UDP or SCTP');
  assert.equal(why({ ...base, spec: { clusterIP: '10.0.0.1', ports: [{ port: 80, name: 'A=B' }] } }), 'spec.ports[0].name: not a DNS label');
  assert.equal(why({ ...base, spec: { clusterIP: '10.0.0.1', ports: 'many' } }), 'spec.ports: not a list');
  assert.equal(why({ ...base, spec: { clusterIP: '10.0.0.1', ports: Array.from({ length: MAX_SERVICE_PORTS + 1 }, (_, i) => ({ port: i + 1 })) } }), `spec.ports: more than ${MAX_SERVICE_PORTS}`);
});

class FakeServiceLW implements ServiceListWatchers {
  readonly lw = new FakeListWatcher();
  calls = 0;
  serviceListWatcher(): PodListWatcher {
    this.calls++;
    return this.lw;
  }
}

const rawSvc = (namespace: string, name: string, clusterIP: string, port: number, rv = '1'): Record<string, unknown> => ({
  metadata: { name, namespace, resourceVersion: rv }, spec: { clusterIP, ports: [{ port, protocol: 'TCP' }] },
});

test('ServiceWatch: one list+watch of every service; synced at the first list; events; a bad object drops the old version', async () => {
  const clock = new SignalClock(1_700_000_000_000);
  const lw = new FakeServiceLW();
  let changes = 0;
  const w = new ServiceWatch({ lw, clock, random: () => 0, logger: silentLogger, onChange: () => changes++ });
  assert.equal(lw.calls, 1, 'one list-watcher for the whole node');
  w.start();
  assert.equal(w.synced, false);
  const list = await lw.lw.nextList();
  list.respond({ items: [rawSvc('default', 'kubernetes', '10.96.0.1', 443), rawSvc('app', 'web', '10.96.1.1', 80), { metadata: { name: 'bad', namespace: 'app' }, spec: { clusterIP: 'x' } }], resourceVersion: '10' });
  const watch = await lw.lw.nextWatch();
  assert.equal(watch.rv, '10');
  assert.equal(w.synced, true);
  assert.equal(changes, 1, 'the first list is a change');
  assert.equal(w.size, 2, 'the malformed service is left out');
  assert.deepEqual([...w.servicesIn('app')].map((s) => s.name), ['web']);

  watch.emit({ type: 'ADDED', object: rawSvc('app', 'db', '10.96.1.2', 5432, '11') });
  watch.emit({ type: 'MODIFIED', object: rawSvc('app', 'web', '10.96.1.9', 8080, '12') });
  clock.step(50);
  assert.equal(changes, 2, 'one change per batch of events');
  assert.deepEqual([...w.servicesIn('app')].map((s) => `${s.name}:${s.clusterIP}:${s.ports[0]?.port}`).sort(), ['db:10.96.1.2:5432', 'web:10.96.1.9:8080']);

  watch.emit({ type: 'MODIFIED', object: { metadata: { name: 'db', namespace: 'app', resourceVersion: '13' }, spec: { clusterIP: '10.96.1.2', ports: [{ port: 99999 }] } } });
  watch.emit({ type: 'DELETED', object: rawSvc('app', 'web', '10.96.1.9', 8080, '14') });
  clock.step(50);
  assert.equal(changes, 3);
  assert.deepEqual([...w.servicesIn('app')], [], 'a version that fails validation removes the service; DELETED removes it');
  watch.emit({ type: 'DELETED', object: rawSvc('app', 'gone', '10.96.1.3', 1, '15') });
  clock.step(50);
  assert.equal(changes, 3, 'deleting an unknown service changes nothing');
  await w.close();
  assert.equal(watch.aborted, true);
});

class RecordingDispatcher implements PodDispatcher {
  readonly threads = 1;
  readonly sent: PodUpdateMessage[] = [];
  send(msg: PodUpdateMessage): void {
    this.sent.push(msg);
  }
  async stats(): Promise<WorkerThreadStats[]> {
    return [];
  }
  async close(): Promise<void> {}
}

class MutableLister extends StaticLister {
  synced = false;
}

function pod(name: string, o: { namespace?: string; source?: string; links?: boolean } = {}): V1Pod {
  return {
    metadata: { name, namespace: o.namespace ?? 'app', uid: `uid-${name}`, annotations: { 'kubernetes.io/config.source': o.source ?? 'api' } },
    spec: { ...(o.links !== undefined ? { enableServiceLinks: o.links } : {}), containers: [{ name: 'c', image: 'busybox' }] },
  };
}

const upd = (p: V1Pod, updateType: PodUpdateMessage['updateType'] = 'create'): PodUpdateMessage => ({ kind: 'update', uid: p.metadata!.uid!, updateType, pod: p });

test('ServiceEnvDispatcher: pending until the first list, then the waiting pods resync; static pods do not wait; kills pass', () => {
  const services = new MutableLister([svc('default', 'kubernetes', '10.96.0.1', [{ port: 443 }]), svc('app', 'web', '10.96.1.1', [{ port: 80 }])]);
  const inner = new RecordingDispatcher();
  const d = new ServiceEnvDispatcher({ inner, services });
  const a = pod('a');
  const b = pod('b');
  d.send(upd(a));
  d.send({ ...upd(b), apiObjects: { configMaps: new Map([['cm', { state: 'pending' }]]), secrets: new Map(), tokens: new Map() } });
  d.send(upd(pod('static', { source: 'file' })));
  assert.deepEqual(inner.sent.map((m) => `${m.uid}:${m.apiObjects?.serviceEnv?.state}`), ['uid-a:pending', 'uid-b:pending', 'uid-static:found']);
  const st = inner.sent[2]!.apiObjects?.serviceEnv;
  assert.ok(st?.state === 'found' && st.object.vars.some((v) => v.key === 'KUBERNETES_SERVICE_HOST'), 'a static pod gets what is known now');
  assert.deepEqual(inner.sent[1]!.apiObjects?.configMaps.get('cm'), { state: 'pending' }, 'the other objects of the update are kept');
  assert.equal(d.waitingPods, 2);

  // b is killed before the services are listed: it is not resynced.
  d.send({ ...upd(b, 'kill'), kill: { removed: true, reason: 'deleted' } });
  assert.equal(inner.sent.at(-1)!.apiObjects, undefined, 'a kill carries nothing');
  services.synced = true;
  d.servicesChanged();
  const resync = inner.sent.slice(4);
  assert.deepEqual(resync.map((m) => `${m.uid}:${m.updateType}:${m.apiObjects?.serviceEnv?.state}`), ['uid-a:sync:found']);
  const vars = resync[0]!.apiObjects?.serviceEnv?.state === 'found' ? resync[0]!.apiObjects.serviceEnv.object.vars : [];
  assert.deepEqual(vars.filter((v) => v.key.endsWith('_SERVICE_HOST')).map((v) => v.key), ['KUBERNETES_SERVICE_HOST', 'WEB_SERVICE_HOST']);
  assert.equal(d.waitingPods, 0);

  // Later changes resync nobody; the next update of a pod carries the new variables.
  services.all.push(svc('app', 'db', '10.96.1.2', [{ port: 5432 }]));
  const before = inner.sent.length;
  d.servicesChanged();
  assert.equal(inner.sent.length, before, 'no resync for a service change');
  d.send(upd(a, 'sync'));
  const last = inner.sent.at(-1)!.apiObjects?.serviceEnv;
  assert.ok(last?.state === 'found' && last.object.vars.some((v) => v.key === 'DB_SERVICE_HOST'));
  // enableServiceLinks false: the master service only.
  d.send(upd(pod('nolinks', { links: false })));
  const nl = inner.sent.at(-1)!.apiObjects?.serviceEnv;
  assert.ok(nl?.state === 'found');
  assert.deepEqual(nl.object.vars.filter((v) => v.key.endsWith('_SERVICE_HOST')).map((v) => v.key), ['KUBERNETES_SERVICE_HOST']);
});
