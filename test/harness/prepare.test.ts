/**
 * prepare.ts against a fake machine: what it installs, and that it leaves no distro daemon it
 * installed running, enabled (or, for Prometheus, startable: masked).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ensurePackages, missingPackages, PrepareError, type PrepareHost, type Requirement } from './apt-packages.js';
import { CONTAINERD_REQUIREMENTS, REQUIREMENTS } from './prepare.js';

interface FakeMachine extends PrepareHost {
  readonly commands: string[];
  readonly killed: number[];
}

/** A machine where `installed` packages (and all their paths) are present; apt installs anything. */
function fakeMachine(o: { installed: string[]; root?: boolean; systemd?: boolean; daemons?: Record<string, number[]>; aptFails?: boolean }): FakeMachine {
  const installed = new Set(o.installed);
  const files = new Set<string>(['/usr/bin/systemctl']);
  const addFiles = (pkgs: Iterable<string>): void => {
    for (const r of REQUIREMENTS) if ([...pkgs].includes(r.pkg)) for (const p of r.paths) files.add(p);
  };
  addFiles(installed);
  const commands: string[] = [];
  const killed: number[] = [];
  return {
    commands,
    killed,
    isRoot: () => o.root ?? true,
    installedPackages: (pkgs) => new Set(pkgs.filter((p) => installed.has(p))),
    exists: (p) => files.has(p),
    run(cmd, args) {
      commands.push([cmd, ...args.filter((a) => a !== '-o' && !a.startsWith('DPkg::'))].join(' '));
      if (cmd === 'apt-get' && args.includes('install')) {
        if (o.aptFails) return 100;
        const pkgs = args.slice(args.indexOf('--no-install-recommends') + 1);
        for (const p of pkgs) installed.add(p);
        addFiles(pkgs);
      }
      return 0;
    },
    systemdIsInit: () => o.systemd ?? true,
    distroDaemonPids: (pkg) => o.daemons?.[pkg] ?? [],
    kill: (pid) => void killed.push(pid),
    log: () => undefined,
  };
}

const ALL = REQUIREMENTS.map((r: Requirement) => r.pkg);

describe('prepare', () => {
  it('does nothing (no apt) when everything is present', () => {
    const m = fakeMachine({ installed: ALL });
    ensurePackages(REQUIREMENTS, m);
    assert.deepEqual(m.commands, []);
  });

  it('installs what is missing, then stops and disables containerd and stops, disables and masks Prometheus', () => {
    const m = fakeMachine({ installed: ALL.filter((p) => p !== 'containerd' && p !== 'prometheus'), daemons: { prometheus: [4242] } });
    ensurePackages(REQUIREMENTS, m);
    assert.deepEqual(m.commands, [
      'apt-get update',
      'apt-get install -y --no-install-recommends containerd prometheus',
      'systemctl disable --now containerd',
      'systemctl disable --now prometheus',
      'systemctl mask prometheus',
    ]);
    assert.deepEqual(m.killed, [4242]);
    assert.deepEqual(missingPackages(REQUIREMENTS, m), []);
  });

  it('without systemd as init: disable without --now, and the daemons a postinst started are stopped by PID', () => {
    const m = fakeMachine({ installed: [], systemd: false, daemons: { containerd: [11], prometheus: [12] } });
    ensurePackages(REQUIREMENTS, m);
    assert.ok(m.commands.includes('systemctl disable containerd'));
    assert.ok(m.commands.includes('systemctl disable prometheus'));
    assert.ok(m.commands.includes('systemctl mask prometheus'));
    assert.deepEqual(m.killed, [11, 12]);
  });

  it('the containerd set installs only what containerd needs', () => {
    const m = fakeMachine({ installed: [] });
    ensurePackages(CONTAINERD_REQUIREMENTS, m);
    assert.equal(m.commands[1], 'apt-get install -y --no-install-recommends containerd runc containernetworking-plugins gcc libc6-dev busybox-static');
  });

  it('fails clearly when not root or when apt fails, and still quiets a service apt did install', () => {
    const user = fakeMachine({ installed: [], root: false });
    assert.throws(() => ensurePackages(CONTAINERD_REQUIREMENTS, user), (e: unknown) => e instanceof PrepareError && e.code === 'ERR_PREPARE_NOT_ROOT' && /containerd/.test(e.message));
    assert.deepEqual(user.commands, []);
    const broken = fakeMachine({ installed: [], aptFails: true });
    assert.throws(() => ensurePackages(REQUIREMENTS, broken), { code: 'ERR_PREPARE_INSTALL' });
    assert.ok(broken.commands.includes('systemctl mask prometheus'));
  });
});
