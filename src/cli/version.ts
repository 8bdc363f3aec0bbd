/**
 * The version `shardlet --version` prints: package.json's `version`, read at run time from the
 * package root (found by walking up from this file: works from src/ and dist/src/), so a release
 * bump needs no code change.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export class VersionError extends Error {
  override readonly name = 'VersionError';
  readonly code = 'ERR_VERSION_UNKNOWN';
}

/** The `version` of the nearest package.json named `shardlet` above this module. */
export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'shardlet' && typeof pkg.version === 'string') return pkg.version;
    }
    dir = path.dirname(dir);
  }
  throw new VersionError(`no shardlet package.json above ${fileURLToPath(import.meta.url)}`);
}
