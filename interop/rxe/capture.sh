#!/bin/bash
# Capture real Linux rdma_rxe traffic between two QEMU guests.
#
#   interop/rxe/capture.sh OUTDIR [TEST...]
#
# Builds the guest if needed (build-guest.sh), creates a private network namespace with a
# bridge and two taps, boots two guests (g0 = 192.0.2.1 = perftest server / responder,
# g1 = 192.0.2.2 = client / requester), and for each test captures on a tap device while
# running perftest / rping / rstream between the guests. Writes OUTDIR/<name>.pcap[ng] and
# OUTDIR/<name>.cmds (the exact guest commands). Logs go to interop/.cache/rxe/run/.
# Everything it starts (namespace, QEMU, tcpdump) is removed on exit.
#
# Tests (default: all): send write read atomic write-imm rping v6-write mixed write-loss
#                       write-timeout read-loss write-ecn
# Each test writes OUTDIR/rxe-<v4|v6>-<test>.pcap (mixed: .pcapng). A capture that tshark
# flags as malformed, or from which the capture tool lost frames, is taken again.
# Run as root. Needs about 2-3 minutes on 2 cores without KVM. See docs/interop-rxe.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CACHE=${RXE_CACHE:-$TOP/interop/.cache/rxe}
OUT=${1:?usage: capture.sh OUTDIR [TEST...]}
shift
TESTS=("$@")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(send write read atomic write-imm rping v6-write mixed
                                  write-loss write-timeout read-loss write-ecn)
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# host tools + guest kernel/initramfs (quick when everything is up to date)
RXE_CACHE=$CACHE "$HERE/build-guest.sh"

NS=rxecap$$
RUN=$CACHE/run
rm -rf "$RUN"; mkdir -p "$RUN"
GCTL=("/usr/bin/python3" "$HERE/guestctl.py")
CAP_PID=
START=$(date +%s)

log() { echo "capture: [$(( $(date +%s) - START ))s] $*" >&2; }

QEMU_PIDS=()
cleanup() {
    set +e
    [ -n "$CAP_PID" ] && kill -TERM "$CAP_PID" 2>/dev/null && wait "$CAP_PID" 2>/dev/null
    local pid i
    for pid in "${QEMU_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${QEMU_PIDS[@]}"; do
        i=0
        while [ $i -lt 50 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
        kill -9 "$pid" 2>/dev/null
    done
    ip netns del "$NS" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- network: namespace, bridge, two taps -----------------------------------------------
ip netns add "$NS"
nsx() { ip netns exec "$NS" "$@"; }
# no IPv6 on the host side: nothing but the guests' frames on the wire
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$NS" link set lo up
ip -n "$NS" link add br0 type bridge mcast_snooping 0 stp_state 0 forward_delay 0
ip -n "$NS" link set br0 up
for i in 0 1; do
    ip -n "$NS" tuntap add dev tap$i mode tap
    ip -n "$NS" link set tap$i master br0 up
done

# ---- guests ------------------------------------------------------------------------------
boot() {  # boot g$1 with address $2
    local g=g$1
    nsx qemu-system-x86_64 -machine pc -accel tcg,thread=multi -cpu max -smp 1 -m 512 \
        -kernel "$CACHE/vmlinuz" -initrd "$CACHE/initramfs.gz" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 rxe.ip=$2/24 rxe.name=$g" \
        -netdev tap,id=n0,ifname=tap$1,script=no,downscript=no \
        -device virtio-net-pci,netdev=n0,mac=52:54:00:00:02:0$(( $1 + 1 )) \
        -chardev socket,id=s0,path="$RUN/$g.sock",server=on,wait=off,logfile="$RUN/$g.log" \
        -serial chardev:s0 -display none -monitor none -no-reboot -nodefaults \
        -pidfile "$RUN/$g.pid" -daemonize
    QEMU_PIDS+=("$(cat "$RUN/$g.pid")")
}
log "booting guests"
boot 0 192.0.2.1
boot 1 192.0.2.2
"${GCTL[@]}" wait "$RUN/g0.sock" "$RUN/g0.log" 120
"${GCTL[@]}" wait "$RUN/g1.sock" "$RUN/g1.log" 120
log "guests ready"

# g TIMEOUT GUEST SCRIPT: run SCRIPT in guest, output appended to the run log
g() {
    local t=$1 who=$2; shift 2
    echo "### $who: $*" >> "$RUN/commands.log"
    "${GCTL[@]}" run "$RUN/$who.sock" "$t" -- "$*" >> "$RUN/commands.log"
}
# record the guest-side command lines of the current capture
note() { echo "$*" >> "$CMDS"; }

# server CMD: start CMD in the background on g0 and wait until it listens (perftest: TCP
# 18515; rdma_cm programs: a fixed short wait)
server() {
    note "g0\$ $*"
    g 30 g0 "setsid sh -c '$* </dev/null >/tmp/server.log 2>&1' </dev/null >/dev/null 2>&1 &
case '$*' in ib_*) i=0; while [ \$i -lt 100 ] && ! netstat -ltn | grep -q ':18515 '; do sleep 0.1; i=\$((i+1)); done ;;
*) sleep 2 ;; esac"
}
# client CMD: run CMD on g1 in the foreground (bounded), then wait for the server to end
client() {
    note "g1\$ $*"
    g 150 g1 "timeout 120 $*"
    g 60 g0 "i=0; while [ \$i -lt 300 ] && pidof ${SERVER_PROG:-$1} >/dev/null; do sleep 0.1; i=\$((i+1)); done
pidof ${SERVER_PROG:-$1} >/dev/null && { echo 'server still running: killing'; killall ${SERVER_PROG:-$1}; }
cat /tmp/server.log"
}
pair() {  # pair "SERVER CMD" "CLIENT CMD"
    SERVER_PROG=${1%% *}
    server "$1"
    client "$2"
}

# cap_start NAME IFACE [pcapng]
cap_start() {
    CAP_NAME=$1
    CAP_FILE=$OUT/$1.${3:-pcap}
    CMDS=$OUT/$1.cmds
    : > "$CMDS"
    rm -f "$CAP_FILE"
    log "capture $CAP_NAME on $2"
    if [ "${3:-pcap}" = pcapng ]; then
        # (not via a shell function: a background subshell would ignore signals)
        ip netns exec "$NS" dumpcap -q -n -i "$2" -s 2048 -B 16 -w "$CAP_FILE" 2>"$RUN/$1.cap.err" &
    else
        ip netns exec "$NS" tcpdump -Z root --immediate-mode -B 16384 -i "$2" -U -s 2048 -w "$CAP_FILE" 2>"$RUN/$1.cap.err" &
    fi
    CAP_PID=$!
    local i=0
    while [ $i -lt 50 ] && [ ! -s "$CAP_FILE" ]; do sleep 0.1; i=$((i+1)); done
    sleep 0.3
}
cap_stop() {
    sleep 1   # trailing ACKs and TCP FINs
    kill -TERM "$CAP_PID"; wait "$CAP_PID" || true
    CAP_PID=
    chmod 0644 "$CAP_FILE"
    # comments in the .cmds file: where and what
    sed -i "1i # $(basename "$CAP_FILE"): captured on $CAP_IFACE_DESC" "$CMDS"
}
nft_load() { echo "$1" | nsx nft -f -; note "host nft: $(echo "$1" | tr -s ' \n' ' ')"; }
nft_clear() { nsx nft flush ruleset; }

P="-F"         # perftest: no cpufreq warning
V4="-x 1"      # GID 1 = ::ffff:192.0.2.x (RoCEv2 over IPv4)
V6="-x 0"      # GID 0 = fe80::... (RoCEv2 over IPv6 link-local)
SRV=192.0.2.1
CAP_IFACE_DESC="tap1 (the client/requester guest g1, 192.0.2.2)"

t_send() {
    cap_start rxe-v4-send tap1
    for s in 1 1024 1025 3000; do
        pair "ib_send_bw $P $V4 -n 5 -s $s" "ib_send_bw $P $V4 -n 5 -s $s $SRV"
    done
    cap_stop
}
t_write() {
    cap_start rxe-v4-write tap1
    for s in 1 1024 1025 3000; do
        pair "ib_write_bw $P $V4 -n 5 -s $s" "ib_write_bw $P $V4 -n 5 -s $s $SRV"
    done
    cap_stop
}
t_read() {
    cap_start rxe-v4-read tap1
    for s in 1 1024 1025 3000; do
        pair "ib_read_bw $P $V4 -n 5 -s $s" "ib_read_bw $P $V4 -n 5 -s $s $SRV"
    done
    cap_stop
}
t_atomic() {
    cap_start rxe-v4-atomic tap1
    pair "ib_atomic_bw $P $V4 -n 5" "ib_atomic_bw $P $V4 -n 5 $SRV"
    pair "ib_atomic_bw $P $V4 -n 5 -A CMP_AND_SWAP" "ib_atomic_bw $P $V4 -n 5 -A CMP_AND_SWAP $SRV"
    cap_stop
}
t_write-imm() {
    # perftest 4.5-0.17 has no WRITE with immediate; rsockets (rstream) moves its data with
    # RDMA WRITE with immediate, and connects with rdma_cm (CM MADs on QP1).
    cap_start rxe-v4-write-imm tap1
    pair "rstream -b $SRV -S 3000 -C 3" "rstream -s $SRV -S 3000 -C 3"
    cap_stop
}
t_rping() {
    cap_start rxe-v4-rping tap1
    pair "rping -s -a $SRV -C 3 -S 3000" "rping -c -a $SRV -C 3 -S 3000"
    cap_stop
}
t_v6-write() {
    cap_start rxe-v6-write tap1
    pair "ib_write_bw $P $V6 -n 5 -s 3000" "ib_write_bw $P $V6 -n 5 -s 3000 $SRV"
    pair "ib_send_bw $P $V6 -n 5 -s 1025" "ib_send_bw $P $V6 -n 5 -s 1025 $SRV"
    cap_stop
}
t_mixed() {
    cap_start rxe-v4-mixed tap1 pcapng
    pair "ib_send_bw $P $V4 -n 5 -s 3000" "ib_send_bw $P $V4 -n 5 -s 3000 $SRV"
    pair "ib_write_bw $P $V4 -n 5 -s 3000" "ib_write_bw $P $V4 -n 5 -s 3000 $SRV"
    pair "ib_read_bw $P $V4 -n 5 -s 3000" "ib_read_bw $P $V4 -n 5 -s 3000 $SRV"
    pair "ib_atomic_bw $P $V4 -n 5" "ib_atomic_bw $P $V4 -n 5 $SRV"
    pair "rping -s -a $SRV -C 2 -S 100" "rping -c -a $SRV -C 2 -S 100"
    cap_stop
}
t_write-loss() {
    # Deterministic loss (so the run is reproducible): the bridge drops the requester's
    # 11th and 36th RoCE packets. With -n 10 -s 3000 (3 packets per message) the 11th is
    # the WRITE MIDDLE of message 4; the 36th falls into the go-back-N retransmission.
    cap_start rxe-v4-write-loss tap1
    nft_load "table bridge rxe { chain forward { type filter hook forward priority 0; policy accept;
        ip saddr 192.0.2.2 udp dport 4791 numgen inc mod 100000 { 10, 35 } counter drop; }; }"
    pair "ib_write_bw $P $V4 -n 10 -s 3000" "ib_write_bw $P $V4 -n 10 -s 3000 $SRV"
    cap_stop
    nsx nft list ruleset >> "$RUN/commands.log"
    nft_clear
}
t_write-timeout() {
    # Drop the last packet of the last message (the requester's 15th RoCE packet with -n 5
    # -s 3000): nothing follows it, so no NAK; recovery by the local ACK timeout.
    cap_start rxe-v4-write-timeout tap1
    nft_load "table bridge rxe { chain forward { type filter hook forward priority 0; policy accept;
        ip saddr 192.0.2.2 udp dport 4791 numgen inc mod 100000 14 counter drop; }; }"
    pair "ib_write_bw $P $V4 -n 5 -s 3000" "ib_write_bw $P $V4 -n 5 -s 3000 $SRV"
    cap_stop
    nsx nft list ruleset >> "$RUN/commands.log"
    nft_clear
}
t_read-loss() {
    # The bridge drops the responder's 11th and 36th RoCE packets (READ responses).
    cap_start rxe-v4-read-loss tap1
    nft_load "table bridge rxe { chain forward { type filter hook forward priority 0; policy accept;
        ip saddr 192.0.2.1 udp dport 4791 numgen inc mod 100000 { 10, 35 } counter drop; }; }"
    pair "ib_read_bw $P $V4 -n 10 -s 3000" "ib_read_bw $P $V4 -n 10 -s 3000 $SRV"
    cap_stop
    nsx nft list ruleset >> "$RUN/commands.log"
    nft_clear
}
t_write-ecn() {
    # perftest --tclass sets the GRH traffic class, which rxe copies into the IP TOS byte:
    # 2 = DSCP 0 + ECT(0). The bridge marks every 4th ECT(0) RoCE packet from the requester
    # CE. Captured at the responder's tap (tap0), after the marking.
    CAP_IFACE_DESC="tap0 (the server/responder guest g0, 192.0.2.1), after CE marking"
    cap_start rxe-v4-write-ecn tap0
    nft_load "table bridge rxe { chain forward { type filter hook forward priority 0; policy accept;
        ip saddr 192.0.2.2 udp dport 4791 ip ecn ect0 numgen inc mod 4 == 0 ip ecn set ce counter; }; }"
    pair "ib_write_bw $P $V4 -n 10 -s 3000 --tclass=2" "ib_write_bw $P $V4 -n 10 -s 3000 --tclass=2 $SRV"
    cap_stop
    CAP_IFACE_DESC="tap1 (the client/requester guest g1, 192.0.2.2)"
    nsx nft list ruleset >> "$RUN/commands.log"
    nft_clear
}

# Wireshark 4.0's InfiniBand dissector guesses an IPoIB-style EtherType header in SEND
# payloads whose bytes 2-3 are zero (always the case for a 1-byte payload padded with
# zeros); perftest fills its buffers with rand() seeded by time(), so now and then such a
# guess hits a registered EtherType and tshark reports a malformed packet. Such a capture
# is real but useless as test data: take it again (fresh random payload).
malformed() {
    tshark -r "$1" -d udp.port==4791,infiniband --disable-protocol rpcordma \
        -Y _ws.malformed 2>/dev/null | wc -l
}
# frames the capture itself lost (tcpdump: "N packets dropped by kernel"; dumpcap:
# "received/dropped on interface ...: R/D")
cap_drops() {
    local e=$RUN/$1.cap.err
    { sed -n 's/^\([0-9]*\) packets dropped by kernel/\1/p' "$e"
      sed -n 's/.*received\/dropped on interface.*: [0-9]*\/\([0-9]*\).*/\1/p' "$e"; } |
        awk '{s += $1} END {print s + 0}'
}
for t in "${TESTS[@]}"; do
    for attempt in 1 2 3 4; do
        "t_$t"
        n=$(malformed "$CAP_FILE"); d=$(cap_drops "$CAP_NAME")
        [ "$n" = 0 ] && [ "$d" = 0 ] && break
        log "$(basename "$CAP_FILE"): $n frame(s) flagged malformed by tshark, $d lost by the capture; capturing again"
        sleep 1   # new time() seed for perftest's payload
    done
done
g 10 g0 "cat /etc/rxe-versions.txt; uname -r"
log "done; guest command log: $RUN/commands.log"
"$HERE/describe.sh" "$OUT"/*.pcap "$OUT"/*.pcapng >&2 || { log "verification failed"; exit 1; }
