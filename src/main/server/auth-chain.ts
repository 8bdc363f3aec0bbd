/**
 * The secure port's request authentication (the kubelet's DelegatingAuthenticatorConfig): the
 * x509 and token authenticators in a union — the first to name a user wins; then, when none did,
 * an error from any of them is a 401 (fail-on-error) and otherwise the request is anonymous
 * (`system:anonymous`, group `system:unauthenticated`) if --anonymous-auth is on, else 401.
 * Then authorization of the request's attributes (auth-attributes.ts).
 *
 * The outcome is data: the server turns it into the kubelet's answers — 401 "Unauthorized",
 * 403 "Forbidden (user=…, verb=…, resource=…, subresource=…)", 500 "Authorization error (…)".
 */
import { requestAttributes } from './auth-attributes.js';
import type { Authenticator, Authorizer, RequestAttributes, RequestCredentials, UserInfo } from './auth-types.js';

export const ANONYMOUS_USER: UserInfo = Object.freeze({ name: 'system:anonymous', uid: '', groups: Object.freeze(['system:unauthenticated']), extra: Object.freeze({}) });

export type AuthOutcome =
  | { readonly kind: 'allowed'; readonly attrs: RequestAttributes }
  | { readonly kind: 'unauthenticated'; readonly reason: string }
  | { readonly kind: 'forbidden'; readonly attrs: RequestAttributes; readonly reason: string }
  | { readonly kind: 'authz-error'; readonly attrs: RequestAttributes; readonly reason: string };

export interface RequestAuthOptions {
  authenticators: readonly Authenticator[];
  anonymous: boolean;
  authorizer: Authorizer;
  nodeName: string;
}

export class RequestAuth {
  readonly #o: RequestAuthOptions;

  constructor(opts: RequestAuthOptions) {
    if (!opts?.authorizer || !Array.isArray(opts.authenticators)) throw new TypeError('RequestAuth: authenticators and authorizer are required');
    this.#o = opts;
  }

  async check(creds: RequestCredentials, method: string, path: string): Promise<AuthOutcome> {
    let user: UserInfo | undefined;
    const errors: string[] = [];
    for (const a of this.#o.authenticators) {
      const r = await a.authenticate(creds);
      if (r.kind === 'user') {
        user = r.user;
        break;
      }
      if (r.kind === 'error') errors.push(r.reason);
    }
    if (user === undefined) {
      if (errors.length > 0) return { kind: 'unauthenticated', reason: errors.join('; ') };
      if (!this.#o.anonymous) return { kind: 'unauthenticated', reason: 'no credentials' };
      user = ANONYMOUS_USER;
    }
    const attrs = requestAttributes(user, method, path, this.#o.nodeName);
    const d = await this.#o.authorizer.authorize(attrs);
    switch (d.kind) {
      case 'allow':
        return { kind: 'allowed', attrs };
      case 'deny':
        return { kind: 'forbidden', attrs, reason: d.reason };
      case 'error':
        return { kind: 'authz-error', attrs, reason: d.reason };
      default: {
        const never: never = d;
        return never;
      }
    }
  }
}

/** The kubelet's answer bodies for a refused request (text, as go-restful's WriteErrorString). */
export function refusalOf(o: Exclude<AuthOutcome, { kind: 'allowed' }>): { status: number; body: string } {
  switch (o.kind) {
    case 'unauthenticated':
      return { status: 401, body: 'Unauthorized' };
    case 'forbidden':
      return { status: 403, body: `Forbidden (${describe(o.attrs)})` };
    case 'authz-error':
      return { status: 500, body: `Authorization error (${describe(o.attrs)})` };
    default: {
      const never: never = o;
      return never;
    }
  }
}

function describe(a: RequestAttributes): string {
  return `user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource}`;
}
