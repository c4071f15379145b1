#!/usr/bin/env bash
# The main job on built-in defaults: install what rocefw needs, build it, and run the DCQCN demo
# (tools/demo.sh, docs/demo.md): two RDMA WRITE flows between two rocefw NIC endpoints through
# rocefw-cp's 1 Gbit/s bottleneck, per-flow table, build/demo/summary.json, build/demo/demo.png.
#
#   tools/run.sh [demo] [demo.sh options]   the demo (default)
#   tools/run.sh check [CAPTURE] [options]  rocefw-replay check on CAPTURE, by default a capture of
#                                           real Linux rxe traffic that ships with rocefw
#   tools/run.sh FILE [options]             the same as `check FILE`
set -euo pipefail
cd "$(dirname "$0")/.."
mode=demo
if [ $# -gt 0 ]; then
  case "$1" in
    demo) shift ;;
    check) mode=check; shift ;;
    -*) ;;
    *) [ -f "$1" ] && mode=check ;;
  esac
fi
tools/install-deps.sh
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build >/dev/null
if [ "$mode" = demo ]; then
  exec tools/demo.sh "$@"
fi
default=tests/data/rxe/rxe-v4-mixed.pcapng
[ -f "$default" ] || default=tests/data/icrc/vectors.pcap
capture=$default
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  capture=$1
  shift
fi
exec build/tools/replay/rocefw-replay check "$@" "$capture"
