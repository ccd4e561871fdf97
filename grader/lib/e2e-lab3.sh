# e2e-lab3.sh: Lab 3's end-to-end runs: the student's sender against the reference receiver.
# A part of grader/rdmalab-grade, which sources it: it uses that script's
# settings and globals, and defines functions (and, where it says so, state).

# receiver_start DIR PORT OPTION...: the reference receiver with the secret in
# DIR (root's, mode 700), listening on the RDMA address; its pid in $rpid.
receiver_start() {
	local dir=$1 port=$2
	shift 2
	"$kit/build/bin/rdmalab-receiver" --secret-file "$dir/secret" --results "$dir/results.jsonl" \
		--idle-timeout "$(rl_scaled 20)" "$@" -p "$port" "$RDMALAB_ADDR" >"$dir/receiver.log" 2>&1 &
	rpid=$!
	rl_wait_listening "$dir/receiver.log" "$rpid" 10
}

receiver_stop() {
	kill -TERM "$rpid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$rpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
}

# e2e_verdict RC EXPECT SIZE ID KEY REACHED: one run of the student's sender
# judged: it exited with RC, printed KEY last, and reached step REACHED by the
# receiver's log; EXPECT is key, bad (the receiver says the hash is bad) or
# fail (the receiver drops the connection). Sets result (pass or FAIL) and
# why (the sender's last error line on entry, the reason on return).
e2e_verdict() {
	local rc=$1 expect=$2 size=$3 id=$4 key=$5 reached=$6
	result=FAIL
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why="the sender was still running after ${limit} s (file of $size bytes): it hangs"
	elif [ "$expect" = key ]; then
		if [ "$rc" != 0 ]; then
			why="expected a key for a file of $size bytes, got exit status $rc: ${why:-no message}"
		elif "$kit/build/bin/rdmalab-receiver" --secret-file "$sec/secret" --verify "$id" "$key" >/dev/null 2>&1; then
			result=pass why=
		else
			why="expected the key of '$id' (file of $size bytes), got '${key:-nothing}'"
		fi
	elif [ "$rc" = 0 ]; then
		why="expected a non-zero exit (the receiver $([ "$expect" = bad ] && echo "said the hash was bad" || echo "dropped the connection")), got exit status 0"
	elif [ "$expect" = bad ] && [ "$reached" -lt 5 ]; then
		why="expected the sender to send DONE and read the RESULT saying bad, it stopped at step $reached: ${why:-no message}"
	elif [ "$expect" = fail ] && [ "$reached" -lt 4 ]; then
		why="expected the sender to get as far as DONE before the drop, it stopped at step $reached: ${why:-no message}"
	else
		result=pass why=
	fi
}

# e2e_lab3 NAME SLOT RUN UID: the student's sender, run as UID, against the
# reference receiver on the slot's ports. One line per test of
# grader/e2e-lab3.rubric in WORK/NAME/results/lab3-e2e.tsv.
e2e_lab3() {
	local name=$1 slot=$2 run=$3 uid=$4 w=$work/$1 test pts size id key rc why i=0
	local sender=$run/build/labs/lab3/lab3 sec files out tsv=$w/results/lab3-e2e.tsv
	local ropts expect limit reached result attempt port seconds
	sec=$(mktemp -d /tmp/rdmalab-secret.XXXXXX)
	files=$run/e2e
	mkdir -p "$files"
	chmod 755 "$files"
	limit=$(rl_scaled "$e2e_seconds") seconds=$e2e_seconds
	: >"$tsv"
	while read -r test pts; do
		case $test in '' | '#'*) continue ;; esac
		i=$((i + 1))
		# A fresh secret, student ID and file for every run.
		(umask 077 && head -c 32 /dev/urandom | base64 >"$sec/secret")
		id=s$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
		expect=key ropts=()
		case $test in
		*empty_file*) size=0 ;;
		*small_odd*) size=$((2 * (RANDOM % 5000) + 1)) ;;
		*many_small_windows*) size=$((150000 + RANDOM)); ropts=(--fault-window 4096) ;;
		*large_file*) size=$((16 * 1048576 + RANDOM)) ;;
		*slow_receiver*) size=$((100000 + RANDOM)); ropts=(--fault-delay 5:1500) ;;
		*bad_hash*) size=$((100000 + RANDOM)); ropts=(--fault-bad-hash); expect=bad ;;
		*dropped_connection*) size=$((100000 + RANDOM)); ropts=(--fault-drop 4); expect=fail ;;
		*) echo "rdmalab-grade: $grader/e2e-lab3.rubric: no run is defined for $test" >&2; return 1 ;;
		esac
		head -c "$size" /dev/urandom >"$files/file"
		chmod 644 "$files/file"
		# A failure that is not a hang gets a second run: a loaded machine can
		# lose a connection attempt, and a pass still needs the right key.
		for attempt in 1 2; do
			rm -f "$sec/results.jsonl"
			port=$((30000 + slot * 100 + attempt * 20 + i))
			if ! receiver_start "$sec" $port "${ropts[@]}"; then
				echo "the reference receiver did not start: $(tail -n 1 "$sec/receiver.log")" >"$w/infra.txt"
				receiver_stop
				rm -rf "$sec"
				return 1
			fi
			out=$run/e2e/out
			as_student "$uid" "$seconds" "$sender" --server "$RDMALAB_ADDR:$port" \
				--file "$files/file" --id "$id" --timeout "$limit" >"$out.stdout" 2>"$out.stderr" </dev/null
			rc=$?
			end_student "$uid"
			receiver_stop
			key=$(tail -n 1 "$out.stdout" 2>/dev/null | awk '{ print $NF }')
			why=$(tail -n 1 "$out.stderr" 2>/dev/null | cut -c1-300)
			# How far the sender got, as the receiver logged it (docs/receiver.md).
			reached=$(jq -r '.step // empty' "$sec/results.jsonl" 2>/dev/null | tail -n 1)
			reached=${reached:-0}
			e2e_verdict "$rc" "$expect" "$size" "$id" "$key" "$reached"
			# A hang costs its limit once: the runs after it get a quarter
			# (graded.c does the same for a step's tests).
			if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
				seconds=$(((e2e_seconds + 3) / 4))
				break
			fi
			[ "$result" = pass ] && break
		done
		[ "$result" = pass ] || cp "$sec/receiver.log" "$w/results/lab3-$test.receiver.log" 2>/dev/null
		printf 'e2e\t%s\t%s\t%d\t%d\t%s\n' "$test" "$result" "$([ "$result" = pass ] && echo "$pts" || echo 0)" \
			"$pts" "${why//\\/\\\\}" >>"$tsv"
	done <"$grader/e2e-lab3.rubric"
	rm -rf "$sec"
}
