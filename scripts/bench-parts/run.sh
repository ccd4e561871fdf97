# run.sh: bench run: measuring, where RDMA works: the helpers and the order of the runs.
# A part of scripts/bench, which sources it: it uses that script's settings
# and functions.

# ---------------------------------------------------------------------------
# run: measure, where RDMA works. One line per (method, size) goes to
# OUT/results.tsv; the tools' own output to OUT/raw/.

# row METHOD MIB TRANSFER_GBPS E2E_GBPS HASH_S TRANSFER_S TOTAL_S CPU_S XFER_CPU_S NOTE
# ('' for none). CPU_S: the sending process's CPU time, user + system, start
# to exit; XFER_CPU_S: Lab 4's own figure for its transfer phase.
row() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out/results.tsv"
}

# failed METHOD MIB REASON: a row without figures; the reason says why.
failed() {
	row "$1" "$2" '' '' '' '' '' '' '' "$3"
	echo "$prog: $2 MiB: $3" >&2
}

# The format of bash's `time` keyword: user and system CPU seconds of what it
# timed, children included (the `timeout` wrapper waits for its command).
TIMEFORMAT='%3U %3S'

# cpu_seconds FILE: user + system seconds from a `time` report in FILE, or ''.
cpu_seconds() {
	awk 'NF == 2 && $1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ { v = sprintf("%.3f", $1 + $2) } END { print v }' "$1" 2>/dev/null
}

# wait_listening PORT PID: until something listens on PORT, at most 10 s
# (scaled): a TCP socket (perftest, an out-of-band exchange; read from
# /proc/net/tcp, no process started) or an rdma_cm ID (`rdma res`, asked less
# often: under emulation every process started slows the server down).
# Returns 1 when PID died first.
wait_listening() {
	local port=$1 hex end i=0 local_addr st
	printf -v hex ':%04X' "$port"
	end=$((${EPOCHREALTIME%.*} + listen_secs))
	while [ "${EPOCHREALTIME%.*}" -lt "$end" ]; do
		kill -0 "$2" 2>/dev/null || return 1
		while read -r _ local_addr _ st _; do
			[ "$st" = 0A ] && [ "${local_addr: -5}" = "$hex" ] && return 0
		done </proc/net/tcp
		if [ $((i++ % 4)) = 3 ] && rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr [^ ]*:$port "; then
			return 0
		fi
		sleep 0.2
	done
	return 0
}

# took T0: the seconds since T0 (an EPOCHREALTIME), for the progress lines.
took() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f s", b - a }'
}

free_port() {
	echo $((20000 + RANDOM % 20000))
}

# make_file MIB PATH: a file of MIB MiB: one random MiB doubled until it is
# big enough (reading /dev/urandom is slow under emulation; nothing measured
# here compresses or deduplicates, so repeated content costs the same).
make_file() {
	local bytes=$(($1 * 1048576)) path=$2
	head -c 1048576 /dev/urandom >"$path.block" || return 1
	while [ "$(stat -c %s "$path.block")" -lt "$bytes" ]; do
		cat "$path.block" "$path.block" >"$path.tmp" && mv "$path.tmp" "$path.block" || return 1
	done
	if [ "$(stat -c %s "$path.block")" = "$bytes" ]; then
		mv "$path.block" "$path"
	else
		head -c "$bytes" "$path.block" >"$path" && rm -f "$path.block"
	fi
}



cmd_run() {
	local sizes='' mib file m w
	repeat=${BENCH_REPEAT:-3}
	out=
	while [ $# -gt 0 ]; do
		case $1 in
		--out) out=$2; shift 2 ;;
		--sizes) sizes=$2; shift 2 ;;
		*) die "run: unknown argument '$1'" ;;
		esac
	done
	[ -n "$out" ] || die "run: --out DIR is needed"
	if [ -z "${RDMALAB_DEVICE:-}" ] || [ -z "${RDMALAB_ADDR:-}" ]; then
		die "run: RDMALAB_DEVICE and RDMALAB_ADDR are not set: run it through vm/run-rdma, or use scripts/bench"
	fi
	check_sizes "$sizes"
	check_repeat "$repeat"
	listen_secs=$(secs 10 0 0)
	ulimit -l unlimited 2>/dev/null
	mkdir -p "$out/raw" || die "run: cannot create $out/raw"
	: >"$out/results.tsv"
	echo "$RDMALAB_ENV $RDMALAB_DEVICE" >"$out/env"
	echo "$repeat" >"$out/repeat"
	work=$(mktemp -d "${TMPDIR:-/tmp}/rdmalab-bench.XXXXXX") || die "run: mktemp failed"
	trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$work"' EXIT
	need_cpu_mhz
	pick_stamper
	run_start=$EPOCHREALTIME
	echo "$prog: on $RDMALAB_ENV, device $RDMALAB_DEVICE, GID index $RDMALAB_GID_INDEX, address $RDMALAB_ADDR; sizes $sizes MiB"
	for mib in $sizes; do
		file=$work/file
		if ! make_file "$mib" "$file"; then
			for m in $methods; do failed "$m" "$mib" "cannot write a $mib MiB file in $work"; done
			continue
		fi
		# Every sender takes its turn in each round, so that all see the
		# same moments of a machine whose speed drifts.
		chunk=
		for ((run = 1; run <= repeat; run++)); do
			for w in $waits; do
				bench_lab4 "$mib" "$file" "$w"
			done
			bench_ib_write_bw "$mib" "${BENCH_CHUNK:-${chunk:-1048576}}"
			bench_lab3 "$mib" "$file"
		done
		rm -f "$file"
	done
	bench_latency
	echo "$prog: measured in $(took "$run_start")"
	return 0
}
