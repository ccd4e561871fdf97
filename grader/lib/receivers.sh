# receivers.sh: the reference receivers a lab's tests talk to (.receiver in
# tests/harness.h; Lab 3's, one per test), run by the grader.
# A part of grader/rdmalab-grade, which sources it: it uses that script's
# settings and globals, and defines functions (and, where it says so, state).
#
# Each receiver runs as root with a fresh secret in a folder only root can
# read, so the student's code (under its own uid) never sees a secret: the
# test checks the key its sender printed against the key's SHA-256 in the
# receiver's results log, which is the one file here the student may read.

# receivers_start LAB SLOT DIR: a receiver for each test of LAB that declares
# one (scripts/receivers), on the slot's ports, its files in DIR (root's,
# mode 755). Writes DIR/table, "TEST<tab>PORT<tab>RESULTS" a line, for the
# tests (RDMALAB_RECEIVERS); sets receiver_pids (state). Returns 1, with the
# reason in $infra, when one does not start.
receivers_start() {
	local lab=$1 slot=$2 dir=$3 test opts d port i=0 words
	receiver_pids=() infra=
	: >"$dir/table"
	while IFS=$'\t' read -r test opts; do
		i=$((i + 1)) d=$dir/$i port=$((30000 + slot * 100 + i))
		if ! mkdir -m 755 "$d" || ! mkdir -m 700 "$d/private"; then
			infra="could not make the folder of the reference receiver for $test in $dir"
			return 1
		fi
		(umask 077 && head -c 32 /dev/urandom | base64 >"$d/private/secret")
		install -m 644 /dev/null "$d/results.jsonl"
		read -ra words <<<"$opts"
		"$kit/build/bin/rdmalab-receiver" --secret-file "$d/private/secret" \
			--results "$d/results.jsonl" "${words[@]}" -p "$port" "$RDMALAB_ADDR" \
			>"$d/private/receiver.log" 2>&1 &
		receiver_pids+=($!)
		if ! rl_wait_listening "$d/private/receiver.log" $! 10; then
			infra="the reference receiver for $test did not start: $(tail -n 1 "$d/private/receiver.log")"
			return 1
		fi
		printf '%s\t%s\t%s\n' "$test" "$port" "$d/results.jsonl" >>"$dir/table"
	done < <("$kit/scripts/receivers" "$lab")
}

# receivers_stop: SIGTERM to each, then SIGKILL to what is left after 5 s.
receivers_stop() {
	local pid
	[ ${#receiver_pids[@]} = 0 ] && return 0
	kill -TERM "${receiver_pids[@]}" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "${receiver_pids[@]}" 2>/dev/null || break
		sleep 0.1
	done
	for pid in "${receiver_pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	receiver_pids=()
}

# receivers_logs DIR TSV OUT: the log of the receiver of each test that did
# not pass in TSV (a lab's results), as OUT-TEST.receiver.log.
receivers_logs() {
	local dir=$1 tsv=$2 out=$3 test i=0
	while IFS=$'\t' read -r test _ _; do
		i=$((i + 1))
		awk -F '\t' -v t="$test" '$2 == t && $3 == "pass" { ok = 1 } END { exit !ok }' "$tsv" ||
			cp "$dir/$i/private/receiver.log" "$out-$test.receiver.log" 2>/dev/null
	done <"$dir/table"
}
