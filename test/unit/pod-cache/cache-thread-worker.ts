/**
 * Worker-thread side of pod-cache-threads.test.ts. Roles:
 *  - writer: for each version v in its list, set every pod to typicalPodStatus(pod, v) at
 *    timestamp v, then updateTime(v);
 *  - reader: until the stop flag is set, read every pod and check the entry is exactly one
 *    version (every field embeds the version, so a torn mix of two never equals a fixture),
 *    that its timestamp is that version, and that versions never go backwards per pod;
 *  - waiter: getNewerThan(pod, t) for rising t; each answer must be newer than t;
 *  - script: runs {set|updateTime|names} steps sent by the test, acking each ('names' answers
 *    with every pod's status name, or null without an entry).
 */
import { isDeepStrictEqual } from 'node:util';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { H, S, readLayout } from '../../../src/shared/pod-cache/pod-cache-layout.js';
import { attachPodCache } from '../../../src/shared/pod-cache/pod-cache-create.js';
import { podUid, typicalPodStatus, wideStatus } from './pod-status-fixtures.js';
import { PodCacheView } from '../../../src/shared/pod-cache/pod-cache-view.js';
import { reserveOverflow } from '../../../src/shared/pod-cache/pod-cache-chain.js';

/**
 * The status of pod `p` at version `v`: the typical 2-container pod, or (wide) one of 1 to 60
 * containers, a count that changes with the version so chains grow, shrink and move between
 * overflow slots freed by other pods.
 */
export function statusAt(p: number, v: number, wide: boolean | undefined) {
  return wide ? wideStatus(p, v, 1 + ((v * 7 + p * 13) % 60)) : typicalPodStatus(p, v);
}

export type WorkerRole =
  | { role: 'writer'; buffer: SharedArrayBuffer; pods: number; versions: number[]; wide?: boolean; deletes?: boolean }
  /** deletes: the writers delete pods too, so a version may go back (deleted, then an older one stored). */
  | { role: 'reader'; buffer: SharedArrayBuffer; pods: number; stop: SharedArrayBuffer; wide?: boolean; deletes?: boolean }
  | { role: 'waiter'; buffer: SharedArrayBuffer; pods: number; until: number }
  | { role: 'script'; buffer: SharedArrayBuffer }
  /** Die inside critical sections: hold slot `slot` (SEQ odd, payload half-overwritten) and ALLOC_LOCK, post 'holding', block. */
  | { role: 'hold'; buffer: SharedArrayBuffer; slot: number }
  /** Die holding overflow reservations: reserve `slots` overflow slots (step 1 of the protocol), post 'holding', block. */
  | { role: 'reserve'; buffer: SharedArrayBuffer; slots: number };

export type ScriptStep = { op: 'set'; pod: number; version: number; ts: number } | { op: 'updateTime'; ts: number } | { op: 'names'; pods: number };

export interface WorkerReport {
  checks: number;
  violations: string[];
  versionsSeen: number;
}

const data = workerData as WorkerRole;
const { reader, writer } = attachPodCache(data.buffer);
if (!parentPort) throw new Error('cache-thread-worker must run in a worker thread');
const port = parentPort;

function versionOf(name: string): number {
  return Number(name.slice(name.lastIndexOf('-v') + 2));
}

async function main(): Promise<WorkerReport | undefined> {
  const violations: string[] = [];
  let checks = 0;
  switch (data.role) {
    case 'writer': {
      for (const v of data.versions) {
        for (let p = 0; p < data.pods; p++) {
          // Deleting pod p now and then frees its head and chain under readers' feet.
          if (data.deletes && (v + p) % 17 === 0) writer.delete(podUid(p));
          else writer.set(podUid(p), statusAt(p, v, data.wide), null, v);
        }
        writer.updateTime(v);
        checks++;
      }
      return { checks, violations, versionsSeen: data.versions.length };
    }
    case 'reader': {
      const stop = new Int32Array(data.stop);
      const last = new Array<number>(data.pods).fill(-1);
      const seen = new Set<number>();
      while (Atomics.load(stop, 0) === 0) {
        for (let p = 0; p < data.pods; p++) {
          const e = reader.get(podUid(p));
          if (!e) continue;
          checks++;
          const v = versionOf(e.status.name);
          seen.add(v);
          if (!isDeepStrictEqual(e.status, statusAt(p, v, data.wide)) || e.timestampMs !== v || e.error !== null) {
            violations.push(`pod ${p}: torn or mismatched entry at version ${v} ts ${e.timestampMs}`);
          }
          if (v < (last[p] ?? -1) && !data.deletes) violations.push(`pod ${p}: version went back ${last[p]} -> ${v}`);
          last[p] = v;
          if (violations.length > 10) return { checks, violations, versionsSeen: seen.size };
        }
      }
      return { checks, violations, versionsSeen: seen.size };
    }
    case 'waiter': {
      const seen = new Set<number>();
      for (let t = 0; t < data.until; ) {
        const p = t % data.pods;
        const e = await reader.getNewerThan(podUid(p), t);
        checks++;
        const g = reader.globalTimestampMs() ?? -1;
        if (!(e.timestampMs > t || g > t)) violations.push(`pod ${p}: resolved for t=${t} with ts ${e.timestampMs}, global ${g}`);
        seen.add(e.timestampMs);
        t = Math.max(t + 1, e.timestampMs);
      }
      return { checks, violations, versionsSeen: seen.size };
    }
    case 'script': {
      port.on('message', (step: ScriptStep) => {
        if (step.op === 'names') {
          port.postMessage(Array.from({ length: step.pods }, (_, p) => reader.get(podUid(p))?.status.name ?? null));
          return;
        }
        if (step.op === 'set') writer.set(podUid(step.pod), typicalPodStatus(step.pod, step.version), null, step.ts);
        else writer.updateTime(step.ts);
        port.postMessage('done');
      });
      return undefined;
    }
    case 'hold': {
      // Exactly the state a writer leaves when it dies between steps 2 and 5 of the publication
      // protocol (pod-cache-layout.ts) while also holding ALLOC_LOCK.
      const l = readLayout(data.buffer);
      const i32 = new Int32Array(data.buffer);
      const base = l.slotsByte + data.slot * l.slotStride;
      if (Atomics.compareExchange(i32, base / 4 + S.LOCK / 4, 0, threadId + 1) !== 0) throw new Error('slot already locked');
      Atomics.add(i32, base / 4, 1);
      new Uint8Array(data.buffer, base + S.PAYLOAD, 16).fill(0xff);
      if (Atomics.compareExchange(i32, H.ALLOC_LOCK, 0, threadId + 1) !== 0) throw new Error('alloc already locked');
      port.postMessage('holding');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      return undefined;
    }
    case 'reserve': {
      const l = readLayout(data.buffer);
      reserveOverflow(new PodCacheView(data.buffer, l), data.slots);
      port.postMessage('holding');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      return undefined;
    }
    default: {
      const never: never = data;
      throw new Error(`unknown role ${JSON.stringify(never)}`);
    }
  }
}

main().then((report) => {
  if (report) port.postMessage(report);
}, (err: unknown) => {
  port.postMessage({ checks: 0, violations: [`worker threw: ${String(err)}`], versionsSeen: 0 } satisfies WorkerReport);
});
