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

# client_var NAME: RDMALAB_NAME as the senders' clients see it: the peer
# device's with TRACE=1 (client_env), else this one's.
client_var() {
	local v
	for v in "${client_env[@]}"; do
		[ "${v%%=*}" = "RDMALAB_$1" ] && { echo "${v#*=}"; return; }
	done
	v=RDMALAB_$1
	echo "${!v}"
}

# traced METHOD MIB CMD...: CMD; with TRACE=1, in the first round, with the
# RoCE packets it makes captured into OUT/trace/METHOD-MIB.pcap (headers
# only: 128 bytes of each packet). A capture that cannot start is said, and
# the round runs anyway.
traced() {
	local pcap=$out/trace/$1-$2.pcap
	shift 2
	if [ "${BENCH_TRACE:-0}" = 1 ] && [ "$run" = 1 ] && rl_capture_start "$pcap" 128; then
		"$@"
		rl_capture_stop
	else
		"$@"
	fi
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
	ulimit -l unlimited 2>/dev/null
	mkdir -p "$out/raw" || die "run: cannot create $out/raw"
	: >"$out/results.tsv"
	# TRACE=1: every client on a device of its own (the guest's rxe1), so
	# that its packets cross a link where they can be captured.
	client_env=()
	if [ "${BENCH_TRACE:-0}" = 1 ]; then
		read -ra client_env <<<"$(rl_peer_env)"
		[ ${#client_env[@]} -gt 0 ] ||
			die "run: TRACE=1 needs a second RDMA device for the clients, whose packets then cross a link (the kit's guest makes one: RDMA_MODE=uml); here there is only $RDMALAB_DEVICE"
		mkdir -p "$out/trace" || die "run: cannot create $out/trace"
	fi
	echo "$RDMALAB_ENV $RDMALAB_DEVICE${client_env[*]:+ to $(client_var DEVICE)}" >"$out/env"
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
				traced "lab4-$w" "$mib" bench_lab4 "$mib" "$file" "$w"
			done
			traced ib_write_bw "$mib" bench_ib_write_bw "$mib" "${BENCH_CHUNK:-${chunk:-1048576}}"
			traced lab3 "$mib" bench_lab3 "$mib" "$file"
		done
		rm -f "$file"
	done
	bench_latency
	bench_datagrams
	echo "$prog: measured in $(took "$run_start")"
	return 0
}
