/**
 * The secure port's serving certificate, resolved once at start as the kubelet does:
 * --tls-cert-file + --tls-private-key-file when given (read as is); otherwise
 * `<root-dir>/pki/kubelet.crt` + `kubelet.key`, generated self-signed the first time
 * (self-signed-cert.ts) and reused afterwards. The key file is written 0600 in a 0700 directory,
 * written to a temp name and renamed so a crash never leaves half a key behind.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateSelfSignedServing } from './self-signed-cert.js';

export interface ServingCertOptions {
  tlsCertFile: string | undefined;
  tlsPrivateKeyFile: string | undefined;
  rootDir: string;
  /** Extra SANs for a generated certificate (node addresses). */
  altNames: readonly string[];
  nowMs: number;
}

export interface ServingCert {
  cert: Buffer;
  key: Buffer;
  /** Where they came from (for the log). */
  certFile: string;
  generated: boolean;
}

export function resolveServingCert(o: ServingCertOptions): ServingCert {
  if (o.tlsCertFile !== undefined && o.tlsPrivateKeyFile !== undefined) {
    return { cert: fs.readFileSync(o.tlsCertFile), key: fs.readFileSync(o.tlsPrivateKeyFile), certFile: o.tlsCertFile, generated: false };
  }
  const dir = path.join(o.rootDir, 'pki');
  const certFile = path.join(dir, 'kubelet.crt');
  const keyFile = path.join(dir, 'kubelet.key');
  if (fs.existsSync(certFile) && fs.existsSync(keyFile)) {
    return { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile), certFile, generated: false };
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const host = os.hostname().toLowerCase();
  const pair = generateSelfSignedServing({ host, altNames: ['localhost', '127.0.0.1', ...o.altNames], nowMs: o.nowMs });
  writeAtomic(keyFile, pair.keyPem, 0o600);
  writeAtomic(certFile, pair.certPem, 0o644);
  return { cert: Buffer.from(pair.certPem), key: Buffer.from(pair.keyPem), certFile, generated: true };
}

function writeAtomic(file: string, data: string, mode: number): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, data, { mode });
  fs.renameSync(tmp, file);
}
