/**
 * The real kubelet the bench runs beside shardlet: v1.20.2, built from Debian bookworm's
 * `kubernetes` source package by `test/harness/build-kube-apiserver.sh kubelet`, exactly as the
 * control-plane harness builds kube-apiserver (apiserver-install.ts: same script, same source,
 * same cache outside the repository:
 * `${SHARDLET_TOOLS_DIR:-/var/cache/shardlet-tools}/kubelet-<version>/kubelet`). A fresh machine
 * builds it on first use (root: the script installs Go with apt; ~8 min on 2 cores from a cold
 * Go cache); a later call finds the cached binary at once.
 *
 * `SHARDLET_KUBELET=/path/to/kubelet` bypasses the build (an absolute path to an existing file).
 * A v1.20 kubelet speaks CRI runtime.v1alpha2 only: containerd 1.6 and the simulated runtime
 * serve it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ControlPlaneInstallError, ensureKubeComponent } from './apiserver-install.js';

/** The kubelet binary's absolute path (memoised by ensureKubeComponent; a failure is not cached). */
export function ensureKubelet(): Promise<string> {
  const override = process.env['SHARDLET_KUBELET'];
  if (override !== undefined && override !== '') {
    if (!path.isAbsolute(override) || !fs.existsSync(override)) {
      return Promise.reject(new ControlPlaneInstallError('ERR_HARNESS_BUILD', `SHARDLET_KUBELET=${override}: not an absolute path to an existing file`));
    }
    return Promise.resolve(override);
  }
  if (process.getuid?.() !== 0) {
    return Promise.reject(new ControlPlaneInstallError('ERR_HARNESS_NOT_ROOT', 'the kubelet is built with apt-installed Go and runs pods on a private containerd: run as root, or set SHARDLET_KUBELET'));
  }
  return ensureKubeComponent('kubelet');
}
