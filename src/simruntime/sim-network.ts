/**
 * Pod IP allocation for pod-network sandboxes: 10.88.0.0/16 (containerd's default CNI
 * subnet), gateway 10.88.0.1, addresses 10.88.0.2 – 10.88.255.254. Allocation is round-robin
 * from a cursor, skipping addresses in use, so a released address is reused only after the
 * whole range wrapped (host-local IPAM behaves alike). Host-network sandboxes get no IP.
 * Owned by the runtime core; released at StopPodSandbox (CNI teardown), as containerd does.
 */

const FIRST = 2; // 10.88.0.2
const LAST = 0xffff - 1; // 10.88.255.254

export class IpPoolExhaustedError extends Error {
  readonly code = 'ERR_SIM_IP_EXHAUSTED';
}

export class PodIpPool {
  readonly #inUse = new Set<number>();
  #cursor = FIRST;

  get cursor(): number {
    return this.#cursor;
  }

  /** Restores the cursor (state file). */
  set cursor(v: number) {
    this.#cursor = v >= FIRST && v <= LAST ? v : FIRST;
  }

  allocate(): string {
    for (let tries = 0; tries <= LAST - FIRST; tries++) {
      const n = this.#cursor;
      this.#cursor = n >= LAST ? FIRST : n + 1;
      if ((n & 0xff) === 0 || (n & 0xff) === 0xff) continue; // skip .0 and .255 of each /24
      if (this.#inUse.has(n)) continue;
      this.#inUse.add(n);
      return `10.88.${n >> 8}.${n & 0xff}`;
    }
    throw new IpPoolExhaustedError('no free address in 10.88.0.0/16');
  }

  /** Marks an address as used (state reload). Ignores addresses outside the pool. */
  claim(ip: string): void {
    const n = PodIpPool.#toOffset(ip);
    if (n !== undefined) this.#inUse.add(n);
  }

  release(ip: string): void {
    const n = PodIpPool.#toOffset(ip);
    if (n !== undefined) this.#inUse.delete(n);
  }

  static #toOffset(ip: string): number | undefined {
    const m = /^10\.88\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
    if (!m) return undefined;
    return Number(m[1]) * 256 + Number(m[2]);
  }
}
