#!/bin/bash
# rdma-core's own test suite (pyverbs' run_tests.py) on Linux rxe and on rocefw, side by side.
#
#   interop/rxe/pyverbs-rxe.sh [--runs N] [--build DIR] [--out DIR] [--rxe-only|--rocefw-only]
#
# rxe: boots the interop guest (build-guest.sh: python3, pyverbs and the suite unpacked under
# /opt/rdma-core/tests) with QEMU on a tap in a private network namespace, as interop/run does
# but without the bridge and the rocefw veth (rxe0 on the guest's eth0 is enough: every test
# of the suite talks to itself), and runs `run_tests.py --dev rxe0 --gid IDX -v` there, IDX the
# RoCE v2 GID of the guest's IPv4 address. rocefw: the same suite from an unpacked copy of the
# host's /usr/share/doc/rdma-core/tests through `rocefw-run` on its built-in loopback port,
# `--dev rocefw0 --gid 0` (tests/verbs/verbs_run.py group pyverbs does the same).
# Each side runs N times (default 2): some tests draw random QP capabilities and pass or skip
# from run to run; those are marked "variable".
#
# Prints one line per test (name, rxe result, rocefw result), the counts per side and the tests
# rxe passes and rocefw does not. Outputs and the table (table.txt, table.md) stay in --out
# (default interop/.cache/pyverbs). Exit status 0 when both sides ran, whatever the results.
# Run as root (network namespace, tap, QEMU).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
RUNS=2
BUILD=$TOP/build
OUT=$TOP/interop/.cache/pyverbs
DO_RXE=1
DO_RFW=1
while [ $# -gt 0 ]; do
    case $1 in
        --runs) RUNS=${2:?--runs needs a number}; shift ;;
        --build) BUILD=${2:?--build needs a directory}; shift ;;
        --out) OUT=${2:?--out needs a directory}; shift ;;
        --rxe-only) DO_RFW=0 ;;
        --rocefw-only) DO_RXE=0 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "pyverbs-rxe: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
case $RUNS in ''|*[!0-9]*|0) echo "pyverbs-rxe: --runs wants a positive number, not '$RUNS'" >&2; exit 2 ;; esac

START=$(date +%s)
log() { echo "pyverbs-rxe: [$(( $(date +%s) - START ))s] $*" >&2; }
die() { echo "pyverbs-rxe: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (network namespace, tap, QEMU)"
PY=/usr/bin/python3
[ -x $PY ] || die "/usr/bin/python3 missing"
SUITE=/usr/share/doc/rdma-core/tests
RUNBIN=$BUILD/tools/run/rocefw-run
if [ "$DO_RFW" = 1 ]; then
    [ -d "$SUITE" ] || die "$SUITE missing: install python3-pyverbs (tools/install-deps.sh)"
    [ -x "$RUNBIN" ] || die "$RUNBIN missing: build first (meson setup $BUILD && ninja -C $BUILD)"
fi
if [ "$DO_RXE" = 1 ]; then
    for t in qemu-system-x86_64 ip timeout; do
        command -v "$t" >/dev/null || die "'$t' not found (tools/install-deps.sh installs it)"
    done
fi
mkdir -p "$OUT"

# ---- rxe, in the guest ------------------------------------------------------------------------
NS=rfwpyv$$
QEMU_PID=
GDIR=$OUT/guest
cleanup() {
    set +e
    if [ -n "$QEMU_PID" ]; then
        kill "$QEMU_PID" 2>/dev/null
        local i=0
        while [ $i -lt 50 ] && kill -0 "$QEMU_PID" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
        kill -9 "$QEMU_PID" 2>/dev/null
    fi
    ip netns list 2>/dev/null | grep -qw "$NS" && ip netns del "$NS"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

GCTL=("$PY" "$HERE/guestctl.py")
GUEST_IP=192.0.2.1
if [ "$DO_RXE" = 1 ]; then
    CACHE=${RXE_CACHE:-$TOP/interop/.cache/rxe}
    log "guest: building if needed"
    # no RXE_PEER: the interop peer is not needed here (and an image with it is rebuilt without)
    RXE_CACHE=$CACHE "$HERE/build-guest.sh" >"$OUT/build-guest.log" 2>&1 ||
        { tail -20 "$OUT/build-guest.log" >&2; die "guest build failed (log: $OUT/build-guest.log)"; }
    ip netns add "$NS" || die "cannot create network namespace $NS"
    ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$NS" link set lo up
    # the tap alone: up, so the guest's eth0 has carrier and rxe0's port is ACTIVE
    ip -n "$NS" tuntap add dev tap0 mode tap || die "cannot create tap0 (needs /dev/net/tun)"
    ip -n "$NS" link set tap0 up
    rm -rf "$GDIR"; mkdir -p "$GDIR"
    log "guest: booting"
    # 1 GB: the initramfs (about 55 MB unpacked) plus python and the suite's buffers
    ip netns exec "$NS" qemu-system-x86_64 -machine pc -accel tcg,thread=multi -cpu max -smp 1 -m 1024 \
        -kernel "$CACHE/vmlinuz" -initrd "$CACHE/initramfs.gz" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 rxe.ip=$GUEST_IP/24 rxe.name=g0" \
        -netdev tap,id=n0,ifname=tap0,script=no,downscript=no \
        -device virtio-net-pci,netdev=n0,mac=52:54:00:00:02:01 \
        -chardev socket,id=s0,path="$GDIR/g0.sock",server=on,wait=off,logfile="$GDIR/g0.log" \
        -serial chardev:s0 -display none -monitor none -no-reboot -nodefaults \
        -pidfile "$GDIR/g0.pid" -daemonize || die "QEMU did not start"
    QEMU_PID=$(cat "$GDIR/g0.pid")
    "${GCTL[@]}" wait "$GDIR/g0.sock" "$GDIR/g0.log" 300 || die "guest not ready (log: $GDIR/g0.log)"
    "${GCTL[@]}" run "$GDIR/g0.sock" 60 -- "rdma link show rxe0/1 && ibv_devinfo -d rxe0 | grep -E 'state|active_mtu' && python3 -c 'import pyverbs.device'" \
        >"$OUT/guest-check.log" 2>&1 || die "guest: rxe0 or pyverbs not usable ($OUT/guest-check.log)"
    # the RoCE v2 entry of the guest's IPv4 address (::ffff:192.0.2.1), as interop/run finds it
    GIDX=$("${GCTL[@]}" run "$GDIR/g0.sock" 20 -- 'd=/sys/class/infiniband/rxe0/ports/1
for f in $d/gids/*; do i=${f##*/}
  [ "$(cat $f)" = 0000:0000:0000:0000:0000:ffff:c000:0201 ] &&
  [ "$(cat $d/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] && echo "$i" && break
done' 2>/dev/null | tr -dc '0-9\n' | head -1)
    [ -n "$GIDX" ] || die "guest: no RoCE v2 GID for $GUEST_IP on rxe0"
    "${GCTL[@]}" run "$GDIR/g0.sock" 10 -- "cat /etc/rxe-versions.txt; uname -r" >"$OUT/rxe-versions.txt" 2>&1
    log "guest: ready, rxe0 GID index $GIDX"
    for r in $(seq 1 "$RUNS"); do
        log "rxe: run $r of $RUNS (python3 tests/run_tests.py --dev rxe0 --gid $GIDX -v)"
        # into a file in the guest first: a run that outlives guestctl's wait loses nothing
        "${GCTL[@]}" run "$GDIR/g0.sock" 3700 -- "cd /opt/rdma-core && timeout 3600 python3 tests/run_tests.py --dev rxe0 --gid $GIDX -v >/tmp/pyverbs.$r.log 2>&1; echo \"exit=\$?\" >>/tmp/pyverbs.$r.log" \
            >/dev/null 2>&1
        "${GCTL[@]}" run "$GDIR/g0.sock" 120 -- "cat /tmp/pyverbs.$r.log" >"$OUT/rxe.$r.log" 2>&1 ||
            die "guest: could not read back run $r"
        log "rxe: run $r: $(grep -E '^(Ran|OK|FAILED)' "$OUT/rxe.$r.log" | tr '\n' ' ')"
    done
    cleanup; QEMU_PID=
fi

# ---- rocefw, on the host ----------------------------------------------------------------------
if [ "$DO_RFW" = 1 ]; then
    TMP=$(mktemp -d /tmp/rocefw-pyverbs.XXXXXX)
    if ! cp -r "$SUITE" "$TMP/tests" || ! find "$TMP/tests" -name '*.gz' -exec gunzip -f {} +; then
        rm -rf "$TMP"; die "cannot unpack $SUITE into $TMP"
    fi
    dpkg-query -W -f='python3-pyverbs ${Version}\n' python3-pyverbs >"$OUT/rocefw-versions.txt" 2>&1
    for r in $(seq 1 "$RUNS"); do
        log "rocefw: run $r of $RUNS (rocefw-run -- python3 tests/run_tests.py --dev rocefw0 --gid 0 -v)"
        (cd "$TMP" && timeout 1800 "$RUNBIN" -- "$PY" tests/run_tests.py --dev rocefw0 --gid 0 -v) \
            >"$OUT/rocefw.$r.log" 2>&1
        echo "exit=$?" >>"$OUT/rocefw.$r.log"
        log "rocefw: run $r: $(grep -E '^(Ran|OK|FAILED)' "$OUT/rocefw.$r.log" | tr '\n' ' ')"
    done
    rm -rf "$TMP"
fi

# ---- the table ----------------------------------------------------------------------------------
"$PY" "$HERE/pyverbs_table.py" "$OUT" "$RUNS" || die "no table (logs in $OUT)"
log "done in $(( $(date +%s) - START )) s; logs and table in $OUT"
