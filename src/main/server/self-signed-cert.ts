/**
 * A self-signed serving certificate, as the kubelet makes when neither --tls-cert-file nor
 * --tls-private-key-file is given (its `cert.GenerateSelfSignedCertKey`): an ECDSA P-256 key and
 * an X.509 v3 certificate for the host name, `localhost`, 127.0.0.1 and the node's addresses,
 * valid for one year, signed by its own key. Built here in DER by hand (Node has no certificate
 * builder and the agent must not depend on an `openssl` binary); only the fields TLS clients read.
 *
 * Nothing here is secret-dependent beyond the key; the serial is 16 random bytes.
 */
import crypto from 'node:crypto';
import net from 'node:net';

// ---- minimal DER encoder -----------------------------------------------------------------

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), derLength(content.length), content]);
}

const seq = (...parts: Buffer[]): Buffer => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]): Buffer => tlv(0x31, Buffer.concat(parts));
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 + n, inner);

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const stack: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) stack.unshift(0x80 | (v & 0x7f));
    out.push(...stack);
  }
  return tlv(0x06, Buffer.from(out));
}

function positiveInteger(bytes: Buffer): Buffer {
  const b = bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes;
  return tlv(0x02, b);
}

/** UTCTime for years < 2050, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString(); // 2026-01-02T03:04:05.678Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z'; // 20260102030405Z
  const year = new Date(ms).getUTCFullYear();
  return year < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii')) : tlv(0x18, Buffer.from(digits, 'ascii'));
}

const OID_ECDSA_SHA256 = '1.2.840.10045.4.3.2';
const OID_CN = '2.5.4.3';
const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_KEY_USAGE = '2.5.29.15';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_SAN = '2.5.29.17';
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

export interface SelfSignedOptions {
  /** Common name and the first DNS SAN (the kubelet uses the host name). */
  host: string;
  /** More SANs: IP addresses become iPAddress entries, anything else dNSName. */
  altNames: readonly string[];
  /** Wall-clock ms of issue (notBefore); valid for `validDays`. */
  nowMs: number;
  validDays?: number;
}

export interface PemPair {
  certPem: string;
  keyPem: string;
}

function sanEntry(name: string): Buffer {
  const family = net.isIP(name);
  if (family === 4) return tlv(0x87, Buffer.from(name.split('.').map(Number)));
  if (family === 6) {
    const sock = new net.SocketAddress({ address: name, family: 'ipv6' });
    return tlv(0x87, ipv6Bytes(sock.address));
  }
  return tlv(0x82, Buffer.from(name, 'ascii'));
}

function ipv6Bytes(addr: string): Buffer {
  const [head, tail] = addr.includes('::') ? addr.split('::') : [addr, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.from(groups.flatMap((g) => {
    const v = Number.parseInt(g || '0', 16);
    return [v >> 8, v & 0xff];
  }));
}

/** Generates a key and a self-signed serving certificate (PEM). */
export function generateSelfSignedServing(o: SelfSignedOptions): PemPair {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const name = seq(set(seq(oid(OID_CN), utf8(`${o.host}@${Math.floor(o.nowMs / 1000)}`))));
  const sigAlg = seq(oid(OID_ECDSA_SHA256));
  const names = [...new Set([o.host, ...o.altNames])].filter((n) => n !== '');
  const extensions = seq(
    seq(oid(OID_KEY_USAGE), bool(true), octets(tlv(0x03, Buffer.from([0x05, 0xa0])))), // digitalSignature, keyEncipherment
    seq(oid(OID_EXT_KEY_USAGE), octets(seq(oid(OID_SERVER_AUTH)))),
    seq(oid(OID_BASIC_CONSTRAINTS), bool(true), octets(seq())),
    seq(oid(OID_SAN), octets(seq(...names.map(sanEntry)))),
  );
  const notAfter = o.nowMs + (o.validDays ?? 365) * 86_400_000;
  const tbs = seq(
    explicit(0, tlv(0x02, Buffer.from([2]))), // v3
    positiveInteger(crypto.randomBytes(16)),
    sigAlg,
    name,
    seq(time(o.nowMs - 60_000), time(notAfter)),
    name,
    spki,
    explicit(3, extensions),
  );
  const signature = crypto.sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const cert = seq(tbs, sigAlg, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = cert.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n');
  return {
    certPem: `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`,
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
