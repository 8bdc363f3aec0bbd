/**
 * The secure port's authentication and authorization seams, as the kubelet has them
 * (k8s.io/apiserver authenticator.Request and authorizer.Authorizer): small role interfaces
 * that the x509, TokenReview and SubjectAccessReview implementations and test fakes satisfy.
 */

/** An authenticated identity (user.Info). */
export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

/**
 * One authenticator's verdict on a request:
 * - `user`: authenticated;
 * - `none`: this request carries no credentials of this kind (the next authenticator decides);
 * - `error`: credentials were present but are invalid, or could not be checked. An error makes
 *   the request 401 even when anonymous access is on (the apiserver's union is fail-on-error
 *   before the anonymous authenticator).
 */
export type AuthnResult =
  | { readonly kind: 'user'; readonly user: UserInfo }
  | { readonly kind: 'none' }
  | { readonly kind: 'error'; readonly reason: string };

/** What an authenticator may look at: the TLS peer and the Authorization header. */
export interface RequestCredentials {
  /** The client certificate's DER-decoded fields (undefined without one). */
  readonly peerCertificate: PeerCertificate | undefined;
  /** TLS verified the client certificate against --client-ca-file. */
  readonly peerVerified: boolean;
  /** Why verification failed (the TLS authorizationError), when it did. */
  readonly peerVerifyError: string | undefined;
  readonly authorization: string | undefined;
}

/** The subset of tls.PeerCertificate the x509 authenticator reads. */
export interface PeerCertificate {
  readonly subject: Readonly<Record<string, string | readonly string[] | undefined>>;
}

export interface Authenticator {
  authenticate(creds: RequestCredentials): Promise<AuthnResult>;
}

/** Authorization attributes of a kubelet API request (authorizer.AttributesRecord, resource form). */
export interface RequestAttributes {
  readonly user: UserInfo;
  /** From the HTTP method: get, create, update, patch, delete. */
  readonly verb: string;
  readonly namespace: '';
  readonly apiGroup: '';
  readonly apiVersion: 'v1';
  readonly resource: 'nodes';
  /** proxy, stats, metrics, log or spec (auth-attributes.ts). */
  readonly subresource: string;
  /** The node name. */
  readonly name: string;
  readonly path: string;
}

/** `error`: the decision could not be made (500 "Authorization error (...)"). */
export type AuthzDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'error'; readonly reason: string };

export interface Authorizer {
  authorize(attrs: RequestAttributes): Promise<AuthzDecision>;
}
