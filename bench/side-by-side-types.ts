/**
 * The seam between the side-by-side rounds (side-by-side.ts) and the two agents' observers:
 * when did the agent see each pod Running, on the bench's monotonic clock (ms).
 */
export interface RunningView {
  /** The time the agent reported pod `uid` Running, or undefined until it has. */
  get(uid: string): { atMs: number } | undefined;
  /** Pods reported Running so far. */
  readonly size: number;
}
