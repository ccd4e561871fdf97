# classroom.sh: scripts/results classroom: a submission's result for GitHub
# Classroom's grading reporter (classroom.jq), on standard output: the
# workflow (grader/classroom/classroom.yml) passes it on, base64, as a step's
# output. A part of scripts/results, which sources it: it uses that script's
# functions.

# cmd_classroom DIR
cmd_classroom() {
	local dir=${1:-}
	[ $# = 1 ] && [ -f "$dir/submission.json" ] && [ -f "$dir/results.jsonl" ] ||
		die "classroom: expected a folder with submission.json and results.jsonl, got ${dir:-nothing}"
	view classroom -nRc --arg submission "$dir/submission.json" "$dir/submission.json" "$dir/results.jsonl"
}
