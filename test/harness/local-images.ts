/**
 * The two local OCI images every containerd test uses (no registry is reachable):
 *
 * - `docker.io/local/pause:1`: a static C program that sleeps until SIGTERM/SIGINT and exits 0
 *   (and reaps children, like the real pause when it is a shared PID namespace's init). It is the
 *   containerd `sandbox_image`.
 * - `docker.io/local/busybox:1`: Debian's static `/bin/busybox` with a `/bin/<applet>` symlink for
 *   every applet it lists; `Cmd ["sh"]` and no Entrypoint, like Docker Hub's busybox.
 *
 * Built once and cached as OCI image-layout tars under `os.tmpdir()/shardlet-images/<key>/`,
 * where key hashes everything that determines the bytes (pause source, the busybox binary, the
 * builder version). Publication is atomic (build in a private dir, then rename), so concurrent
 * builders are safe: the first rename wins, the others use it.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildOciImageLayout, type OciImageSpec } from './oci-image-layout.js';
import type { TarEntry } from './tar-writer.js';

export const PAUSE_IMAGE = 'docker.io/local/pause:1';
export const BUSYBOX_IMAGE = 'docker.io/local/busybox:1';

/** Bump when the image layout this module writes changes. */
const BUILDER_VERSION = 'shardlet-local-images-v1';
const BUSYBOX_BINARY = '/bin/busybox';

const PAUSE_SOURCE = `#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  signal(SIGTERM, quit); signal(SIGINT, quit); signal(SIGCHLD, reap);
  for (;;) pause();
}
`;

export interface LocalImage {
  /** Reference as tests use it. */
  readonly name: string;
  /** OCI image-layout tar for `ctr images import`. */
  readonly tarPath: string;
  /** `sha256:…` image id (the config digest), what CRI reports as `Image.id`. */
  readonly id: string;
}

export interface LocalImages {
  readonly pause: LocalImage;
  readonly busybox: LocalImage;
}

export class LocalImageError extends Error {
  override readonly name = 'LocalImageError';
  readonly code = 'ERR_HARNESS_IMAGE_BUILD';
}

function cacheKey(): string {
  const h = crypto.createHash('sha256');
  h.update(BUILDER_VERSION).update('\0').update(PAUSE_SOURCE).update('\0');
  h.update(fs.readFileSync(BUSYBOX_BINARY));
  return h.digest('hex').slice(0, 16);
}

function compilePause(workDir: string): Buffer {
  const src = path.join(workDir, 'pause.c');
  const out = path.join(workDir, 'pause');
  fs.writeFileSync(src, PAUSE_SOURCE);
  const r = spawnSync('gcc', ['-static', '-O2', '-s', '-o', out, src], { encoding: 'utf8' });
  if (r.status !== 0) throw new LocalImageError(`gcc -static pause.c failed (is libc6-dev installed?): ${r.error?.message ?? r.stderr}`);
  return fs.readFileSync(out);
}

function rootfsSkeleton(): TarEntry[] {
  const dirs = ['bin', 'dev', 'etc', 'proc', 'sys', 'root', 'usr', 'usr/bin', 'sbin', 'var'];
  return [
    ...dirs.map((name): TarEntry => ({ type: 'dir', name })),
    { type: 'dir', name: 'tmp', mode: 0o1777 },
    { type: 'file', name: 'etc/passwd', data: Buffer.from('root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n') },
    { type: 'file', name: 'etc/group', data: Buffer.from('root:x:0:\nnogroup:x:65534:\n') },
  ];
}

function pauseSpec(binary: Buffer): OciImageSpec {
  return {
    name: PAUSE_IMAGE,
    layer: [{ type: 'file', name: 'pause', data: binary, mode: 0o755 }],
    entrypoint: ['/pause'],
  };
}

function busyboxSpec(): OciImageSpec {
  const list = spawnSync(BUSYBOX_BINARY, ['--list'], { encoding: 'utf8' });
  if (list.status !== 0) throw new LocalImageError(`${BUSYBOX_BINARY} --list failed: ${list.error?.message ?? list.stderr}`);
  const applets = list.stdout.split('\n').map((s) => s.trim()).filter((s) => s !== '' && s !== 'busybox' && !s.includes('/'));
  return {
    name: BUSYBOX_IMAGE,
    layer: [
      ...rootfsSkeleton(),
      { type: 'file', name: 'bin/busybox', data: fs.readFileSync(BUSYBOX_BINARY), mode: 0o755 },
      ...applets.map((a): TarEntry => ({ type: 'symlink', name: `bin/${a}`, target: 'busybox' })),
    ],
    cmd: ['sh'],
  };
}

/** Builds (or finds in the cache) both images and returns their tar paths and ids. */
export function ensureLocalImages(cacheRoot = path.join(os.tmpdir(), 'shardlet-images')): LocalImages {
  if (!fs.existsSync(BUSYBOX_BINARY)) throw new LocalImageError(`${BUSYBOX_BINARY} missing: apt-get install busybox-static (test/harness/prepare.ts does)`);
  const dir = path.join(cacheRoot, cacheKey());
  const manifestPath = path.join(dir, 'images.json');
  if (!fs.existsSync(manifestPath)) {
    fs.mkdirSync(cacheRoot, { recursive: true });
    const work = fs.mkdtempSync(path.join(cacheRoot, '.build-'));
    try {
      const pause = buildOciImageLayout(pauseSpec(compilePause(work)));
      const busybox = buildOciImageLayout(busyboxSpec());
      fs.writeFileSync(path.join(work, 'pause.tar'), pause.tar);
      fs.writeFileSync(path.join(work, 'busybox.tar'), busybox.tar);
      fs.rmSync(path.join(work, 'pause.c'));
      fs.rmSync(path.join(work, 'pause'));
      // Written last: its presence in the published dir means both tars are complete.
      fs.writeFileSync(path.join(work, 'images.json'), JSON.stringify({ pause: pause.configDigest, busybox: busybox.configDigest }));
      fs.renameSync(work, dir);
    } catch (err) {
      fs.rmSync(work, { recursive: true, force: true });
      // Lost the race to a concurrent builder: theirs is as good as ours.
      if (!fs.existsSync(manifestPath)) throw err;
    }
  }
  const ids = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as { pause: string; busybox: string };
  return {
    pause: { name: PAUSE_IMAGE, tarPath: path.join(dir, 'pause.tar'), id: ids.pause },
    busybox: { name: BUSYBOX_IMAGE, tarPath: path.join(dir, 'busybox.tar'), id: ids.busybox },
  };
}
