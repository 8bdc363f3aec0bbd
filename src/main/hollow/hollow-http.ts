/**
 * Hollow mode's HTTP endpoint on 127.0.0.1 (--metrics-port): the only port of the process (the
 * nodes' kubelet ports are off).
 *   GET  /metrics   node-labelled exposition + process summary (hollow-metrics.ts)
 *   GET  /nodes     {"<node>": "<state>", ...}
 *   GET  /healthz   ok
 *   POST /faults    fault steps (hollow-faults.ts syntax, AT ignored: each runs now), ≤ 64 KiB;
 *                   200 with one result line per step, 400 for a bad script (nothing applied),
 *                   409 when a step failed (the lines say which).
 * Loopback only: faults are an operator's tool, never exposed beyond the host.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseFaultLines, type FaultStep } from './hollow-faults.js';

export interface HollowHttpTarget {
  names: readonly string[];
  metricsText(): Promise<string>;
  nodeStates(): Record<string, string>;
  applyFault(step: FaultStep): Promise<string>;
}

const MAX_FAULT_BODY = 64 * 1024;

export class HollowHttp {
  readonly #server: http.Server;
  readonly #target: HollowHttpTarget;
  readonly #names: ReadonlySet<string>;

  constructor(target: HollowHttpTarget) {
    this.#target = target;
    this.#names = new Set(target.names);
    this.#server = http.createServer((req, res) => void this.#handle(req, res));
  }

  async listen(port: number): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => resolve());
    });
    return this.#server.address() as AddressInfo;
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const send = (code: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    try {
      const url = req.url ?? '/';
      if (req.method === 'GET' && url === '/metrics') return send(200, await this.#target.metricsText(), 'text/plain; version=0.0.4; charset=utf-8');
      if (req.method === 'GET' && url === '/healthz') return send(200, 'ok');
      if (req.method === 'GET' && url === '/nodes') return send(200, JSON.stringify(this.#target.nodeStates()), 'application/json');
      if (req.method === 'POST' && url === '/faults') {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const c of req as AsyncIterable<Buffer>) {
          size += c.length;
          if (size > MAX_FAULT_BODY) return send(413, `fault script over ${MAX_FAULT_BODY} bytes\n`);
          chunks.push(c);
        }
        let steps: FaultStep[];
        try {
          steps = parseFaultLines(Buffer.concat(chunks).toString('utf8'), 'POST /faults', this.#names);
        } catch (err) {
          return send(400, `${err instanceof Error ? err.message : String(err)}\n`);
        }
        const lines: string[] = [];
        let failed = false;
        for (const s of steps) {
          try {
            lines.push(await this.#target.applyFault(s));
          } catch (err) {
            failed = true;
            lines.push(`${s.node}: ${s.action.kind} failed: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
        return send(failed ? 409 : 200, lines.map((l) => l + '\n').join(''));
      }
      return send(404, 'not found\n');
    } catch (err) {
      if (!res.headersSent) send(500, `${err instanceof Error ? err.message : String(err)}\n`);
      else res.destroy();
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}
