# class.sh: a class's list, for grader/kubernetes/: one submission a line,
# its path in the submissions' folder (a student's folder or tarball, as
# grader/rdmalab-grade --class takes them); line K+1 is the Indexed Job's
# index K. Sourced by grade-class, grade-index and gather; each name is the
# one the grader gives the submission (grader/rdmalab-grade --name-of).

# class_names LIST: the student's name of each line of LIST, one a line, in
# its order. A line that is empty, absolute or goes up (..), a list with no
# line, or two lines that would give one name: one line on stderr, status 2.
class_names() {
	local list=$1 line n=0 lines=() names dups
	[ -s "$list" ] || { echo "$list: no submission in it: give one a line" >&2; return 2; }
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		if [ -z "$line" ]; then
			echo "$list:$n: an empty line: give one submission a line" >&2
			return 2
		elif [[ $line == /* || /$line/ == */../* ]]; then
			echo "$list:$n: '$line': give a path inside the submissions' folder, without .." >&2
			return 2
		fi
		lines+=("$line")
	done <"$list"
	names=$("$kit/grader/rdmalab-grade" --name-of "${lines[@]}")$'\n'
	dups=$(printf '%s' "$names" | sort | uniq -d | head -n 3 | paste -sd ' ')
	[ -z "$dups" ] || { echo "$list: two submissions would share the name(s) $dups: rename them" >&2; return 2; }
	printf '%s' "$names"
}
