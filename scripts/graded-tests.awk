# graded-tests.awk: the graded tests of tests/labN/test_*.c as their
# declarations give them (RL_TEST in tests/harness.h), one line each:
#   step, test, points, needs (- for none), receiver (1 if it names one,
#   else 0), the receiver's options, file, line
# tab-separated, in file order. scripts/rubric and scripts/receivers sort
# and cut it. A declaration it cannot read is named on stderr (exit 2).
# POSIX awk.

BEGIN { want = "RL_TEST(name, .step = S, .points = P[, .needs = K][, .limit = SECONDS][, .receiver = \"OPTIONS\"])" }

/^RL_TEST\(/ { decl = ""; open = 1; at = FNR }
open { decl = decl " " $0 }
open && /\)[ \t]*$/ {
	open = 0
	d = decl
	has = 0
	opts = ""
	# The receiver's options, taken out first: their spaces count.
	if (match(d, /,[ \t]*\.receiver[ \t]*=[ \t]*"[-A-Za-z0-9:. ]*"/)) {
		has = 1
		opts = substr(d, RSTART, RLENGTH)
		sub(/^[^"]*"/, "", opts)
		sub(/"$/, "", opts)
		d = substr(d, 1, RSTART - 1) substr(d, RSTART + RLENGTH)
	}
	gsub(/[ \t]+/, "", d)
	if (d !~ /^RL_TEST\([A-Za-z_0-9]+,\.step=[0-9]+,\.points=[0-9]+(,\.needs=[0-9]+)?(,\.limit=[0-9]+)?\)$/) {
		printf "%s:%d: expected %s, got:%s\n", FILENAME, at, want, decl > "/dev/stderr"
		bad = 1
		next
	}
	gsub(/^RL_TEST\(|\)$/, "", d)
	n = split(d, f, ",")
	needs = "-"
	for (i = 4; i <= n; i++)
		if (f[i] ~ /^\.needs=/)
			needs = substr(f[i], 8)
	printf "%d\t%s\t%d\t%s\t%d\t%s\t%s\t%d\n", substr(f[2], 7), f[1], substr(f[3], 9), needs,
		has, opts, FILENAME, at
}

END { exit bad ? 2 : 0 }
