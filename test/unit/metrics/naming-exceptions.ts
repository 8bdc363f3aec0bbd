/**
 * Kubelet metric names that break Prometheus naming conventions, kept unchanged so kubelet
 * dashboards and alerts work. promtool reports exactly these and nothing else (test/prometheus).
 */
export const KUBELET_NAMING_EXCEPTIONS: ReadonlySet<string> = new Set(['kubelet_pleg_discard_events']);
