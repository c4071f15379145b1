# SPDX-License-Identifier: BSD-3-Clause
# rocefw-perf runs shared by bench_fastpath.sh and bench_baseline.sh (sourced, not run). The
# caller sets $me (its name, for messages), $dir (the runs' JSON), $secs, $eal, $port (the
# first out-of-band TCP port) and $i (the round). A run that fails names itself and exits 1.

# A loopback WRITE run of @size bytes on core 1 into $dir/NAME.$i.json.
bench_loop() { # name, binary, size, env...
	name=$1 bin=$2 size=$3
	shift 3
	env "$@" "$bin" $eal -l 1 -- write bw -s "$size" -D "$secs" --loopback \
		--out_json "$dir/$name.$i.json" >/dev/null 2>&1 ||
		{ echo "$me: $name run $i failed" >&2; exit 1; }
}

# Until the memif server whose process is $2 listens on socket $1 (or has exited).
bench_wait_sock() {
	while ! grep -q "$1" /proc/net/unix && kill -0 "$2" 2>/dev/null; do
		sleep 0.05
	done
}

# Two processes over memif, the server (the data's receiver) on core 0, the client on core 1,
# the client's JSON into $dir/NAME.$i.json.
bench_memif() { # name, binary, size, rocefw-perf options of both sides...
	name=$1 bin=$2 size=$3
	shift 3
	memif="socket=$dir/memif.sock,socket-abstract=no,bsize=8192"
	rm -f "$dir/memif.sock"
	"$bin" $eal -l 0 --vdev=net_memif0,role=server,$memif -- write bw -s "$size" \
		-D "$secs" --ip 10.88.0.2 -p $port "$@" >"$dir/server.out" 2>&1 &
	spid=$!
	bench_wait_sock "$dir/memif.sock" $spid
	"$bin" $eal -l 1 --vdev=net_memif0,role=client,$memif -- write bw -s "$size" \
		-D "$secs" --ip 10.88.0.1 -p $port "$@" --out_json "$dir/$name.$i.json" 127.0.0.1 \
		>/dev/null 2>&1 || { echo "$me: $name run $i failed" >&2; exit 1; }
	wait $spid || { echo "$me: $name server run $i failed" >&2; exit 1; }
	port=$((port + 1))
}
