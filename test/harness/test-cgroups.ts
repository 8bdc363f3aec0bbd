/**
 * The cgroups an agent under test creates on the host (--cgroups-per-qos with a real runtime):
 * each agent the e2e harness starts gets a private --cgroup-root derived from its runtime's
 * socket directory (`/shardlet-e2e-<dir name>`), so parallel runs never share a kubepods tree,
 * and the containerd harness removes that tree once its pods are torn down (stop, or the
 * reclaim of a killed run). The simulated runtime's agents get one too; they create nothing.
 */
import fs from 'node:fs';
import path from 'node:path';

const PREFIX = 'shardlet-e2e-';

/** --cgroup-root for an agent on `endpoint` (unix:///dir/x.sock or /dir/x.sock); undefined for `embedded`. */
export function agentCgroupRootFor(endpoint: string): string | undefined {
  const socket = endpoint.replace(/^unix:\/\//, '');
  return socket.startsWith('/') ? cgroupRootForSocket(socket) : undefined;
}

/** The test cgroup root of the runtime listening on `socketPath` (an absolute path). */
export function cgroupRootForSocket(socketPath: string): string {
  const dir = path.basename(path.dirname(socketPath)).replace(/[^A-Za-z0-9_.-]/g, '_');
  return `/${PREFIX}${dir}`;
}

/** Mount points of the host's cgroup hierarchies (v2: /sys/fs/cgroup; v1: each controller mount and a hybrid host's cgroup2 one). */
export function cgroupHierarchies(): string[] {
  const text = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const fstype = line.slice(sep + 3).split(' ')[0];
    const mp = line.slice(0, sep).split(' ')[4];
    if (mp && (fstype === 'cgroup' || fstype === 'cgroup2')) out.add(mp);
  }
  return [...out];
}

function rmTree(dir: string): string[] {
  let kids: fs.Dirent[];
  try {
    kids = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const left: string[] = [];
  for (const k of kids) if (k.isDirectory()) left.push(...rmTree(path.join(dir, k.name)));
  try {
    fs.rmdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') left.push(dir);
  }
  return left;
}

/**
 * Removes the cgroup tree `root` (one of ours: /shardlet-e2e-*) in every hierarchy, children
 * first. Returns what could not be removed (still holding processes).
 */
export function removeTestCgroupRoot(root: string): string[] {
  if (!path.basename(root).startsWith(PREFIX) || path.dirname(root) !== '/') throw new Error(`not a test cgroup root: ${root}`);
  return cgroupHierarchies().flatMap((h) => rmTree(path.join(h, root)));
}
