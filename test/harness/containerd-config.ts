/**
 * Renders a private containerd 1.6 instance's config (v2 TOML) and its one CNI bridge conflist.
 * Every path containerd would otherwise share with the system or another instance points into
 * the instance's temp dir: `root`, `state`, the gRPC socket, the runc state `Root`, the CNI conf
 * dir and host-local's `dataDir`, `/opt/containerd`. Facts behind each setting:
 * ../shared/notes/containerd.md.
 */
import path from 'node:path';

export interface ContainerdLayout {
  /** The instance's temp dir; everything below lives under it. */
  readonly tmpDir: string;
  readonly configPath: string;
  readonly socketPath: string;
  readonly rootDir: string;
  readonly stateDir: string;
  readonly runcRoot: string;
  readonly cniConfDir: string;
  readonly cniDataDir: string;
  readonly logPath: string;
}

export function containerdLayout(tmpDir: string): ContainerdLayout {
  return {
    tmpDir,
    configPath: path.join(tmpDir, 'config.toml'),
    socketPath: path.join(tmpDir, 'containerd.sock'),
    rootDir: path.join(tmpDir, 'root'),
    stateDir: path.join(tmpDir, 'state'),
    runcRoot: path.join(tmpDir, 'runc'),
    cniConfDir: path.join(tmpDir, 'cni-conf'),
    cniDataDir: path.join(tmpDir, 'cni-data'),
    logPath: path.join(tmpDir, 'containerd.log'),
  };
}

export interface ContainerdConfigInput {
  readonly layout: ContainerdLayout;
  readonly sandboxImage: string;
  /** containerd log level; `debug` costs ~20% throughput, hence `info`. */
  readonly logLevel: 'info' | 'warn' | 'debug';
}

const q = (s: string): string => JSON.stringify(s); // TOML basic strings accept JSON escapes for our paths

export function renderContainerdConfig(input: ContainerdConfigInput): string {
  const l = input.layout;
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = ${q(l.rootDir)}
state = ${q(l.stateDir)}
oom_score = 0

[grpc]
  address = ${q(l.socketPath)}

[debug]
  level = ${q(input.logLevel)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(path.join(l.tmpDir, 'opt'))}

[${cri}]
  # REQUIRED on these machines: runc cannot lower oom_score_adj to -998 (sandboxes fail otherwise).
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  sandbox_image = ${q(input.sandboxImage)}
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  max_container_log_line_size = 16384

  [${cri}.cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = ${q(l.cniConfDir)}
    max_conf_num = 1

  [${cri}.containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"

    [${cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [${cri}.containerd.runtimes.runc.options]
        # The default /run/containerd/runc/k8s.io would be shared with other instances.
        Root = ${q(l.runcRoot)}
        # The cgroupfs driver, as the agent's default --cgroup-driver (they must match: the agent
        # names pod cgroups as cgroupParent in that driver's spelling).
        SystemdCgroup = false
`;
}

export interface BridgeNetwork {
  /** Linux interface name, at most 15 bytes. */
  readonly bridge: string;
  /** e.g. `10.244.7.0/24`. */
  readonly subnet: string;
  readonly gateway: string;
}

export function renderBridgeConflist(net: BridgeNetwork, layout: ContainerdLayout): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: `shardlet-${net.bridge}`,
      plugins: [
        {
          type: 'bridge',
          bridge: net.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: net.subnet, gateway: net.gateway }]],
            dataDir: layout.cniDataDir,
          },
        },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  );
}
