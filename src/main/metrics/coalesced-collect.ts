/**
 * Shares one exposition among scrapes that arrive close together: concurrent scrapes wait for
 * the collection in flight, and a result younger than `maxAgeMs` is served again. Without it,
 * N scrapers cost N collections of the whole exposition on the main thread (measured: ten
 * unthrottled scrapers at 1,000 pods delayed manifest intake by 40+ s). With Prometheus's
 * usual 15–30 s interval a 1 s reuse window changes nothing a user can see.
 */
import type { Clock } from '../../shared/clock/clock.js';

export interface Collectable {
  collect(): Promise<string>;
}

export function coalesceCollect(source: Collectable, clock: Pick<Clock, 'monotonic'>, maxAgeMs = 1_000): Collectable {
  let inFlight: Promise<string> | undefined;
  let last: { text: string; atMs: number } | undefined;
  return {
    collect(): Promise<string> {
      if (last && clock.monotonic() - last.atMs < maxAgeMs) return Promise.resolve(last.text);
      if (inFlight) return inFlight;
      const started = clock.monotonic();
      inFlight = source.collect().then(
        (text) => {
          last = { text, atMs: started };
          inFlight = undefined;
          return text;
        },
        (err: unknown) => {
          inFlight = undefined;
          throw err;
        },
      );
      return inFlight;
    },
  };
}
