# submission.sh: scripts/results submission: a submission's report.txt,
# results.json and junit.xml (report.jq, gradescope.jq, junit.jq).
# A part of scripts/results, which sources it: it uses that script's functions.

# cmd_submission DIR
cmd_submission() {
	local dir=${1:-}
	[ $# = 1 ] && [ -f "$dir/submission.json" ] && [ -f "$dir/results.jsonl" ] ||
		die "submission: expected a folder with submission.json and results.jsonl, got ${dir:-nothing}"
	set -- --arg submission "$dir/submission.json" "$dir/submission.json" "$dir/results.jsonl"
	put "$dir/report.txt" view report -nRr "$@" &&
		put "$dir/results.json" view gradescope -nR "$@" &&
		put "$dir/junit.xml" view junit -nRr "$@"
}
