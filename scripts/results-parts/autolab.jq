# autolab.jq: a submission's autoresult, the line Autolab reads last from
# its autograder's output (scripts/results autolab): one score per lab
# graded, named labN (the assessment's problems must have these names),
# and a scoreboard row of the total then each lab's points:
#   {"scores":{"lab0":12,"lab3":64},"scoreboard":[76,12,64]}
# A submission that could not be graded has no autoresult: it stops with
# why (exit 2), and the autograder prints that last instead, which Autolab
# records as a failed autograding rather than as scores. The line holds no
# text: Autolab quotes every "word:" in it before it parses it as JSON
# (parseAutoresult), which would break a text such as an --unsafe grade's
# note; the report printed above it shows that note.
# Input (jq -nR): the lines of $submission (submission.json) and of the
# submission's records (results.jsonl). Output: one line (jq -c).
include "records" {search: "./"};

(try submission_inputs($submission) catch stop) as {sub: $s, records: $r}
| if $s.ungradable != null then "\($submission): not graded: \($s.ungradable)" | stop else . end
| [$r | lab_order[] as $l | {key: "lab\($l)", value: ([$r[] | select(.lab == $l) | .points] | add)}]
| {scores: from_entries, scoreboard: ([map(.value) | add // 0] + map(.value))}
