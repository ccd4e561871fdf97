# publish.sh: the results of a submission, in place at once: its records
# (results.jsonl), what it is (submission.json), and the report, results.json
# and junit.xml that scripts/results makes of them.
# A part of grader/rdmalab-grade, which sources it: its functions take what
# they use as arguments (the batch's facts in BATCH/batch.json), and the
# kit's path ($kit).

# files_taken TAKEN: the files of a submission for its report, one line per
# lab of those taken, one per file the stub stood in for (and why).
files_taken() {
	local line lab taken=() others=() order=()
	local -A files=()
	[ -f "$1" ] || return 0
	while IFS= read -r line; do
		if [[ $line == lab*/*": taken" ]]; then
			lab=${line%%/*}
			[ -n "${files[$lab]+set}" ] || order+=("$lab")
			line=${line#*/}
			files[$lab]+=" ${line%: taken}"
		else
			others+=("$line")
		fi
	done <"$1"
	for lab in "${order[@]}"; do
		taken+=("$lab:${files[$lab]}")
	done
	taken+=("${others[@]}")
	[ ${#taken[@]} = 0 ] || printf '%s\n' "${taken[@]}"
}

# submission_json W NAME BATCH MADE [UNGRADABLE]: what the submission in W
# is, as one JSON line: its name, when and what was graded, the files taken
# (or the batch's --source), the intake's note, what the sandbox lacked
# where its code ran (--unsafe; null when nothing), why it could not be
# graded (null when it was), and the seconds its builds and tests took.
submission_json() {
	local w=$1 source seconds=null
	source=$(jq -r .source "$3/batch.json")
	[ -n "$source" ] || source=$(files_taken "$w/taken.txt")
	if [ -z "${5:-}" ]; then
		seconds=$(($(cat "$w/build-seconds" 2>/dev/null || echo 0) + $(cat "$w/test-seconds" 2>/dev/null || echo 0)))
	fi
	jq -nc --arg name "$2" --slurpfile batch "$3/batch.json" --arg made "$4" --arg source "$source" \
		--arg intake "$(cat "$w/intake.txt" 2>/dev/null)" --arg ungradable "${5:-}" --argjson seconds "$seconds" \
		--arg lacked "$(cat "$w/unsafe.txt" 2>/dev/null)" \
		'$batch[0] as $b
		| {name: $name, made: $made, graded: $b.graded, source: $source, intake: $intake,
		   unsafe: (if $lacked == "" then null else $lacked end),
		   ungradable: (if $ungradable == "" then null else $ungradable end), seconds: $seconds}'
}

# lab_records W LAB: lab LAB's records of the submission in W (scripts/results
# lab), against the kit's rubric (make grader-kit builds it).
lab_records() {
	local w=$1 lab=$2 rubric=$kit/build/rubric/lab$2.jsonl
	if [ -f "$w/build-lab$lab.failed" ]; then
		"$kit/scripts/results" lab --lab "$lab" --not-built "$(cat "$w/build-lab$lab.failed")" "$rubric"
	else
		"$kit/scripts/results" lab --lab "$lab" --logs-as "logs/lab$lab" "$rubric" "$w/results/lab$lab/steps.jsonl"
	fi
}

# copy_logs W LAB DIR: what the builds and tests of lab LAB left, into DIR:
# the build's log, the test program's records and output (at most 1 MiB),
# the logs of the receivers of the tests that did not pass.
copy_logs() {
	local w=$1 lab=$2 f
	cp "$w/build-lab$lab.log" "$3/" 2>/dev/null
	[ -d "$w/results/lab$lab" ] || return 0
	mkdir -p "$3/lab$lab"
	for f in "$w/results/lab$lab"/*; do
		[ -f "$f" ] && head -c 1048576 "$f" >"$3/lab$lab/${f##*/}"
	done
}

# without_note REPORT: the report, less the note of a run that could not
# grade at its top (its lines up to the first empty one).
without_note() {
	local line first=1 note=0
	while IFS= read -r line || [ -n "$line" ]; do
		if [ "$first" = 1 ] && [[ $line == "NOT GRADED at "* ]]; then
			note=1
		fi
		first=0
		if [ "$note" = 1 ]; then
			[ -n "$line" ] || note=0
			continue
		fi
		printf '%s\n' "$line"
	done <"$1"
}

# publish W DEST BATCH: write DEST (its name the student's) from the
# submission's results in W, or mark it ungradable without overwriting an
# earlier good result: its report then says at its top that this run could
# not grade, and when. Returns 1 when it could not grade.
publish() {
	local w=$1 dest=$2 batch=$3 name reason= lab err now
	name=$(basename "$dest")
	now=$(date -u +%FT%TZ)
	if [ -f "$w/status" ]; then
		rm -rf "$dest.new"
		mkdir -p "$dest.new/logs"
		: >"$dest.new/results.jsonl"
		for lab in $(jq -r '.labs[]' "$batch/batch.json"); do
			if ! err=$(lab_records "$w" "$lab" 2>&1 >>"$dest.new/results.jsonl"); then
				reason="the results of lab $lab could not be read: ${err#results: }"
				break
			fi
			copy_logs "$w" "$lab" "$dest.new/logs"
		done
		cp "$w/taken.txt" "$dest.new/logs/files-taken.txt" 2>/dev/null
		if [ -z "$reason" ]; then
			submission_json "$w" "$name" "$batch" "$now" >"$dest.new/submission.json" &&
				"$kit/scripts/results" submission "$dest.new" || return 1
			rm -rf "$dest.old"
			[ -d "$dest" ] && mv "$dest" "$dest.old"
			mv "$dest.new" "$dest" && rm -rf "$dest.old"
			return 0
		fi
	fi
	reason=${reason:-$(cat "$w/infra.txt" "$batch/infra.txt" 2>/dev/null | head -n 1)}
	reason=${reason:-the test run did not finish (see $(dirname "$dest")/grade.log)}
	echo "rdmalab-grade: $name: UNGRADABLE: $reason" >&2
	if jq -e '.ungradable == null' "$dest/submission.json" >/dev/null 2>&1; then
		printf '%s UNGRADABLE: %s (the earlier result above is kept)\n' "$now" "$reason" >>"$dest/ungradable.txt"
		# The earlier report stays, under a note that this run could not
		# grade (the note of a run before it replaced).
		{
			printf 'NOT GRADED at %s: %s\n' "$now" "$reason"
			printf '(the report below is from an earlier run; this run could not grade)\n\n'
			without_note "$dest/report.txt" 2>/dev/null
		} >"$dest/report.txt.new" && mv "$dest/report.txt.new" "$dest/report.txt"
		rm -rf "$dest.new"
		return 1
	fi
	rm -rf "$dest.new"
	mkdir -p "$dest.new"
	: >"$dest.new/results.jsonl"
	submission_json "$w" "$name" "$batch" "$now" "$reason" >"$dest.new/submission.json" &&
		"$kit/scripts/results" submission "$dest.new"
	rm -rf "$dest"
	mv "$dest.new" "$dest"
	return 1
}
