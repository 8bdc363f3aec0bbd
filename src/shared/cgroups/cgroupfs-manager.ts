/**
 * A {@link CgroupManager} over the host's cgroup filesystem with the cgroupfs driver (the
 * kubelet's cgroupfs CgroupManager via libcontainer's fs / fs2 managers), on cgroup v1 or v2.
 *
 * Files written (an absent ResourceConfig field is not written):
 *   v2: cpu.weight (from shares), cpu.max "<quota|max> <period>", memory.max;
 *       before a cgroup is created, each ancestor enables "+cpu +memory" in its
 *       cgroup.subtree_control (as runc does), or the files would not exist.
 *   v1: cpu.shares, cpu.cfs_period_us then cpu.cfs_quota_us (-1 = unlimited) in the cpu
 *       hierarchy, memory.limit_in_bytes in the memory hierarchy; the directory is created in
 *       every mounted hierarchy (as libcontainer's Apply(-1)), so the runtime's children and our
 *       rmdir see one tree.
 *
 * Every path is `<hierarchy mount> + toCgroupfs(name)`, and a CgroupName's components are
 * checked path components (cgroup-name.ts): nothing is written outside the mounts.
 */
import path from 'node:path';
import { CgroupError, cgroupErrorFrom } from './cgroup-errors.js';
import { errnoCode, type CgroupFs } from './cgroup-fs.js';
import { hierarchyRoots, type CgroupLayout } from './cgroup-layout.js';
import type { CgroupManager } from './cgroup-manager.js';
import { toCgroupfs, type CgroupName } from './cgroup-name.js';
import { CPU_QUOTA_PERIOD_US, cpuSharesToWeight, type ResourceConfig } from './cgroup-resources.js';

/** Controllers the limits need. */
export const REQUIRED_CONTROLLERS = ['cpu', 'memory'] as const;

/** How deep a destroy walks into child cgroups the runtime left (containers are one level). */
const MAX_DESTROY_DEPTH = 4;

export interface CgroupfsManagerOptions {
  fs: CgroupFs;
  layout: CgroupLayout;
}

export class CgroupfsManager implements CgroupManager {
  readonly writesHost = true;
  readonly #fs: CgroupFs;
  readonly #layout: CgroupLayout;

  constructor(opts: CgroupfsManagerOptions) {
    if (typeof opts?.fs?.mkdir !== 'function') throw new TypeError('CgroupfsManager: opts.fs must be a CgroupFs');
    if (opts.layout?.version !== 'v1' && opts.layout?.version !== 'v2') throw new TypeError('CgroupfsManager: opts.layout must be a CgroupLayout');
    if (opts.layout.version === 'v1') {
      for (const c of REQUIRED_CONTROLLERS) {
        if (opts.layout.mounts[c] === undefined) throw new CgroupError('ERR_CGROUP_CONTROLLER', `cgroup v1: the ${c} controller is not mounted (see /proc/self/mountinfo)`);
      }
    }
    this.#fs = opts.fs;
    this.#layout = opts.layout;
  }

  name(name: CgroupName): string {
    return toCgroupfs(name);
  }

  async exists(name: CgroupName): Promise<boolean> {
    for (const dir of this.#dirs(name)) if (!(await this.#fs.exists(dir))) return false;
    return true;
  }

  async create(name: CgroupName, resources: ResourceConfig): Promise<void> {
    if (this.#layout.version === 'v2') await this.#createV2(this.#layout.root, name);
    else for (const root of hierarchyRoots(this.#layout)) await this.#mkdirAll(root, name);
    await this.update(name, resources);
  }

  async update(name: CgroupName, r: ResourceConfig): Promise<void> {
    const rel = toCgroupfs(name);
    const layout = this.#layout;
    if (layout.version === 'v2') {
      const dir = path.join(layout.root, rel);
      if (r.cpuShares !== undefined && r.cpuShares > 0) await this.#write(dir, 'cpu.weight', String(cpuSharesToWeight(r.cpuShares)));
      if (r.cpuQuotaUs !== undefined || r.cpuPeriodUs !== undefined) {
        const quota = r.cpuQuotaUs === undefined || r.cpuQuotaUs <= 0 ? 'max' : String(r.cpuQuotaUs);
        await this.#write(dir, 'cpu.max', `${quota} ${r.cpuPeriodUs ?? CPU_QUOTA_PERIOD_US}`);
      }
      if (r.memoryLimitBytes !== undefined && r.memoryLimitBytes > 0) await this.#write(dir, 'memory.max', String(r.memoryLimitBytes));
      return;
    }
    const cpuDir = path.join(layout.mounts['cpu']!, rel);
    const memDir = path.join(layout.mounts['memory']!, rel);
    if (r.cpuShares !== undefined && r.cpuShares > 0) await this.#write(cpuDir, 'cpu.shares', String(r.cpuShares));
    if (r.cpuPeriodUs !== undefined) await this.#write(cpuDir, 'cpu.cfs_period_us', String(r.cpuPeriodUs));
    if (r.cpuQuotaUs !== undefined) await this.#write(cpuDir, 'cpu.cfs_quota_us', String(r.cpuQuotaUs <= 0 ? -1 : r.cpuQuotaUs));
    if (r.memoryLimitBytes !== undefined && r.memoryLimitBytes > 0) await this.#write(memDir, 'memory.limit_in_bytes', String(r.memoryLimitBytes));
  }

  async destroy(name: CgroupName): Promise<void> {
    if (name.length === 0) throw new CgroupError('ERR_CGROUP_CONFIG', 'refusing to destroy the root cgroup');
    for (const dir of this.#dirs(name)) await this.#rmTree(dir, 0);
  }

  async children(name: CgroupName): Promise<string[]> {
    const dir = this.#dirs(name)[0]!;
    try {
      return await this.#fs.childDirs(dir);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return [];
      throw cgroupErrorFrom(err, 'list', dir);
    }
  }

  /** One directory per hierarchy: v2's one tree, or each v1 mount (cpu first). */
  #dirs(name: CgroupName): string[] {
    const rel = toCgroupfs(name);
    if (this.#layout.version === 'v2') return [path.join(this.#layout.root, rel)];
    const cpu = this.#layout.mounts['cpu']!;
    return [cpu, ...hierarchyRoots(this.#layout).filter((r) => r !== cpu)].map((r) => path.join(r, rel));
  }

  async #mkdir(dir: string): Promise<void> {
    try {
      await this.#fs.mkdir(dir);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw cgroupErrorFrom(err, 'create cgroup', dir);
    }
  }

  async #mkdirAll(root: string, name: CgroupName): Promise<void> {
    let dir = root;
    for (const part of name) {
      dir = path.join(dir, part);
      await this.#mkdir(dir);
    }
  }

  /** v2: each ancestor enables cpu and memory for its children, then the next level is created. */
  async #createV2(root: string, name: CgroupName): Promise<void> {
    let dir = root;
    for (const part of name) {
      await this.#enableControllers(dir);
      dir = path.join(dir, part);
      await this.#mkdir(dir);
    }
  }

  async #enableControllers(dir: string): Promise<void> {
    const file = path.join(dir, 'cgroup.subtree_control');
    let enabled: string;
    try {
      enabled = await this.#fs.readFile(file);
    } catch (err) {
      throw cgroupErrorFrom(err, 'read', file);
    }
    const have = new Set(enabled.trim().split(/\s+/));
    const missing = REQUIRED_CONTROLLERS.filter((c) => !have.has(c));
    if (missing.length === 0) return;
    try {
      await this.#fs.writeFile(file, missing.map((c) => `+${c}`).join(' '));
    } catch (err) {
      const e = cgroupErrorFrom(err, `enable ${missing.join(', ')} in`, file);
      if (e.code !== 'ERR_CGROUP_IO' && e.code !== 'ERR_CGROUP_BUSY') throw e;
      throw new CgroupError('ERR_CGROUP_CONTROLLER', `${e.message} (cgroup v2: the ${missing.join(' and ')} controller must be available to ${dir}'s children; check ${path.join(dir, 'cgroup.controllers')})`);
    }
  }

  async #write(dir: string, file: string, value: string): Promise<void> {
    const p = path.join(dir, file);
    try {
      await this.#fs.writeFile(p, value);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') throw new CgroupError('ERR_CGROUP_CONTROLLER', `write ${p}: no such file (is the controller of ${file} enabled for this cgroup?)`);
      throw cgroupErrorFrom(err, `write ${JSON.stringify(value)} to`, p);
    }
  }

  async #rmTree(dir: string, depth: number): Promise<void> {
    let kids: string[];
    try {
      kids = await this.#fs.childDirs(dir);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return;
      throw cgroupErrorFrom(err, 'list', dir);
    }
    if (kids.length > 0 && depth >= MAX_DESTROY_DEPTH) throw new CgroupError('ERR_CGROUP_BUSY', `remove ${dir}: child cgroups nested deeper than ${MAX_DESTROY_DEPTH} levels remain`);
    for (const k of kids) await this.#rmTree(path.join(dir, k), depth + 1);
    try {
      await this.#fs.rmdir(dir);
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return;
      throw cgroupErrorFrom(err, 'remove cgroup', dir);
    }
  }
}
