/**
 * An HTTP/1.1 answer written straight to a socket that an upgrade request left un-upgraded
 * (the 'upgrade' event hands over the socket, not a ServerResponse): status line, plain-text
 * body, `Connection: close`, then the socket ends.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';

export function writeRawReply(socket: Duplex, status: number, body: string, headers: ReadonlyArray<readonly [string, string]> = []): void {
  if (socket.destroyed || socket.writableEnded) return;
  const b = Buffer.from(body, 'utf8');
  const extra = headers.map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const head = `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${b.length}\r\nX-Content-Type-Options: nosniff\r\n${extra}Connection: close\r\n\r\n`;
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), b]));
}
