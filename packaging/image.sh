#!/usr/bin/env bash
# image.sh: build the hdfs-sink container image with podman from Debian's
# packages; no Docker daemon, no base image (see Dockerfile).
#
#   image.sh prereqs      install podman, CA certificates and zone data if missing (apt-get)
#   image.sh build [TAG]  build the stamped static binary, then the image (default hdfs-sink:dev)
#   image.sh run ARGS...  podman run ARGS with the runtime options this kind of machine needs
#   image.sh stamp        print the -ldflags -X flags (make build uses them)
#
# The binary is stamped with version, commit and build date (ldflags), as
# `make build` stamps it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CTX=$ROOT/dist/image

log() { printf '[image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

prereqs() {
  local pkgs=()
  command -v podman >/dev/null || pkgs+=(podman crun fuse-overlayfs uidmap)
  command -v runc >/dev/null || pkgs+=(runc)
  [ -s /etc/ssl/certs/ca-certificates.crt ] || pkgs+=(ca-certificates)
  [ -d /usr/share/zoneinfo/Europe ] || pkgs+=(tzdata)
  [ ${#pkgs[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || { log "ERROR: need ${pkgs[*]} and apt-get is not available"; exit 1; }
  log "apt-get install ${pkgs[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >&2
}

# stamp prints the -X flags for main.version, main.commit and main.date.
stamp() {
  local version commit
  version=$(git -C "$ROOT" describe --tags --always --dirty 2>/dev/null || echo dev)
  commit=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
  echo "-X main.version=$version -X main.commit=$commit -X main.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}

# rootfs lays out what the image holds under $CTX/rootfs.
rootfs() {
  local fs=$CTX/rootfs
  rm -rf "$CTX"
  mkdir -p "$fs/usr/local/bin" "$fs/etc/ssl/certs" "$fs/usr/share" "$fs/etc/hdfs-sink/connectors" "$fs/tmp"
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $(stamp)" -o "$fs/usr/local/bin/hdfs-sink" ./cmd/hdfs-sink)
  cp /etc/ssl/certs/ca-certificates.crt "$fs/etc/ssl/certs/"
  cp -r /usr/share/zoneinfo "$fs/usr/share/"
  echo 'hdfs-sink:x:65532:65532:hdfs-sink:/tmp:/sbin/nologin' >"$fs/etc/passwd"
  echo 'hdfs-sink:x:65532:' >"$fs/etc/group"
  chmod 1777 "$fs/tmp"
}

build() {
  local tag=${1:-hdfs-sink:dev} t0=$SECONDS
  prereqs
  rootfs
  local version commit
  version=$(git -C "$ROOT" describe --tags --always --dirty 2>/dev/null || echo dev)
  commit=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
  log "podman build $tag"
  podman build --quiet --pull=never --build-arg VERSION="$version" --build-arg COMMIT="$commit" \
    -f "$ROOT/Dockerfile" -t "$tag" "$CTX" >&2
  log "built $tag in $((SECONDS - t0))s"
}

# run_opts prints the podman options that work here. The machine mounts
# cgroups in hybrid mode (v1 controllers plus an empty unified tree), which
# crun refuses; runc accepts it. Inside a network namespace made by `ip
# netns exec` (how tests run side by side), /sys is a fresh sysfs without
# cgroups: then a cgroup2 tree is mounted in that namespace's private mount
# namespace and the container runs without cgroups. Either way the rlimits
# must not exceed this process's (podman's defaults do, and are refused).
run_opts() {
  local opts=(--ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
  if [ -n "$(ip netns identify $$ 2>/dev/null)" ]; then
    [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || mount -t cgroup2 none /sys/fs/cgroup
    opts+=(--runtime crun --cgroups=disabled)
  elif [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
    opts+=(--runtime runc)
  fi
  printf '%s\n' "${opts[@]}"
}

run() {
  local opts
  mapfile -t opts < <(run_opts)
  exec podman run "${opts[@]}" "$@"
}

case ${1:-} in
  prereqs) prereqs ;;
  build) shift; build "$@" ;;
  run) shift; run "$@" ;;
  stamp) stamp ;;
  *) echo "usage: $0 prereqs|build [TAG]|run ARGS...|stamp" >&2; exit 2 ;;
esac
