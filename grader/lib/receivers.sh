# receivers.sh: the reference receivers a lab's tests talk to (.receiver in
# tests/harness.h; Lab 3's, one per test), run by the grader.
# A part of grader/rdmalab-grade and grader/test-batch, which source it: its functions take what
# they use as arguments, and keep their state in the folder they are given.
#
# Each receiver runs as root with a random secret only it ever holds
# (--secret-random), so the student's code (under its own uid) never sees a
# secret: the test checks the key its sender printed against the key's
# SHA-256 in the receiver's results log, which is the one file here the
# student may read.

# receivers_start RECEIVERS SLOT DIR ADDR: a receiver on ADDR for each line
# of RECEIVERS ("TEST<tab>OPTIONS", the test program's --receivers, which
# make grader-kit writes from the kit's tests), on the slot's ports, its
# files in DIR (root's, mode 755). Writes DIR/table, "TEST<tab>PORT<tab>RESULTS"
# a line, for the tests (RDMALAB_RECEIVERS), and DIR/pids, for
# receivers_stop. Returns 1, with the reason in DIR/infra, when one does
# not start.
# They start all at once and are then waited for together, with as few
# processes as can be: in User-Mode Linux each process started costs 0.1
# to 0.2 s, and one at a time, with a secret file each, the 32 of Lab 3 took
# 80 s of every submission's grading.
receivers_start() {
	local list=$1 slot=$2 dir=$3 addr=$4 tests=() opts=() test o words i n
	: >"$dir/table"
	: >"$dir/pids"
	if [ ! -f "$list" ]; then
		echo "no list of the receivers the tests need, $list: make grader-kit builds it" >"$dir/infra"
		return 1
	fi
	while IFS=$'\t' read -r test o; do
		tests+=("$test") opts+=("$o")
	done <"$list"
	n=${#tests[@]}
	[ "$n" -gt 0 ] || return 0
	if ! receivers_folders "$dir" "$n"; then
		echo "could not make the folders of the reference receivers in $dir" >"$dir/infra"
		return 1
	fi
	for ((i = 1; i <= n; i++)); do
		read -ra words <<<"${opts[i - 1]}"
		"$kit/build/bin/rdmalab-receiver" --secret-random --results "$dir/$i/results.jsonl" \
			"${words[@]}" -p $((30000 + slot * 100 + i)) "$addr" >"$dir/$i/private/receiver.log" 2>&1 &
		echo $! >>"$dir/pids"
	done
	receivers_wait "$dir" "${tests[@]}" || return 1
	for ((i = 1; i <= n; i++)); do
		printf '%s\t%s\t%s\n' "${tests[i - 1]}" $((30000 + slot * 100 + i)) "$dir/$i/results.jsonl" >>"$dir/table"
	done
}

# receivers_wait DIR TEST...: until the receiver of each TEST (DIR/1, DIR/2,
# ...) logged that it listens; 1, with the reason in DIR/infra, when one
# ended first or they
# took 10 s and half a second each (scaled). Between looks it naps in a read
# that times out on a FIFO nothing writes to (a sleep would be a process),
# opened after the receivers started and closed before any test starts.
receivers_wait() {
	local dir=$1 n=$(($# - 1)) i=1 end pids fifo nap
	shift
	mapfile -t pids <"$dir/pids"
	end=$((EPOCHSECONDS + $(rl_scaled $((10 + n / 2)))))
	fifo=$dir/nap
	mkfifo -m 600 "$fifo" && exec {nap}<>"$fifo" || nap=
	while [ "$i" -le "$n" ]; do
		if rl_log_has "$dir/$i/private/receiver.log" listening; then
			i=$((i + 1))
			continue
		fi
		if ! kill -0 "${pids[i - 1]}" 2>/dev/null || [ "$EPOCHSECONDS" -ge "$end" ]; then
			echo "the reference receiver for ${!i} did not start: $(tail -n 1 "$dir/$i/private/receiver.log")" >"$dir/infra"
			break
		fi
		if [ -n "$nap" ]; then read -rt 0.1 -u "$nap" _; else sleep 0.1; fi
	done
	[ -z "$nap" ] || exec {nap}>&-
	rm -f "$fifo"
	[ "$i" -gt "$n" ]
}

# receivers_folders DIR N: DIR/1 to DIR/N (mode 755), each with private/
# (mode 700, the receiver's log) and an empty results.jsonl the student may
# read (mode 644): a few processes for them all.
receivers_folders() {
	local dir=$1 n=$2 i open=() closed=() results=()
	for ((i = 1; i <= n; i++)); do
		open+=("$dir/$i") closed+=("$dir/$i/private") results+=("$dir/$i/results.jsonl")
	done
	mkdir -m 755 "${open[@]}" && mkdir -m 700 "${closed[@]}" &&
		touch "${results[@]}" && chmod 644 "${results[@]}"
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
