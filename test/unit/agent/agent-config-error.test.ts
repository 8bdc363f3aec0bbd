import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentConfig } from '../../../src/main/agent/agent-config.js';
import { ConfigError } from '../../../src/shared/manifest/config-errors.js';

test('a bad agent flag is the one ConfigError class, code ERR_AGENT_CONFIG, naming the flag', () => {
  assert.throws(() => parseAgentConfig(['--max-pods', 'many']), (e: unknown) => e instanceof ConfigError && e.code === 'ERR_AGENT_CONFIG' && e.origin === '' && /--max-pods/.test(e.message));
});
