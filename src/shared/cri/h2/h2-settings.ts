/**
 * The peer's SETTINGS frame payload (RFC 9113 §6.5), decoded and validated in one place: the
 * connection applies the result, or raises the connection error it names.
 */
import { DEFAULT_MAX_FRAME_SIZE, H2Error, MAX_WINDOW, Setting } from './h2-frames.js';
import type { FramingError } from './h2-header-block.js';

/** The settings this client acts on; absent = not in this frame. */
export interface PeerSettingsUpdate {
  initialWindow?: number;
  maxFrame?: number;
  maxStreams?: number;
}

/**
 * Decodes a (non-ACK) SETTINGS payload. HEADER_TABLE_SIZE only limits this side's encoder
 * table, which it never uses; MAX_HEADER_LIST_SIZE is far above any CRI request's headers;
 * unknown ids are ignored (§6.5.2).
 */
export function parsePeerSettings(payload: Buffer): PeerSettingsUpdate | FramingError {
  if (payload.length % 6 !== 0) return { code: H2Error.FRAME_SIZE_ERROR, message: 'SETTINGS length not a multiple of 6' };
  const out: PeerSettingsUpdate = {};
  for (let off = 0; off < payload.length; off += 6) {
    const id = payload.readUInt16BE(off);
    const value = payload.readUInt32BE(off + 2);
    switch (id) {
      case Setting.INITIAL_WINDOW_SIZE:
        if (value > MAX_WINDOW) return { code: H2Error.FLOW_CONTROL_ERROR, message: `INITIAL_WINDOW_SIZE ${value}` };
        out.initialWindow = value;
        break;
      case Setting.MAX_FRAME_SIZE:
        if (value < DEFAULT_MAX_FRAME_SIZE || value > 0xffffff) return { code: H2Error.PROTOCOL_ERROR, message: `MAX_FRAME_SIZE ${value}` };
        out.maxFrame = value;
        break;
      case Setting.MAX_CONCURRENT_STREAMS:
        out.maxStreams = value;
        break;
      case Setting.ENABLE_PUSH:
        if (value > 1) return { code: H2Error.PROTOCOL_ERROR, message: `ENABLE_PUSH ${value}` };
        break;
      default:
        break;
    }
  }
  return out;
}
