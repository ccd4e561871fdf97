# class-html.jq: class.html (scripts/results class), the instructor's view of
# a class, from the class's figures (class.jq), the same as class.csv's and
# summary.txt's: one page, no script, nothing fetched from elsewhere,
# readable offline. The distribution of the totals; per lab and step how
# many students passed the whole step (the steps fewer than half passed
# stand out: the class is stuck there); each student's line, linked to
# their report. Each figure carries a data- attribute, for
# tests/grader/test-class-html to compare with class.csv.
# Argument: $made (when). Output: the page (jq -r).
include "records" {search: "./"};

def h: tostring | @html;

def bar($value; $most; $class):
  "<span class=\"bar \($class)\" style=\"width:\(if $most > 0 then $value * 240 / $most + 0.5 | floor else 0 end)px\"></span>";

def distribution:
  .top as $top
  | (.students | length) as $ns
  | [range(0; 10) as $k | 0] as $zero
  | (reduce (.students[] | select(.graded) | .total) as $t ($zero;
       (if $top > 0 then [($t * 10 / $top | floor), 9] | min else 9 end) as $k | .[$k] += 1)) as $count
  | ($count | max) as $most
  | "<h2>Scores</h2>",
    "<p>\($ns) student(s), \(.graded) graded, \($ns - .graded) ungradable; \($top | h) points in all.</p>",
    "<table class=\"dist\"><tr><th>total</th><th>students</th><th></th></tr>",
    (range(9; -1; -1) as $k
     | "<tr><td>\($k * 10)&ndash;\(if $k == 9 then 100 else $k * 10 + 9 end)%</td><td class=\"n\" data-bucket=\"\($k)\">\($count[$k])</td><td>\(bar($count[$k]; $most; "score"))</td></tr>"),
    "</table>";

def steps:
  .graded as $n
  | "<h2>Where the class is stuck</h2>",
    "<p>Per lab and step, how many of the \($n) graded students passed every test of the step. A step fewer than half passed is <span class=\"stuck\">marked</span>.</p>",
    "<table class=\"steps\"><tr><th>lab</th><th>step</th><th>passed</th><th></th></tr>",
    (.steps[]
     | (if $n > 0 then 100 * .passed / $n else 0 end) as $pct
     | (if .step == 0 then "build" else .step end | h) as $step
     | "<tr\(if $pct < 50 then " class=\"stuck\"" else "" end)><td>\(.lab | h)</td><td>\($step)</td><td class=\"n\" data-lab=\"\(.lab | h)\" data-step=\"\($step)\">\(.passed)</td><td>\(bar(.passed; $n; if $pct < 50 then "low" else "ok" end)) \($pct + 0.5 | floor)%</td></tr>"),
    "</table>";

def students:
  .labs as $labs | .top as $top
  | "<h2>Students</h2>",
    "<table class=\"students\"><tr><th>student</th>\($labs | map("<th>lab \(h)</th>") | join(""))<th>total</th><th>of</th><th>status</th><th>seconds</th></tr>",
    (.students[]
     | .name as $name
     | (if .graded then .got + [.total] else .got + [.total] | map("") end) as $figures
     | "<tr><td><a href=\"\($name | @uri)/report.txt\">\($name | h)</a></td>"
       + ([range(0; $labs | length) as $i
           | "<td class=\"n\" data-student=\"\($name | h)\" data-col=\"lab\($labs[$i])\">\($figures[$i] | h)</td>"] | join(""))
       + "<td class=\"n\" data-student=\"\($name | h)\" data-col=\"total\">\($figures[-1] | h)</td>"
       + "<td class=\"n\">\($top | h)</td><td>\(.status)</td><td class=\"n\">\(.seconds // "" | h)</td></tr>"),
    "</table>";

"<!DOCTYPE html>",
"<html lang=\"en\"><head><meta charset=\"utf-8\">",
"<title>rdmalab: the class</title><style>",
"body{font:15px/1.4 sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}",
"td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}",
".bar{display:inline-block;height:12px;vertical-align:middle}.score{background:#4a7ab5}",
".ok{background:#5a9e5a}.low{background:#c0392b}tr.stuck td,.stuck{background:#fbe3e0}",
"</style></head><body>",
"<h1>rdmalab: the class</h1>",
"<p>Made \($made | h), with the figures of class.csv; each name links to the student's report.</p>",
distribution,
steps,
students,
"</body></html>"
