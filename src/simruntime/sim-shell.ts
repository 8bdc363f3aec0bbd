/**
 * The simulated runtime's command interpreter: turns a container's argv (or an ExecSync cmd)
 * into a deterministic {@link Timeline} — what it prints, when, and when it exits — as the
 * busybox image this project tests against would run it. Pure: no clock, no I/O.
 *
 * The simulated busybox image is Docker Hub's layout (and the project's test image,
 * test/harness/local-images.ts): `/bin/busybox` plus a `/bin/<applet>` link per applet. Of the
 * applets, these are interpreted (as argv[0], by name or as /bin, /usr/bin, /sbin, /usr/sbin,
 * /usr/local/bin/<name>):
 *   - `sh` / `ash`     no args: reads an empty stdin and exits 0 at once;
 *                      `sh -c SCRIPT [name args...]`: runs SCRIPT (below);
 *                      `sh FILE`: "can't open" on stderr, exit 2.
 *   - `sleep N`        N seconds (fraction ok, suffix s/m/h/d, `infinity`); bad or missing N:
 *                      message on stderr, exit 1.
 *   - `echo [-n] ARGS`, `true`, `false`, `busybox APPLET args...`.
 * `exit` and `trap` are shell builtins only, and an absolute path that is not one of the above
 * (e.g. `/nonexistent`) does not exist: both are "executable file not found" (containerd:
 * StartContainer fails with StartError / ExecSync errors UNKNOWN). Any other bare argv[0]
 * (nginx, pause, ...) is an opaque long-running program that runs until stopped; see
 * {@link resolveArgv}.
 *
 * SCRIPT grammar (`sh -c`): simple commands joined by `;`, newline, `&&`, `||` (equal
 * precedence, left-associative, as in sh); words may be '...' or "..." quoted; per-command
 * redirections `>&2` / `1>&2` (stdout to stderr), `>/dev/null`, `2>/dev/null`, `2>&1` (ignored),
 * `> FILE` / `>> FILE` (stdout to a file, through the caller's FileWriter: sim-files.ts; without
 * one the output is dropped; the write happens when the timeline is built, not at its offset).
 * `$NAME` / `${NAME}` expand from the container's env (unquoted and in "..."; unset → empty).
 * Commands: `echo [-n] ARGS`, `sleep N`, `exit [N]`, `true`, `:`, `false`,
 * `trap "" TERM|SIGTERM|15` (ignore SIGTERM from then on; other traps are no-ops),
 * `sh -c SCRIPT` (nested), `busybox APPLET ...`. Anything else prints `sh: X: not found` on
 * stderr with status 127, as busybox ash does (so do applets not interpreted here, e.g. `cat` —
 * a known simplification). `$?`, assignments, pipes, `&` are not supported.
 * `id` and `touch`, and `> FILE` redirections, depend on the process's identity and filesystem
 * (sim-process-context.ts); the output of a redirected command is discarded.
 */

import { CONTEXT_APPLETS, defaultProcessContext, redirectError, runContextApplet, type SimProcessContext } from './sim-process-context.js';
import type { FileWriter } from './sim-files.js';

export type OutputStream = 'stdout' | 'stderr';

export interface TimedOutput {
  /** Offset from process start, ms. */
  atMs: number;
  stream: OutputStream;
  text: string;
}

/** What a process will do if nothing signals it. Offsets are ms from process start. */
export interface Timeline {
  outputs: TimedOutput[];
  /** Exit time and code; null when the process runs until stopped. */
  exit: { atMs: number; code: number } | null;
  /** Offset from which SIGTERM is ignored (`trap "" TERM`); null when never. */
  ignoreTermFromMs: number | null;
}

/** The result of resolving argv[0] against the simulated image. */
export type Resolution =
  | { kind: 'timeline'; timeline: Timeline }
  /** argv[0] does not exist in the image (containerd/runc: "executable file not found"). */
  | { kind: 'not-found'; executable: string }
  /** An opaque program: runs until stopped, prints nothing. */
  | { kind: 'opaque' };

const SHELLS = new Set(['sh', 'ash']);
/** Applets interpreted here; all exist as /bin/<name> in the image. */
const INTERPRETED = new Set(['sh', 'ash', 'sleep', 'busybox', 'echo', 'true', 'false']);
/** Shell builtins with no executable in the image. */
const BUILTIN_ONLY = new Set(['exit', 'trap', ':']);
const BIN_DIRS = new Set(['/bin', '/usr/bin', '/sbin', '/usr/sbin', '/usr/local/bin']);

export type Env = Readonly<Record<string, string>>;

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i === -1 ? p : p.slice(i + 1);
}

/**
 * Resolve argv (already merged with the image's entrypoint/cmd) into what it will do. `ctx`: the
 * process's identity and mounts (default: root in the image, no mounts). `write`: where `> FILE`
 * output lands (mounted files, sim-files.ts); absent, redirected output is discarded.
 */
export function resolveArgv(argv: readonly string[], env: Env = {}, ctx?: SimProcessContext, write?: FileWriter): Resolution {
  const argv0 = argv[0];
  if (argv0 === undefined || argv0 === '') return { kind: 'not-found', executable: '' };
  const name = basename(argv0);
  const slash = argv0.lastIndexOf('/');
  const interpreted = INTERPRETED.has(name) || CONTEXT_APPLETS.has(name);
  if (slash !== -1 && (!BIN_DIRS.has(argv0.slice(0, slash) || '/') || !interpreted)) return { kind: 'not-found', executable: argv0 };
  if (BUILTIN_ONLY.has(name)) return { kind: 'not-found', executable: argv0 };
  if (interpreted) {
    const ev = new Evaluator(env, ctx ?? defaultProcessContext(), write);
    const status = ev.runApplet(argv.slice(), false);
    return { kind: 'timeline', timeline: ev.finish(status) };
  }
  return { kind: 'opaque' };
}

// ---- evaluation ---------------------------------------------------------------------------

/** Thrown (internally only) by `exit N` to unwind the current script. */
class ScriptExit {
  constructor(readonly code: number) {}
}

/** Thrown (internally only) when a command never returns (`sleep infinity`). */
class RunsForever {}

class Evaluator {
  readonly #env: Env;
  readonly #ctx: SimProcessContext;
  readonly #write: FileWriter | undefined;
  #t = 0;

  constructor(env: Env, ctx: SimProcessContext, write: FileWriter | undefined) {
    this.#env = env;
    this.#ctx = ctx;
    this.#write = write;
  }

  #outputs: TimedOutput[] = [];
  #ignoreTermFromMs: number | null = null;

  finish(status: number | 'forever'): Timeline {
    return {
      outputs: this.#outputs,
      exit: status === 'forever' ? null : { atMs: this.#t, code: status & 0xff },
      ignoreTermFromMs: this.#ignoreTermFromMs,
    };
  }

  #emit(stream: Sink, text: string): void {
    if (typeof stream === 'object' && stream !== null) this.#write?.(stream.file, text, true);
    else if (stream !== null && text !== '') this.#outputs.push({ atMs: this.#t, stream, text });
  }

  /** Runs argv as a process (top level or via `busybox`); returns its exit status. */
  runApplet(argv: string[], inShell: boolean): number | 'forever' {
    try {
      return this.#applet(argv, inShell, 'stdout', 'stderr');
    } catch (e) {
      if (e instanceof RunsForever) return 'forever';
      throw e;
    }
  }

  #applet(argv: string[], inShell: boolean, out: Sink, err: OutputStream | null): number {
    const [argv0 = '', ...args] = argv;
    const name = basename(argv0);
    if (SHELLS.has(name)) return this.#sh(args, err);
    if (name === 'busybox') return args.length === 0 ? 0 : this.#applet(args, inShell, out, err);
    switch (name) {
      case 'sleep':
        return this.#sleep(args, err);
      case 'echo': {
        const noNewline = args[0] === '-n';
        const words = noNewline ? args.slice(1) : args;
        this.#emit(out, words.join(' ') + (noNewline ? '' : '\n'));
        return 0;
      }
      case 'true':
      case ':':
        return 0;
      case 'false':
        return 1;
      default: {
        if (CONTEXT_APPLETS.has(name)) {
          const r = runContextApplet(name, args, this.#ctx);
          this.#emit(out, r.stdout);
          this.#emit(err, r.stderr);
          return r.code;
        }
        this.#emit(err, `sh: ${argv0}: not found\n`);
        return 127;
      }
    }
  }

  #sleep(args: string[], err: OutputStream | null): number {
    const arg = args[0];
    if (arg === undefined) {
      this.#emit(err, 'BusyBox: sleep: missing operand\n');
      return 1;
    }
    const ms = parseSleepMs(arg);
    if (ms === null) {
      this.#emit(err, `sleep: invalid number '${arg}'\n`);
      return 1;
    }
    if (!Number.isFinite(ms)) throw new RunsForever();
    this.#t += ms;
    return 0;
  }

  #sh(args: string[], err: OutputStream | null): number {
    if (args.length === 0) return 0; // stdin is empty (/dev/null): exits at once
    if (args[0] !== '-c') {
      this.#emit(err, `sh: can't open '${args[0]}': No such file or directory\n`);
      return 2;
    }
    const script = args[1];
    if (script === undefined) {
      this.#emit(err, 'sh: -c requires an argument\n');
      return 2;
    }
    let parsed: ScriptItem[];
    try {
      parsed = parseScript(script, this.#env);
    } catch (e) {
      if (!(e instanceof ScriptSyntaxError)) throw e;
      this.#emit(err, `sh: syntax error: ${e.message}\n`);
      return 2;
    }
    try {
      return this.#runScript(parsed);
    } catch (e) {
      if (e instanceof ScriptExit) return e.code;
      throw e;
    }
  }

  #runScript(items: ScriptItem[]): number {
    let status = 0;
    for (const item of items) {
      if (item.op === '&&' && status !== 0) continue;
      if (item.op === '||' && status === 0) continue;
      status = this.#simple(item.cmd, status);
    }
    return status;
  }

  #simple(cmd: SimpleCommand, lastStatus: number): number {
    const [name = '', ...args] = cmd.words;
    if (name === '') return lastStatus;
    let out: Sink = cmd.stdout;
    const err = cmd.stderr;
    if (cmd.file) {
      // ash opens the file before running the command (`>` truncates, `>>` creates); a failure
      // (identity, read-only root filesystem: sim-process-context.ts) skips the command.
      const denied = redirectError(this.#ctx, cmd.file.path);
      if (denied !== undefined) {
        this.#emit(err, denied);
        return 1;
      }
      const e = this.#write?.(cmd.file.path, '', cmd.file.append);
      if (e !== undefined) {
        this.#emit(err, `sh: ${e}\n`);
        return 1;
      }
      out = { file: cmd.file.path };
    }
    switch (name) {
      case 'exit': {
        const code = args[0] === undefined ? lastStatus : Number.parseInt(args[0], 10);
        throw new ScriptExit(Number.isFinite(code) ? code & 0xff : 2);
      }
      case 'trap': {
        const [action, ...signals] = args;
        if (action === '' && signals.some((s) => s === 'TERM' || s === 'SIGTERM' || s === '15')) {
          this.#ignoreTermFromMs ??= this.#t;
        }
        return 0;
      }
      default:
        return this.#applet(cmd.words, true, out, err);
    }
  }
}

/** Seconds with optional s/m/h/d suffix → ms; Infinity for `inf`/`infinity`; null if invalid. */
export function parseSleepMs(arg: string): number | null {
  if (/^inf(inity)?$/i.test(arg)) return Infinity;
  const m = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(arg);
  if (!m) return null;
  const mult = { '': 1000, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * mult;
}

// ---- parsing ------------------------------------------------------------------------------

interface SimpleCommand {
  words: string[];
  stdout: OutputStream | null;
  stderr: OutputStream | null;
  /** `> FILE` / `>> FILE`. */
  file?: { path: string; append: boolean };
}

/** Where a command's stdout goes: a stream, nowhere, or a file (`> FILE`). */
type Sink = OutputStream | null | { file: string };

interface ScriptItem {
  /** How this command joins the previous one (the first is joined by ';'). */
  op: ';' | '&&' | '||';
  cmd: SimpleCommand;
}

export class ScriptSyntaxError extends Error {
  readonly code = 'ERR_SIM_SHELL_SYNTAX';
}

type Token = { kind: 'word'; value: string } | { kind: 'op'; value: ';' | '&&' | '||' } | { kind: 'redir'; value: string } | { kind: 'file'; path: string; append: boolean };

const REDIRS = ['1>&2', '2>&1', '>&2', '2>/dev/null', '>/dev/null', '1>/dev/null'];

/** Reads `$NAME` / `${NAME}` at script[i] ('$'); returns the value and the index after it. */
function expandVar(script: string, i: number, env: Env): { value: string; next: number } {
  if (script[i + 1] === '{') {
    const end = script.indexOf('}', i + 2);
    if (end === -1) throw new ScriptSyntaxError('bad substitution');
    return { value: env[script.slice(i + 2, end)] ?? '', next: end + 1 };
  }
  const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(script.slice(i + 1));
  if (!m) return { value: '$', next: i + 1 };
  return { value: env[m[0]] ?? '', next: i + 1 + m[0].length };
}

function tokenize(script: string, env: Env): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < script.length) {
    const c = script[i] as string;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === ';' || c === '\n') {
      tokens.push({ kind: 'op', value: ';' });
      i++;
      continue;
    }
    if (script.startsWith('&&', i) || script.startsWith('||', i)) {
      tokens.push({ kind: 'op', value: script.slice(i, i + 2) as '&&' | '||' });
      i += 2;
      continue;
    }
    const redir = REDIRS.find((r) => script.startsWith(r, i));
    if (redir !== undefined) {
      tokens.push({ kind: 'redir', value: redir });
      i += redir.length;
      continue;
    }
    if (c === '>' || (c === '1' && script[i + 1] === '>')) {
      // `> FILE`, `>FILE`, `1> FILE`, `>> FILE` (the fixed forms above were matched first)
      if (c === '1') i++;
      const append = script[i + 1] === '>';
      i += append ? 2 : 1;
      while (script[i] === ' ' || script[i] === '\t') i++;
      const m = /^[^\s;&|<>()'"]+/.exec(script.slice(i));
      if (!m) throw new ScriptSyntaxError('unexpected redirection');
      tokens.push({ kind: 'file', path: m[0], append });
      i += m[0].length;
      continue;
    }
    if (c === '|' || c === '&' || c === '<' || c === '(' || c === ')') {
      throw new ScriptSyntaxError(`unsupported "${c}"`);
    }
    let word = '';
    while (i < script.length) {
      const d = script[i] as string;
      if (d === "'") {
        const end = script.indexOf(d, i + 1);
        if (end === -1) throw new ScriptSyntaxError('unterminated quoted string');
        word += script.slice(i + 1, end);
        i = end + 1;
      } else if (d === '"') {
        i++;
        for (;;) {
          if (i >= script.length) throw new ScriptSyntaxError('unterminated quoted string');
          const q = script[i] as string;
          if (q === '"') break;
          if (q === '$') {
            const v = expandVar(script, i, env);
            word += v.value;
            i = v.next;
          } else if (q === '\\' && i + 1 < script.length && '"\\$'.includes(script[i + 1] as string)) {
            word += script[i + 1];
            i += 2;
          } else {
            word += q;
            i++;
          }
        }
        i++;
      } else if (d === '$') {
        const v = expandVar(script, i, env);
        word += v.value;
        i = v.next;
      } else if (d === '\\' && i + 1 < script.length) {
        word += script[i + 1];
        i += 2;
      } else if (' \t\n;&|<>()'.includes(d)) {
        break;
      } else {
        word += d;
        i++;
      }
    }
    tokens.push({ kind: 'word', value: word });
  }
  return tokens;
}

function parseScript(script: string, env: Env): ScriptItem[] {
  const items: ScriptItem[] = [];
  let op: ScriptItem['op'] = ';';
  let cmd: SimpleCommand = { words: [], stdout: 'stdout', stderr: 'stderr' };
  const flush = (next: ScriptItem['op']): void => {
    if (cmd.words.length === 0 && next !== ';') throw new ScriptSyntaxError(`unexpected "${next}"`);
    if (cmd.words.length > 0) items.push({ op, cmd });
    op = next;
    cmd = { words: [], stdout: 'stdout', stderr: 'stderr' };
  };
  for (const tok of tokenize(script, env)) {
    switch (tok.kind) {
      case 'word':
        cmd.words.push(tok.value);
        break;
      case 'op':
        flush(tok.value);
        break;
      case 'redir':
        if (tok.value === '>&2' || tok.value === '1>&2') cmd.stdout = 'stderr';
        else if (tok.value === '>/dev/null' || tok.value === '1>/dev/null') cmd.stdout = null;
        else if (tok.value === '2>/dev/null') cmd.stderr = null;
        break;
      case 'file':
        cmd.file = { path: tok.path, append: tok.append };
        break;
      default: {
        const never: never = tok;
        throw new Error(`unreachable ${String(never)}`);
      }
    }
  }
  const lastOp = op as ScriptItem['op']; // assigned inside flush(): not narrowed
  if (cmd.words.length === 0 && lastOp !== ';') throw new ScriptSyntaxError(`unexpected end after "${lastOp}"`);
  flush(';');
  return items;
}
