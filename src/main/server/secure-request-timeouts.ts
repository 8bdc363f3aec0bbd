/**
 * Time limits on what a client sends to the secure port. A request must arrive whole:
 *
 * - its headers within `headersTimeoutMs` (node:http's own timer; node only looks every
 *   `connectionsCheckingIntervalMs`, 30 s by default, so that interval is shortened too);
 * - its body within `requestBodyTimeoutMs` of its headers (our timer, armed per request; a
 *   request without a body is complete at once and never armed). On expiry the connection is
 *   destroyed: a body that arrives a byte at a time cannot hold a socket.
 *
 * Responses are not timed: an authenticated `GET /containerLogs?follow=true` has no body, so it
 * is complete when its headers are, and streams as long as the client reads. The seam for
 * streams whose REQUEST is long-lived (exec/attach stdin over a plain HTTP body, when they come;
 * upgraded SPDY/WebSocket connections leave node:http and are not timed here at all) is
 * {@link RequestStreamPolicy}: a request it names is exempt from the body timer, and its
 * route then owns the stream's bounds.
 */
import type http from 'node:http';
import type { Clock } from '../../shared/clock/clock.js';

export interface RequestTimeouts {
  /** Longest time from connection (or the previous request) to the end of the headers. */
  headersTimeoutMs: number;
  /** Longest time from the end of the headers to the end of the body. */
  requestBodyTimeoutMs: number;
  /** How often node:http checks the headers timer. */
  connectionsCheckingIntervalMs: number;
}

export const REQUEST_TIMEOUT_DEFAULTS: Readonly<RequestTimeouts> = Object.freeze({ headersTimeoutMs: 10_000, requestBodyTimeoutMs: 30_000, connectionsCheckingIntervalMs: 1_000 });

/** Whether a request is a long-lived request stream (exempt from the body timer). None today. */
export type RequestStreamPolicy = (req: http.IncomingMessage) => boolean;

export const noRequestStreams: RequestStreamPolicy = () => false;

/**
 * Arms the body timer for `req` unless it is already complete or `isStream` names it; the timer
 * is cancelled when the body has arrived or the request is gone. Calls `onExpired` (which
 * destroys the connection) when the body is late.
 */
export function armRequestBodyTimer(req: http.IncomingMessage, o: { clock: Clock; timeoutMs: number; isStream: RequestStreamPolicy; onExpired: () => void }): void {
  if (req.complete || o.isStream(req)) return;
  const timer = o.clock.setTimer(o.timeoutMs, () => {
    if (!req.complete) o.onExpired();
  }, { unref: true });
  const done = (): void => timer.cancel();
  req.once('end', done);
  req.once('close', done);
}
