# autolab.sh: scripts/results autolab: a submission's autoresult, the last
# line of Autolab's autograder output (autolab.jq), on standard output.
# A part of scripts/results, which sources it: it uses that script's functions.

# cmd_autolab DIR
cmd_autolab() {
	local dir=${1:-}
	[ $# = 1 ] && [ -f "$dir/submission.json" ] && [ -f "$dir/results.jsonl" ] ||
		die "autolab: expected a folder with submission.json and results.jsonl, got ${dir:-nothing}"
	view autolab -nRc --arg submission "$dir/submission.json" "$dir/submission.json" "$dir/results.jsonl"
}
