/**
 * The {@link CgroupManager} of the embedded simulated runtime: it spells names exactly as the
 * real driver would (so the runtime is given the same linux.cgroupParent, and reports it), but
 * creates and writes nothing on the host. Its containers are not processes, so host cgroups
 * would limit nothing; and `npm start` must work for an unprivileged user.
 *
 * Chosen only by the agent, only for `--container-runtime-endpoint embedded`, and announced at
 * startup (node-cgroups.ts); never as a fallback after a failed write.
 */
import type { CgroupManager } from './cgroup-manager.js';
import { driverName, type CgroupDriver, type CgroupName } from './cgroup-name.js';

export class NamesOnlyCgroupManager implements CgroupManager {
  readonly writesHost = false;
  readonly #driver: CgroupDriver;

  constructor(driver: CgroupDriver) {
    this.#driver = driver;
  }

  name(name: CgroupName): string {
    return driverName(this.#driver, name);
  }

  exists(): Promise<boolean> {
    return Promise.resolve(true);
  }

  create(): Promise<void> {
    return Promise.resolve();
  }

  update(): Promise<void> {
    return Promise.resolve();
  }

  destroy(): Promise<void> {
    return Promise.resolve();
  }

  children(): Promise<string[]> {
    return Promise.resolve([]);
  }
}
