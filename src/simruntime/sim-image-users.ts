/**
 * The users of a simulated image: its Config.User and its /etc/passwd and /etc/group, which
 * ImageStatus reports (uid or username) and CreateContainer resolves users against.
 *
 * Every simulated image has the local busybox image's files (test/harness/local-images.ts):
 * root 0:0 and nobody 65534:65534, groups root 0 and nogroup 65534. Config.User is empty (root)
 * unless the repository name ends in `-user-<spec>`: `busybox-user-1000:1` runs as "1000",
 * `busybox-user-nginx:1` as "nginx" (then also a passwd entry nginx 101:101 and group 101).
 */
export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
}

/** The named user every `-user-<name>` image gets. */
const NAMED_USER_ID = 101;

export interface SimImageUserDb {
  /** Config.User ('' = root). */
  readonly configUser: string;
  byUid(uid: number): PasswdEntry | undefined;
  /** Gids of the groups that list `name` as a member. */
  memberOf(name: string): number[];
  /** A user spec (`name`, `uid`, `uid:gid`, '') as containerd's WithUser resolves it. */
  resolve(spec: string): { ok: true; uid: number; gid: number | undefined } | { ok: false; message: string };
}

/** Config.User of an image reference (see the module doc). */
export function configUserOf(imageRef: string): string {
  const repo = imageRef.slice(imageRef.lastIndexOf('/') + 1).replace(/[:@].*$/, '');
  const m = /-user-([a-z0-9_]+(?::[0-9]+)?)$/.exec(repo);
  return m?.[1] ?? '';
}

/** What ImageStatus reports of an image's user (containerd's getUserFromImage). */
export function criImageUserOf(imageRef: string): { uid: { value: string } | null; username: string } {
  const user = configUserOf(imageRef).split(':')[0] ?? '';
  if (user === '') return { uid: null, username: '' };
  return /^\d+$/.test(user) ? { uid: { value: user }, username: '' } : { uid: null, username: user };
}

export function imageUserDbOf(imageRef: string): SimImageUserDb {
  const configUser = configUserOf(imageRef);
  const passwd: PasswdEntry[] = [{ name: 'root', uid: 0, gid: 0 }, { name: 'nobody', uid: 65534, gid: 65534 }];
  const named = configUser.split(':')[0] ?? '';
  if (named !== '' && !/^\d+$/.test(named)) passwd.push({ name: named, uid: NAMED_USER_ID, gid: NAMED_USER_ID });
  const byUid = (uid: number): PasswdEntry | undefined => passwd.find((p) => p.uid === uid);
  return {
    configUser,
    byUid,
    memberOf: () => [], // no group of these images lists members
    resolve(spec) {
      if (spec === '') return { ok: true, uid: 0, gid: 0 };
      const [user = '', group] = spec.split(':');
      let uid: number;
      let gid: number | undefined;
      if (/^\d+$/.test(user)) {
        uid = Number(user);
        gid = byUid(uid)?.gid;
      } else {
        const e = passwd.find((p) => p.name === user);
        if (!e) return { ok: false, message: 'no users found' };
        uid = e.uid;
        gid = e.gid;
      }
      if (group !== undefined && /^\d+$/.test(group)) gid = Number(group);
      return { ok: true, uid, gid };
    },
  };
}
