# lab.jq: a lab's records for the grader (scripts/results lab): the record
# of its build (step 0), then each test of the rubric with its record, or
# every test failed when the lab did not build. One JSON line each.
# Input (jq -nR): the lines of the rubric ($rubric) and of the test
# program's records. Arguments: $rubric, $lab (a number), $not_built (why
# the lab did not build; "" when it did), $logs (where the program's records
# and output are, as the report's reader sees them).
include "records" {search: "./"};

def record($step; $test; $result; $max; $message):
  {lab: $lab, step: $step, test: $test, result: $result, points: 0, max: $max, message: $message,
   skipped_because: null, said: "", ms: 0};

(try (
  lab_inputs($rubric) as $in
  | if any($in.rubric[]; .lab != $lab) then
      error("\($rubric): expected the rubric of lab \($lab), got a test of lab \([$in.rubric[] | select(.lab != $lab)][0].lab)")
    else . end
  | if $not_built != "" then
      # The reason and at most 20 lines of the compiler's or the rules' messages (grader/lib/prepare.sh).
      [record(0; "lab\($lab)_builds"; "FAIL"; 0; $not_built | bounded(21; "logs/build-lab\($lab).log")),
       ($in.rubric[] | record(.step; .test; "FAIL"; .max; "not graded: see lab\($lab)_builds"))]
    else
      [record(0; "lab\($lab)_builds"; "pass"; 0; ""),
       completed($in.rubric; $in.records | agreeing($in.rubric; $rubric); $logs)]
    end
) catch stop)[]
