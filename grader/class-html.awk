# class-html.awk: DIR/class.html, the instructor's view of a class: one page,
# no script, nothing fetched from elsewhere, readable offline.
# Input: DIR/class.csv (class.awk's: every figure of a student comes from
# it) and each graded student's DIR/NAME/results.tsv (which tests of each
# step passed); variables: out (DIR), made (the time). Output: the page, on
# standard output. It shows the
# distribution of the totals, per lab and step how many students passed the
# whole step (the steps fewer than half passed stand out: the class is stuck
# there), and each student's line, linked to their report.
# Each figure the page shows carries a data- attribute, for
# tests/grader/test-class-html to compare with class.csv.

function html(s) {
	gsub(/&/, "\\&amp;", s)
	gsub(/</, "\\&lt;", s)
	gsub(/>/, "\\&gt;", s)
	gsub(/"/, "\\&quot;", s)
	return s
}

# url(S): S as one segment of a relative link (names are safe_name'd, but
# the page must not trust that).
function url(s,    i, c, r) {
	r = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		r = r (c ~ /[A-Za-z0-9._-]/ ? c : sprintf("%%%02X", ord[c]))
	}
	return r
}

# csv_split(LINE, F): the fields of one class.csv line (quotes as csv() in
# class.awk writes them) into F[1..n]; returns n.
function csv_split(line, f,    n, c, i, q, cur) {
	n = 0; cur = ""; q = 0
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (q && c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
		else if (c == "\"") q = !q
		else if (c == "," && !q) { f[++n] = cur; cur = "" }
		else cur = cur c
	}
	f[++n] = cur
	return n
}

function read_csv(    line, f, n, i) {
	file = out "/class.csv"
	if ((getline line < file) <= 0) {
		print "class-html.awk: no " file ": run class.awk first" > "/dev/stderr"
		exit 1
	}
	ncol = csv_split(line, head)
	for (i = 2; i <= ncol && head[i] ~ /^lab/; i++) {
		lab[++nl] = substr(head[i], 4)
		asked[lab[nl]] = 1
	}
	while ((getline line < file) > 0) {
		n = csv_split(line, f)
		ns++
		for (i = 1; i <= n; i++)
			row[ns, i] = f[i]
		if (f[nl + 4] == "graded") {
			graded[ns] = 1
			ngraded++
		}
		top = f[nl + 3]
	}
	close(file)
}

# The steps of each lab, in the order met, and who passed each (every test
# of the step passed, in the student's results.tsv; "build" is a step too).
function read_steps(    s, file, line, fld, key) {
	for (s = 1; s <= ns; s++) {
		if (!graded[s])
			continue
		delete failed
		delete seen
		file = out "/" row[s, 1] "/results.tsv"
		while ((getline line < file) > 0) {
			if (split(line, fld, "\t") < 6 || !(fld[1] in asked))
				continue
			key = fld[1] SUBSEP fld[2]
			if (!((fld[1], fld[2]) in nstep_tests)) {
				order[fld[1], ++nsteps[fld[1]]] = fld[2]
				nstep_tests[fld[1], fld[2]] = 0
			}
			if (!(key in seen))
				seen[key] = 1
			if (fld[4] != "pass")
				failed[key] = 1
		}
		close(file)
		for (key in seen)
			if (!(key in failed))
				passed[key]++
	}
}

function bar(value, most, cls) {
	return sprintf("<span class=\"bar %s\" style=\"width:%dpx\"></span>", cls,
		most > 0 ? int(value * 240 / most + 0.5) : 0)
}

function distribution(    s, b, count, most) {
	for (b = 0; b < 10; b++)
		count[b] = 0
	for (s = 1; s <= ns; s++)
		if (graded[s]) {
			b = top > 0 ? int(row[s, nl + 2] * 10 / top) : 9
			count[b > 9 ? 9 : b]++
		}
	most = 0
	for (b = 0; b < 10; b++)
		if (count[b] > most)
			most = count[b]
	print "<h2>Scores</h2>"
	printf "<p>%d student(s), %d graded, %d ungradable; %s points in all.</p>\n", ns, ngraded,
		ns - ngraded, html(top)
	print "<table class=\"dist\"><tr><th>total</th><th>students</th><th></th></tr>"
	for (b = 9; b >= 0; b--)
		printf "<tr><td>%d&ndash;%d%%</td><td class=\"n\" data-bucket=\"%d\">%d</td><td>%s</td></tr>\n",
			b * 10, b == 9 ? 100 : b * 10 + 9, b, count[b], bar(count[b], most, "score")
	print "</table>"
}

function steps(    l, i, st, p, pct, cls) {
	print "<h2>Where the class is stuck</h2>"
	printf "<p>Per lab and step, how many of the %d graded students passed every test of the step.", ngraded
	print " A step fewer than half passed is <span class=\"stuck\">marked</span>.</p>"
	print "<table class=\"steps\"><tr><th>lab</th><th>step</th><th>passed</th><th></th></tr>"
	for (l = 1; l <= nl; l++)
		for (i = 1; i <= nsteps[lab[l]]; i++) {
			st = order[lab[l], i]
			p = passed[lab[l], st] + 0
			pct = ngraded ? 100 * p / ngraded : 0
			cls = pct < 50 ? " class=\"stuck\"" : ""
			printf "<tr%s><td>%s</td><td>%s</td><td class=\"n\" data-lab=\"%s\" data-step=\"%s\">%d</td>" \
				"<td>%s %d%%</td></tr>\n", cls, html(lab[l]), html(st), html(lab[l]), html(st), p,
				bar(p, ngraded, pct < 50 ? "low" : "ok"), int(pct + 0.5)
		}
	print "</table>"
}

function students(    s, l, c, name) {
	print "<h2>Students</h2>"
	printf "<table class=\"students\"><tr><th>student</th>"
	for (l = 1; l <= nl; l++)
		printf "<th>lab %s</th>", html(lab[l])
	print "<th>total</th><th>of</th><th>status</th><th>seconds</th></tr>"
	for (s = 1; s <= ns; s++) {
		name = row[s, 1]
		printf "<tr><td><a href=\"%s/report.txt\">%s</a></td>", url(name), html(name)
		for (c = 2; c <= nl + 1; c++)
			printf "<td class=\"n\" data-student=\"%s\" data-col=\"%s\">%s</td>", html(name),
				html(head[c]), html(row[s, c])
		printf "<td class=\"n\" data-student=\"%s\" data-col=\"total\">%s</td>", html(name), html(row[s, nl + 2])
		printf "<td class=\"n\">%s</td><td>%s</td><td class=\"n\">%s</td></tr>\n", html(row[s, nl + 3]),
			html(row[s, nl + 4]), html(row[s, nl + 5])
	}
	print "</table>"
}

BEGIN {
	for (i = 32; i < 127; i++)
		ord[sprintf("%c", i)] = i
	read_csv()
	read_steps()
	print "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	print "<title>rdmalab: the class</title><style>"
	print "body{font:15px/1.4 sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}"
	print "td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}"
	print ".bar{display:inline-block;height:12px;vertical-align:middle}.score{background:#4a7ab5}"
	print ".ok{background:#5a9e5a}.low{background:#c0392b}tr.stuck td,.stuck{background:#fbe3e0}"
	print "</style></head><body>"
	printf "<h1>rdmalab: the class</h1>\n<p>Made %s from class.csv; each name links to the student's report.</p>\n",
		html(made)
	distribution()
	steps()
	students()
	print "</body></html>"
}
