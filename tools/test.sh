#!/usr/bin/env bash
# Sets up, builds and runs every rocefw test suite, then prints "N passed, N failed".
#   1. tools/install-deps.sh (Debian packages; idempotent)
#   2. build/       gcc, -O2: unit + wire suites
#   3. build-asan/  gcc with AddressSanitizer + UBSan (-Db_sanitize=address,undefined): same
#   4. build-fuzz/  clang + libFuzzer: each fuzz target for FUZZ_SECONDS (default 60) seconds
#   5. interop/run --quick with build/: rocefw against Linux rxe in a QEMU guest, one result
#      per case (docs/interop.md); INTEROP=0 leaves it out, and says so
# Environment: FUZZ_SECONDS=N (0 skips fuzzing, and says so), MESON_TEST_ARGS (extra
# arguments for `meson test`, e.g. "--suite unit").
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
results=$(mktemp)
trap 'rm -f "$results"' EXIT

log() { printf '\n=== %s\n' "$*"; }

tools/install-deps.sh || { echo "install-deps failed"; echo "0 passed, 1 failed"; exit 1; }

setup() { # dir, meson options...
	local dir=$1; shift
	if [ -f "$dir/build.ninja" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
}

# Each meson run's testlog.json lines are folded into one results file: "OK name" etc.
run_suite() { # label, dir, meson options...
	local label=$1 dir=$2; shift 2
	log "$label: configure and build ($dir)"
	if ! setup "$dir" "$@" || ! ninja -C "$dir"; then
		echo "FAIL $label:build" >>"$results"
		return
	fi
	log "$label: meson test"
	# shellcheck disable=SC2086
	meson test -C "$dir" --print-errorlogs --num-processes 2 ${MESON_TEST_ARGS:-}
	/usr/bin/env python3 - "$dir/meson-logs/testlog.json" "$label" >>"$results" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    print(("OK" if t["result"] in ("OK", "EXPECTEDFAIL") else
           "SKIP" if t["result"] == "SKIP" else "FAIL"), f"{sys.argv[2]}:{t['name']}")
PY
}

run_suite gcc build
run_suite asan+ubsan build-asan -Db_sanitize=address,undefined

if [ "$FUZZ_SECONDS" -gt 0 ]; then
	log "fuzz: clang + libFuzzer, $FUZZ_SECONDS s per target"
	if CC=clang setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
		&& ninja -C build-fuzz; then
		# One target per seed-corpus folder (tests/fuzz/corpus/<target>).
		for t in $(ls "$root/tests/fuzz/corpus"); do
			corpus=$(mktemp -d)
			cp "$root/tests/fuzz/corpus/$t/"* "$corpus/"
			if (cd "$corpus" && "$root/build-fuzz/tests/fuzz/fuzz_$t" \
				-max_total_time="$FUZZ_SECONDS" -timeout=60 -print_final_stats=1 "$corpus" \
				>"$root/build-fuzz/fuzz-$t.log" 2>&1); then
				echo "OK fuzz:$t" >>"$results"
				grep -E "^(Done|stat::number_of_executed_units)" "$root/build-fuzz/fuzz-$t.log"
			else
				# What failed and the input, on the results line: a CI log may keep only
				# its tail (a timeout: one input ran over 60 s).
				why=$(grep -m1 -E "ERROR: |SUMMARY: |deadly signal|Timeout|timeout after" \
					"$root/build-fuzz/fuzz-$t.log" | cut -c1-200)
				art=$(ls "$corpus"/crash-* "$corpus"/leak-* "$corpus"/timeout-* \
					"$corpus"/oom-* 2>/dev/null | head -1)
				echo "FAIL fuzz:$t ($why) input base64: $([ -n "$art" ] &&
					base64 -w0 "$art" | cut -c1-600)" >>"$results"
				tail -40 "$root/build-fuzz/fuzz-$t.log"
				ls "$corpus"/crash-* "$corpus"/leak-* "$corpus"/timeout-* "$corpus"/oom-* 2>/dev/null
				cp "$corpus"/crash-* "$corpus"/leak-* "$corpus"/timeout-* "$corpus"/oom-* \
					"$root/build-fuzz/" \
					2>/dev/null
			fi
			rm -rf "$corpus"
		done
	else
		echo "FAIL fuzz:build" >>"$results"
	fi
else
	log "fuzz: NOT RUN (FUZZ_SECONDS=0)"
	echo "SKIP fuzz:all" >>"$results"
fi

# ---- interop: rocefw <-> Linux rxe (QEMU guest), docs/interop.md ----
if [ "${INTEROP:-1}" != 0 ]; then
	log "interop: interop/run --quick (guest build + boot + matrix)"
	ijson="$root/build/interop-quick.json"
	rm -f "$ijson"
	"$root/interop/run" --quick --build "$root/build" --json "$ijson"
	irc=$?
	# one result per case; a run that died before its cases (missing tool, guest) is a failure
	if [ -f "$ijson" ]; then
		/usr/bin/env python3 - "$ijson" >>"$results" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    print(("OK" if c["pass"] else "FAIL"), "interop:" + c["name"])
PY
	fi
	if [ "$irc" -ne 0 ] && ! grep -q '^FAIL interop:' "$results"; then
		echo "FAIL interop:run" >>"$results"
	fi
else
	log "interop: NOT RUN (INTEROP=0)"
	echo "SKIP interop:all" >>"$results"
fi

log "results"
grep -v '^OK' "$results" || true
passed=$(grep -c '^OK' "$results")
failed=$(grep -c '^FAIL' "$results")
skipped=$(grep -c '^SKIP' "$results")
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
