/**
 * resolv.conf parsing as the kubelet's parseResolvConf (pkg/kubelet/network/dns/dns.go): the
 * node's --resolv-conf is the base of every pod's DNS config. Pure; the caller reads the file
 * (bounded, once: src/main/dns/node-dns-files.ts).
 *
 * Rules: `#` comment lines are skipped; `nameserver X` lines accumulate (one without an address
 * is an error, as in the kubelet); the last `search` line wins, each domain without its trailing
 * dot; the last `options` line wins, one entry per option.
 */

export interface ResolvConf {
  servers: string[];
  searches: string[];
  options: string[];
}

/** The kubelet's maxResolveConfLength: a longer file is refused rather than read in part. */
export const MAX_RESOLV_CONF_BYTES = 10 * (1 << 20);

export type ResolvConfParse = { ok: true; conf: ResolvConf } | { ok: false; message: string };

export function parseResolvConf(text: string): ResolvConfParse {
  const servers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  const errors: string[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/).filter((f) => f !== '');
    if (fields.length === 0) continue;
    switch (fields[0]) {
      case 'nameserver':
        if (fields.length >= 2) servers.push(fields[1]!);
        else errors.push('nameserver list is empty ');
        break;
      case 'search':
        searches = fields.slice(1).map((s) => (s.endsWith('.') ? s.slice(0, -1) : s));
        break;
      case 'options':
        options = fields.slice(1);
        break;
      default:
        break;
    }
  }
  // apimachinery's aggregate error: one message as is, several in brackets.
  if (errors.length === 1) return { ok: false, message: errors[0]! };
  if (errors.length > 1) return { ok: false, message: `[${errors.join(', ')}]` };
  return { ok: true, conf: { servers, searches, options } };
}
