# runs.jq: a student's own grades, kept run by run (scripts/grade): labs.txt,
# every lab's last grade, and, for the run just made ($new), what it
# supersedes. Input (jq -nR): each run's submission.json and results.jsonl,
# the run being the folder they are in. Arguments: $new (a run's folder
# name, "" for none), $view ("labs" or "supersedes").
include "records" {search: "./"};

# runs: [{run, sub, records}], oldest first (by the time each was made).
def runs:
  reduce numbered as $at ({};
    ($at.file | split("/") | .[-2]) as $run
    | if ($at.file | endswith("/submission.json")) then
        .[$run].sub = ($at | typed("a submission (grader/lib/publish.sh)"; is_submission))
      else
        .[$run].records += [$at | typed("a test's record (scripts/results lab)"; is_record)]
      end)
  | to_entries
  | map(select(.value.sub != null) | {run: .key, sub: .value.sub, records: (.value.records // [])})
  | sort_by(.sub.made, .run);

# grades: a run's grade of each lab it graded, [{lab, points, max, made, run,
# took, unsafe}]: took is the run's seconds (builds and tests), of every lab it
# graded; unsafe what its sandbox lacked (--unsafe), or null.
def grades:
  . as $r
  | select($r.sub.ungradable == null)
  | $r.records | group_by(.lab)[]
  | {lab: .[0].lab, points: (map(.points) | add), max: (map(.max) | add),
     made: $r.sub.made, run: $r.run, took: $r.sub.seconds, unsafe: $r.sub.unsafe};

# last_grades: each lab's newest grade, by lab.
def last_grades: [.[] | grades] | group_by(.lab) | map(.[-1]);

def took: if .took == null then "-" else "\(.took) s" end;

def labs_txt:
  last_grades as $g
  | "Your last grade of each lab (make grade): newest run per lab; each run's",
    "report is in its folder (latest: the newest run that graded).",
    "",
    "lab  points  graded at               run took  report",
    ($g[] | "\(.lab | lpad(3))  \("\(.points)/\(.max)" | lpad(6))  \(.made | pad(20))  \(took | lpad(10))  \(.run)/report.txt\(if .unsafe != null then " (unsafe: see its report)" else "" end)"),
    (select($g == []) | "(no lab graded yet)");

# supersedes: for the run $new, each lab it graded against that lab's grade before it.
def supersedes:
  (map(.run) | index($new)) as $i
  | if $i == null then error("no run \($new) among the kept runs") else . end
  | (.[:$i] | last_grades | INDEX(.lab | tostring)) as $before
  | .[$i] | grades
  | $before[.lab | tostring] as $b
  | "Lab \(.lab): \(.points)/\(.max) now"
    + if $b == null then ", its first grade"
      else "; it was \($b.points)/\($b.max) in \($b.run) (\($b.made))" end;

(try runs catch stop) as $runs
| if $view == "labs" then $runs | labs_txt
  else $runs | (try supersedes catch stop) end
