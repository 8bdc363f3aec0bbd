/**
 * Typed errors of the pod config sources. Every manifest problem becomes a {@link ConfigError}
 * with a stable code and a message that names the origin (file path or URL) and, where there is
 * one, the field path, in the API server's wording:
 *
 *   manifests/web.yaml: spec.containers[1].name: Required value
 *
 * The agent's own flag and config-file errors (agent-config.ts) are ConfigErrors too, code
 * ERR_AGENT_CONFIG: one class for every configuration problem, told apart by code.
 *
 * These errors are data: sources report them through an injected callback/logger and carry on;
 * one bad manifest never disturbs the pods of another. Callers test `code`, never `message`.
 */
import type { FieldError } from './field-error.js';
import { formatFieldErrors, MAX_LISTED_FIELD_ERRORS } from './field-error.js';
import { boundedJson, truncateText } from '../logging/bounded-text.js';

export type ConfigErrorCode =
  /** The bytes are not YAML/JSON, or a document cannot be decoded as an object of its kind. */
  | 'ERR_MANIFEST_PARSE'
  /** Decoded, but not a v1 Pod (wrong kind / apiVersion), or the pod fails validation. */
  | 'ERR_MANIFEST_INVALID'
  /** A pod with the same namespace/name is already defined by another manifest of the source. */
  | 'ERR_MANIFEST_DUPLICATE'
  /** The manifest path or a file in it could not be read (permissions, I/O). */
  | 'ERR_MANIFEST_READ'
  /** The manifest URL could not be fetched (connect error, timeout, non-200 status). */
  | 'ERR_MANIFEST_FETCH'
  /**
   * A manifest file or HTTP body is larger than the configured limit, expands (YAML aliases)
   * beyond its decode budget, or took more time or memory to decode than the decoder allows.
   */
  | 'ERR_MANIFEST_TOO_LARGE'
  /** A source or merger was constructed with bad options. */
  | 'ERR_CONFIG_OPTION'
  /** The agent's flags or config file are invalid (the message names the flag); exit code 2. */
  | 'ERR_AGENT_CONFIG';

export interface ConfigErrorWire {
  code: string;
  message: string;
  origin: string;
}

/** A ConfigError as it crosses a thread (manifest-decoder.ts): everything needed to rebuild it. */
export interface ConfigErrorTransfer {
  code: ConfigErrorCode;
  origin: string;
  message: string;
  fieldErrors: FieldError[];
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code: ConfigErrorCode;
  /** The file path or URL the problem is in ('' for option errors). */
  readonly origin: string;
  /** Field-level problems, when the error is a validation failure. */
  readonly fieldErrors: readonly FieldError[];

  constructor(code: ConfigErrorCode, origin: string, detail: string, fieldErrors: readonly FieldError[] = []) {
    super(origin === '' ? detail : `${origin}: ${detail}`);
    this.code = code;
    this.origin = origin;
    this.fieldErrors = fieldErrors;
  }

  /** A validation failure: the message lists every field error, `; `-separated. */
  static invalid(origin: string, errs: readonly FieldError[]): ConfigError {
    return new ConfigError('ERR_MANIFEST_INVALID', origin, formatFieldErrors(errs), errs);
  }

  /** For a thread boundary; field error values are shortened (they can be megabytes of input). */
  toTransfer(): ConfigErrorTransfer {
    const fieldErrors = this.fieldErrors.slice(0, MAX_LISTED_FIELD_ERRORS).map((e) => {
      const value: unknown = e.value;
      if (value === undefined) return { ...e };
      return { ...e, value: typeof value === 'string' ? truncateText(value) : typeof value === 'object' && value !== null ? boundedJson(value) : value };
    });
    return { code: this.code, origin: this.origin, message: this.message, fieldErrors };
  }

  /** Rebuilds an error sent with {@link toTransfer}; the message is kept as it was. */
  static fromTransfer(t: ConfigErrorTransfer): ConfigError {
    const prefix = t.origin === '' ? '' : `${t.origin}: `;
    const detail = t.message.startsWith(prefix) ? t.message.slice(prefix.length) : t.message;
    return new ConfigError(t.code, t.origin, detail, t.fieldErrors);
  }

  toWire(): ConfigErrorWire {
    return { code: this.code, message: this.message, origin: this.origin };
  }
}

export function isConfigError(e: unknown): e is ConfigError {
  return e instanceof ConfigError;
}

/** Callback through which sources report manifest problems (in addition to logging them). */
export type ConfigErrorHandler = (err: ConfigError) => void;
