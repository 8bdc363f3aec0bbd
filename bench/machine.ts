/** The machine the numbers came from, printed at the top of the report. */
import fs from 'node:fs';
import os from 'node:os';
import type { MachineInfo } from './results.js';

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  let cpuModel = cpus[0]?.model?.trim() ?? '';
  if (cpuModel === '') {
    try {
      cpuModel = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
    } catch {
      cpuModel = 'unknown CPU';
    }
  }
  return {
    cpuModel,
    cores: os.availableParallelism?.() ?? cpus.length,
    memoryGiB: os.totalmem() / 1024 ** 3,
    node: process.version,
    platform: `${os.platform()}/${os.arch()}`,
    kernel: os.release(),
  };
}
