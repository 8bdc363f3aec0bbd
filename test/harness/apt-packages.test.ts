/**
 * apt-packages: what counts as missing. Uses the real dpkg database with a package name that
 * cannot exist and one that always does (dpkg itself), so no apt run is needed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { missingPackages } from './apt-packages.js';

const NO_PKG = 'shardlet-no-such-package';

test('a package is missing when dpkg lacks it or one of its paths is absent', () => {
  assert.deepEqual(missingPackages([{ pkg: 'dpkg', paths: ['/usr/bin/dpkg'] }]), []);
  assert.deepEqual(missingPackages([{ pkg: 'dpkg', paths: ['/usr/bin/dpkg', '/nonexistent/shardlet'] }]), ['dpkg']);
  assert.deepEqual(missingPackages([{ pkg: NO_PKG, paths: ['/usr/bin/dpkg'] }]), [NO_PKG]);
  assert.deepEqual(missingPackages([{ pkg: NO_PKG, paths: [] }]), [NO_PKG]);
});

test('pathsSuffice: present files satisfy it whoever installed them (a kubectl from the machine image)', () => {
  assert.deepEqual(missingPackages([{ pkg: NO_PKG, paths: ['/usr/bin/dpkg'], pathsSuffice: true }]), []);
  assert.deepEqual(missingPackages([{ pkg: NO_PKG, paths: ['/nonexistent/shardlet'], pathsSuffice: true }]), [NO_PKG]);
  assert.deepEqual(missingPackages([{ pkg: NO_PKG, paths: [], pathsSuffice: true }]), [NO_PKG], 'no paths: dpkg decides');
});
