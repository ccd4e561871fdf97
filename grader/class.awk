# class.awk: a class's scores from each student's results.
# Input: DIR/NAME/results.tsv and results.json of every student (see
# format.awk); variables: out (DIR), students and labs (space-separated). Writes DIR/class.csv
# (student, one column per lab, total, max, status, seconds: the time its
# builds and tests took) and DIR/summary.txt (the distribution of the
# totals, the grading times, and each student a lab of whom was refused for
# breaking its rules), and prints the summary.

function csv(s) {
	if (s ~ /[",\n]/) {
		gsub(/"/, "\"\"", s)
		s = "\"" s "\""
	}
	return s
}

# sort_numbers(A, N): A[1..N] in increasing order (insertion sort: a class is small).
function sort_numbers(a, n,    i, j, v) {
	for (i = 2; i <= n; i++) {
		v = a[i]
		for (j = i - 1; j >= 1 && a[j] > v; j--)
			a[j + 1] = a[j]
		a[j + 1] = v
	}
}

BEGIN {
	FS = "\t"
	nl = split(labs, lab, " ")
	for (l = 1; l <= nl; l++)
		asked[lab[l]] = 1
	ns = split(students, names, " ")
	for (i = 1; i <= ns; i++) {
		student = names[i]
		file = out "/" student "/results.json"
		ungradable[student] = 0
		while ((getline line < file) > 0)
			if (line ~ /"ungradable": true/)
				ungradable[student] = 1
		close(file)
		file = out "/" student "/seconds"
		seconds[student] = ""
		if ((getline line < file) > 0 && line ~ /^[0-9]+$/)
			seconds[student] = line
		close(file)
		file = out "/" student "/results.tsv"
		while ((getline line < file) > 0) {
			# Only the labs of this class's columns: a student graded
			# earlier in DIR may have results of other labs too.
			if (split(line, fld, "\t") < 6 || !(fld[1] in asked))
				continue
			if (fld[2] == "build" && fld[7] ~ /^refused: /)
				flagged[student] = flagged[student] " " fld[1]
			got[student, fld[1]] += fld[5]
			max[student, fld[1]] += fld[6]
			total[student] += fld[5]
			if (max[student, fld[1]] > classmax[fld[1]])
				classmax[fld[1]] = max[student, fld[1]]
		}
		close(file)
	}
}

END {
	f = out "/class.csv"
	printf "student" > f
	for (l = 1; l <= nl; l++)
		printf ",lab%s", lab[l] > f
	printf ",total,max,status,seconds\n" > f
	top = 0
	for (l = 1; l <= nl; l++)
		top += classmax[lab[l]]
	graded = 0
	for (i = 1; i <= ns; i++) {
		s = names[i]
		printf "%s", csv(s) > f
		for (l = 1; l <= nl; l++)
			printf ",%s", (ungradable[s] ? "" : got[s, lab[l]] + 0) > f
		printf ",%s,%d,%s,%s\n", (ungradable[s] ? "" : total[s] + 0), top, (ungradable[s] ? "ungradable" : "graded"),
			seconds[s] > f
		if (seconds[s] != "")
			took[++timed] = seconds[s] + 0
		if (!ungradable[s])
			score[++graded] = total[s] + 0
	}

	sort_numbers(score, graded)
	g = out "/summary.txt"
	printf "%d student(s): %d graded, %d ungradable; labs %s, %d points in all\n", ns, graded, ns - graded, labs, top > g
	if (graded > 0) {
		sum = 0
		for (i = 1; i <= graded; i++)
			sum += score[i]
		median = graded % 2 ? score[(graded + 1) / 2] : (score[graded / 2] + score[graded / 2 + 1]) / 2
		printf "total: min %d, median %s, mean %.1f, max %d\n", score[1], median, sum / graded, score[graded] > g
		for (b = 0; b < 10; b++)
			bucket[b] = 0
		for (i = 1; i <= graded; i++) {
			b = top > 0 ? int(score[i] * 10 / top) : 9
			bucket[b > 9 ? 9 : b]++
		}
		for (b = 9; b >= 0; b--) {
			bar = ""
			for (k = 0; k < bucket[b]; k++)
				bar = bar "#"
			printf "%3d-%3d%%  %3d  %s\n", b * 10, (b == 9 ? 100 : b * 10 + 9), bucket[b], bar > g
		}
	}
	if (timed > 0) {
		sort_numbers(took, timed)
		printf "grading time per student (builds and tests): min %d s, median %d s, max %d s\n",
			took[1], took[int((timed + 1) / 2)], took[timed] > g
	}
	for (l = 1; l <= nl; l++) {
		sum = 0
		for (i = 1; i <= ns; i++)
			if (!ungradable[names[i]])
				sum += got[names[i], lab[l]]
		printf "lab %s: mean %.1f of %d\n", lab[l], (graded ? sum / graded : 0), classmax[lab[l]] > g
	}
	for (i = 1; i <= ns; i++)
		if (names[i] in flagged)
			printf "flagged: %s: lab%s broke the rules of a lab's files, scored 0 (see the report)\n",
				names[i], flagged[names[i]] > g
	close(g)
	while ((getline line < g) > 0)
		print line
}
