/**
 * A GetContainerEvents subscriber for the simulated runtime's tests. The agent has no evented
 * PLEG, so the product CRI client carries no streaming call; the sim still serves the stream
 * (as containerd does), and these tests read it with a plain grpc-js client.
 */
import * as grpc from '@grpc/grpc-js';
import { criErrorFromGrpc } from '../../../src/shared/cri/cri-errors.js';
import { loadCriProto } from '../../../src/shared/cri/cri-proto.js';
import type { ContainerEventResponse } from '../../../src/shared/cri/cri-types.js';

export interface EventsSubscription {
  cancel(): void;
}

/** Opens GetContainerEvents on `endpoint` (unix://…); errors arrive as CriError. */
export function subscribeContainerEvents(endpoint: string, handlers: { onEvent: (ev: ContainerEventResponse) => void; onError: (err: Error) => void }): EventsSubscription {
  const client = new (loadCriProto().RuntimeServiceClient)(endpoint, grpc.credentials.createInsecure(), { 'grpc.default_authority': 'localhost' });
  const fn = (client as unknown as Record<string, (req: unknown) => grpc.ClientReadableStream<ContainerEventResponse>>)['GetContainerEvents'];
  if (fn === undefined) throw new Error('GetContainerEvents is not in the CRI proto');
  const stream = fn.call(client, {});
  let cancelled = false;
  stream.on('data', (ev: ContainerEventResponse) => handlers.onEvent(ev));
  stream.on('error', (err: unknown) => {
    if (!cancelled) handlers.onError(criErrorFromGrpc('GetContainerEvents', err));
    client.close();
  });
  stream.on('end', () => client.close());
  return {
    cancel: () => {
      cancelled = true;
      stream.cancel();
      client.close();
    },
  };
}
