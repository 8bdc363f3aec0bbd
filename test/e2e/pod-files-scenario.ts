/**
 * The DNS, /etc/hosts and termination-message scenario, shared by the simulated-runtime and the
 * containerd tests (the same manifests, agent flags and assertions on both): static pods through
 * the agent as a user runs it, then what the container itself sees, read through CRI ExecSync
 * (`cat /etc/resolv.conf`, `cat /etc/hosts`), and the termination messages in /pods.
 *
 * The agent runs with --cluster-dns 10.96.0.10, --cluster-domain cluster.local and a
 * --resolv-conf of known content, so every expected file is exact.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { execIn } from './cluster-volumes.js';
import { isRunning, pollUntil, type AgentProcess } from './agent-harness.js';

export const NODE_RESOLV_CONF = 'nameserver 192.0.2.1\nsearch example.org.\noptions timeout:2\n';
const IMAGE = 'docker.io/local/busybox:1';

/** The agent's DNS flags (the resolv.conf file is written by writeScenario). */
export function dnsFlags(dir: string): string[] {
  return ['--cluster-dns', '10.96.0.10', '--cluster-domain', 'cluster.local', '--resolv-conf', path.join(dir, 'node-resolv.conf')];
}

/** The manifests (and the node resolv.conf, outside the manifest dir's *.yaml). */
export function writeScenario(manifestDir: string, flagsDir: string): void {
  fs.writeFileSync(path.join(flagsDir, 'node-resolv.conf'), NODE_RESOLV_CONF);
  const sleeper = `    image: ${IMAGE}\n    imagePullPolicy: IfNotPresent\n    command: ["sleep", "100000"]\n`;
  fs.writeFileSync(path.join(manifestDir, 'dnsnone.yaml'), `apiVersion: v1
kind: Pod
metadata:
  name: dnsnone
  namespace: default
spec:
  terminationGracePeriodSeconds: 1
  hostname: myhost
  subdomain: sub
  dnsPolicy: None
  dnsConfig:
    nameservers: ["10.0.0.53", "10.0.0.54"]
    searches: ["a.example", "b.example"]
    options: [{name: ndots, value: "2"}, {name: edns0}]
  hostAliases:
  - ip: 10.1.2.3
    hostnames: [alias1, alias2.example]
  containers:
  - name: main
${sleeper}`);
  fs.writeFileSync(path.join(manifestDir, 'dnscluster.yaml'), `apiVersion: v1
kind: Pod
metadata:
  name: dnscluster
  namespace: default
spec:
  terminationGracePeriodSeconds: 1
  dnsConfig:
    options: [{name: ndots, value: "3"}, {name: single-request}]
  containers:
  - name: main
${sleeper}`);
  fs.writeFileSync(path.join(manifestDir, 'hostnet.yaml'), `apiVersion: v1
kind: Pod
metadata:
  name: hostnet
  namespace: default
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  hostAliases:
  - ip: 10.4.4.4
    hostnames: [db.example]
  containers:
  - name: main
${sleeper}`);
  fs.writeFileSync(path.join(manifestDir, 'term.yaml'), `apiVersion: v1
kind: Pod
metadata:
  name: term
  namespace: default
spec:
  hostNetwork: true
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: file
    image: ${IMAGE}
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "echo -n bye-from-file > /dev/termination-log; exit 3"]
  - name: custom
    image: ${IMAGE}
    imagePullPolicy: IfNotPresent
    terminationMessagePath: /tmp/why
    command: ["sh", "-c", "echo -n custom-path >> /tmp/why; exit 0"]
  - name: logs
    image: ${IMAGE}
    imagePullPolicy: IfNotPresent
    terminationMessagePolicy: FallbackToLogsOnError
    command: ["sh", "-c", "echo first; echo from-logs; exit 4"]
  - name: big
    image: ${IMAGE}
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "echo -n ${'x'.repeat(6000)}END > /dev/termination-log; exit 1"]
`);
}

function byName(pods: readonly V1Pod[], name: string): V1Pod | undefined {
  return pods.find((p) => p.metadata?.name === name || p.metadata?.name?.startsWith(`${name}-`));
}

/** Runs the assertions against a started agent (the runtime at `endpoint`). */
export async function assertScenario(agent: AgentProcess, endpoint: string): Promise<void> {
  let seen: V1Pod[] = [];
  const pods = await pollUntil(async () => {
    const ps = (seen = await agent.pods());
    const none = byName(ps, 'dnsnone');
    const cluster = byName(ps, 'dnscluster');
    const hostnet = byName(ps, 'hostnet');
    const term = byName(ps, 'term');
    const done = (term?.status?.containerStatuses ?? []).length === 4 && term!.status!.containerStatuses!.every((c) => c.state?.terminated !== undefined);
    return none && cluster && hostnet && term && isRunning(none) && isRunning(cluster) && isRunning(hostnet) && done ? { none, cluster, hostnet, term } : undefined;
  }, { what: 'dns pods running and the termination pod finished', timeoutMs: 120_000, intervalMs: 250 }).catch((err: unknown) => {
    const state = seen.map((p) => ({ name: p.metadata?.name, phase: p.status?.phase, containers: p.status?.containerStatuses?.map((c) => ({ name: c.name, state: c.state })) }));
    const errors = agent.logs.filter((l) => l.includes('"level":"error"')).slice(-5).join('\n');
    throw new Error(`${err instanceof Error ? err.message : String(err)}; pods: ${JSON.stringify(state).slice(0, 4000)}; agent errors: ${errors.slice(0, 4000)}`);
  });

  // dnsPolicy None: exactly the pod's dnsConfig, in containerd's resolv.conf layout.
  const noneUid = pods.none.metadata!.uid!;
  const resolvNone = await execIn(endpoint, noneUid, 'main', ['cat', '/etc/resolv.conf']);
  assert.equal(resolvNone.exitCode, 0, resolvNone.stderr);
  assert.equal(resolvNone.stdout, 'search a.example b.example\nnameserver 10.0.0.53\nnameserver 10.0.0.54\noptions ndots:2 edns0\n');

  // The kubelet-managed hosts file: pod IP with FQDN and hostname, then the aliases.
  const ip = pods.none.status?.podIP ?? '';
  assert.notEqual(ip, '', 'pod-network pod has an IP');
  const hosts = await execIn(endpoint, noneUid, 'main', ['cat', '/etc/hosts']);
  assert.equal(hosts.exitCode, 0, hosts.stderr);
  assert.equal(hosts.stdout, [
    '# Kubernetes-managed hosts file.',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
    `${ip}\tmyhost.sub.default.svc.cluster.local\tmyhost`,
    '',
    '# Entries added by HostAliases.',
    '10.1.2.3\talias1\talias2.example',
    '',
  ].join('\n'));

  // ClusterFirst: the cluster server, cluster searches before the node's, ndots overridden by the pod.
  const resolvCluster = await execIn(endpoint, pods.cluster.metadata!.uid!, 'main', ['cat', '/etc/resolv.conf']);
  assert.equal(resolvCluster.exitCode, 0, resolvCluster.stderr);
  assert.equal(resolvCluster.stdout, 'search default.svc.cluster.local svc.cluster.local cluster.local example.org\nnameserver 10.96.0.10\noptions ndots:3 single-request\n');
  const clusterHosts = await execIn(endpoint, pods.cluster.metadata!.uid!, 'main', ['cat', '/etc/hosts']);
  assert.match(clusterHosts.stdout, new RegExp(`\\n${pods.cluster.status!.podIP!.replace(/\./g, '\\.')}\\tdnscluster-[a-z0-9-]+\\n$`), clusterHosts.stdout);

  // Host network: ClusterFirst is Default there (the node's resolv.conf); the node's hosts file plus the aliases.
  const hostUid = pods.hostnet.metadata!.uid!;
  const resolvHost = await execIn(endpoint, hostUid, 'main', ['cat', '/etc/resolv.conf']);
  assert.equal(resolvHost.stdout, 'search example.org\nnameserver 192.0.2.1\noptions timeout:2\n');
  const hostHosts = await execIn(endpoint, hostUid, 'main', ['cat', '/etc/hosts']);
  assert.equal(hostHosts.stdout, `# Kubernetes-managed hosts file (host network).\n${fs.readFileSync('/etc/hosts', 'utf8')}\n# Entries added by HostAliases.\n10.4.4.4\tdb.example\n`);

  // Termination messages: from the file, from a custom path, and from the log tail on failure.
  const st = new Map((pods.term.status?.containerStatuses ?? []).map((c) => [c.name, c.state?.terminated]));
  assert.equal(st.get('file')?.exitCode, 3);
  assert.equal(st.get('file')?.message, 'bye-from-file');
  assert.equal(st.get('custom')?.exitCode, 0);
  assert.equal(st.get('custom')?.message, 'custom-path');
  assert.equal(st.get('logs')?.exitCode, 4);
  assert.equal(st.get('logs')?.message, 'first\nfrom-logs\n');
  // A 6003-byte file: its last 4096 bytes are read; the pod's 12 KiB / 4 containers keeps at most
  // 3072, and the pod-cache slot (4 KiB for the whole pod status) cuts it further, from the end.
  const big = st.get('big')?.message ?? '';
  assert.match(big, /^x+$/);
  assert.ok(big.length >= 1024 && big.length <= 3072, `big message of ${big.length} bytes`);

  // The files live under the pod's directory in --root-dir.
  const termUid = pods.term.metadata!.uid!;
  assert.ok(fs.existsSync(path.join(agent.root, 'pods', noneUid, 'etc-hosts')), 'hosts file under <root-dir>/pods/<uid>');
  const msgFiles = fs.readdirSync(path.join(agent.root, 'pods', termUid, 'containers', 'file'));
  assert.equal(msgFiles.length, 1);
  assert.match(msgFiles[0]!, /^[0-9a-f]{8}$/);
}

/** Removing the pods removes their files with the pod directory. */
export async function assertCleanup(agent: AgentProcess, manifestDir: string, uids: readonly string[]): Promise<void> {
  for (const f of ['dnsnone.yaml', 'dnscluster.yaml', 'hostnet.yaml', 'term.yaml']) fs.rmSync(path.join(manifestDir, f));
  await pollUntil(async () => {
    const ps = await agent.pods();
    return ps.length === 0 && uids.every((u) => !fs.existsSync(path.join(agent.root, 'pods', u))) ? true : undefined;
  }, { what: 'pods and their directories removed', timeoutMs: 60_000, intervalMs: 250 });
}
