/**
 * The security-context scenario, run by the agent against a runtime (containerd or the simulated
 * one, same manifests, same assertions): static pods asking for a non-root user with groups and
 * fsGroup, dropped and added capabilities with no_new_privs, RuntimeDefault seccomp and a
 * read-only root filesystem, privileged mode, nothing at all, a safe sysctl, a Localhost seccomp
 * profile from `<root-dir>/seccomp`; and the refusals — runAsNonRoot on a root image
 * (CreateContainerConfigError), an unsafe sysctl (SysctlForbidden), a Localhost profile that
 * does not exist (the runtime's CreateContainerError). What each container runs as is read from inside it (ExecSync).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { isRunning, pollUntil, runtimeView, startAgent, type AgentProcess } from './agent-harness.js';
import { assertProcessSecurity, CAP, capBit, DEFAULT_CAPS, exec, parseProcStatus } from './security-context-assertions.js';

const IMAGE = 'docker.io/local/busybox:1';

function manifest(name: string, podSc: string, ctrSc: string): string {
  return [
    'apiVersion: v1', 'kind: Pod', 'metadata:', `  name: ${name}`, '  namespace: default', 'spec:', '  hostNetwork: true',
    '  terminationGracePeriodSeconds: 1', ...(podSc ? [`  securityContext: ${podSc}`] : []), '  containers:', '  - name: main', `    image: ${IMAGE}`,
    '    imagePullPolicy: IfNotPresent', '    command: ["sleep", "100000"]', ...(ctrSc ? [`    securityContext: ${ctrSc}`] : []), '',
  ].join('\n');
}

const MANIFESTS: Record<string, string> = {
  plain: manifest('plain', '', ''),
  nonroot: manifest('nonroot', '{runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000], runAsNonRoot: true}', ''),
  locked: manifest('locked', '{seccompProfile: {type: RuntimeDefault}}', '{capabilities: {drop: [ALL], add: [NET_ADMIN, CHOWN]}, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true}'),
  privileged: manifest('privileged', '', '{privileged: true}'),
  sysctl: manifest('sysctl', '{sysctls: [{name: kernel.shm_rmid_forced, value: "1"}]}', ''),
  strict: manifest('strict', '{runAsNonRoot: true}', ''),
  unsafe: manifest('unsafe', '{sysctls: [{name: kernel.msgmax, value: "65536"}]}', ''),
  localhost: manifest('localhost', '', '{seccompProfile: {type: Localhost, localhostProfile: profiles/deny-acct.json}}'),
  noprofile: manifest('noprofile', '', '{seccompProfile: {type: Localhost, localhostProfile: missing.json}}'),
};
const RUNNING = ['plain', 'nonroot', 'locked', 'privileged', 'sysctl', 'localhost'];
/** A Localhost profile: everything allowed but acct(2). */
const DENY_ACCT = JSON.stringify({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['acct'], action: 'SCMP_ACT_ERRNO' }] });

export interface ScenarioOptions {
  endpoint: string;
  /** Extra agent flags. */
  extraArgs?: readonly string[];
}

export async function runSecurityContextScenario(o: ScenarioOptions): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-secctx-'));
  // The agent's --root-dir, with a Localhost profile under <root-dir>/seccomp.
  const rootDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-secctx-root-'));
  fs.mkdirSync(path.join(rootDir, 'seccomp', 'profiles'), { recursive: true });
  fs.writeFileSync(path.join(rootDir, 'seccomp', 'profiles', 'deny-acct.json'), DENY_ACCT);
  let agent: AgentProcess | undefined;
  const cri = new CriClient({ endpoint: o.endpoint, timeoutMs: 30_000 });
  try {
    for (const [name, m] of Object.entries(MANIFESTS)) fs.writeFileSync(path.join(dir, `${name}.yaml`), m);
    agent = await startAgent({ endpoint: o.endpoint, manifestDir: dir, workers: 1, rootDir, extraArgs: o.extraArgs ?? [] });
    const byName = (ps: V1Pod[], n: string): V1Pod | undefined => ps.find((p) => p.metadata?.name === `${n}-node-e2e`);
    let last: V1Pod[] = [];
    const pods = await pollUntil(async () => {
      const ps = (last = await agent!.pods());
      const ready = RUNNING.every((n) => { const p = byName(ps, n); return p !== undefined && isRunning(p); });
      const strict = byName(ps, 'strict')?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError';
      const unsafe = byName(ps, 'unsafe')?.status?.phase === 'Failed';
      const noprofile = byName(ps, 'noprofile')?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerError';
      return ready && strict && unsafe && noprofile ? ps : undefined;
    }, { what: 'the security-context pods running or refused', timeoutMs: 120_000, intervalMs: 250 }).catch((err: unknown) => {
      const states = last.map((p) => `${p.metadata?.name}: ${p.status?.phase} ${JSON.stringify(p.status?.containerStatuses?.[0]?.state ?? {})}`);
      const logs = agent?.logs.filter((l) => l.includes('"level":"error"') && !l.includes('runtime not ready')).slice(-10) ?? [];
      throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen:\n${states.join('\n')}\nagent errors:\n${logs.join('\n')}`);
    });

    // Refusals, as the kubelet words them.
    const strict = byName(pods, 'strict')!.status!.containerStatuses![0]!.state!.waiting!;
    assert.equal(strict.message, `container has runAsNonRoot and image will run as root (pod: "strict-node-e2e_default(${byName(pods, 'strict')!.metadata!.uid})", container: main)`);
    const unsafe = byName(pods, 'unsafe')!.status!;
    assert.deepEqual([unsafe.reason, unsafe.message], ['SysctlForbidden', 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted']);

    // A Localhost profile that is not there: the runtime refuses to create the container.
    const missing = byName(pods, 'noprofile')!.status!.containerStatuses![0]!.state!.waiting!.message ?? '';
    assert.ok(missing.includes(`cannot load seccomp profile "${path.join(rootDir, 'seccomp', 'missing.json')}"`), missing);

    const view = await runtimeView(o.endpoint);
    const ctr = (n: string): string => {
      const c = view.get(byName(pods, n)!.metadata!.uid!)?.containers.find((x) => x.name === 'main' && x.state === 'CONTAINER_RUNNING');
      assert.ok(c, `a running container for ${n}`);
      return c.id;
    };
    assert.equal(view.get(byName(pods, 'unsafe')!.metadata!.uid!), undefined, 'a refused pod gets no sandbox');

    await assertProcessSecurity(cri, ctr('plain'), { uid: 0, gid: 0, groups: [0], capEff: DEFAULT_CAPS, noNewPrivs: 0, seccomp: 0, rootWrite: 'ok' }, 'plain');
    await assertProcessSecurity(cri, ctr('nonroot'), { uid: 1000, gid: 3000, groups: [2000, 3000, 4000], capEff: 0n, noNewPrivs: 0, seccomp: 0, rootWrite: 'Permission denied' }, 'nonroot');
    await assertProcessSecurity(cri, ctr('locked'), { uid: 0, gid: 0, groups: [0], capEff: capBit(CAP.NET_ADMIN) | capBit(CAP.CHOWN), noNewPrivs: 1, seccomp: 2, rootWrite: 'Read-only file system' }, 'locked');
    const tmp = await exec(cri, ctr('nonroot'), ['touch', '/tmp/ok']);
    assert.equal(tmp.code, 0, `a non-root user writes /tmp: ${tmp.stderr}`);

    // Privileged: every capability the runtime holds, no seccomp filter.
    const priv = parseProcStatus((await exec(cri, ctr('privileged'), ['cat', '/proc/self/status'])).stdout);
    assert.equal(priv.capEff, priv.capBnd, 'privileged: effective = bounding');
    assert.ok((priv.capEff & capBit(CAP.SYS_ADMIN)) !== 0n && (priv.capEff & DEFAULT_CAPS) === DEFAULT_CAPS, `privileged CapEff ${priv.capEff.toString(16)}`);
    assert.equal(priv.seccomp, 0);

    // The Localhost profile from <root-dir>/seccomp is loaded: a filter is installed.
    const local = parseProcStatus((await exec(cri, ctr('localhost'), ['cat', '/proc/self/status'])).stdout);
    assert.deepEqual([local.seccomp, local.capEff.toString(16)], [2, DEFAULT_CAPS.toString(16)]);

    const sysctl = await exec(cri, ctr('sysctl'), ['cat', '/proc/sys/kernel/shm_rmid_forced']);
    assert.deepEqual([sysctl.code, sysctl.stdout], [0, '1\n'], `the safe sysctl is set in the pod: ${sysctl.stderr}`);

    // What the runtime says it applied (verbose status): the OCI spec's user and flags.
    const info = await cri.containerStatus(ctr('locked'), { verbose: true });
    const spec = (JSON.parse(info.info['info'] ?? '{}') as { runtimeSpec?: { process?: { noNewPrivileges?: boolean; user?: { uid?: number } }; root?: { readonly?: boolean } } }).runtimeSpec;
    assert.deepEqual([spec?.process?.user?.uid ?? 0, spec?.process?.noNewPrivileges, spec?.root?.readonly], [0, true, true], 'verbose info: user, no_new_privs, readonly rootfs');
  } finally {
    cri.close();
    await agent?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(rootDir, { recursive: true, force: true });
  }
}
