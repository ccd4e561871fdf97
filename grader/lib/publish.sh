# publish.sh: the results of a submission: report, results.json, junit.xml, in place at once.
# A part of grader/rdmalab-grade, which sources it: it uses that script's
# settings and globals, and defines functions (and, where it says so, state).

# tsv_lines: standard input as one field of results.tsv, its newlines
# written \n (format.awk reads them back).
tsv_lines() {
	sed 's/\\/\\\\/g; s/\t/ /g' | awk '{ printf "%s%s", (NR > 1 ? "\\n" : ""), $0 }'
}

# files_taken TAKEN: the files of a submission for its report, one line per
# lab of those taken, one per file the stub stood in for (and why).
files_taken() {
	awk -F ': ' '$2 == "taken" {
			split($1, p, "/")
			if (!(p[1] in files))
				order[++n] = p[1]
			files[p[1]] = files[p[1]] " " p[2]
			next
		}
		{ others = others "\n" $0 }
		END {
			for (i = 1; i <= n; i++)
				taken = taken "\n" order[i] ":" files[order[i]]
			printf "%s", substr(taken others, 2)
		}' "$1" 2>/dev/null
}

# publish NAME: write DIR/NAME from the batch's results, or mark it
# ungradable without overwriting an earlier good result: its report then
# says at its top that this run could not grade, and when.
publish() {
	local name=$1 w=$work/$1 dest=$out/$1 reason lab now
	now=$(date -u +%FT%TZ)
	if [ -f "$w/status" ]; then
		rm -rf "$dest.new"
		mkdir -p "$dest.new/logs"
		{
			for lab in $labs; do
				if [ -f "$w/build-lab$lab.failed" ]; then
					printf '%s\tbuild\tlab%s_builds\tFAIL\t0\t0\t%s\n' "$lab" "$lab" \
						"$(tsv_lines <"$w/build-lab$lab.failed" | cut -c1-4000)"
				else
					printf '%s\tbuild\tlab%s_builds\tpass\t0\t0\t\n' "$lab" "$lab"
				fi
				awk -v lab="$lab" '{ print lab "\t" $0 }' "$w/results/lab$lab.tsv" 2>/dev/null
			done
		} >"$dest.new/results.tsv"
		for lab in $labs; do
			cp "$w/build-lab$lab.log" "$dest.new/logs/" 2>/dev/null
			cp "$w/results/lab$lab.run.log" "$dest.new/logs/" 2>/dev/null
			[ -d "$w/results/lab$lab" ] && cp -r "$w/results/lab$lab" "$dest.new/logs/"
		done
		cp "$w/taken.txt" "$dest.new/logs/files-taken.txt" 2>/dev/null
		# Its grading time: the builds and the tests (not a guest's boot).
		echo $(($(cat "$w/build-seconds" 2>/dev/null || echo 0) + $(cat "$w/test-seconds" 2>/dev/null || echo 0))) \
			>"$dest.new/seconds"
		awk -f "$grader/format.awk" -v name="$name" -v out="$dest.new" -v made="$now" -v graded="$graded" \
			-v source="${source:-$(files_taken "$w/taken.txt")}" -v intake="$(cat "$w/intake.txt" 2>/dev/null)" \
			-v isolated="$(isolated && echo yes || echo no)" "$dest.new/results.tsv" || return 1
		rm -rf "$dest.old"
		[ -d "$dest" ] && mv "$dest" "$dest.old"
		mv "$dest.new" "$dest" && rm -rf "$dest.old"
		return 0
	fi
	reason=$(cat "$w/infra.txt" "$batch/infra.txt" 2>/dev/null | head -n 1)
	reason=${reason:-the test run did not finish (see $out/grade.log)}
	echo "rdmalab-grade: $name: UNGRADABLE: $reason" >&2
	if [ -f "$dest/results.json" ] && ! grep -q '"ungradable": *true' "$dest/results.json"; then
		printf '%s UNGRADABLE: %s (the earlier result above is kept)\n' "$now" "$reason" >>"$dest/ungradable.txt"
		# The earlier report stays, under a note that this run could not
		# grade (the note of a run before it replaced).
		{
			printf 'NOT GRADED at %s: %s\n' "$now" "$reason"
			printf '(the report below is from an earlier run; this run could not grade)\n\n'
			awk 'NR == 1 && /^NOT GRADED at / { note = 1 } note { note = $0 != ""; next } { print }' \
				"$dest/report.txt" 2>/dev/null
		} >"$dest/report.txt.new" && mv "$dest/report.txt.new" "$dest/report.txt"
		return 1
	fi
	rm -rf "$dest.new"
	mkdir -p "$dest.new"
	: >"$dest.new/results.tsv"
	awk -f "$grader/format.awk" -v name="$name" -v out="$dest.new" -v ungradable="$reason" \
		-v made="$now" -v graded="$graded" -v source="${source:-$(files_taken "$w/taken.txt")}" \
		"$dest.new/results.tsv"
	rm -rf "$dest"
	mv "$dest.new" "$dest"
	return 1
}
