# runs.sh: scripts/results runs: a student's kept grades (runs.jq): DIR/labs.txt,
# and with --new RUN, a line per lab RUN graded, against its grade before.
# A part of scripts/results, which sources it: it uses that script's functions.

# cmd_runs [--new RUN] DIR
cmd_runs() {
	local new= dir d files=()
	if [ "${1:-}" = --new ]; then
		new=${2:-}
		shift 2 || usage
	fi
	dir=${1:-}
	[ $# = 1 ] && [ -d "$dir" ] || usage
	[ -z "$new" ] || [ -f "$dir/$new/submission.json" ] || die "runs: no run $new in $dir (expected $dir/$new/submission.json)"
	for d in "$dir"/*/; do
		d=${d%/}
		# latest is a link to one of them.
		[ ! -L "$d" ] && [ -f "$d/submission.json" ] || continue
		files+=("$d/submission.json")
		[ -f "$d/results.jsonl" ] && files+=("$d/results.jsonl")
	done
	put "$dir/labs.txt" view runs -nRr --arg view labs --arg new "" "${files[@]}" || return
	[ -z "$new" ] || view runs -nRr --arg view supersedes --arg new "$new" "${files[@]}"
}
