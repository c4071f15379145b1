#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The DCQCN demo (docs/demo.md): rocefw-cp in one process on core 1 (the congestion point, memif
# servers), rocefw-demo in another on core 0 (a sender and a receiver NIC, memif clients), then
# a summary table, summary.json and demo.png from tools/demo/report.py.
#
# usage: tools/demo.sh [--short] [--out DIR] [--build DIR] [-- rocefw-demo options...]
#   --short      the test's configuration: 1.5 s instead of 4 s
#   --out DIR    where the CSVs, JSON and PNG go (default BUILD/demo)
#   --build DIR  the meson build directory (default build)
# Needs a build (ninja -C build) and gnuplot for the PNG. Runs without hugepages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
out=""
short=0
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '3,11p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || out=$build/demo
cp_bin=$build/tools/cp/rocefw-cp
demo_bin=$build/tools/demo/rocefw-demo
for b in "$cp_bin" "$demo_bin"; do
  [ -x "$b" ] || { echo "demo.sh: $b missing: build first (ninja -C $build)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The built-in defaults (docs/demo.md says why each): a 1 Gbit/s bottleneck, far below the
# few Gbit/s the two software endpoints push here; RED marking between 16 and 128 KiB; a queue
# larger than everything the flows can have in flight (no tail drop by construction).
cp_opts=(--rate-gbps 1 --queue-kb 2048 --kmin-kb 16 --kmax-kb 128 --pmax 0.2 --sample-us 100)
demo_opts=(--flows 2 --line-gbps 10 --depth 4 --size 65536 --sample-us 1000)
if [ "$short" -eq 1 ]; then
  demo_opts+=(--duration-ms 1500 --stagger-ms 500)
else
  demo_opts+=(--duration-ms 4000 --stagger-ms 1000)
fi

eal=(--no-huge -m 512 --no-pci --no-shconf --log-level=lib.eal:warning
     --log-level=pmd.net.memif:error)
cp_core=1 demo_core=0
if [ "$(nproc)" -lt 2 ]; then
  echo "demo.sh: one CPU only: both processes share it (memif crawls, the run is slow)" >&2
  cp_core=0
fi

# memif sockets in a private directory: nobody else's run can collide with ours.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocefw-demo.XXXXXX")
cp_pid="" demo_pid=""
cleanup() {
  for p in $demo_pid $cp_pid; do kill -TERM "$p" 2>/dev/null || true; done
  for p in $demo_pid $cp_pid; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "demo.sh: interrupted" >&2; exit 130' INT TERM

memif="socket-abstract=no,bsize=8192"
rm -f "$out"/{flows.csv,cnps.csv,demo.json,cp.json,queue.csv,summary.json,demo.png,cp.log,demo.log}
"$cp_bin" "${eal[@]}" -l $cp_core \
  --vdev=net_memif0,role=server,socket="$tmp/s.sock",$memif \
  --vdev=net_memif1,role=server,socket="$tmp/r.sock",$memif -- \
  "${cp_opts[@]}" --csv "$out/queue.csv" --json >"$out/cp.json" 2>"$out/cp.log" &
cp_pid=$!
# EAL start-up without hugepages touches 512 MB: wait for the server sockets.
for _ in $(seq 600); do
  [ -S "$tmp/s.sock" ] && [ -S "$tmp/r.sock" ] && break
  if ! kill -0 $cp_pid 2>/dev/null; then
    echo "demo.sh: rocefw-cp exited at start-up:" >&2
    tail -n 20 "$out/cp.log" >&2
    exit 1
  fi
  sleep 0.05
done
[ -S "$tmp/r.sock" ] || { echo "demo.sh: rocefw-cp created no memif sockets" >&2; exit 1; }

echo "demo.sh: rocefw-cp on core $cp_core (${cp_opts[*]})"
echo "demo.sh: rocefw-demo on core $demo_core (${demo_opts[*]} $*)"
set +e
"$demo_bin" "${eal[@]}" -l $demo_core \
  --vdev=net_memif0,role=client,socket="$tmp/s.sock",$memif \
  --vdev=net_memif1,role=client,socket="$tmp/r.sock",$memif -- \
  "${demo_opts[@]}" "$@" \
  --csv "$out/flows.csv" --cnp-csv "$out/cnps.csv" --json "$out/demo.json" \
  --linger-pid $cp_pid >"$out/demo.log" 2>&1 &
demo_pid=$!
# Stop rocefw-cp first, once the demo has written its summary (or exited): memif's PMD unmaps a
# connection's rings when the peer goes away, racing with a data path still polling them, so the
# side that leaves must be the one no longer polling (rocefw-demo --linger-pid waits for it).
while kill -0 $demo_pid 2>/dev/null && [ ! -e "$out/demo.json" ]; do sleep 0.05; done
kill -TERM $cp_pid
wait $cp_pid
cp_rc=$?
wait $demo_pid
demo_rc=$?
demo_pid=""
cp_pid=""
set -e
# EAL and PMD start-up chatter goes to the logs; they are shown when something failed.
if [ $cp_rc -ne 0 ] || [ $demo_rc -ne 0 ] || [ ! -s "$out/demo.json" ]; then
  echo "demo.sh: rocefw-cp exit $cp_rc, rocefw-demo exit $demo_rc; logs:" >&2
  tail -n 20 "$out/cp.log" "$out/demo.log" >&2
  [ -s "$out/demo.json" ] || exit 1
fi
report_rc=0
python3 "$root/tools/demo/report.py" "$out" || report_rc=$?
[ $demo_rc -eq 0 ] || { echo "demo.sh: rocefw-demo failed (exit $demo_rc)" >&2; exit 1; }
exit $report_rc
