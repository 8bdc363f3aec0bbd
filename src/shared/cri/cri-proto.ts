/**
 * Loads `proto/cri-runtime-v1.proto` once per thread. Shared by the CRI client and the
 * simulated runtime's server so both decode with the same options (see cri-types.ts).
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const PROTO_LOADER_OPTIONS: protoLoader.Options = Object.freeze({
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  objects: false,
  oneofs: true,
});

/** Finds proto/ by walking up from this file: works from src/ (ts) and dist/src/ (js). */
function findProtoFile(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'proto', 'cri-runtime-v1.proto');
    if (fs.existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('proto/cri-runtime-v1.proto not found above ' + fileURLToPath(import.meta.url));
}

export interface CriServiceDefinitions {
  runtime: grpc.ServiceDefinition;
  image: grpc.ServiceDefinition;
  /** Client constructors for the two services. */
  RuntimeServiceClient: grpc.ServiceClientConstructor;
  ImageServiceClient: grpc.ServiceClientConstructor;
}

let cached: CriServiceDefinitions | undefined;

export function loadCriProto(): CriServiceDefinitions {
  if (cached) return cached;
  const def = protoLoader.loadSync(findProtoFile(), PROTO_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    runtime: { v1: { RuntimeService: grpc.ServiceClientConstructor; ImageService: grpc.ServiceClientConstructor } };
  };
  const RuntimeServiceClient = pkg.runtime.v1.RuntimeService;
  const ImageServiceClient = pkg.runtime.v1.ImageService;
  cached = {
    runtime: RuntimeServiceClient.service,
    image: ImageServiceClient.service,
    RuntimeServiceClient,
    ImageServiceClient,
  };
  return cached;
}

/** gRPC channel options both ends use: 16 MiB messages (the 4 MiB default fails ListContainers at a few thousand containers). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The HTTP/2 flow-control window (per stream and per connection) a CRI client advertises:
 * 16 MiB, so the largest reply it accepts arrives without waiting on WINDOW_UPDATEs. The cost
 * is bounded by what the client accepts anyway (MAX_MESSAGE_BYTES per call). The runtime is
 * a local process on a unix socket, so there is no network to be fair to.
 */
export const CRI_FLOW_CONTROL_WINDOW = MAX_MESSAGE_BYTES;
