# perftest.sh: perftest measured: ib_write_bw at each size, ib_write_lat once.
# A part of scripts/bench, which sources it: it uses that script's settings
# and functions.

# perftest TOOL RAW TIMEOUT ARGS...: one perftest server and client pair on a
# fresh port, their output in RAW-server.log and RAW-client.log, the client's
# CPU time in RAW-client.time. Returns the client's status, or the server's
# when that failed.
perftest() {
	local tool=$1 raw=$2 limit=$3 port spid rc src
	shift 3
	local opts=(-d "$RDMALAB_DEVICE" -i "$RDMALAB_IB_PORT" -x "$RDMALAB_GID_INDEX" -F "$@")
	# The client on its own device with TRACE=1 (client_env: run.sh).
	local copts=(-d "$(client_var DEVICE)" -i "$RDMALAB_IB_PORT" -x "$(client_var GID_INDEX)" -F "$@")
	port=$(free_port)
	timeout "$limit" "$tool" "${opts[@]}" -p "$port" >"$raw-server.log" 2>&1 &
	spid=$!
	if ! rl_wait_port "$port" "$spid" 10; then
		wait "$spid"
		return 1
	fi
	{ time timeout "$limit" "$tool" "${copts[@]}" -p "$port" "$RDMALAB_ADDR" >"$raw-client.log" 2>&1; } \
		2>"$raw-client.time"
	rc=$?
	wait "$spid"
	src=$?
	[ "$rc" = 0 ] && return "$src"
	return "$rc"
}

# perftest_figures RAW FIRST COLS...: the columns COLS of the client's result
# line (whose first column is FIRST), tab-separated, when all are finite
# positive numbers. perftest converts cycles to time with a CPU clock it
# calibrates at start; on a loaded emulated CPU that fails now and then and
# every figure comes out inf or 0: the caller tries again.
perftest_figures() {
	local raw=$1 first=$2
	shift 2
	awk -v first="$first" -v cols="$*" '$1 == first && NF >= 5 {
		n = split(cols, c, " ")
		for (i = 1; i <= n; i++) {
			v = $(c[i])
			if (v !~ /^[0-9]+(\.[0-9]+)?$/ || v + 0 <= 0) exit 1
			line = line (i > 1 ? "\t" : "") v
		}
		print line; found = 1; exit 0
	} END { if (!found) exit 1 }' "$raw-client.log"
}

# bench_ib_write_bw MIB MSG: the same bytes as the file in MSG-byte writes
# (perftest needs at least 5 iterations: a small file is moved more than once).
bench_ib_write_bw() {
	local start=$EPOCHREALTIME
	local mib=$1 msg=$2 bytes=$(($1 * 1048576)) iters bw rc try
	local raw=$out/raw/ib_write_bw-$mib-$run
	[ "$msg" -le "$bytes" ] || msg=$bytes
	iters=$((bytes / msg))
	[ "$iters" -ge 5 ] || iters=5
	for try in 1 2 3 4 5 6; do
		perftest ib_write_bw "$raw" "$(secs 30 1 "$mib")" --report_gbits -s "$msg" -n "$iters"
		rc=$?
		[ "$rc" = 0 ] || break
		bw=$(perftest_figures "$raw" "$msg" 4) && break
		echo "$prog: $mib MiB: ib_write_bw gave no usable figure (try $try of 6; its clock calibration fails under load)" >&2
	done
	if [ "$rc" != 0 ] || [ -z "$bw" ]; then
		failed ib_write_bw "$mib" "ib_write_bw failed (status $rc, see $raw-client.log): $(grep -v '^ *-*$' "$raw-client.log" | tail -n 1)"
		return
	fi
	row ib_write_bw "$mib" "$bw" '' '' "$(awk -v b="$bytes" -v g="$bw" 'BEGIN { printf "%.3f", b * 8 / g / 1e9 }')" '' \
		"$(cpu_seconds "$raw-client.time")" '' "$iters writes of $msg B"
	echo "$prog: $mib MiB: ib_write_bw $bw Gb/s ($iters writes of $msg B; run $run of $repeat; $(took "$start"))"
}


# bench_latency: ib_write_lat, 64 B, 1000 iterations; OUT/latency.tsv gets
# the typical and average latency, or "uncalibrated".
bench_latency() {
	local raw=$out/raw/ib_write_lat rc try lat=
	for try in 1 2 3 4 5 6; do
		perftest ib_write_lat "$raw" "$(secs 60 0 0)" -s 64 -n 1000
		rc=$?
		[ "$rc" = 0 ] || break
		lat=$(perftest_figures "$raw" 64 5 6) && break
		echo "$prog: ib_write_lat gave no usable figure (try $try of 6; its clock calibration fails under load)" >&2
	done
	# perftest times its CPU clock against gettimeofday and gives up below
	# r^2 0.9: in a guest descheduled by a busy host, every try can. The
	# transfer figures do not use it: the table says so and goes on.
	if [ "$rc" = 0 ] && [ -z "$lat" ] && grep -q '^Correlation coefficient r^2' "$raw-client.log"; then
		echo "uncalibrated" >"$out/latency.tsv"
		return
	fi
	if [ "$rc" != 0 ] || [ -z "$lat" ]; then
		echo "$prog: ib_write_lat failed (status $rc; see $raw-client.log)" >&2
		return
	fi
	printf '%s\n' "$lat" >"$out/latency.tsv"
	echo "$prog: ib_write_lat 64 B: ${lat%%$'\t'*} usec typical"
}

# need_cpu_mhz: perftest turns CPU cycles into seconds with the "cpu MHz" of
# /proc/cpuinfo (User-Mode Linux has none: vm/guest-stage2 lends it the
# host's). Without it perftest's figures come out 0: say so.
need_cpu_mhz() {
	grep -q '^cpu MHz' /proc/cpuinfo ||
		echo "$prog: /proc/cpuinfo has no 'cpu MHz': ib_write_bw and ib_write_lat will report 0" >&2
}
