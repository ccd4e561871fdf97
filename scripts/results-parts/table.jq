# table.jq: make check's table (scripts/results table): each test of the
# rubric with its result and points, what went wrong under a failure, and
# the totals. Exit 1 when a test did not pass (with $stubs, when one passed).
# Input (jq -nR): the lines of the rubric ($rubric) and of the test
# program's records. Arguments: $rubric, $lab (a number), $from (the tree),
# $step ("" for every step), $stubs ("1" or ""), $logs (where the records
# and output are, as shown).
include "records" {search: "./"};

def row($w):
  "\(.step | lpad(4))  \(.test | pad($w))  \(.result | pad(7))  \("\(.points | lpad(2))/\(.max)" | pad(6))  \(seconds | lpad(6))"
    + (if .result == "skipped" then "  \(.skipped_because // .message)" else "" end),
  (select(.result == "FAIL") | detail(6; 8));

def count($r): map(select(.result == $r)) | length;

# verdict: the stubs' line, and the exit status.
def verdict:
  if $stubs == "1" then
    [.[] | select(.result == "pass") | .test] as $passing
    | if $passing != [] then
        "stubs: these tests pass without the student's code, so they grade nothing: \($passing | join(" "))",
        ("" | halt_error(1))
      else "stubs: every test fails on the untouched stubs, as it should" end
  elif any(.[]; .result != "pass") then "" | halt_error(1)
  else empty end;

(try (
  lab_inputs($rubric) as $in
  | if any($in.rubric[]; .lab != $lab) then
      error("\($rubric): expected the rubric of lab \($lab), got a test of lab \([$in.rubric[] | select(.lab != $lab)][0].lab)")
    else . end
  | [completed([$in.rubric[] | select($step == "" or (.step | tostring) == $step)];
               $in.records | agreeing($in.rubric; $rubric); $logs)]
) catch stop) as $t
| ([$t[].test | length] | max // 4) as $w
| "Lab \($lab) from \($from)/lab\($lab)\(if $step != "" then ", step \($step) only" else "" end)",
  "",
  "step  \("test" | pad($w))  \("result" | pad(7))  points    time",
  ($t[] | row($w)),
  "",
  "total: \([$t[].points] | add // 0)/\([$t[].max] | add // 0) points; \($t | count("pass")) passed, \($t | count("FAIL")) failed, \($t | count("skipped")) skipped",
  ($t | verdict)
