#!/usr/bin/env bash
# Builds Kubernetes components (arguments: kube-apiserver by default; also kube-scheduler,
# kube-controller-manager, kubelet) from Debian bookworm's `kubernetes` source package (upstream
# v1.20.2) into $SHARDLET_TOOLS_DIR/<component>-<debian-version>/<component>, once: a later run
# finds the binaries there and exits at once. The missing ones are built in one `make`. Prints
# the FIRST argument's binary path last. Root only (apt). Facts behind each step:
# ../shared/notes/apiserver.md — above all step 4: the vendored modern-go/reflect2 v1.0.1
# is replaced by Debian's v1.0.2, without which the apiserver panics on every pod create
# when built with Go >= 1.18.
# Concurrent first runs (two test drivers at once) serialise on a lock file next to the cache;
# the second finds the first one's binary. apt waits up to 10 min for the dpkg lock.
set -euo pipefail
TOOLS="${SHARDLET_TOOLS_DIR:-/var/cache/shardlet-tools}"
export DEBIAN_FRONTEND=noninteractive
SRC_LIST=/etc/apt/sources.list.d/shardlet-deb-src.sources
if ! apt-cache showsrc kubernetes >/dev/null 2>&1 || ! apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Package: kubernetes'; then
  cat > "$SRC_LIST" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get -o DPkg::Lock::Timeout=600 update -qq
fi
COMPONENT="${1:-kube-apiserver}"
# Further arguments: components to build in the same run when missing (one source unpack and one
# code generation for all; prepare.ts asks for every one the tests use).
for c in "${@:-kube-apiserver}"; do
  case "$c" in
    kube-apiserver|kube-scheduler|kube-controller-manager|kubelet) ;;
    *) echo "build-kube-apiserver: unknown component '$c' (kube-apiserver, kube-scheduler, kube-controller-manager, kubelet)" >&2; exit 2 ;;
  esac
done
VER="$(apt-cache showsrc kubernetes | awk '/^Version:/{print $2; exit}')"
OUT="$TOOLS/$COMPONENT-$VER"
missing() { local m=(); for c in "${@:-kube-apiserver}"; do [ -x "$TOOLS/$c-$VER/$c" ] || m+=("$c"); done; echo "${m[*]}"; }
if [ -z "$(missing "$@")" ]; then echo "$OUT/$COMPONENT"; exit 0; fi
mkdir -p "$TOOLS"
# One lock per source version: two builds at once would share the Go cache and the apt steps.
exec 9>"$TOOLS/.kube-apiserver-$VER.lock"
echo "build-kube-apiserver: taking the build lock $TOOLS/.kube-apiserver-$VER.lock" >&2
flock 9
MISSING="$(missing "$@")"
if [ -z "$MISSING" ]; then echo "$OUT/$COMPONENT"; exit 0; fi
echo "build-kube-apiserver: building $MISSING $VER into $TOOLS (about 6 min on 2 cores from a cold Go cache, 2-3 min more per further component)" >&2
need=()
command -v go >/dev/null || need+=(golang-go)
command -v rsync >/dev/null || need+=(rsync)
[ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] || need+=(golang-github-modern-go-reflect2-dev)
command -v make >/dev/null || need+=(make)
if [ ${#need[@]} -gt 0 ]; then apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >&2; fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kube-src.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
apt-get source --download-only kubernetes >&2
tar xzf kubernetes_*.orig.tar.gz
TREE="$(find . -maxdepth 1 -mindepth 1 -type d | head -n1)"
cd "$TREE"
rm -rf vendor/github.com/modern-go/reflect2
cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 vendor/github.com/modern-go/reflect2
rm -f vendor/github.com/modern-go/reflect2/go.mod
mkdir -p .go/src/k8s.io && ln -s ../../.. .go/src/k8s.io/kubernetes
WHAT=""
for c in $MISSING; do WHAT="$WHAT cmd/$c"; done
GOPATH="$PWD/.go" CGO_ENABLED=0 make WHAT="${WHAT# }" >&2
for c in $MISSING; do
  mkdir -p "$TOOLS/$c-$VER"
  cp "_output/bin/$c" "$TOOLS/$c-$VER/$c.tmp" && mv "$TOOLS/$c-$VER/$c.tmp" "$TOOLS/$c-$VER/$c"
done
echo "$OUT/$COMPONENT"
