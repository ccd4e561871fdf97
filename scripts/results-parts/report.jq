# report.jq: a submission's report.txt (scripts/results submission): what
# it is, then each lab's points and each record, what went wrong under one
# that did not pass.
# Input (jq -nR): the lines of $submission (submission.json) and of the
# submission's records (results.jsonl). Output: the report's lines (jq -r).
include "records" {search: "./"};

def row:
  "  \(step_label | pad(6))  \(.test | pad(70))  \(.result | pad(7))  \("\(.points | lpad(2))/\(.max)" | pad(6))  \(seconds | lpad(6))",
  (select(.result != "pass") | detail(10; 12));

(try submission_inputs($submission) catch stop) as {sub: $s, records: $r}
| "\($s.name): \(status($s; $r))",
  about($s),
  (select($s.intake != "") | $s.intake),
  ($r | lab_order[] as $l
   | [$r[] | select(.lab == $l)] as $lab
   | "",
     "Lab \($l): \([$lab[].points] | add)/\([$lab[].max] | add) points",
     "  \("step" | pad(6))  \("test" | pad(70))  \("status" | pad(7))  points    time",
     ($lab[] | row))
