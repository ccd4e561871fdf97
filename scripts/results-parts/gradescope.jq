# gradescope.jq: a submission's results.json in Gradescope's format
# (scripts/results submission; tests/grader/schemas/gradescope-results.json):
# the score, what the report is, and one test per record.
# Input (jq -nR): the lines of $submission (submission.json) and of the
# submission's records (results.jsonl).
include "records" {search: "./"};

(try submission_inputs($submission) catch stop) as {sub: $s, records: $r}
| {
    score: ([$r[].points] | add // 0),
    output: ("\($s.name): \(status($s; $r))\n\(about($s))" + (if $s.intake != "" then "\n\($s.intake)" else "" end)),
    visibility: "visible",
    extra_data: {student: $s.name, max_score: ([$r[].max] | add // 0), ungradable: ($s.ungradable != null),
                 made: $s.made, unsafe: $s.unsafe},
    tests: [$r[] | {name: title, score: .points, max_score: .max,
                    status: (if .result == "pass" then "passed" else "failed" end), output: output,
                    visibility: "visible", extra_data: {ms: .ms}}]
  }
