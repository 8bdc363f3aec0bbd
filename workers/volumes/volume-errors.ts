/**
 * Failure text of volume set-up, as the kubelet shows it in FailedMount events:
 * `MountVolume.SetUp failed for volume "NAME" : DETAIL`. Volume failures are data (a message
 * next to the pod's status), never thrown past the volume manager.
 */

export function setUpFailedMessage(volumeName: string, detail: string): string {
  return `MountVolume.SetUp failed for volume ${JSON.stringify(volumeName)} : ${detail}`;
}

/** The detail of a node:fs or child-process error, bounded. */
export function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 1000);
}
