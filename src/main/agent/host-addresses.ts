/** This machine's addresses as the agent uses them: the pods' hostIP and the Node's, and loopback checks. */
import os from 'node:os';

/** The first non-internal IPv4 address (pods' hostIP, the Node's InternalIP default), else 127.0.0.1. */
export function primaryHostIP(): string {
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/**
 * The Node's InternalIP, which is also every pod's status.hostIP(s) and a host-network pod's
 * podIP (the kubelet's getHostIPsAnyWay reads them from the Node): --node-ip when given, else
 * {@link primaryHostIP}. The unspecified addresses (0.0.0.0, ::) mean "detect", as the kubelet
 * takes them.
 */
export function nodeInternalIP(nodeIP: string | undefined): string {
  return nodeIP === undefined || nodeIP === '' || nodeIP === '0.0.0.0' || nodeIP === '::' ? primaryHostIP() : nodeIP;
}

/** 127.0.0.0/8, ::1 and IPv4-mapped loopback: the addresses only this machine reaches. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.replace(/^::ffff:/i, '');
  return a === '::1' || a === 'localhost' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}
