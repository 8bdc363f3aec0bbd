/**
 * The seam between a hollow node and its simulated runtime. The agent side never imports the
 * simulated runtime (src/simruntime): the CLI (src/cli/hollow-sim.ts) builds one runtime per node
 * and hands it over behind this interface, as `shardlet agent` hands over an endpoint.
 */
export interface HollowRuntime {
  /** CRI endpoint (unix://...) the node's agent connects to; the same across down/up. */
  readonly endpoint: string;
  /** Whether the runtime serves now. */
  readonly serving: boolean;
  /** Stops serving (state kept, containers keep their state): the agent sees a dead runtime. Idempotent. */
  down(): Promise<void>;
  /** Serves again from the kept state. Idempotent. */
  up(): Promise<void>;
  /** Kills the pod's running containers (exit 137); returns how many. */
  crashPod(namespace: string, pod: string): number;
  /** Stops for good (state saved). Idempotent. */
  close(): Promise<void>;
}

/** Builds the runtime of one node, serving on `socket` with its state in `statePath`. */
export type HollowRuntimeFactory = (node: string, paths: { socket: string; simState: string }) => Promise<HollowRuntime>;
