/**
 * Each hollow node's agent configuration: the --agent-config file (any `shardlet agent --config`
 * file) with what must differ per node set by flag, which wins over the file: the node name,
 * root and pod-logs dirs under the hollow root, the node's runtime socket, --max-pods and
 * --workers from the hollow command; and what one process cannot give every node: no kubelet
 * ports (0 = off) and no QoS cgroups (one host's cgroupfs).
 *
 * Parsed by the agent's own parser, so every agent validation applies; `hollowAgentConfig` for
 * the first node runs before anything is registered (a bad --agent-config fails up front).
 */
import { parseAgentConfig, type AgentConfig } from '../agent/agent-config.js';
import { hollowNodePaths, HollowConfigError, type HollowConfig } from './hollow-config.js';

export function hollowAgentConfig(c: HollowConfig, node: string, readFile?: (p: string) => string): AgentConfig {
  const p = hollowNodePaths(c, node);
  const argv = [
    ...(c.agentConfig ? ['--config', c.agentConfig] : []),
    '--kubeconfig', c.kubeconfig,
    '--node-name', node,
    '--max-pods', String(c.maxPods),
    '--workers', String(c.workers),
    '--root-dir', p.dir,
    '--pod-logs-dir', p.podLogs,
    '--container-runtime-endpoint', `unix://${p.socket}`,
    '--port', '0',
    '--read-only-port', '0',
    '--cgroups-per-qos=false',
    '--enforce-node-allocatable', 'none',
    '-v', String(c.verbosity),
  ];
  let parsed: AgentConfig | 'help';
  try {
    parsed = parseAgentConfig(argv, readFile);
  } catch (err) {
    throw new HollowConfigError(`--agent-config: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (parsed === 'help') throw new HollowConfigError('--agent-config: unexpected help');
  return parsed;
}
