/**
 * The logind signal source (logind-shutdown-source.ts) over fake subprocesses: the exact
 * commands (busctl get-property, systemd-inhibit, busctl monitor), no system bus → its typed
 * error, the InhibitDelayMaxSec override (conf file, logind HUP, re-read, the kubelet's error
 * when it stays short), the lock held until release() and taken again by reacquire() (new lock
 * before the old one goes), PrepareForShutdown lines → events, the monitor restarted 1 s after
 * it ends, close() ending both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { FakeClock } from '../../../src/shared/clock/fake-clock.js';
import { silentLogger } from '../../../src/shared/logging/logger.js';
import { INHIBIT_ARGS, LogindShutdownSource, MONITOR_ARGS, type ChildLike } from '../../../src/main/shutdown/logind-shutdown-source.js';
import { ShutdownSignalError } from '../../../src/main/shutdown/shutdown-signal.js';

class FakeChild extends EventEmitter implements ChildLike {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly signals: string[] = [];
  constructor(readonly command: string, readonly args: readonly string[]) {
    super();
  }
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    this.signals.push(signal);
    this.exit(null, signal);
    return true;
  }
  exit(code: number | null, signal: NodeJS.Signals | null = null): void {
    if (this.listenerCount('exit') > 0 || !this.exited) this.emit('exit', code, signal);
    this.exited = true;
  }
  exited = false;
}

const SIGNAL = (b: boolean) => `{"type":"signal","sender":":1.5","path":"/org/freedesktop/login1","interface":"org.freedesktop.login1.Manager","member":"PrepareForShutdown","payload":{"type":"b","data":[${b}]}}\n`;

function setup(o: { bus?: boolean; delays?: string[]; requested?: number } = {}) {
  const clock = new FakeClock();
  const children: FakeChild[] = [];
  const runs: string[] = [];
  const delays = [...(o.delays ?? ['t 30000000\n'])];
  const conf: Array<[string, string]> = [];
  const spawned: Array<(c: FakeChild) => void> = [];
  const src = new LogindShutdownSource({
    clock, logger: silentLogger, periodRequestedSeconds: o.requested ?? 30,
    systemBusPresent: () => o.bus ?? true,
    confDir: '/etc/systemd/logind.conf.d',
    writeConf: (file, text) => void conf.push([file, text]),
    run: async (cmd, args) => {
      runs.push([cmd, ...args].join(' '));
      if (cmd === 'systemctl') return '';
      const next = delays.length > 1 ? delays.shift()! : delays[0]!;
      if (next === 'fail') throw new Error('Failed to get property: The name org.freedesktop.login1 was not provided by any .service files');
      return next;
    },
    spawn: (cmd, args) => {
      const c = new FakeChild(cmd, args);
      children.push(c);
      // The tools come up on the next turn, as real ones do.
      setImmediate(() => {
        if (cmd === 'systemd-inhibit') c.stdout.write('locked\n');
        else c.stderr.write('Monitoring bus message stream.\n');
        for (const f of spawned.splice(0)) f(c);
      });
      return c;
    },
  });
  const nextSpawn = () => new Promise<FakeChild>((r) => spawned.push(r));
  return { clock, src, children, runs, conf, nextSpawn };
}

test('no system bus: ERR_SHUTDOWN_NO_SYSTEM_BUS, nothing run; no logind: ERR_SHUTDOWN_NO_LOGIND', async () => {
  const a = setup({ bus: false });
  await assert.rejects(a.src.start(() => {}), (e: unknown) => e instanceof ShutdownSignalError && e.code === 'ERR_SHUTDOWN_NO_SYSTEM_BUS' && /no \/run\/dbus\/system_bus_socket/.test(e.message));
  assert.deepEqual(a.runs, []);
  assert.equal(a.children.length, 0);
  const b = setup({ delays: ['fail'] });
  await assert.rejects(b.src.start(() => {}), (e: unknown) => e instanceof ShutdownSignalError && e.code === 'ERR_SHUTDOWN_NO_LOGIND');
  assert.equal(b.children.length, 0);
});

test('the lock and the watch: exact commands, events from PrepareForShutdown, release and reacquire, restart, close', async () => {
  const { src, children, runs, clock, nextSpawn } = setup();
  const events: boolean[] = [];
  let gotTwo!: () => void;
  const two = new Promise<void>((r) => (gotTwo = r));
  await src.start((b) => {
    events.push(b);
    if (events.length === 2) gotTwo();
  });
  assert.deepEqual(runs, ['busctl get-property org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager InhibitDelayMaxUSec']);
  const [lock, monitor] = children;
  assert.deepEqual([lock!.command, lock!.args], ['systemd-inhibit', INHIBIT_ARGS]);
  assert.deepEqual(INHIBIT_ARGS.slice(0, 4), ['--what=shutdown', '--who=shardlet', '--why=Shardlet needs time for pods to terminate', '--mode=delay']);
  assert.deepEqual([monitor!.command, monitor!.args], ['busctl', MONITOR_ARGS]);
  assert.match(MONITOR_ARGS[3]!, /sender='org\.freedesktop\.login1'/);

  // Lines split anywhere, other traffic ignored.
  const text = `${SIGNAL(true)}not json\n${SIGNAL(false)}`;
  monitor!.stdout.write(text.slice(0, 50));
  monitor!.stdout.write(text.slice(50));
  await two;
  assert.deepEqual(events, [true, false]);

  await src.release();
  assert.deepEqual(lock!.signals, ['SIGTERM'], 'release ends the lock holder');
  await src.reacquire();
  const lock2 = children[2]!;
  assert.equal(lock2.command, 'systemd-inhibit');
  await src.reacquire();
  assert.equal(children[3]!.command, 'systemd-inhibit');
  assert.deepEqual(lock2.signals, ['SIGTERM'], 'a new lock, then the old one goes');

  // The monitor dies: a new one 1 s later.
  const restarted = nextSpawn();
  monitor!.exit(1);
  assert.equal(children.length, 4);
  clock.step(999);
  assert.equal(children.length, 4);
  clock.step(1);
  const monitor2 = await restarted;
  assert.deepEqual(monitor2.args, MONITOR_ARGS);

  await src.close();
  assert.ok(monitor2.signals.includes('SIGTERM'));
  assert.ok(children[3]!.signals.includes('SIGTERM'), 'the last lock released');
  assert.equal(clock.pendingTimers, 0);
});

test('InhibitDelayMaxSec below the grace period: the kubelet\'s override; still short after the reload: its error', async () => {
  const ok = setup({ requested: 30, delays: ['t 5000000\n', 't 5000000\n', 't 30000000\n'] });
  const started = ok.src.start(() => {});
  // One re-read after the reload still shows 5 s; the poll's sleep is on the fake clock.
  await ok.clock.runUntil(() => ok.runs.length >= 4, { stepMs: 200, maxMs: 5_000 });
  await started;
  assert.deepEqual(ok.conf, [['/etc/systemd/logind.conf.d/99-shardlet.conf', '# Written by shardlet (graceful node shutdown)\n[Login]\nInhibitDelayMaxSec=30\n']]);
  assert.equal(ok.runs[1], 'systemctl kill -s HUP systemd-logind.service');
  await ok.src.close();

  const short = setup({ requested: 30, delays: ['t 5000000\n'] });
  const failed = assert.rejects(short.src.start(() => {}), (e: unknown) => e instanceof ShutdownSignalError && e.code === 'ERR_SHUTDOWN_INHIBIT_DELAY'
    && e.message === 'node shutdown manager was unable to update logind InhibitDelayMaxSec to 30s (ShutdownGracePeriod), current value of InhibitDelayMaxSec (5s) is less than requested ShutdownGracePeriod');
  await short.clock.runUntil(() => short.runs.length >= 12, { stepMs: 200, maxMs: 10_000 });
  await failed;
  assert.equal(short.children.length, 0, 'no lock taken');
});
