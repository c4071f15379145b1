#!/bin/bash
# Describe and verify rxe captures: size, frame count, frames decoded as InfiniBand (BTH),
# BTH opcode counts, ECN code points and IP versions of the RoCE frames; fails if tshark
# flags any frame as malformed or any ICRC is wrong (icrc-check.py).
#   interop/rxe/describe.sh FILE...
set -uo pipefail
TS=(tshark -d udp.port==4791,infiniband --disable-protocol rpcordma)
rc=0
for f in "$@"; do
    [ -f "$f" ] || continue
    frames=$("${TS[@]}" -r "$f" -T fields -e frame.number 2>/dev/null | wc -l)
    bad=$("${TS[@]}" -r "$f" -Y _ws.malformed 2>/dev/null | wc -l)
    echo "## $(basename "$f")  ($(stat -c %s "$f") bytes, $frames frames, malformed: $bad)"
    echo "BTH opcode counts (opcode / count; empty = not RoCE):"
    "${TS[@]}" -r "$f" -T fields -e infiniband.bth.opcode 2>/dev/null | sort -n | uniq -c |
        awk '{ if (NF == 1) printf "  (none)  %s\n", $1; else printf "  %-6s  %s\n", $2, $1 }'
    echo "RoCE frames by IP version and ECN field (count):"
    "${TS[@]}" -r "$f" -Y infiniband -T fields -E separator=, -e ip.version \
        -e ip.dsfield.ecn -e ipv6.tclass.ecn 2>/dev/null |
        awk -F, '{print "IPv" $1, "ecn=" $2 $3}' | sort | uniq -c |
        awk '{print "  " $2, $3, $1}'
    /usr/bin/python3 "$(dirname "$0")/icrc-check.py" "$f" || rc=1
    [ "$bad" = 0 ] || rc=1
done
exit $rc
