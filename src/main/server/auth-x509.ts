/**
 * x509 client-certificate authentication against --client-ca-file (the TLS layer verifies the
 * chain; the server requests a certificate but accepts connections without one). As
 * k8s.io/apiserver's x509 authenticator: user = the subject's CN, groups = its O values; a
 * certificate that did not verify is an error (401), not "no credentials".
 */
import type { Authenticator, AuthnResult, RequestCredentials } from './auth-types.js';

function values(v: string | readonly string[] | undefined): string[] {
  if (v === undefined) return [];
  return typeof v === 'string' ? [v] : [...v];
}

export class X509Authenticator implements Authenticator {
  async authenticate(creds: RequestCredentials): Promise<AuthnResult> {
    const cert = creds.peerCertificate;
    if (cert === undefined || Object.keys(cert.subject ?? {}).length === 0) return { kind: 'none' };
    if (!creds.peerVerified) return { kind: 'error', reason: `verifying certificate: ${creds.peerVerifyError ?? 'not verified'}` };
    const cn = values(cert.subject['CN'])[0];
    if (cn === undefined || cn === '') return { kind: 'error', reason: 'client certificate has no common name' };
    return { kind: 'user', user: { name: cn, uid: '', groups: values(cert.subject['O']), extra: {} } };
  }
}
