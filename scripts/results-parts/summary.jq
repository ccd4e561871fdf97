# summary.jq: summary.txt (scripts/results class), from the class's figures
# (class.jq): the distribution of the totals, the grading times, each lab's
# mean, the students a lab of whom was refused for breaking its rules, and
# those graded without the whole sandbox (--unsafe).
include "records" {search: "./"};

# one_decimal: a number as text with one decimal ("3.0").
def one_decimal: (. * 10 | round) / 10 | tostring | if test("\\.") then . else . + ".0" end;

# bucket($top): the tenth of TOP a total falls in, 0 to 9.
def bucket($top): if $top > 0 then [(. * 10 / $top | floor), 9] | min else 9 end;

.top as $top
| [.students[] | select(.graded) | .total] as $scores
| ($scores | sort) as $s
| ($s | length) as $n
| ([.students[].seconds | numbers] | sort) as $took
| "\(.students | length) student(s): \($n) graded, \(.students | length - $n) ungradable; labs \(.labs | map(tostring) | join(" ")), \($top) points in all",
  (select($n > 0)
   | "total: min \($s[0]), median \(if $n % 2 == 1 then $s[($n - 1) / 2] else ($s[$n / 2 - 1] + $s[$n / 2]) / 2 end), mean \($s | add / $n | one_decimal), max \($s[-1])",
     ([$s[] | bucket($top)] as $b
      | range(9; -1; -1) as $k
      | [$b[] | select(. == $k)] | length
      | "\($k * 10 | lpad(3))-\((if $k == 9 then 100 else $k * 10 + 9 end) | lpad(3))%  \(lpad(3))  \(("#" * .) // "")")),
  (select($took != [])
   | "grading time per student (builds and tests): min \($took[0]) s, median \($took[(($took | length) + 1) / 2 - 1 | floor]) s, max \($took[-1]) s"),
  (range(0; .labs | length) as $i
   | "lab \(.labs[$i]): mean \(if $n > 0 then [.students[] | select(.graded) | .got[$i]] | add / $n else 0 end | one_decimal) of \(.max[$i])"),
  (.students[] | select(.flagged != [])
   | "flagged: \(.name): lab \(.flagged | map(tostring) | join(" ")) broke the rules of a lab's files, scored 0 (see the report)"),
  (.students[] | select(.unsafe != null)
   | "unsafe: \(.name): graded without the grader's whole sandbox (--unsafe): it lacked \(.unsafe)")
