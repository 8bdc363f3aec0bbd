/**
 * The CRI contract: ONE set of assertions that every runtime shardlet drives must pass, run
 * against real containerd (contract-containerd.test.ts) and the simulated runtime
 * (contract-sim.test.ts). The expected values are what containerd 1.6.20 really returns on
 * these machines; where the simulated runtime disagrees, containerd is right and the sim is
 * fixed. Assertions deliberately avoid error *messages* (not part of the contract) and test
 * gRPC codes (as CriError codes), states, exit codes, reasons and field shapes.
 *
 * Sections (one module each): lifecycle (sandbox/container state machines, timestamps, exit
 * codes, signals), queries (list filters, unknown ids, idempotency, name conflicts) and io
 * (images, ExecSync, container logs, env, pod network).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CriClient } from '../../src/shared/cri/cri-client.js';
import { teardownAllPods } from '../harness/cri-teardown.js';
import { defineIoContract } from './cri-contract-io.js';
import { defineLifecycleContract } from './cri-contract-lifecycle.js';
import { defineQueryContract } from './cri-contract-queries.js';

export interface RuntimeUnderTest {
  /** `unix:///…` */
  readonly endpoint: string;
  stop(): Promise<void>;
}

export interface ContractContext {
  readonly rt: CriClient;
  /** PodSandboxConfig.logDirectory for every sandbox the contract creates. */
  readonly logDir: string;
}

/** Sections receive a getter: the context exists only once `before` has run. */
export type ContractContextRef = () => ContractContext;

export function defineCriContract(name: string, startRuntime: () => Promise<RuntimeUnderTest>): void {
  describe(`CRI contract: ${name}`, { timeout: 180_000 }, () => {
    let runtime: RuntimeUnderTest | undefined;
    let ctx: ContractContext | undefined;
    const ref: ContractContextRef = () => {
      if (!ctx) throw new Error(`${name}: runtime not started (see the before hook's error)`);
      return ctx;
    };

    before(async () => {
      runtime = await startRuntime();
      const rt = new CriClient({ endpoint: runtime.endpoint, timeoutMs: 30_000 });
      ctx = { rt, logDir: fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-contract-logs-')) };
    }, { timeout: 120_000 });

    after(async () => {
      if (ctx) {
        const left = await teardownAllPods(ctx.rt.endpoint).catch(() => -1);
        ctx.rt.close();
        fs.rmSync(ctx.logDir, { recursive: true, force: true });
        if (left !== 0) process.stderr.write(`${name}: teardown left ${left} sandboxes\n`);
      }
      await runtime?.stop();
    }, { timeout: 120_000 });

    it('Version answers CRI v1 and Status reports the runtime and network ready', async () => {
      const { rt } = ref();
      const v = await rt.version();
      assert.equal(v.version, '0.1.0');
      assert.equal(v.runtimeApiVersion, 'v1');
      assert.notEqual(v.runtimeName, '');
      assert.notEqual(v.runtimeVersion, '');
      const st = await rt.status();
      const cond = (type: string): boolean | undefined => st.status?.conditions.find((c) => c.type === type)?.status;
      assert.equal(cond('RuntimeReady'), true);
      assert.equal(cond('NetworkReady'), true);
    });

    defineLifecycleContract(ref);
    defineQueryContract(ref);
    defineIoContract(ref);
  });
}
