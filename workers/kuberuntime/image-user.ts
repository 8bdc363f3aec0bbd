/**
 * The user an image runs as, from its ImageStatus answer (the kubelet's getImageUser): the uid
 * when the image's user is numeric, else its name, else root (uid 0). Exactly one of the two
 * is set.
 */
import type { Image } from '../../src/shared/cri/cri-types.js';

export interface ImageUser {
  uid?: number;
  username?: string;
}

export function imageUserOf(image: Pick<Image, 'uid' | 'username'> | null | undefined): ImageUser {
  const raw = image?.uid?.value;
  if (raw !== undefined && raw !== null && String(raw) !== '') {
    const uid = Number(raw);
    if (Number.isSafeInteger(uid)) return { uid };
  }
  if (image?.username) return { username: image.username };
  return { uid: 0 };
}
