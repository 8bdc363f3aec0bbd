/**
 * Validation of the pod fields that become its resolver config, its /etc/hosts and its
 * termination-message mount (pkg/apis/core/validation: validatePodDNSConfig, validateHostAliases,
 * the hostname/subdomain checks of ValidatePodSpec, the container's terminationMessagePolicy),
 * with the API server's field paths and wording. A static pod or a manifest URL reaches the
 * agent unvalidated; these checks are what keeps ten nameservers, a hundred search domains or
 * an alias that is not an IP from reaching a pod's files.
 *
 * One addition over the API server: a dnsConfig option name or value with whitespace or a
 * control character is refused (the runtime writes `options NAME:VALUE` into resolv.conf, where
 * a newline would start a line of the file).
 */
import net from 'node:net';
import { MAX_DNS_NAMESERVERS, MAX_DNS_SEARCH_LIST_CHARS, MAX_DNS_SEARCH_PATHS } from '../dns/dns-limits.js';
import { fieldErr, type FieldError } from './field-error.js';
import { DNS1123_SUBDOMAIN_RE, SUBDOMAIN_DETAIL, validateDnsLabel } from './dns-name-validation.js';

const SUBDOMAIN_MAX = 253;
/** Longest terminationMessagePath accepted (PATH_MAX). */
export const MAX_TERMINATION_MESSAGE_PATH_BYTES = 4096;
const TERMINATION_MESSAGE_POLICIES = ['FallbackToLogsOnError', 'File'] as const;
const IP_DETAIL = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const SPACE_OR_CONTROL_RE = /[\s\u0000-\u001f\u007f]/;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Shown values are bounded (field-error.ts); long lists are summarised by their length. */
function shownList(v: readonly unknown[]): unknown {
  return v.length > 8 ? `${v.length} items` : v;
}

function validateSubdomain(v: unknown, field: string, errs: FieldError[]): void {
  if (typeof v !== 'string') return void errs.push(fieldErr.invalid(field, v, 'must be a string'));
  if (v.length > SUBDOMAIN_MAX) errs.push(fieldErr.invalid(field, v, `must be no more than ${SUBDOMAIN_MAX} characters`));
  if (!DNS1123_SUBDOMAIN_RE.test(v)) errs.push(fieldErr.invalid(field, v, SUBDOMAIN_DETAIL));
}

function validateIP(v: unknown, field: string, errs: FieldError[]): void {
  if (typeof v !== 'string' || net.isIP(v) === 0) errs.push(fieldErr.invalid(field, v, IP_DETAIL));
}

function validateDnsConfig(spec: Record<string, unknown>, errs: FieldError[]): void {
  const cfg = spec['dnsConfig'];
  const none = spec['dnsPolicy'] === 'None';
  if (cfg === undefined || cfg === null) {
    if (none) errs.push(fieldErr.required('spec.dnsConfig', 'must provide `dnsConfig` when `dnsPolicy` is None'));
    return;
  }
  if (!isObj(cfg)) return void errs.push(fieldErr.invalid('spec.dnsConfig', cfg, 'must be an object'));
  const servers = cfg['nameservers'] ?? [];
  const searches = cfg['searches'] ?? [];
  const options = cfg['options'] ?? [];
  if (!Array.isArray(servers)) return void errs.push(fieldErr.invalid('spec.dnsConfig.nameservers', servers, 'must be a list'));
  if (!Array.isArray(searches)) return void errs.push(fieldErr.invalid('spec.dnsConfig.searches', searches, 'must be a list'));
  if (!Array.isArray(options)) return void errs.push(fieldErr.invalid('spec.dnsConfig.options', options, 'must be a list'));
  if (none && servers.length === 0) return void errs.push(fieldErr.required('spec.dnsConfig.nameservers', 'must provide at least one DNS nameserver when `dnsPolicy` is None'));
  if (servers.length > MAX_DNS_NAMESERVERS) errs.push(fieldErr.invalid('spec.dnsConfig.nameservers', shownList(servers), `must not have more than ${MAX_DNS_NAMESERVERS} nameservers`));
  servers.slice(0, MAX_DNS_NAMESERVERS + 1).forEach((s: unknown, i) => validateIP(s, `spec.dnsConfig.nameservers[${i}]`, errs));
  if (searches.length > MAX_DNS_SEARCH_PATHS) errs.push(fieldErr.invalid('spec.dnsConfig.searches', shownList(searches), `must not have more than ${MAX_DNS_SEARCH_PATHS} search paths`));
  else {
    const line = searches.map((s) => (typeof s === 'string' ? s : '')).join(' ');
    if (line.length > MAX_DNS_SEARCH_LIST_CHARS) errs.push(fieldErr.invalid('spec.dnsConfig.searches', shownList(searches), `must not have more than ${MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list`));
    // A trailing dot is fine.
    searches.forEach((s: unknown, i) => validateSubdomain(typeof s === 'string' && s.endsWith('.') ? s.slice(0, -1) : s, `spec.dnsConfig.searches[${i}]`, errs));
  }
  options.forEach((o: unknown, i) => {
    const f = `spec.dnsConfig.options[${i}]`;
    const name = isObj(o) ? o['name'] : undefined;
    if (typeof name !== 'string' || name === '') return void errs.push(fieldErr.required(f, 'must not be empty'));
    if (SPACE_OR_CONTROL_RE.test(name)) errs.push(fieldErr.invalid(`${f}.name`, name, 'must not contain whitespace or control characters'));
    const value = isObj(o) ? o['value'] : undefined;
    if (value !== undefined && value !== null && (typeof value !== 'string' || SPACE_OR_CONTROL_RE.test(value))) {
      errs.push(fieldErr.invalid(`${f}.value`, value, 'must be a string without whitespace or control characters'));
    }
  });
}

function validateHostAliases(v: unknown, errs: FieldError[]): void {
  if (v === undefined || v === null) return;
  if (!Array.isArray(v)) return void errs.push(fieldErr.invalid('spec.hostAliases', v, 'must be a list'));
  v.forEach((a: unknown, i) => {
    const f = `spec.hostAliases[${i}]`;
    if (!isObj(a)) return void errs.push(fieldErr.invalid(f, a, 'must be an object'));
    validateIP(a['ip'], `${f}.ip`, errs);
    const names = a['hostnames'] ?? [];
    if (!Array.isArray(names)) return void errs.push(fieldErr.invalid(`${f}.hostnames`, names, 'must be a list'));
    names.forEach((n: unknown) => validateSubdomain(n, `${f}.hostnames`, errs));
  });
}

function validateTerminationMessage(spec: Record<string, unknown>, errs: FieldError[]): void {
  for (const key of ['initContainers', 'containers'] as const) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    list.forEach((c: unknown, i) => {
      if (!isObj(c)) return;
      const f = `spec.${key}[${i}]`;
      const policy = c['terminationMessagePolicy'];
      if (policy !== undefined && !(TERMINATION_MESSAGE_POLICIES as readonly unknown[]).includes(policy)) {
        errs.push(fieldErr.notSupported(`${f}.terminationMessagePolicy`, policy, TERMINATION_MESSAGE_POLICIES));
      }
      const p = c['terminationMessagePath'];
      if (p === undefined || p === '') return;
      if (typeof p !== 'string') return void errs.push(fieldErr.invalid(`${f}.terminationMessagePath`, p, 'must be a string'));
      if (!p.startsWith('/')) errs.push(fieldErr.invalid(`${f}.terminationMessagePath`, p, 'must be an absolute path'));
      if (p.includes('\0')) errs.push(fieldErr.invalid(`${f}.terminationMessagePath`, p, 'must not contain NUL'));
      if (Buffer.byteLength(p) > MAX_TERMINATION_MESSAGE_PATH_BYTES) errs.push(fieldErr.invalid(`${f}.terminationMessagePath`, p, `must be no more than ${MAX_TERMINATION_MESSAGE_PATH_BYTES} bytes`));
    });
  }
}

/** Appends the errors of dnsConfig, hostAliases, hostname, subdomain, setHostnameAsFQDN and termination-message fields. */
export function validatePodNaming(spec: Record<string, unknown>, errs: FieldError[]): void {
  validateDnsConfig(spec, errs);
  validateHostAliases(spec['hostAliases'], errs);
  for (const k of ['hostname', 'subdomain'] as const) {
    const v = spec[k];
    if (v !== undefined && v !== null && v !== '') validateDnsLabel(v, `spec.${k}`, errs);
  }
  const fqdn = spec['setHostnameAsFQDN'];
  if (fqdn !== undefined && fqdn !== null && typeof fqdn !== 'boolean') errs.push(fieldErr.invalid('spec.setHostnameAsFQDN', fqdn, 'must be a boolean'));
  validateTerminationMessage(spec, errs);
}
