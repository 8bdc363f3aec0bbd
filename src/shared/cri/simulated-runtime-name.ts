/**
 * The runtimeName the simulated CRI runtime reports in Version (src/simruntime/sim-server.ts).
 * The agent keys one thing on it: the simulated runtime's containers are not processes, so the
 * QoS and pod cgroups are named for it but never created on the host (node-cgroups.ts).
 */
export const SIMULATED_RUNTIME_NAME = 'shardlet-sim';
