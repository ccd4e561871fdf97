# lab.sh: scripts/results lab: a lab's records for the grader (lab.jq).
# A part of scripts/results, which sources it: it uses that script's functions.

# cmd_lab --lab N [--not-built WHY] [--logs-as D] RUBRIC [RECORDS]
cmd_lab() {
	local lab= not_built= logs=
	while [ $# -gt 0 ]; do
		case $1 in
		--lab) lab=${2:-}; shift ;;
		--not-built) not_built=${2:-}; shift ;;
		--logs-as) logs=${2:-}; shift ;;
		-*) usage ;;
		*) break ;;
		esac
		shift
	done
	[ $# = 1 ] || [ $# = 2 ] || usage
	number "$lab" --lab
	[ -f "$1" ] || die "no rubric $1: make builds it (make grader-kit)"
	# A program that wrote no records: every test "did not run".
	[ $# = 2 ] && [ ! -f "$2" ] && set -- "$1"
	view lab -nRc --arg rubric "$1" --argjson lab "$lab" --arg not_built "$not_built" \
		--arg logs "${logs:-logs/lab$lab}" "$@"
}
