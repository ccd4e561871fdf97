# receivers.sh: the reference receivers a lab's tests talk to (.receiver in
# tests/harness.h; Lab 3's, one per test), run by the grader.
# A part of grader/rdmalab-grade and grader/test-batch, which source it: its functions take what
# they use as arguments, and keep their state in the folder they are given.
#
# Each receiver runs as root with a fresh secret in a folder only root can
# read, so the student's code (under its own uid) never sees a secret: the
# test checks the key its sender printed against the key's SHA-256 in the
# receiver's results log, which is the one file here the student may read.

# receivers_start RECEIVERS SLOT DIR ADDR: a receiver on ADDR for each line
# of RECEIVERS ("TEST<tab>OPTIONS", the test program's --receivers, which
# make grader-kit writes from the kit's tests), on the slot's ports, its
# files in DIR (root's, mode 755). Writes DIR/table, "TEST<tab>PORT<tab>RESULTS"
# a line, for the tests (RDMALAB_RECEIVERS), and DIR/pids, for
# receivers_stop. Returns 1, with the reason in DIR/infra, when one does
# not start.
receivers_start() {
	local list=$1 slot=$2 dir=$3 addr=$4 test opts d port i=0 words
	: >"$dir/table"
	: >"$dir/pids"
	if [ ! -f "$list" ]; then
		echo "no list of the receivers the tests need, $list: make grader-kit builds it" >"$dir/infra"
		return 1
	fi
	while IFS=$'\t' read -r test opts; do
		i=$((i + 1)) d=$dir/$i port=$((30000 + slot * 100 + i))
		if ! mkdir -m 755 "$d" || ! mkdir -m 700 "$d/private"; then
			echo "could not make the folder of the reference receiver for $test in $dir" >"$dir/infra"
			return 1
		fi
		(umask 077 && head -c 32 /dev/urandom | base64 >"$d/private/secret")
		install -m 644 /dev/null "$d/results.jsonl"
		read -ra words <<<"$opts"
		"$kit/build/bin/rdmalab-receiver" --secret-file "$d/private/secret" \
			--results "$d/results.jsonl" "${words[@]}" -p "$port" "$addr" \
			>"$d/private/receiver.log" 2>&1 &
		echo $! >>"$dir/pids"
		if ! rl_wait_listening "$d/private/receiver.log" $! 10; then
			echo "the reference receiver for $test did not start: $(tail -n 1 "$d/private/receiver.log")" >"$dir/infra"
			return 1
		fi
		printf '%s\t%s\t%s\n' "$test" "$port" "$d/results.jsonl" >>"$dir/table"
	done <"$list"
}

# receivers_stop DIR: SIGTERM to each receiver of DIR/pids, then SIGKILL
# to what is left after 5 s.
receivers_stop() {
	local pid pids=()
	mapfile -t pids 2>/dev/null <"$1/pids"
	[ ${#pids[@]} = 0 ] && return 0
	kill -TERM "${pids[@]}" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "${pids[@]}" 2>/dev/null || break
		sleep 0.1
	done
	for pid in "${pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	: >"$1/pids"
}

# receivers_logs DIR RECORDS OUT: the log of the receiver of each test that
# did not pass in RECORDS (the test program's), as OUT/TEST.receiver.log.
receivers_logs() {
	local dir=$1 test passed i=0
	passed=$(jq -r 'select(.result == "pass") | .test' "$2" 2>/dev/null)
	while IFS=$'\t' read -r test _ _; do
		i=$((i + 1))
		grep -qxF -- "$test" <<<"$passed" ||
			cp "$dir/$i/private/receiver.log" "$3/$test.receiver.log" 2>/dev/null
	done <"$dir/table"
}
