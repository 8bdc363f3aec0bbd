/**
 * Types for comlink's Node adapter (the package ships `node-adapter.d.ts` beside an `.mjs`, which
 * TypeScript's nodenext resolution does not pair). It turns a worker_threads Worker or
 * parentPort into a comlink Endpoint.
 */
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  import type { MessagePort, Worker } from 'node:worker_threads';
  export default function nodeEndpoint(nep: Worker | MessagePort): Endpoint;
}
