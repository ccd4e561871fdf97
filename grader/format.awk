# format.awk: one submission's results in the three forms the grader writes.
# Input: results.tsv, one line per test: lab, step (a number or "build"),
# test, result (pass, FAIL, skipped), points earned, points, message
# (its newlines written \n, tabs \t, backslashes \\: see scripts/lab-check).
# Variables: name, out (the folder to write), made (when), graded (which labs),
# source (what was graded: a commit, or the files taken, one per line),
# intake (a note on what was taken from the submission), isolated (yes/no),
# ungradable (the reason, when the grader could not grade it). Writes
# out/report.txt, out/results.json (Gradescope) and out/junit.xml.

function json(s) {
	gsub(/\\/, "\\\\\\\\", s)	# one backslash becomes two (mawk and gawk)
	gsub(/"/, "\\\"", s)
	gsub(/\t/, "\\t", s)
	gsub(/\r/, "\\r", s)
	gsub(/\n/, "\\n", s)
	gsub(/[\001-\037]/, " ", s)
	return "\"" s "\""
}

# unescape(S): a message as lab-check wrote it in the TSV, its lines back.
function unescape(s,    out, at, c) {
	while ((at = index(s, "\\")) > 0) {
		c = substr(s, at + 1, 1)
		out = out substr(s, 1, at - 1) (c == "n" ? "\n" : c == "t" ? "\t" : c)
		s = substr(s, at + 2)
	}
	return out s
}

function xml(s) {
	gsub(/&/, "\\&amp;", s)
	gsub(/</, "\\&lt;", s)
	gsub(/>/, "\\&gt;", s)
	gsub(/"/, "\\&quot;", s)
	gsub(/\n/, "\\&#10;", s)
	gsub(/[\001-\010\013\014\016-\037]/, " ", s)
	return s
}

function title(i) {
	if (step[i] == "build")
		return "Lab " lab[i] ": the lab builds"
	return "Lab " lab[i] " step " step[i] ": " test[i]
}

BEGIN { FS = "\t" }

NF >= 6 {
	n++
	lab[n] = $1; step[n] = $2; test[n] = $3; result[n] = $4
	got[n] = $5 + 0; max[n] = $6 + 0; msg[n] = unescape($7)
	if (!($1 in labmax))
		order[++nlabs] = $1
	labgot[$1] += got[n]; labmax[$1] += max[n]
	score += got[n]; total += max[n]
	if (length(title(n)) > width)
		width = length(title(n))
}

END {
	report = out "/report.txt"
	status = ungradable != "" ? "UNGRADABLE: " ungradable : sprintf("%d/%d points", score, total)
	# What this report is: when it was made, of which labs and files.
	about = "made:   " made "\ngraded: " graded
	if (source != "") {
		nf = split(source, line, "\n")
		about = about "\nfrom:   " line[1]
		for (k = 2; k <= nf; k++)
			about = about "\n        " line[k]
	}
	printf "%s: %s\n%s\n", name, status, about > report
	if (intake != "")
		printf "%s\n", intake > report
	if (isolated == "no")
		printf "(graded without root: the student's code ran as the grader's own user)\n" > report
	for (l = 1; l <= nlabs; l++) {
		L = order[l]
		printf "\nLab %s: %d/%d points\n", L, labgot[L], labmax[L] > report
		printf "  %-6s  %-70s  %-7s  %s\n", "step", "test", "status", "points" > report
		for (i = 1; i <= n; i++) {
			if (lab[i] != L)
				continue
			printf "  %-6s  %-70s  %-7s  %2d/%d\n", step[i], test[i], result[i], got[i], max[i] > report
			if (result[i] == "pass" || msg[i] == "")
				continue
			# The message's first line, its others indented under it.
			nl = split(msg[i], line, "\n")
			printf "          %s\n", substr(line[1], 1, 400) > report
			for (k = 2; k <= nl; k++)
				printf "            %s\n", substr(line[k], 1, 400) > report
		}
	}

	js = out "/results.json"
	printf "{\n  \"score\": %d,\n", score > js
	printf "  \"output\": %s,\n", json(name ": " status "\n" about (intake != "" ? "\n" intake : "")) > js
	printf "  \"visibility\": \"visible\",\n" > js
	printf "  \"extra_data\": {\"student\": %s, \"max_score\": %d, \"ungradable\": %s, \"made\": %s},\n",
		json(name), total, (ungradable != "" ? "true" : "false"), json(made) > js
	printf "  \"tests\": [" > js
	for (i = 1; i <= n; i++) {
		printf "%s\n    {\"name\": %s, \"score\": %d, \"max_score\": %d, \"status\": \"%s\", \"output\": %s, \"visibility\": \"visible\"}",
			(i > 1 ? "," : ""), json(title(i)), got[i], max[i],
			result[i] == "pass" ? "passed" : "failed",
			json(result[i] == "pass" ? "" : (result[i] == "skipped" ? "skipped: " : "") msg[i]) > js
	}
	printf "%s]\n}\n", (n ? "\n  " : "") > js

	ju = out "/junit.xml"
	printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" > ju
	printf "<testsuites name=\"%s\">\n", xml(name) > ju
	if (ungradable != "")
		printf "  <testsuite name=\"%s\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    <testcase classname=\"grader\" name=\"ungradable\"><error message=\"%s\"/></testcase>\n  </testsuite>\n",
			xml(name), xml(ungradable) > ju
	for (l = 1; l <= nlabs; l++) {
		L = order[l]
		tests = fails = skips = 0
		for (i = 1; i <= n; i++) {
			if (lab[i] != L)
				continue
			tests++
			fails += result[i] == "FAIL"
			skips += result[i] == "skipped"
		}
		printf "  <testsuite name=\"%s.lab%s\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n",
			xml(name), L, tests, fails, skips > ju
		for (i = 1; i <= n; i++) {
			if (lab[i] != L)
				continue
			printf "    <testcase classname=\"lab%s.%s\" name=\"%s\">", L,
				(step[i] ~ /^[0-9]+$/ ? "step" step[i] : step[i]), xml(test[i]) > ju
			if (result[i] == "FAIL")
				printf "<failure message=\"%s\"/>", xml(msg[i]) > ju
			else if (result[i] == "skipped")
				printf "<skipped message=\"%s\"/>", xml(msg[i]) > ju
			printf "</testcase>\n" > ju
		}
		printf "  </testsuite>\n" > ju
	}
	printf "</testsuites>\n" > ju
}
