/**
 * Identities of one harness control plane, all under its `pki/` directory: a private CA (EC P-256,
 * made with openssl), the apiserver's serving certificate (SANs IP:127.0.0.1, DNS:localhost), the
 * service-account signing key pair, client certificates (admin in `system:masters`; nodes as
 * `CN=system:node:<name>, O=system:nodes`, so the Node authorizer and NodeRestriction apply), the
 * static bearer-token file, and kubeconfigs pointing at them.
 *
 * Names that end up in file names and certificate subjects are validated first (DNS-1123
 * subdomain, as Kubernetes requires for node names): nothing a test passes becomes a path unchecked.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const OPENSSL_CNF = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
[client_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
`;

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = ['-days', '3650'];

/** DNS-1123 subdomain (node names), at most 253 characters. */
const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** DNS-1123 label (namespaces), at most 63 characters. */
const DNS1123_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function isDns1123Subdomain(s: string): boolean {
  return DNS1123_SUBDOMAIN.test(s);
}

export function isDns1123Label(s: string): boolean {
  return DNS1123_LABEL.test(s);
}

export class CredentialsError extends Error {
  override readonly name = 'CredentialsError';
  readonly code: 'ERR_HARNESS_BAD_NAME' | 'ERR_HARNESS_OPENSSL';
  constructor(code: CredentialsError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export interface CertPair {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface Pki {
  readonly dir: string;
  readonly caFile: string;
  readonly caKeyFile: string;
  readonly serving: CertPair;
  readonly admin: CertPair;
  /** Service-account token signing key (private) and its public half (verification). */
  readonly saKeyFile: string;
  readonly saPubFile: string;
}

export interface TokenUser {
  /** User name, e.g. `system:node:n1`. Letters, digits and `:._@-` only. */
  readonly name: string;
  readonly groups: readonly string[];
}

export interface IssuedToken extends TokenUser {
  readonly token: string;
}

function openssl(bin: string, args: readonly string[]): void {
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new CredentialsError('ERR_HARNESS_OPENSSL', `openssl ${args.join(' ')} failed: ${r.error?.message ?? r.stderr}`);
}

/** Certificate subject components: no `/`, `=`, `,` or `+` (they would change the subject's structure). */
const SUBJECT_PART = /^[A-Za-z0-9:._@-]{1,128}$/;

function subject(cn: string, orgs: readonly string[]): string {
  for (const part of [cn, ...orgs]) {
    if (!SUBJECT_PART.test(part)) throw new CredentialsError('ERR_HARNESS_BAD_NAME', `certificate subject part ${JSON.stringify(part)} is not allowed`);
  }
  return `/CN=${cn}${orgs.map((o) => `/O=${o}`).join('')}`;
}

function issue(bin: string, pkiDir: string, cnf: string, ca: { caFile: string; caKeyFile: string }, base: string, ext: string, subj: string): CertPair {
  const pair = { certFile: path.join(pkiDir, `${base}.crt`), keyFile: path.join(pkiDir, `${base}.key`) };
  openssl(bin, ['req', '-x509', '-new', '-config', cnf, '-extensions', ext, ...EC_KEY, '-keyout', pair.keyFile, '-out', pair.certFile, ...DAYS, '-subj', subj, '-CA', ca.caFile, '-CAkey', ca.caKeyFile]);
  return pair;
}

/** Creates the CA, serving cert, admin client cert and service-account keys under `dir`. */
export function createPki(opensslBin: string, dir: string): Pki {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const cnf = path.join(dir, 'openssl.cnf');
  fs.writeFileSync(cnf, OPENSSL_CNF);
  const caFile = path.join(dir, 'ca.crt');
  const caKeyFile = path.join(dir, 'ca.key');
  openssl(opensslBin, ['req', '-x509', '-new', '-config', cnf, '-extensions', 'ca_ext', ...EC_KEY, '-keyout', caKeyFile, '-out', caFile, ...DAYS, '-subj', '/CN=shardlet-harness-ca']);
  const ca = { caFile, caKeyFile };
  const serving = issue(opensslBin, dir, cnf, ca, 'apiserver', 'server_ext', '/CN=kube-apiserver');
  const admin = issue(opensslBin, dir, cnf, ca, 'admin', 'client_ext', subject('shardlet-admin', ['system:masters']));
  const saKeyFile = path.join(dir, 'sa.key');
  const saPubFile = path.join(dir, 'sa.pub');
  openssl(opensslBin, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', saKeyFile]);
  openssl(opensslBin, ['ec', '-in', saKeyFile, '-pubout', '-out', saPubFile]);
  return { dir, caFile, caKeyFile, serving, admin, saKeyFile, saPubFile };
}

/** A client certificate `CN=system:node:<nodeName>, O=system:nodes`, signed by the CA. */
export function issueNodeCert(opensslBin: string, pki: Pki, nodeName: string): CertPair {
  if (!isDns1123Subdomain(nodeName)) throw new CredentialsError('ERR_HARNESS_BAD_NAME', `node name ${JSON.stringify(nodeName)} is not a DNS-1123 subdomain`);
  return issue(opensslBin, pki.dir, path.join(pki.dir, 'openssl.cnf'), pki, `node-${nodeName}`, 'client_ext', subject(`system:node:${nodeName}`, ['system:nodes']));
}

/**
 * The apiserver's client certificate towards kubelets (`--kubelet-client-certificate/-key`):
 * `CN=kube-apiserver-kubelet-client, O=system:masters`, signed by the harness CA, so an agent
 * started with `--client-ca-file=<caFile>` authenticates it and a Webhook authorizer allows it.
 */
export function issueKubeletClientCert(opensslBin: string, pki: Pki): CertPair {
  return issue(opensslBin, pki.dir, path.join(pki.dir, 'openssl.cnf'), pki, 'apiserver-kubelet-client', 'client_ext', subject('kube-apiserver-kubelet-client', ['system:masters']));
}

/**
 * Random tokens for each user, written as the apiserver's `--token-auth-file` CSV
 * (`token,user,uid,"group1,group2"`). The apiserver reads it at start only.
 */
export function writeTokenFile(file: string, users: readonly TokenUser[]): IssuedToken[] {
  const issued = users.map((u) => {
    for (const part of [u.name, ...u.groups]) {
      if (!SUBJECT_PART.test(part)) throw new CredentialsError('ERR_HARNESS_BAD_NAME', `token user/group ${JSON.stringify(part)} is not allowed`);
    }
    return { ...u, token: crypto.randomBytes(24).toString('hex') };
  });
  const lines = issued.map((u) => `${u.token},${u.name},${u.name},"${u.groups.join(',')}"`);
  fs.writeFileSync(file, lines.join('\n') + '\n', { mode: 0o600 });
  return issued;
}

export type KubeconfigUser = CertPair | { readonly token: string };

/** Writes a kubeconfig (JSON, which every YAML reader takes) for `server` with one user. */
export function writeKubeconfig(file: string, server: string, caFile: string, userName: string, user: KubeconfigUser): string {
  const creds = 'token' in user ? { token: user.token } : { 'client-certificate': user.certFile, 'client-key': user.keyFile };
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'harness', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: userName, user: creds }],
    contexts: [{ name: 'harness', context: { cluster: 'harness', user: userName } }],
    'current-context': 'harness',
  };
  fs.writeFileSync(file, JSON.stringify(kc, null, 2) + '\n', { mode: 0o600 });
  return file;
}
