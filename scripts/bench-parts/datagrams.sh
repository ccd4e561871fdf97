# datagrams.sh: bench run: UD datagrams per second: Lab 5's ud-send, whose
# every datagram waits for its echo, against perftest's UD ping-pong
# (ib_send_lat -c UD) and UD stream (ib_send_bw -c UD), at one size.
# A part of scripts/bench, which sources it: it uses that script's settings
# and functions.

# bench_lab5_ud RAW SIZE COUNT: lab5 ud-serve and ud-send, COUNT datagrams of
# SIZE bytes each echoed; prints the round trips per second ud-send gives.
bench_lab5_ud() {
	local raw=$1 size=$2 count=$3 port spid limit rate
	port=$(free_port)
	limit=$(secs 30 0 0)
	timeout "$limit" "$lab5" ud-serve "$port" "$count" >"$raw-server.log" 2>&1 &
	spid=$!
	rl_wait_port "$port" "$spid" 10 || { wait "$spid"; return 1; }
	timeout "$limit" "$lab5" ud-send "$RDMALAB_ADDR" "$port" "$count" "$size" >"$raw-client.log" 2>&1 ||
		{ kill "$spid" 2>/dev/null; wait "$spid"; return 1; }
	wait "$spid" || return 1
	rate=$(sed -n 's/.* echoed in [0-9.]* s: \([0-9]*\) round trips\/s$/\1/p' "$raw-client.log")
	[ -n "$rate" ] && echo "$rate"
}

# dgram_row METHOD SIZE RATE NOTE: a line of OUT/datagrams.tsv.
dgram_row() {
	printf '%s\t%s\t%s\t%s\n' "$@" >>"$out/datagrams.tsv"
}

# bench_datagrams: the three at BENCH_DGRAM_SIZE bytes (default 512: under
# every MTU the guest picks), BENCH_DGRAM_COUNT datagrams (default 1000).
bench_datagrams() {
	local size=${BENCH_DGRAM_SIZE:-512} count=${BENCH_DGRAM_COUNT:-1000} raw=$out/raw/ud rate lat mpps try
	local start=$EPOCHREALTIME
	: >"$out/datagrams.tsv"
	if [ ! -x "$lab5" ]; then
		dgram_row lab5-ud "$size" '' "$lab5 is not built: make labs"
	elif rate=$(bench_lab5_ud "$raw-lab5" "$size" "$count"); then
		dgram_row lab5-ud "$size" "$rate" "ud-send: $count datagrams, each waits for its echo"
	else
		dgram_row lab5-ud "$size" '' "lab5 ud-send failed: $(tail -n 1 "$raw-lab5-client.log" 2>/dev/null)"
	fi
	for try in 1 2 3; do
		perftest ib_send_lat "$raw-lat" "$(secs 60 0 0)" -c UD -s "$size" -n "$count" || break
		lat=$(perftest_figures "$raw-lat" "$size" 5) && break
	done
	if [ -n "$lat" ]; then
		dgram_row ib_send_lat "$size" "$(awk -v t="$lat" 'BEGIN { printf "%.0f", 1e6 / (2 * t) }')" \
			"-c UD: ping-pong, $lat usec typical one way"
	else
		dgram_row ib_send_lat "$size" '' "ib_send_lat -c UD gave no figure (see $raw-lat-client.log)"
	fi
	for try in 1 2 3; do
		perftest ib_send_bw "$raw-bw" "$(secs 60 0 0)" -c UD -s "$size" -n "$count" || break
		mpps=$(perftest_figures "$raw-bw" "$size" 5) && break
	done
	if [ -n "$mpps" ]; then
		dgram_row ib_send_bw "$size" "$(awk -v m="$mpps" 'BEGIN { printf "%.0f", m * 1e6 }')" \
			"-c UD: a stream, nothing waits for an answer"
	else
		dgram_row ib_send_bw "$size" '' "ib_send_bw -c UD gave no figure (see $raw-bw-client.log)"
	fi
	echo "$prog: datagrams of $size B: $(cut -f1,3 "$out/datagrams.tsv" | tr '\t\n' '= ' | sed 's/ $//') per second ($(took "$start"))"
}

# datagrams_report DIR: the datagrams' table, from DIR/datagrams.tsv, if it ran.
datagrams_report() {
	[ -s "$1/datagrams.tsv" ] || return 0
	echo
	awk -F'\t' 'BEGIN { printf "%-12s %7s %14s  %s\n", "datagrams", "bytes", "per second", "note" }
		{ printf "%-12s %7s %14s  %s\n", $1, $2, $3 == "" ? "-" : $3, $4 } ' "$1/datagrams.tsv"
	awk -F'\t' '$3 == "" { bad = 1 } END { exit bad }' "$1/datagrams.tsv"
}
