/**
 * Host process inspection for the harness: reads /proc to find processes by their command line
 * and ends them by PID. Linux only. Never matches by a broad name alone: every lookup is tied to
 * something the harness owns (its temp dir, its socket) or to the exact distro daemon invocation.
 */
import fs from 'node:fs';

export interface HostProcess {
  readonly pid: number;
  readonly ppid: number;
  /** argv as the kernel holds it (NUL-separated cmdline split). */
  readonly argv: readonly string[];
}

function readProcess(pid: number): HostProcess | undefined {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    const argv = raw.split('\0').filter((a) => a !== '');
    // /proc/PID/stat: "pid (comm) state ppid ..."; comm may contain spaces, so cut at the last ')'.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return { pid, ppid, argv };
  } catch {
    return undefined; // exited while we looked
  }
}

export function listProcesses(): HostProcess[] {
  const out: HostProcess[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProcess(Number(name));
    if (p && p.argv.length > 0) out.push(p);
  }
  return out;
}

/** Processes whose argv[0] ends with `exeSuffix` and one of whose args contains `needle`. */
export function findProcesses(exeSuffix: string, needle: string): HostProcess[] {
  return listProcesses().filter((p) => (p.argv[0] ?? '').endsWith(exeSuffix) && p.argv.some((a) => a.includes(needle)));
}

/** Direct children of `pid`. */
export function childrenOf(pid: number, all: readonly HostProcess[] = listProcesses()): HostProcess[] {
  return all.filter((p) => p.ppid === pid);
}

/**
 * The distro's containerd daemon: `/usr/bin/containerd` started without `--config`/`-c` (the
 * harness always passes `--config`, so its instances never match).
 */
export function findSystemContainerdPids(): number[] {
  return listProcesses()
    .filter((p) => p.argv[0] === '/usr/bin/containerd' || p.argv[0] === 'containerd')
    .filter((p) => !p.argv.some((a) => a === '--config' || a === '-c' || a.startsWith('--config=')))
    .map((p) => p.pid);
}

/**
 * The distro's Prometheus daemon: `/usr/bin/prometheus` started without `--config.file` (its
 * service passes only /etc/default/prometheus's ARGS, empty by default; the Prometheus test
 * harness always passes `--config.file=`, so its instances never match).
 */
export function findSystemPrometheusPids(): number[] {
  return listProcesses()
    .filter((p) => p.argv[0] === '/usr/bin/prometheus' || p.argv[0] === 'prometheus')
    .filter((p) => !p.argv.some((a) => a === '--config.file' || a.startsWith('--config.file=')))
    .map((p) => p.pid);
}

/**
 * True while `pid` runs. A zombie counts as dead: shims are re-parented to PID 1, which on these
 * machines is not always a reaping init, so a killed shim can stay `Z` indefinitely.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone: fine, callers only want it dead
  }
}

/**
 * The distro's etcd daemon (the `etcd-server` package's service): `/usr/bin/etcd` started without
 * `--data-dir` (Debian's unit passes it through the environment; the harness always passes the
 * flag, so its instances never match).
 */
export function findSystemEtcdPids(): number[] {
  return listProcesses()
    .filter((p) => p.argv[0] === '/usr/bin/etcd' || p.argv[0] === 'etcd')
    .filter((p) => !p.argv.some((a) => a === '--data-dir' || a.startsWith('--data-dir=')))
    .map((p) => p.pid);
}
