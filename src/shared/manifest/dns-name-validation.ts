/**
 * DNS-1123 name checks with the API server's wording (apimachinery's IsDNS1123Label /
 * IsDNS1123Subdomain), shared by the pod validators (pod-validation.ts, pod-validation-naming.ts).
 */
import { fieldErr, type FieldError } from './field-error.js';

export const DNS1123_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1123_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const SUBDOMAIN_DETAIL =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end " +
  "with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const LABEL_DETAIL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an " +
  "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

export function validateDnsLabel(v: unknown, field: string, errs: FieldError[]): void {
  if (typeof v !== 'string') return void errs.push(fieldErr.invalid(field, v, 'must be a string'));
  if (v.length > 63) errs.push(fieldErr.invalid(field, v, 'must be no more than 63 characters'));
  if (!DNS1123_LABEL_RE.test(v)) errs.push(fieldErr.invalid(field, v, LABEL_DETAIL));
}
