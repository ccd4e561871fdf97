# prairielearn.sh: scripts/results prairielearn: a submission's results.json
# in PrairieLearn's format (prairielearn.jq), on standard output.
# A part of scripts/results, which sources it: it uses that script's functions.

# cmd_prairielearn DIR
cmd_prairielearn() {
	local dir=${1:-}
	[ $# = 1 ] && [ -f "$dir/submission.json" ] && [ -f "$dir/results.jsonl" ] ||
		die "prairielearn: expected a folder with submission.json and results.jsonl, got ${dir:-nothing}"
	view prairielearn -nR --arg submission "$dir/submission.json" "$dir/submission.json" "$dir/results.jsonl"
}
