# class.sh: scripts/results class: a class's class.csv, summary.txt and
# class.html, each a view of one object of the class's figures (class.jq).
# A part of scripts/results, which sources it: it uses that script's functions.

# cmd_class --labs "N..." [--made TIME] DIR
cmd_class() {
	local labs= made= dir d files=() figures
	while [ $# -gt 1 ]; do
		case $1 in
		--labs) labs=$2; shift ;;
		--made) made=$2; shift ;;
		*) usage ;;
		esac
		shift
	done
	dir=${1:-}
	[ $# = 1 ] && [ -d "$dir" ] && [ -n "$labs" ] || usage
	# The students: each folder with a submission.json, but one being
	# written (NAME.new) or replaced (NAME.old).
	for d in "$dir"/*/; do
		d=${d%/}
		case $d in *.new | *.old) continue ;; esac
		[ -f "$d/submission.json" ] || continue
		files+=("$d/submission.json")
		[ -f "$d/results.jsonl" ] && files+=("$d/results.jsonl")
	done
	figures=$(mktemp "$dir/.class.XXXXXX") || die "cannot write in $dir"
	# With no student, jq reads /dev/null (view's standard input).
	view class -nRc --arg labs "$labs" "${files[@]}" >"$figures" &&
		put "$dir/class.csv" view class-csv -r "$figures" &&
		put "$dir/summary.txt" view summary -r "$figures" &&
		put "$dir/class.html" view class-html -r --arg made "${made:-$(date -u +%FT%TZ)}" "$figures"
	local rc=$?
	rm -f "$figures"
	[ "$rc" = 0 ] && cat "$dir/summary.txt"
	return "$rc"
}
