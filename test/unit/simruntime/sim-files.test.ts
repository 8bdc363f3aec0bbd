import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { containerCat, containerWriter, resolvConfContent } from '../../../src/simruntime/sim-files.js';
import { resolveArgv } from '../../../src/simruntime/sim-shell.js';

test('resolv.conf as containerd writes it from the sandbox DNS config', () => {
  assert.equal(resolvConfContent({ servers: ['10.0.0.1', '10.0.0.2'], searches: ['a', 'b'], options: ['ndots:5'] }), 'search a b\nnameserver 10.0.0.1\nnameserver 10.0.0.2\noptions ndots:5\n');
  assert.equal(resolvConfContent({ servers: [], searches: [], options: [] }), '');
  const cat = containerCat([], { metadata: { name: 'p', namespace: 'n', uid: 'u', attempt: 0 }, dnsConfig: { servers: ['1.1.1.1'], searches: [], options: [] }, hostname: 'h' }, ['/etc/resolv.conf', '/etc/hostname']);
  assert.equal(cat.stdout.toString(), 'nameserver 1.1.1.1\nh\n');
});

test('shell > and >> write through the container mounts; read-only mounts refuse; the image layer drops it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlet-simfiles-'));
  try {
    const file = path.join(dir, 'tlog');
    fs.writeFileSync(file, 'old');
    const write = containerWriter([{ containerPath: '/dev/termination-log', hostPath: file }, { containerPath: '/ro', hostPath: dir, readonly: true }]);
    const r = resolveArgv(['sh', '-c', 'echo -n one > /dev/termination-log; echo two >>/dev/termination-log; echo x > /tmp/none; echo y > /ro/f || exit 7'], {}, undefined, write);
    assert.equal(r.kind, 'timeline');
    assert.equal(fs.readFileSync(file, 'utf8'), 'onetwo\n');
    const t = (r as Extract<typeof r, { kind: 'timeline' }>).timeline;
    assert.deepEqual(t.outputs, [{ atMs: 0, stream: 'stderr', text: "sh: can't create /ro/f: Read-only file system\n" }]);
    assert.deepEqual(t.exit, { atMs: 0, code: 7 });
    assert.equal(fs.existsSync(path.join(dir, 'f')), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
