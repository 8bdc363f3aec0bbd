/**
 * The one single-path-component check and its users outside volumes: a listed container's log
 * path built from runtime labels is refused when any label could climb out of the logs root.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPathSegment, isPathSegment, MAX_SEGMENT_BYTES } from '../../../src/shared/paths/path-segment.js';
import { listedContainerLogPath } from '../../../src/shared/kubetypes/pod-log-paths.js';
import { ContainerRestartCountLabel, KubernetesContainerNameLabel, KubernetesPodNameLabel, KubernetesPodNamespaceLabel, KubernetesPodUIDLabel } from '../../../src/shared/kubetypes/kubelet-labels.js';

test('a single path component: no climbing, no separator, no NUL, at most NAME_MAX bytes', () => {
  for (const ok of ['a', 'web-1', '.hidden', 'a..b', 'é'.repeat(127)]) assert.equal(checkPathSegment(ok), undefined, ok);
  for (const bad of ['', '.', '..', 'a/b', '/', 'a\\b', 'a\0b', 'x'.repeat(MAX_SEGMENT_BYTES + 1), 'é'.repeat(128)]) {
    assert.notEqual(checkPathSegment(bad), undefined, JSON.stringify(bad.slice(0, 8)));
    assert.equal(isPathSegment(bad), false);
  }
  assert.equal(isPathSegment(undefined), false);
  assert.equal(isPathSegment('ok'), true);
});

test('listedContainerLogPath: labels become a path only when every one is a single component', () => {
  const labels = { [KubernetesPodNamespaceLabel]: 'default', [KubernetesPodNameLabel]: 'web', [KubernetesPodUIDLabel]: 'u1', [KubernetesContainerNameLabel]: 'app' };
  const ann = { [ContainerRestartCountLabel]: '2' };
  assert.equal(listedContainerLogPath('/var/log/pods', labels, ann), '/var/log/pods/default_web_u1/app/2.log');
  for (const [k, v] of [[KubernetesPodNamespaceLabel, '..'], [KubernetesPodNameLabel, 'a/../../etc'], [KubernetesPodUIDLabel, ''], [KubernetesContainerNameLabel, 'x\0y']] as const) {
    assert.equal(listedContainerLogPath('/var/log/pods', { ...labels, [k]: v }, ann), null, `${k}=${JSON.stringify(v)}`);
  }
  assert.equal(listedContainerLogPath('/var/log/pods', labels, { [ContainerRestartCountLabel]: '../1' }), null);
  assert.equal(listedContainerLogPath('/var/log/pods', labels, {}), null);
  assert.equal(listedContainerLogPath('/var/log/pods', undefined, ann), null);
});
