/**
 * The Node's status.nodeInfo (the kubelet's setters.MachineInfo/VersionInfo): machine and boot
 * identity from the files the kubelet reads (cadvisor), the kernel and OS image, the container
 * runtime as "<runtimeName>://<runtimeVersion>" from CRI Version, and the agent's version.
 * Each file read is bounded (they are a few bytes; a missing or unreadable file gives "").
 */
import fs from 'node:fs';
import os from 'node:os';
import { goArch } from './node-labels.js';

/** What `kubectl get nodes` shows as VERSION: shardlet's version, marked as not a kubelet. */
export const SHARDLET_KUBELET_VERSION = 'v0.1.0-shardlet';

export interface RuntimeVersion {
  runtimeName: string;
  runtimeVersion: string;
}

export interface NodeSystemInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  containerRuntimeVersion: string;
  kubeletVersion: string;
  kubeProxyVersion: string;
  operatingSystem: string;
  architecture: string;
}

const MAX_FILE_BYTES = 4096;

/** The first line of a small file, trimmed; "" when unreadable. */
export function readSmallFile(file: string, read: (p: string) => Buffer = readBounded): string {
  try {
    return read(file).toString('utf8').split('\n')[0]!.trim();
  } catch {
    return '';
  }
}

function readBounded(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(MAX_FILE_BYTES);
    const n = fs.readSync(fd, buf, 0, MAX_FILE_BYTES, 0);
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/** PRETTY_NAME of /etc/os-release (e.g. "Debian GNU/Linux 12 (bookworm)"). */
export function osImage(osRelease: string): string {
  for (const line of osRelease.split('\n')) {
    const m = /^PRETTY_NAME=(.*)$/.exec(line.trim());
    if (m) return m[1]!.replace(/^["']|["']$/g, '');
  }
  return 'Linux';
}

export function nodeSystemInfo(runtime: RuntimeVersion, read: (p: string) => Buffer = readBounded): NodeSystemInfo {
  let release = '';
  try {
    release = read('/etc/os-release').toString('utf8');
  } catch {
    /* keep "" */
  }
  return {
    machineID: readSmallFile('/etc/machine-id', read),
    systemUUID: readSmallFile('/sys/class/dmi/id/product_uuid', read),
    bootID: readSmallFile('/proc/sys/kernel/random/boot_id', read),
    kernelVersion: os.release(),
    osImage: osImage(release),
    containerRuntimeVersion: `${runtime.runtimeName}://${runtime.runtimeVersion}`,
    kubeletVersion: SHARDLET_KUBELET_VERSION,
    kubeProxyVersion: SHARDLET_KUBELET_VERSION,
    operatingSystem: 'linux',
    architecture: goArch(),
  };
}
