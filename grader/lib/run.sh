# run.sh: building and running the step tests of each submission where RDMA works, and the batch's queue.
# A part of grader/rdmalab-grade and grader/test-batch, which source it: it uses that script's
# settings and globals, and defines functions (and, where it says so, state).
# run_lab takes what it uses as arguments; the receivers' state is in files.

# run_lab W LAB UID DIR SLOT: the graded tests of lab LAB of the submission
# in W, as UID, from its programs (built in DIR/tree) copied into DIR, with the receivers its
# tests declare on slot SLOT's ports. The test program's parent writes the
# records to a file the grader opened (--results-fd 3), which no process
# that runs student code holds; its output goes to another the grader
# opened. Both are in W/results/labLAB. Returns 1, with the reason in
# W/infra.txt, when a receiver does not start.
run_lab() {
	local w=$1 lab=$2 uid=$3 run=$4 out=$1/results/lab$2 rdir t0=$EPOCHREALTIME
	mkdir -p "$run/build/labs" "$out"
	cp -a "$run/tree/build/labs/lab$lab" "$run/build/labs/"
	give_student "$uid" "$run/build"
	rdir=$(mktemp -d /tmp/rdmalab-receivers.XXXXXX) && chmod 755 "$rdir" ||
		{ echo "could not make a folder for the receivers in /tmp" >"$w/infra.txt"; return 1; }
	if ! receivers_start "$kit/build/rubric/lab$lab.receivers" "$5" "$rdir" "$RDMALAB_ADDR"; then
		cat "$rdir/infra" >"$w/infra.txt"
		receivers_stop "$rdir"
		rm -rf "$rdir"
		return 1
	fi
	echo "rdmalab-grade: lab $lab on ${RDMALAB_DEVICE:-no device} (GID index ${RDMALAB_GID_INDEX:-none}, ${RDMALAB_ENV:-native})" \
		>"$out/steps.out"
	# From the kit's folder, as make check runs them: a crash report names
	# the files from there.
	(cd "$kit" && RDMALAB_RECEIVER=$kit/build/bin/rdmalab-receiver RDMALAB_RECEIVERS=$rdir/table \
		RDMALAB_TEST_TIMEOUT=$test_seconds \
		as_student "$uid" 1200 "$(test_programs "$lab" "$run/build/labs/lab$lab/tests")" --results-fd 3 \
		3>"$out/steps.jsonl" >>"$out/steps.out" 2>&1 </dev/null)
	end_student "$uid"
	receivers_stop "$rdir"
	receivers_logs "$rdir" "$out/steps.jsonl" "$out"
	rm -rf "$rdir"
	lab_progress "${w##*/}" "$lab" "$out/steps.jsonl" "$t0"
}

# lab_progress NAME LAB RECORDS T0: a line on stderr, which the grader
# shows as it comes: the lab's tests passed, failed, skipped and points, and
# the seconds since T0 ($EPOCHREALTIME).
lab_progress() {
	local ms=$(((${EPOCHREALTIME/[.,]/} - ${4/[.,]/}) / 1000))
	jq -rsR --arg name "$1" --arg lab "$2" --argjson ms "$ms" '
		[split("\n")[] | select(length > 0) | try fromjson catch empty] as $r
		| def n($x): [$r[] | select(.result == $x)] | length;
		"rdmalab-grade: \($name): lab \($lab): \(n("pass")) passed, \(n("FAIL")) failed, \(n("skipped")) skipped, \([$r[].points] | add // 0)/\([$r[].max] | add // 0) points, tests in \($ms / 100 | round / 10) s"' "$3" >&2
}

# run_one NAME SLOT K: the batch's submission K built, then the graded
# tests of each lab that built, as its uid, in slot SLOT (which picks the
# receivers' ports), results in WORK/NAME/results. All its code runs here,
# in the RDMA environment, in the sandbox made here (or --unsafe: what it
# lacks goes into the submission's report).
run_one() {
	local name=$1 slot=$2 uid w=$work/$1 run lab started
	uid=$(student_uid "$3")
	[ -z "$sandbox_missing" ] || echo "where its code ran (${RDMALAB_ENV:-native}): $sandbox_missing" >"$w/unsafe.txt"
	run=$(mktemp -d /tmp/rdmalab-run.XXXXXX)
	own_folder "$uid" "$run"
	build_one "$w" "$uid" "$run"
	started=$(date +%s)
	for lab in $labs; do
		# A lab that did not build has no tests to run: scripts/results
		# lists them as failed (grader/lib/publish.sh).
		[ -f "$w/build-lab$lab.failed" ] && continue
		run_lab "$w" "$lab" "$uid" "$run" "$slot" || break
	done
	rm -rf "$run"
	clean_student "$uid"
	echo $(($(date +%s) - started)) >"$w/test-seconds"
	[ -s "$w/infra.txt" ] || echo graded >"$w/status"
}

# batch_ready INFRA: inside the RDMA environment, before the first test: the
# device, its nodes open to the students' uids, and the sandbox whole (or
# --unsafe). Returns 1, with the reason in the file INFRA, when one is not.
batch_ready() {
	if [ -z "${RDMALAB_DEVICE:-}" ] || [ -z "${RDMALAB_ADDR:-}" ]; then
		echo "no RDMA device (RDMALAB_DEVICE/RDMALAB_ADDR unset)" >"$1"
		return 1
	fi
	# Debian's udev rules let everyone open the verbs devices; the VM (and a
	# container given its nodes) has no udev: open them as those rules do.
	if isolated; then
		chmod 666 /dev/infiniband/uverbs* /dev/infiniband/rdma_cm 2>/dev/null
		if ! setpriv --reuid="$uid_base" --regid="$uid_base" --clear-groups -- \
			sh -c '[ -r /dev/infiniband/rdma_cm ] && [ -w /dev/infiniband/rdma_cm ]'; then
			echo "the RDMA device nodes (/dev/infiniband) are not open to unprivileged users: make them mode 666 as Debian's udev rules do" >"$1"
			return 1
		fi
	fi
	# The sandbox, where the tests run: stop, or (--unsafe) say what it
	# lacks here in each submission's report (run_one, grader/lib/publish.sh).
	local refusal
	if ! refusal=$(sandbox_refuse "in the RDMA environment (${RDMALAB_ENV:-native})"); then
		echo "$refusal" >"$1"
		return 1
	fi
	[ -z "$sandbox_missing" ] ||
		echo "rdmalab-grade: --unsafe: building and testing without $sandbox_missing (${RDMALAB_ENV:-native}); every report says so" >&2
	calibrate
}

# calibrate: the limits follow this environment's measured speed. It times a
# fixed piece of work (the SHA-256 of 64 MiB of zeros, read in 4 MiB blocks:
# CPU bound, as rxe and the tests are, with few system calls, which cost
# User-Mode Linux most and vary most there) three times and keeps the
# fastest, so a neighbour's burst (another guest booting) does not count as
# this environment's speed. Where that takes longer than the CALIBRATION_MS
# it took in User-Mode Linux on our 2-core build machines, where the limits
# were set, it scales every limit (CK_TIMEOUT_MULTIPLIER, times any the
# caller set) by as much: from 1 (never shorter) to 8 (a QEMU VM in software
# emulation; a hang is still caught).
CALIBRATION_MS=400
calibrate() {
	local t0 ms best= factor
	for _ in 1 2 3; do
		t0=${EPOCHREALTIME/[.,]/}
		dd if=/dev/zero bs=4M count=16 status=none | sha256sum >/dev/null
		ms=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
		[ -n "$best" ] && [ "$best" -le "$ms" ] || best=$ms
	done
	factor=$(jq -n --argjson ms "$best" --argjson ref "$CALIBRATION_MS" \
		'$ms / $ref | if . < 1 then 1 elif . > 8 then 8 else . end | . * 10 | round / 10')
	export CK_TIMEOUT_MULTIPLIER
	CK_TIMEOUT_MULTIPLIER=$(jq -n --argjson m "${CK_TIMEOUT_MULTIPLIER:-1}" --argjson f "$factor" '$m * $f')
	echo "rdmalab-grade: the calibration took $best ms here, the best of 3 ($CALIBRATION_MS ms where the limits were set): limits times $CK_TIMEOUT_MULTIPLIER"
}

# run_batch: inside the RDMA environment, every submission of the batch,
# JOBS at once (queue k is slot k).
run_batch() {
	local k names
	batch_ready "$batch/infra.txt" || return 1
	mapfile -t names <"$batch/names"
	# Each slot takes the next submission left when it is free, so that a
	# few slow ones (hangs, timeouts) do not hold up the submissions behind
	# them in one slot. The counter is on this machine's /tmp: the work
	# folder may be a VM share, where locks are not to be relied on.
	queue=$(mktemp -d /tmp/rdmalab-queue.XXXXXX) || return 1
	echo 0 >"$queue/next"
	for ((k = 0; k < jobs; k++)); do
		(
			while i=$(next_submission) && [ "$i" -lt ${#names[@]} ]; do
				run_one "${names[i]}" "$k" "$i"
			done
		) &
	done
	wait
	rm -rf "$queue"
}

# run_guests: on this machine, one User-Mode Linux guest per submission,
# JOBS at once (a guest has one CPU, so one guest would leave the other cores
# idle). Its processes, daemons included, end when the guest powers off.
run_guests() {
	local k names limit
	mapfile -t names <"$batch/names"
	limit=$(rl_scaled $((900 + 600 * $(echo $labs | wc -w))))
	queue=$batch/queue
	mkdir -p "$queue"
	echo 0 >"$queue/next"
	for ((k = 0; k < jobs; k++)); do
		(
			while i=$(next_submission) && [ "$i" -lt ${#names[@]} ]; do
				grade_in_guest "${names[i]}" "$k" "$i" "$limit"
			done
		) &
	done
	wait
}

# grade_in_guest NAME SLOT K SECONDS: grade the batch's submission K in a guest of its
# own. A guest that died or hung (uml-run's exit 2 or 125: seen under load,
# not caused by the submission's score) gets one more boot from a clean
# results folder; a timeout (124) does not, as a second one would double it.
grade_in_guest() {
	local n=$1 w=$work/$1 attempt rc
	for attempt in 1 2; do
		rc=0
		# Its log whole; its progress (the lines of the grader's own) shown.
		"$kit/vm/run-rdma" --mode uml "${guest_as[@]}" --rw "$work" --timeout "$4" \
			-- "$grader/test-batch" "$work" "$n" "$2" "$3" 2>&1 |
			tee -a "$batch/$n.rdma.log" | grep --line-buffered '^rdmalab-grade: '
		rc=${PIPESTATUS[0]}
		[ "$rc" = 0 ] && return 0
		if [ "$attempt" = 1 ] && { [ "$rc" = 2 ] || [ "$rc" = 125 ]; } && [ ! -f "$w/status" ]; then
			echo "rdmalab-grade: $n: the guest failed (exit $rc: $(why_guest_failed "$batch/$n.rdma.log")): grading it again" >&2
			echo "rdmalab-grade: --- the guest failed (exit $rc); a second boot ---" >>"$batch/$n.rdma.log"
			rl_guest_event retried "rdmalab-grade: $n: the guest failed (exit $rc): booted again"
			rm -rf "$w/infra.txt" "$w/results"/* "$w/results"/.[!.]* 2>/dev/null
			continue
		fi
		echo "the RDMA environment failed: $(why_guest_failed "$batch/$n.rdma.log")" >>"$w/infra.txt"
		return 1
	done
}

# next_submission: the index in names of the next submission to grade (one
# past the last when none is left), taken under a lock.
next_submission() {
	local i
	{
		flock 9 || return 1
		i=$(cat "$queue/next")
		echo $((i + 1)) >"$queue/next"
	} 9>>"$queue/lock"
	echo "$i"
}
