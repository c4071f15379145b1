#!/usr/bin/env bash
# The main job on a built-in default: install what rocefw needs, build it, and run
# `rocefw-replay check` on a capture of real Linux rxe traffic that ships with rocefw
# (or on the capture given as the first argument; extra arguments go to `check`).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build >/dev/null
default=tests/data/rxe/rxe-v4-mixed.pcapng
[ -f "$default" ] || default=tests/data/icrc/vectors.pcap
capture=${1:-$default}
[ $# -gt 0 ] && shift
exec build/tools/replay/rocefw-replay check "$@" "$capture"
