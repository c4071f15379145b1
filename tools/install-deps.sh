#!/usr/bin/env bash
# Installs the Debian 12 packages rocefw builds, tests and fuzzes with.
# Idempotent: packages already present are skipped without touching the network.
# Usage: tools/install-deps.sh            (as root, or with sudo available)
set -euo pipefail

pkgs=(
  build-essential meson ninja-build pkg-config
  clang llvm libclang-rt-14-dev         # libFuzzer and sanitizer runtimes for fuzz targets
  libdpdk-dev dpdk                      # ports, mempools, rings, telemetry
  dpdk-dev                              # dpdk-telemetry.py, dpdk-testpmd (docs, by hand)
  libpcap-dev libisal-dev libcmocka-dev libjansson-dev zlib1g-dev
  tshark                                # the independent decoder the tests compare against
  gnuplot-nox                           # rocefw-replay cc --plot (PNG)
  clang-format
  valgrind                              # tools/perf/budget.py: instructions per message
  # rocefw-ns3 (docs/ns3.md): ns-3 3.37's headers, libraries and CMake package config; the
  # config also checks for the helper binaries of the ns3 package, so both are needed
  libns3-dev ns3
  iproute2                              # tests/dpdk/linux_peer.py: netns + veth Linux peer
  # interop/run (docs/interop.md): the rxe guest in QEMU, its peer, the bridge and captures
  qemu-system-x86 busybox-static cpio tcpdump nftables ethtool libibverbs-dev
  # the verbs device (docs/verbs.md): Debian's unmodified RDMA programs as its clients
  ibverbs-utils perftest python3-pyverbs
  # its rdma_cm (docs/rdma-cm.md): librdmacm's header, and rping, ucmatose, qperf as clients
  librdmacm-dev rdmacm-utils qperf
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
