/**
 * systemd-logind as the shutdown signal (the kubelet's systemd.DBusCon, pkg/kubelet/nodeshutdown/
 * systemd/inhibit_linux.go), through systemd's own command-line tools rather than a D-Bus client
 * library (shardlet takes no new npm dependency, and a hand-written D-Bus wire client would be a
 * new parser of a binary protocol on a privileged path; the tools ship with every systemd that
 * has logind, speak the protocol themselves, and are what an operator would use to check):
 *
 *   1. the system bus must exist (/run/dbus/system_bus_socket, or $DBUS_SYSTEM_BUS_ADDRESS);
 *      otherwise start() fails with ERR_SHUTDOWN_NO_SYSTEM_BUS (containers, this dev machine);
 *   2. `busctl get-property org.freedesktop.login1 /org/freedesktop/login1
 *      org.freedesktop.login1.Manager InhibitDelayMaxUSec` ("t 5000000"): logind's current
 *      InhibitDelayMaxSec (failure: ERR_SHUTDOWN_NO_LOGIND). If it is below the requested grace
 *      period, the kubelet's override: `<confDir>/99-shardlet.conf` with `[Login]
 *      InhibitDelayMaxSec=N`, `systemctl kill -s HUP systemd-logind.service` (the kubelet's
 *      ReloadLogindConf), then the value is read again (up to 10 times, 200 ms apart: logind
 *      reloads asynchronously); still below: ERR_SHUTDOWN_INHIBIT_DELAY with the kubelet's message;
 *   3. the delay lock: `systemd-inhibit --what=shutdown --who=shardlet --why="Shardlet needs
 *      time for pods to terminate" --mode=delay /bin/sh -c 'echo locked; exec cat'`: the lock is
 *      held from "locked" on its stdout until that `cat` ends, i.e. until release() kills the
 *      child or this process dies (its stdin, our pipe, closes): a crashed agent never holds up
 *      a shutdown;
 *   4. the watch: `busctl --system --json=short monitor --match="type='signal',
 *      sender='org.freedesktop.login1',interface='org.freedesktop.login1.Manager',
 *      member='PrepareForShutdown',path='/org/freedesktop/login1'"` (needs root, as the
 *      kubelet does: BecomeMonitor); its lines are parsed by logind-monitor-parse.ts. The
 *      sender match keeps out signals of the same name from other bus clients. If the monitor
 *      ends, it is started again after 1 s (the kubelet's dbusReconnectPeriod).
 * Every step has a bound (10 s per command, on the injected clock).
 */
import { execFile, spawn as nodeSpawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock, TimerHandle } from '../../shared/clock/clock.js';
import { formatGoDuration } from '../../shared/clock/go-duration.js';
import type { Logger } from '../../shared/logging/logger.js';
import { LineSplitter, parsePrepareForShutdown } from './logind-monitor-parse.js';
import { ShutdownSignalError, type ShutdownEventHandler, type ShutdownSignalSource } from './shutdown-signal.js';

/** The part of a ChildProcess this module uses (tests pass fakes). */
export interface ChildLike {
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  kill(signal?: NodeJS.Signals): boolean;
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  once(event: 'error', listener: (err: Error) => void): unknown;
}

export type SpawnFn = (command: string, args: readonly string[]) => ChildLike;
/** Runs a command to completion; resolves with its stdout, rejects on a non-zero exit or timeout. */
export type RunFn = (command: string, args: readonly string[]) => Promise<string>;

export interface LogindShutdownSourceDeps {
  clock: Clock;
  logger: Logger;
  /** The sum of the groups' grace periods (the kubelet's periodRequested), seconds. */
  periodRequestedSeconds: number;
  spawn?: SpawnFn;
  run?: RunFn;
  /** Whether the system bus exists (default: the socket or $DBUS_SYSTEM_BUS_ADDRESS). */
  systemBusPresent?: () => boolean;
  /** Where the InhibitDelayMaxSec override goes (default /etc/systemd/logind.conf.d). */
  confDir?: string;
  writeConf?: (file: string, text: string) => void;
}

export const LOGIND_DEFAULTS = Object.freeze({
  systemBusSocket: '/run/dbus/system_bus_socket',
  confDir: '/etc/systemd/logind.conf.d',
  confFile: '99-shardlet.conf',
  commandTimeoutMs: 10_000,
  reconnectMs: 1_000,
  reloadPolls: 10,
  reloadPollMs: 200,
});

const LOGIN1 = ['org.freedesktop.login1', '/org/freedesktop/login1', 'org.freedesktop.login1.Manager'] as const;
export const INHIBIT_ARGS: readonly string[] = Object.freeze(['--what=shutdown', '--who=shardlet', '--why=Shardlet needs time for pods to terminate', '--mode=delay', '/bin/sh', '-c', 'echo locked; exec cat']);
export const MONITOR_ARGS: readonly string[] = Object.freeze(['--system', '--json=short', 'monitor', "--match=type='signal',sender='org.freedesktop.login1',interface='org.freedesktop.login1.Manager',member='PrepareForShutdown',path='/org/freedesktop/login1'"]);

function defaultRun(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: LOGIND_DEFAULTS.commandTimeoutMs, maxBuffer: 64 * 1024 }, (err, stdout, stderr) => (err ? reject(new Error(`${command} ${args[0] ?? ''}: ${String(stderr).trim() || err.message}`)) : resolve(String(stdout))));
  });
}

const defaultSpawn: SpawnFn = (command, args) => nodeSpawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });

export class LogindShutdownSource implements ShutdownSignalSource {
  readonly name = 'logind';
  readonly #d: LogindShutdownSourceDeps;
  readonly #spawn: SpawnFn;
  readonly #run: RunFn;
  #lock: ChildLike | undefined;
  #monitor: ChildLike | undefined;
  #reconnect: TimerHandle | undefined;
  #onEvent: ShutdownEventHandler | undefined;
  #closed = false;

  constructor(deps: LogindShutdownSourceDeps) {
    if (!(Number.isSafeInteger(deps?.periodRequestedSeconds) && deps.periodRequestedSeconds >= 0)) throw new RangeError('LogindShutdownSource: periodRequestedSeconds must be a non-negative integer');
    this.#d = deps;
    this.#spawn = deps.spawn ?? defaultSpawn;
    this.#run = deps.run ?? defaultRun;
  }

  async start(onEvent: ShutdownEventHandler): Promise<void> {
    const present = this.#d.systemBusPresent ?? (() => process.env['DBUS_SYSTEM_BUS_ADDRESS'] !== undefined || fs.existsSync(LOGIND_DEFAULTS.systemBusSocket));
    if (!present()) throw new ShutdownSignalError('ERR_SHUTDOWN_NO_SYSTEM_BUS', `the D-Bus system bus is not available (no ${LOGIND_DEFAULTS.systemBusSocket}): no systemd-logind to delay the shutdown`);
    const requestedUs = this.#d.periodRequestedSeconds * 1_000_000;
    let current = await this.#currentInhibitDelayUs();
    if (requestedUs > current) {
      const dir = this.#d.confDir ?? LOGIND_DEFAULTS.confDir;
      const text = `# Written by shardlet (graceful node shutdown)\n[Login]\nInhibitDelayMaxSec=${this.#d.periodRequestedSeconds}\n`;
      try {
        (this.#d.writeConf ?? ((file, t) => { fs.mkdirSync(path.dirname(file), { recursive: true }); fs.writeFileSync(file, t, { mode: 0o644 }); }))(path.join(dir, LOGIND_DEFAULTS.confFile), text);
        await this.#run('systemctl', ['kill', '-s', 'HUP', 'systemd-logind.service']);
      } catch (err) {
        throw new ShutdownSignalError('ERR_SHUTDOWN_INHIBIT_DELAY', `unable to override inhibit delay by shutdown manager: ${err instanceof Error ? err.message : String(err)}`);
      }
      for (let i = 0; i < LOGIND_DEFAULTS.reloadPolls && requestedUs > current; i++) {
        await this.#d.clock.sleep(LOGIND_DEFAULTS.reloadPollMs);
        current = await this.#currentInhibitDelayUs();
      }
      if (requestedUs > current) {
        throw new ShutdownSignalError('ERR_SHUTDOWN_INHIBIT_DELAY', `node shutdown manager was unable to update logind InhibitDelayMaxSec to ${formatGoDuration(requestedUs / 1000)} (ShutdownGracePeriod), current value of InhibitDelayMaxSec (${formatGoDuration(current / 1000)}) is less than requested ShutdownGracePeriod`);
      }
    }
    await this.#acquire();
    this.#onEvent = onEvent;
    try {
      await this.#startMonitor();
    } catch (err) {
      await this.release();
      throw err;
    }
  }

  async #currentInhibitDelayUs(): Promise<number> {
    let out: string;
    try {
      out = await this.#run('busctl', ['get-property', ...LOGIN1, 'InhibitDelayMaxUSec']);
    } catch (err) {
      throw new ShutdownSignalError('ERR_SHUTDOWN_NO_LOGIND', `cannot read logind's InhibitDelayMaxUSec: ${err instanceof Error ? err.message : String(err)}`);
    }
    const m = /^t (\d{1,20})\s*$/.exec(out);
    const us = m ? Number(m[1]) : NaN;
    if (!Number.isFinite(us)) throw new ShutdownSignalError('ERR_SHUTDOWN_NO_LOGIND', `unexpected InhibitDelayMaxUSec from busctl: ${JSON.stringify(out.slice(0, 100))}`);
    return us;
  }

  /** Spawns `command` and waits (bounded) until `marker` appears on `stream`; rejects if it exits, errors or times out first. */
  #spawnReady(command: string, args: readonly string[], stream: 'stdout' | 'stderr', marker: string, code: 'ERR_SHUTDOWN_INHIBIT' | 'ERR_SHUTDOWN_MONITOR'): Promise<ChildLike> {
    return new Promise((resolve, reject) => {
      let child: ChildLike;
      try {
        child = this.#spawn(command, args);
      } catch (err) {
        reject(new ShutdownSignalError(code, `${command}: ${err instanceof Error ? err.message : String(err)}`));
        return;
      }
      let seen = '';
      let stderr = '';
      let settled = false;
      const timer = this.#d.clock.setTimer(LOGIND_DEFAULTS.commandTimeoutMs, () => fail(`${command} did not start within ${LOGIND_DEFAULTS.commandTimeoutMs / 1000}s`), { unref: true });
      const fail = (why: string): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        child.kill('SIGKILL');
        reject(new ShutdownSignalError(code, why));
      };
      child.stderr?.on('data', (b: Buffer | string) => {
        if (stderr.length < 4096) stderr += String(b);
        if (stream === 'stderr') check(String(b));
      });
      const check = (text: string): void => {
        if (settled) return;
        seen = (seen + text).slice(-4096);
        if (!seen.includes(marker)) return;
        settled = true;
        timer.cancel();
        resolve(child);
      };
      if (stream === 'stdout') {
        const onData = (b: Buffer | string): void => {
          check(String(b));
          if (settled) child.stdout?.off('data', onData);
        };
        child.stdout?.on('data', onData);
      }
      child.once('error', (err) => fail(`${command}: ${err.message}`));
      child.once('exit', (c, sig) => fail(`${command} exited (${c ?? sig}) ${stderr.trim().slice(0, 500)}`.trim()));
    });
  }

  async #acquire(): Promise<void> {
    const previous = this.#lock;
    this.#lock = await this.#spawnReady('systemd-inhibit', INHIBIT_ARGS, 'stdout', 'locked', 'ERR_SHUTDOWN_INHIBIT');
    // As the kubelet: the new lock first, then the old one goes.
    previous?.kill('SIGTERM');
  }

  async #startMonitor(): Promise<void> {
    const child = await this.#spawnReady('busctl', MONITOR_ARGS, 'stderr', 'Monitoring bus message stream.', 'ERR_SHUTDOWN_MONITOR');
    this.#monitor = child;
    const lines = new LineSplitter();
    child.stdout?.on('data', (b: Buffer | string) => {
      for (const line of lines.push(String(b))) {
        const ev = parsePrepareForShutdown(line);
        if (ev !== undefined) this.#onEvent?.(ev);
      }
    });
    child.once('exit', () => {
      if (this.#monitor !== child) return;
      this.#monitor = undefined;
      if (this.#closed) return;
      this.#d.logger.error('Ended to watching the node for shutdown events; restarting the watch', {});
      this.#scheduleReconnect();
    });
  }

  /** The kubelet's restart loop: a new watch after 1 s, again and again until one starts. */
  #scheduleReconnect(): void {
    if (this.#closed) return;
    this.#reconnect = this.#d.clock.setTimer(LOGIND_DEFAULTS.reconnectMs, () => {
      this.#reconnect = undefined;
      if (this.#closed) return;
      this.#d.logger.v(1).info('Restarting watch for node shutdown events', {});
      this.#startMonitor().catch((err: unknown) => {
        this.#d.logger.error('Unable to watch the node for shutdown events', { err: err instanceof Error ? err.message : String(err) });
        this.#scheduleReconnect();
      });
    }, { unref: true });
  }

  async release(): Promise<void> {
    const lock = this.#lock;
    this.#lock = undefined;
    lock?.kill('SIGTERM');
  }

  async reacquire(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#acquire();
    } catch (err) {
      this.#d.logger.error('node shutdown manager: cannot take the delay lock again', { err: err instanceof Error ? err.message : String(err) });
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#reconnect?.cancel();
    const monitor = this.#monitor;
    this.#monitor = undefined;
    monitor?.kill('SIGTERM');
    await this.release();
  }
}
