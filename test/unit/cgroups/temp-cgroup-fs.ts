/**
 * A cgroup filesystem in a temp dir, behind the product's CgroupFs seam, with the kernel's
 * behaviour where a plain directory differs: a new cgroup directory comes with its control files
 * (cgroup.procs, and on v2 cgroup.controllers / cgroup.subtree_control), rmdir removes a cgroup
 * whose only entries are control files, fails EBUSY while cgroup.procs lists a pid or a child
 * cgroup remains, and ENOENT when it is gone. Faults can be injected per operation.
 * Every operation goes through node's real async fs underneath (the product's nodeCgroupFs).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeCgroupFs, type CgroupFs } from '../../../src/shared/cgroups/cgroup-fs.js';
import type { CgroupLayout } from '../../../src/shared/cgroups/cgroup-layout.js';

type Op = keyof CgroupFs;

export class TempCgroupFs implements CgroupFs {
  readonly dir: string;
  readonly version: 'v1' | 'v2';
  readonly layout: CgroupLayout;
  /** Each call as "op path" (paths relative to `dir`). */
  readonly calls: string[] = [];
  readonly #faults = new Map<Op, (p: string) => NodeJS.ErrnoException | undefined>();

  constructor(version: 'v1' | 'v2', opts: { rootControllers?: string } = {}) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-cgroupfs-'));
    this.version = version;
    if (version === 'v2') {
      fs.writeFileSync(path.join(this.dir, 'cgroup.controllers'), `${opts.rootControllers ?? 'cpuset cpu io memory pids'}\n`);
      fs.writeFileSync(path.join(this.dir, 'cgroup.subtree_control'), '');
      fs.writeFileSync(path.join(this.dir, 'cgroup.procs'), '1\n');
      this.layout = { version: 'v2', root: this.dir };
    } else {
      const mounts: Record<string, string> = {};
      for (const [key, sub] of [['cpu', 'cpu,cpuacct'], ['cpuacct', 'cpu,cpuacct'], ['memory', 'memory'], ['pids', 'pids'], ['unified', 'unified']] as const) {
        fs.mkdirSync(path.join(this.dir, sub), { recursive: true });
        mounts[key] = path.join(this.dir, sub);
      }
      this.layout = { version: 'v1', mounts };
    }
  }

  /** `op` on a path ending in `suffix` fails with `code` (until cleared). */
  fail(op: Op, suffix: string, code: string): void {
    this.#faults.set(op, (p) => (p.endsWith(suffix) ? Object.assign(new Error(`${code}: ${op} ${p}`), { code }) : undefined));
  }

  clearFaults(): void {
    this.#faults.clear();
  }

  rel(p: string): string {
    return path.relative(this.dir, p);
  }

  read(rel: string): string {
    return fs.readFileSync(path.join(this.dir, rel), 'utf8');
  }

  has(rel: string): boolean {
    return fs.existsSync(path.join(this.dir, rel));
  }

  /** Puts a pid in a cgroup (rmdir is then EBUSY). */
  addProcess(rel: string, pid: number): void {
    fs.writeFileSync(path.join(this.dir, rel, 'cgroup.procs'), `${pid}\n`);
  }

  /** The cgroup's processes left (rmdir may now succeed). */
  clearProcesses(rel: string): void {
    fs.writeFileSync(path.join(this.dir, rel, 'cgroup.procs'), '');
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  #enter(op: Op, p: string): void {
    this.calls.push(`${op} ${this.rel(p)}`);
    const e = this.#faults.get(op)?.(p);
    if (e) throw e;
  }

  async mkdir(p: string): Promise<void> {
    this.#enter('mkdir', p);
    await nodeCgroupFs.mkdir(p);
    fs.writeFileSync(path.join(p, 'cgroup.procs'), '');
    if (this.version === 'v2') {
      const parentEnabled = fs.readFileSync(path.join(path.dirname(p), 'cgroup.subtree_control'), 'utf8').trim();
      fs.writeFileSync(path.join(p, 'cgroup.controllers'), parentEnabled);
      fs.writeFileSync(path.join(p, 'cgroup.subtree_control'), '');
    }
  }

  async writeFile(p: string, data: string): Promise<void> {
    this.#enter('writeFile', p);
    if (this.version === 'v2' && path.basename(p) === 'cgroup.subtree_control') {
      // The kernel adds/removes the named controllers; only those the cgroup has are allowed.
      const have = new Set(fs.readFileSync(path.join(path.dirname(p), 'cgroup.controllers'), 'utf8').trim().split(/\s+/));
      const enabled = new Set(fs.readFileSync(p, 'utf8').trim().split(/\s+/).filter((w) => w !== ''));
      for (const w of data.trim().split(/\s+/)) {
        const name = w.slice(1);
        if (!have.has(name)) throw Object.assign(new Error(`ENOENT: ${name}`), { code: 'ENOENT' });
        if (w.startsWith('+')) enabled.add(name);
        else enabled.delete(name);
      }
      fs.writeFileSync(p, [...enabled].join(' '));
      return;
    }
    await nodeCgroupFs.writeFile(p, data);
  }

  async readFile(p: string): Promise<string> {
    this.#enter('readFile', p);
    return nodeCgroupFs.readFile(p);
  }

  async rmdir(p: string): Promise<void> {
    this.#enter('rmdir', p);
    if (!fs.existsSync(p)) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
    const procs = fs.existsSync(path.join(p, 'cgroup.procs')) ? fs.readFileSync(path.join(p, 'cgroup.procs'), 'utf8').trim() : '';
    const kids = fs.readdirSync(p, { withFileTypes: true }).filter((d) => d.isDirectory());
    if (procs !== '' || kids.length > 0) throw Object.assign(new Error(`EBUSY: ${p}`), { code: 'EBUSY' });
    for (const f of fs.readdirSync(p)) fs.rmSync(path.join(p, f));
    await nodeCgroupFs.rmdir(p);
  }

  async childDirs(p: string): Promise<string[]> {
    this.#enter('childDirs', p);
    return nodeCgroupFs.childDirs(p);
  }

  async exists(p: string): Promise<boolean> {
    this.#enter('exists', p);
    return nodeCgroupFs.exists(p);
  }
}
