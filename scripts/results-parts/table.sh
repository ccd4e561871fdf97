# table.sh: scripts/results table: make check's table (table.jq).
# A part of scripts/results, which sources it: it uses that script's functions.

# cmd_table [--step K] [--stubs] [--logs-as D] --lab N --from TREE RUBRIC DIR
cmd_table() {
	local step= stubs= lab= from= logs= records=()
	while [ $# -gt 2 ]; do
		case $1 in
		--step) step=$2; shift ;;
		--stubs) stubs=1 ;;
		--lab) lab=$2; shift ;;
		--from) from=$2; shift ;;
		--logs-as) logs=$2; shift ;;
		*) usage ;;
		esac
		shift
	done
	[ $# = 2 ] && [ -n "$lab" ] && [ -n "$from" ] || usage
	number "$lab" --lab
	[ -z "$step" ] || number "$step" --step
	[ -f "$1" ] || die "no rubric $1: make builds it (make labs)"
	# No records (the program was not built, or wrote none): every test "did not run".
	[ -f "$2/steps.jsonl" ] && records=("$2/steps.jsonl")
	view table -nRr --arg rubric "$1" --argjson lab "$lab" --arg from "$from" --arg step "$step" \
		--arg stubs "$stubs" --arg logs "${logs:-$2}" "$1" "${records[@]}"
}
