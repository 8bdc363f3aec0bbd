/**
 * What a simulated container reads at the files the runtime itself provides, and where its
 * shell's `>`/`>>` redirections write — consistent with the CRI config it was given, as
 * containerd would make them:
 *
 * - /etc/resolv.conf: containerd writes the sandbox's from PodSandboxConfig.dnsConfig (its
 *   parseDNSOptions: `search ...`, one `nameserver X` line each, `options ...`); with no DNS
 *   config (or an empty one) it copies the node's /etc/resolv.conf.
 * - /etc/hosts: a container mount at /etc/hosts (the kubelet's managed file) wins; else
 *   containerd's sandbox copy of the node's /etc/hosts.
 * - /etc/hostname: the sandbox's hostname.
 * - Everything else: the container's mounts (sim-mounts.ts); the simulated image has no files.
 * - Writes (`echo msg > /dev/termination-log`) go to the host file behind the mount that covers
 *   the path; a read-only mount refuses them, and a path under no mount is the image's writable
 *   layer, which the simulation does not keep (the write succeeds and is dropped).
 *
 * Node files are read bounded (MAX_NODE_FILE_BYTES); a write is capped at MAX_WRITE_BYTES.
 */
import fs from 'node:fs';
import type { DnsConfig, Mount, PodSandboxConfig } from '../shared/cri/cri-types.js';
import { hostPathOf, simCat } from './sim-mounts.js';

export const MAX_NODE_FILE_BYTES = 1 << 20;
export const MAX_WRITE_BYTES = 1 << 20;

/** containerd's parseDNSOptions; '' when the config gives nothing (the node's file is copied then). */
export function resolvConfContent(dns: DnsConfig | undefined): string {
  if (!dns) return '';
  let out = '';
  if (dns.searches.length > 0) out += `search ${dns.searches.join(' ')}\n`;
  if (dns.servers.length > 0) out += `nameserver ${dns.servers.join('\nnameserver ')}\n`;
  if (dns.options.length > 0) out += `options ${dns.options.join(' ')}\n`;
  return out;
}

function readNodeFile(file: string): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buf = Buffer.alloc(MAX_NODE_FILE_BYTES);
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      return buf.subarray(0, n).toString();
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** The content of a runtime-provided file the container does not mount over, or undefined. */
export function runtimeFile(mounts: readonly Mount[], sandbox: PodSandboxConfig | undefined, file: string): string | undefined {
  if (hostPathOf(mounts, file) !== undefined) return undefined;
  switch (file) {
    case '/etc/resolv.conf': {
      const own = resolvConfContent(sandbox?.dnsConfig);
      return own !== '' ? own : readNodeFile('/etc/resolv.conf');
    }
    case '/etc/hosts':
      return readNodeFile('/etc/hosts');
    case '/etc/hostname':
      return `${sandbox?.hostname ?? ''}\n`;
    default:
      return undefined;
  }
}

/** busybox `cat FILE...` over the runtime's files and the container's mounts. */
export function containerCat(
  mounts: readonly Mount[],
  sandbox: PodSandboxConfig | undefined,
  files: readonly string[],
  virtual?: (path: string) => string | undefined,
): { stdout: Buffer; stderr: Buffer; exitCode: number } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let exitCode = 0;
  for (const f of files) {
    const own = runtimeFile(mounts, sandbox, f);
    const r = own !== undefined ? { stdout: Buffer.from(own), stderr: Buffer.alloc(0), exitCode: 0 } : simCat(mounts, [f], virtual);
    out.push(r.stdout);
    err.push(r.stderr);
    if (r.exitCode !== 0) exitCode = r.exitCode;
  }
  return { stdout: Buffer.concat(out), stderr: Buffer.concat(err), exitCode };
}

/** Where the shell's redirections write (sim-shell.ts); returns busybox's error text, or undefined. */
export type FileWriter = (file: string, text: string, append: boolean) => string | undefined;

/** The writer of a container with these mounts. */
export function containerWriter(mounts: readonly Mount[]): FileWriter {
  return (file, text, append) => {
    if (!file.startsWith('/')) return `can't create ${file}: Read-only file system`;
    const host = hostPathOf(mounts, file);
    if (host === undefined) return undefined; // the writable layer: not kept
    const m = mounts.find((x) => hostPathOf([x], file) === host);
    if (m?.readonly === true) return `can't create ${file}: Read-only file system`;
    const data = Buffer.from(text).subarray(0, MAX_WRITE_BYTES);
    try {
      if (append) fs.appendFileSync(host, data);
      else fs.writeFileSync(host, data);
      return undefined;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      return `can't create ${file}: ${code === 'EISDIR' ? 'Is a directory' : code === 'ENOENT' ? 'nonexistent directory' : 'Permission denied'}`;
    }
  };
}
