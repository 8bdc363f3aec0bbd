/**
 * CRI `runtime.v1alpha2` on the simulated runtime, beside `runtime.v1`, as containerd 1.6 serves
 * both: a kubelet before 1.23 (the bench's v1.20.2) speaks v1alpha2 only.
 *
 * Why the v1 handlers and serializers serve v1alpha2 unchanged: `runtime.v1` was created as a
 * copy of `runtime.v1alpha2`; every message, field number, field type and enum value of the
 * v1alpha2 api.proto of Kubernetes v1.20.2 (staging/src/k8s.io/cri-api/pkg/apis/runtime/v1alpha2)
 * is the same in proto/cri-runtime-v1.proto (checked field by field with protobufjs when this
 * module was written; `KeyValue.value` is `string` there and `bytes` here, one wire type). Fields
 * v1 added later are skipped by a v1alpha2 decoder as unknown fields. So the alpha service is the
 * v1 definition with each method's path renamed, plus two differences:
 *   - `Version` answers `runtimeApiVersion: "v1alpha2"` (what containerd answers on that service);
 *   - `UpdateRuntimeConfig` (v1alpha2 only in our proto; the kubelet calls it when it learns a pod
 *     CIDR) accepts any request and answers the empty response: the simulated network has no CIDR.
 */
import type * as grpc from '@grpc/grpc-js';

export const CRI_V1ALPHA2_API_VERSION = 'v1alpha2';

const V1_PACKAGE = '/runtime.v1.';
const V1ALPHA2_PACKAGE = '/runtime.v1alpha2.';

/** The v1 service `def` re-addressed as `runtime.v1alpha2` (same serializers, same method keys). */
export function asV1alpha2(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(def)) {
    if (!m.path.startsWith(V1_PACKAGE)) throw new Error(`asV1alpha2: method ${name} is not in runtime.v1 (${m.path})`);
    out[name] = { ...m, path: V1ALPHA2_PACKAGE + m.path.slice(V1_PACKAGE.length) };
  }
  return out as grpc.ServiceDefinition;
}

/** `UpdateRuntimeConfig` of runtime.v1alpha2: the request is not decoded, the response is empty. */
const UPDATE_RUNTIME_CONFIG: grpc.MethodDefinition<unknown, unknown> = {
  path: `${V1ALPHA2_PACKAGE}RuntimeService/UpdateRuntimeConfig`,
  requestStream: false,
  responseStream: false,
  requestSerialize: () => Buffer.alloc(0),
  requestDeserialize: () => ({}),
  responseSerialize: () => Buffer.alloc(0),
  responseDeserialize: () => ({}),
};

/**
 * The v1alpha2 RuntimeService definition and implementation over the v1 ones (`def` is the v1
 * definition the v1 handlers were built for, pre-encoded list serializers included).
 */
export function v1alpha2RuntimeService(
  def: grpc.ServiceDefinition,
  impl: grpc.UntypedServiceImplementation,
): { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation } {
  const version = impl['Version'] as grpc.handleUnaryCall<unknown, Record<string, unknown>> | undefined;
  if (version === undefined) throw new Error('v1alpha2RuntimeService: the v1 implementation has no Version');
  const alphaVersion: grpc.handleUnaryCall<unknown, Record<string, unknown>> = (call, callback) =>
    version(call, (err, value, trailer, flags) => callback(err, value ? { ...value, runtimeApiVersion: CRI_V1ALPHA2_API_VERSION } : value, trailer, flags));
  const updateRuntimeConfig: grpc.handleUnaryCall<unknown, unknown> = (_call, callback) => callback(null, {});
  return {
    definition: { ...asV1alpha2(def), UpdateRuntimeConfig: UPDATE_RUNTIME_CONFIG } as grpc.ServiceDefinition,
    implementation: { ...impl, Version: alphaVersion, UpdateRuntimeConfig: updateRuntimeConfig },
  };
}
