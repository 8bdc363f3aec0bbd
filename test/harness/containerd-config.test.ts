import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containerdLayout, renderBridgeConflist, renderContainerdConfig } from './containerd-config.js';

describe('containerd-config', () => {
  const layout = containerdLayout('/tmp/shardlet-ctrd-test');
  const toml = renderContainerdConfig({ layout, sandboxImage: 'docker.io/local/pause:1', logLevel: 'info' });

  it('keeps every per-instance path inside the temp dir', () => {
    for (const key of ['root', 'state', 'address', 'Root', 'conf_dir', 'path']) {
      const m = new RegExp(`^\\s*${key} = "([^"]*)"`, 'm').exec(toml);
      assert.ok(m, `${key} missing`);
      assert.ok(m[1]?.startsWith('/tmp/shardlet-ctrd-test/'), `${key} = ${m[1]} escapes the temp dir`);
    }
  });

  it('sets what these machines require: restrict_oom_score_adj, netns under state, local pause, CNI bin dir, info logs', () => {
    assert.match(toml, /^\s*restrict_oom_score_adj = true$/m);
    assert.match(toml, /^\s*netns_mounts_under_state_dir = true$/m);
    assert.match(toml, /^\s*sandbox_image = "docker.io\/local\/pause:1"$/m);
    assert.match(toml, /^\s*bin_dir = "\/usr\/lib\/cni"$/m);
    assert.match(toml, /^\s*level = "info"$/m);
    assert.match(toml, /^version = 2$/m);
  });

  it('renders one bridge conflist (cniVersion 1.0.0, gateway bridge, host-local in the temp dir) plus loopback', () => {
    const conf = JSON.parse(renderBridgeConflist({ bridge: 'shardlet-br9', subnet: '10.244.9.0/24', gateway: '10.244.9.1' }, layout));
    assert.equal(conf.cniVersion, '1.0.0');
    assert.deepEqual(conf.plugins.map((p: { type: string }) => p.type), ['bridge', 'loopback']);
    const bridge = conf.plugins[0];
    assert.equal(bridge.bridge, 'shardlet-br9');
    assert.equal(bridge.isGateway, true);
    assert.equal(bridge.ipam.type, 'host-local');
    assert.equal(bridge.ipam.dataDir, layout.cniDataDir);
    assert.deepEqual(bridge.ipam.ranges, [[{ subnet: '10.244.9.0/24', gateway: '10.244.9.1' }]]);
  });
});
