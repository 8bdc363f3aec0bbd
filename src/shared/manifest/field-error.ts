/**
 * Field-level validation errors, worded like apimachinery's `field.ErrorList` so that users see
 * the messages they know from `kubectl apply`:
 *
 *   spec.containers[1].name: Required value
 *   metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of ...
 *   spec.containers[2].name: Duplicate value: "app"
 *   spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"
 *   spec.containers[0].livenessProbe: Forbidden: may not specify more than 1 handler type
 *   spec.containers[0].volumeMounts[0].name: Not found: "data"
 */
import { boundedJson } from '../logging/bounded-text.js';

export type FieldErrorType = 'Required' | 'Invalid' | 'Duplicate' | 'NotSupported' | 'NotFound' | 'Forbidden';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with [i] for list indices and [key] for map keys, e.g. `spec.containers[0].resources.requests[cpu]`. */
  field: string;
  /** The offending value, when there is one to show. */
  value?: unknown;
  detail?: string;
}

/**
 * A value rendered the way Go's %q / %v would show it in a field error, shortened to
 * MAX_SHOWN_CHARS (values come from untrusted manifests: a 10 MiB name must not make a 10 MiB
 * message).
 */
function showValue(v: unknown): string {
  if (v === undefined) return '<nil>';
  return boundedJson(v);
}

export function formatFieldError(e: FieldError): string {
  const detail = e.detail !== undefined && e.detail !== '' ? e.detail : '';
  switch (e.type) {
    case 'Required':
      return `${e.field}: Required value${detail ? `: ${detail}` : ''}`;
    case 'Invalid':
      return `${e.field}: Invalid value: ${showValue(e.value)}${detail ? `: ${detail}` : ''}`;
    case 'Duplicate':
      return `${e.field}: Duplicate value: ${showValue(e.value)}${detail ? `: ${detail}` : ''}`;
    case 'NotSupported':
      return `${e.field}: Unsupported value: ${showValue(e.value)}${detail ? `: ${detail}` : ''}`;
    case 'NotFound':
      return `${e.field}: Not found: ${showValue(e.value)}`;
    case 'Forbidden':
      return `${e.field}: Forbidden${detail ? `: ${detail}` : ''}`;
    default: {
      const never: never = e.type;
      return `${e.field}: ${String(never)}`;
    }
  }
}

/** Field errors listed in one message at most (a fuzzed manifest can have thousands). */
export const MAX_LISTED_FIELD_ERRORS = 20;

export function formatFieldErrors(errs: readonly FieldError[]): string {
  const shown = errs.slice(0, MAX_LISTED_FIELD_ERRORS).map(formatFieldError);
  if (errs.length > shown.length) shown.push(`and ${errs.length - shown.length} more errors`);
  return shown.join('; ');
}

/** Constructors mirroring apimachinery's field.Required / field.Invalid / ... */
export const fieldErr = Object.freeze({
  required: (field: string, detail?: string): FieldError =>
    detail === undefined ? { type: 'Required', field } : { type: 'Required', field, detail },
  invalid: (field: string, value: unknown, detail: string): FieldError => ({ type: 'Invalid', field, value, detail }),
  duplicate: (field: string, value: unknown): FieldError => ({ type: 'Duplicate', field, value }),
  notSupported: (field: string, value: unknown, supported: readonly string[]): FieldError => ({
    type: 'NotSupported',
    field,
    value,
    detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  }),
  notFound: (field: string, value: unknown): FieldError => ({ type: 'NotFound', field, value }),
  forbidden: (field: string, detail: string): FieldError => ({ type: 'Forbidden', field, detail }),
});
