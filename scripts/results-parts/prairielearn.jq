# prairielearn.jq: a submission's results.json in PrairieLearn's format
# (external grading; scripts/results prairielearn;
# tests/grader/schemas/prairielearn-results.json): whether it could be
# graded, the score as a fraction of the points (0 to 1), and one test per
# record. A submission that could not be graded is "gradable": false, with
# why: PrairieLearn then counts no attempt against the student. One graded
# without the grader's whole sandbox (--unsafe) says what it lacked in its
# message and output.
# Input (jq -nR): the lines of $submission (submission.json) and of the
# submission's records (results.jsonl).
include "records" {search: "./"};

# message, output: what a student reads under a test: why it did not pass,
# and what their code printed.
def message:
  if .result == "pass" then "" elif .result == "skipped" then "skipped: \(.message)" else .message end;
def output: if .result == "FAIL" then .said else "" end;

def description:
  if .step == 0 then "Lab \(.lab) builds with the kit's flags (warnings are errors)"
  else "Lab \(.lab), step \(.step): docs/lab\(.lab).md#step-\(.step)" end;

# within($bytes): PrairieLearn refuses a results.json past 1 MB; the records
# are bounded (20 lines of 400 characters a text), so only a submission
# with a hundred tests failing at length comes near: cut each test's texts.
def cut: if length > 1500 then .[:1500] + "\n... (cut: PrairieLearn takes at most 1 MB of results)" else . end;
def within($bytes):
  if (tojson | utf8bytelength) <= $bytes then . else .tests |= map(.message |= cut | .output |= cut) end;

(try submission_inputs($submission) catch stop) as {sub: $s, records: $r}
| if $s.ungradable != null then
    {gradable: false, message: "not graded: \($s.ungradable)", format_errors: [$s.ungradable],
     output: about($s), tests: []}
  else
    ([$r[].points] | add // 0) as $points | ([$r[].max] | add // 0) as $max
    | {gradable: true,
       score: (if $max > 0 then $points / $max else 0 end),
       message: ("\($s.name): \(status($s; $r))" + (if $s.unsafe != null then "\n" + unsafe_note($s) else "" end)),
       output: (about($s) + (if $s.intake != "" then "\n\($s.intake)" else "" end)),
       tests: [$r[] | {name: title, description: description, points, max_points: .max,
                       message: message, output: output}]}
  end
| within(1000000)
