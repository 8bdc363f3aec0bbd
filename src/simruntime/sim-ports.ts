/**
 * Ports "inside" simulated sandboxes: a sandbox's port P is a real TCP listener on 127.0.0.1
 * (an ephemeral host port) that a simulated process opened (`nc -l -p P`, sim-exec-stream.ts),
 * registered here under (sandbox, P). PortForward connects to the host port behind (sandbox, P),
 * so the bytes really travel over TCP. A port is held by one listener at a time ("address in
 * use" otherwise), and released when its listener closes.
 */
export class SimPortRegistry {
  readonly #ports = new Map<string, number>();

  /** Claims (sandbox, port) for a listener on `hostPort`; false if taken. */
  claim(sandboxId: string, port: number, hostPort: number): boolean {
    const k = key(sandboxId, port);
    if (this.#ports.has(k)) return false;
    this.#ports.set(k, hostPort);
    return true;
  }

  release(sandboxId: string, port: number): void {
    this.#ports.delete(key(sandboxId, port));
  }

  /** The host port listening for (sandbox, port), if any. */
  lookup(sandboxId: string, port: number): number | undefined {
    return this.#ports.get(key(sandboxId, port));
  }

  get size(): number {
    return this.#ports.size;
  }
}

function key(sandboxId: string, port: number): string {
  return `${sandboxId}\0${port}`;
}
