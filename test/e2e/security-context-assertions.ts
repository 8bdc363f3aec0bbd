/**
 * Reading a container's identity and confinement from inside it, through ExecSync, the same way
 * on containerd and on the simulated runtime: `id`, `cat /proc/self/status`, a write to `/`, a
 * sysctl under /proc/sys. Parsers and expectations only; the scenarios decide what to expect.
 */
import assert from 'node:assert/strict';
import type { CriClient } from '../../src/shared/cri/cri-client.js';

export interface IdOutput {
  uid: number;
  gid: number;
  groups: number[];
  /** The whole line, e.g. `uid=0(root) gid=0(root) groups=0(root)`. */
  line: string;
}

/** busybox `id`: `uid=N[(name)] gid=N[(name)][ groups=N[(name)],...]`. */
export function parseId(out: string): IdOutput {
  const line = out.trim();
  const m = /^uid=(\d+)(?:\([^)]*\))? gid=(\d+)(?:\([^)]*\))?(?: groups=(.*))?$/.exec(line);
  assert.ok(m, `unexpected id output ${JSON.stringify(out)}`);
  const groups = (m[3] ?? '').split(',').filter((g) => g !== '').map((g) => Number(/^(\d+)/.exec(g)?.[1]));
  return { uid: Number(m[1]), gid: Number(m[2]), groups, line };
}

export interface ProcStatus {
  uid: number[];
  gid: number[];
  groups: number[];
  capEff: bigint;
  capBnd: bigint;
  noNewPrivs: number;
  seccomp: number;
}

export function parseProcStatus(text: string): ProcStatus {
  const field = (k: string): string => {
    const m = new RegExp(`^${k}:\\t?(.*)$`, 'm').exec(text);
    assert.ok(m, `no ${k} in /proc/self/status:\n${text}`);
    return (m[1] ?? '').trim();
  };
  const nums = (k: string): number[] => field(k).split(/\s+/).filter((x) => x !== '').map(Number);
  return {
    uid: nums('Uid'),
    gid: nums('Gid'),
    groups: nums('Groups'),
    capEff: BigInt(`0x${field('CapEff')}`),
    capBnd: BigInt(`0x${field('CapBnd')}`),
    noNewPrivs: Number(field('NoNewPrivs')),
    seccomp: Number(field('Seccomp')),
  };
}

/** Capability bits (linux/capability.h). */
export const CAP = Object.freeze({ CHOWN: 0, NET_ADMIN: 12, SYS_ADMIN: 21, SYS_TIME: 25 });
export const capBit = (n: number): bigint => 1n << BigInt(n);
/** containerd's default set. */
export const DEFAULT_CAPS = 0xa80425fbn;

export async function exec(cri: CriClient, containerId: string, cmd: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const r = await cri.execSync({ containerId, cmd, timeout: 10 });
  return { stdout: r.stdout.toString(), stderr: r.stderr.toString(), code: r.exitCode };
}

export interface Expected {
  uid: number;
  gid: number;
  /** Exactly these supplementary groups (sorted). */
  groups: number[];
  capEff: bigint;
  noNewPrivs: 0 | 1;
  seccomp: 0 | 2;
  /** `touch /x` and `sh -c 'echo a > /x'`: 'ok', or the errno text ("Read-only file system", "Permission denied"). */
  rootWrite: 'ok' | string;
}

/** Reads id, /proc/self/status and a write to / inside the container and checks them against `want`. */
export async function assertProcessSecurity(cri: CriClient, containerId: string, want: Expected, what: string): Promise<void> {
  const id = await exec(cri, containerId, ['id']);
  assert.equal(id.code, 0, `${what}: id: ${id.stderr}`);
  const parsed = parseId(id.stdout);
  assert.deepEqual({ uid: parsed.uid, gid: parsed.gid, groups: parsed.groups }, { uid: want.uid, gid: want.gid, groups: want.groups }, `${what}: id said ${parsed.line}`);

  const st = await exec(cri, containerId, ['cat', '/proc/self/status']);
  assert.equal(st.code, 0, `${what}: cat /proc/self/status: ${st.stderr}`);
  const ps = parseProcStatus(st.stdout);
  assert.deepEqual(ps.uid, [want.uid, want.uid, want.uid, want.uid], `${what}: Uid`);
  assert.deepEqual(ps.gid, [want.gid, want.gid, want.gid, want.gid], `${what}: Gid`);
  assert.deepEqual(ps.groups, want.groups, `${what}: Groups`);
  assert.equal(ps.capEff.toString(16), want.capEff.toString(16), `${what}: CapEff`);
  assert.equal(ps.noNewPrivs, want.noNewPrivs, `${what}: NoNewPrivs`);
  assert.equal(ps.seccomp, want.seccomp, `${what}: Seccomp`);

  const touch = await exec(cri, containerId, ['touch', '/x']);
  const redirect = await exec(cri, containerId, ['sh', '-c', 'echo a > /y']);
  if (want.rootWrite === 'ok') {
    assert.deepEqual([touch.code, redirect.code], [0, 0], `${what}: writes to / should succeed: ${touch.stderr}${redirect.stderr}`);
  } else {
    assert.equal(touch.code, 1, `${what}: touch /x should fail`);
    assert.equal(touch.stderr.trim(), `touch: /x: ${want.rootWrite}`, `${what}: touch /x`);
    assert.notEqual(redirect.code, 0, `${what}: echo a > /y should fail`);
    assert.equal(redirect.stderr.trim(), `sh: can't create /y: ${want.rootWrite}`, `${what}: echo a > /y`);
  }
}
