/**
 * Hollow mode's metrics exposition: every node's own exposition (its agent's aggregator: the
 * same families a standalone agent serves) with a `node` label added to each sample and the
 * families merged (one HELP/TYPE per family), then the process-wide summary:
 *   shardlet_hollow_nodes{state}            nodes per HollowNodeState
 *   shardlet_hollow_nodes_registered        nodes whose Node object exists
 *   process_* / nodejs_*                    the one process (prom-client defaults, once)
 * Per-node families sum across nodes with `sum without (node) (...)`.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

interface Family {
  header: string[];
  samples: string[];
}

const LABEL_VALUE_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '"': '\\"', '\n': '\\n' };

function labelValue(v: string): string {
  return v.replace(/[\\"\n]/g, (c) => LABEL_VALUE_ESCAPES[c] ?? c);
}

/** The family a sample or comment line belongs to (histogram/summary suffixes folded). */
function familyOfComment(line: string): string | undefined {
  const m = /^# (?:HELP|TYPE) (\S+)/.exec(line);
  return m?.[1];
}

/** Adds `node="…"` as the first label of one sample line. */
export function withNodeLabel(line: string, node: string): string {
  const label = `node="${labelValue(node)}"`;
  const brace = line.indexOf('{');
  const space = line.indexOf(' ');
  if (brace >= 0 && (space < 0 || brace < space)) {
    const empty = line[brace + 1] === '}';
    return `${line.slice(0, brace + 1)}${label}${empty ? '' : ','}${line.slice(brace + 1)}`;
  }
  if (space < 0) return line;
  return `${line.slice(0, space)}{${label}}${line.slice(space)}`;
}

/** Merges node expositions: families in first-seen order, each node's samples labelled. */
export function mergeNodeExpositions(parts: readonly { node: string; text: string }[]): string {
  const families = new Map<string, Family>();
  for (const { node, text } of parts) {
    let current: Family | undefined;
    let currentName = '';
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (line.startsWith('#')) {
        const name = familyOfComment(line);
        if (name === undefined) continue;
        if (name !== currentName) {
          currentName = name;
          current = families.get(name);
          if (current === undefined) {
            current = { header: [], samples: [] };
            families.set(name, current);
          }
        }
        if (!current!.header.includes(line)) current!.header.push(line);
        continue;
      }
      // A sample before any header (not produced by our renderer): its own family by metric name.
      if (current === undefined) {
        const name = line.split(/[{ ]/, 1)[0] ?? '';
        current = families.get(name) ?? { header: [], samples: [] };
        families.set(name, current);
        currentName = name;
      }
      current.samples.push(withNodeLabel(line, node));
    }
  }
  const out: string[] = [];
  for (const f of families.values()) out.push(...f.header, ...f.samples);
  return out.length === 0 ? '' : out.join('\n') + '\n';
}

/** The process-wide part: prom-client's process/nodejs defaults, registered once. */
export class HollowProcessMetrics {
  readonly #registry = new Registry();

  constructor() {
    collectDefaultMetrics({ register: this.#registry });
  }

  async text(summary: { states: Readonly<Record<string, number>>; registered: number }): Promise<string> {
    const lines = ['# HELP shardlet_hollow_nodes Hollow nodes in this process by state.', '# TYPE shardlet_hollow_nodes gauge'];
    for (const [state, n] of Object.entries(summary.states)) lines.push(`shardlet_hollow_nodes{state="${labelValue(state)}"} ${n}`);
    lines.push('# HELP shardlet_hollow_nodes_registered Hollow nodes whose Node object exists.', '# TYPE shardlet_hollow_nodes_registered gauge', `shardlet_hollow_nodes_registered ${summary.registered}`);
    return lines.join('\n') + '\n' + (await this.#registry.metrics());
  }
}
