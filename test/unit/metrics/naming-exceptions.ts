/**
 * Kubelet metric names that break Prometheus naming conventions, kept unchanged so kubelet
 * dashboards and alerts work. promtool reports exactly these and nothing else (test/prometheus).
 */
export const KUBELET_NAMING_EXCEPTIONS: ReadonlySet<string> = new Set(['kubelet_pleg_discard_events', 'kubelet_evictions']);

/**
 * The exceptions every exposition shows (the others appear once they have a sample:
 * kubelet_evictions after the first eviction), so a test can check they are still exposed.
 */
export const KUBELET_NAMING_EXCEPTIONS_ALWAYS_EXPOSED: ReadonlySet<string> = new Set(['kubelet_pleg_discard_events']);
