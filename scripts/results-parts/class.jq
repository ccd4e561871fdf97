# class.jq: a class's figures (scripts/results class), one object that
# class.csv, summary.txt and class.html each show (class-csv.jq, summary.jq,
# class-html.jq):
#   {labs: [N...], max: [the most points of each lab], top: their sum, graded: N,
#    students: [{name, graded, unsafe, status, seconds, got: [points of each lab], total, flagged: [labs]}],
#    steps: [{lab, step, passed: how many graded students passed its every test}]}
# A student's lab was flagged when the grader refused it for breaking its
# rules; unsafe is what the sandbox lacked when it was graded --unsafe
# (null: nothing); status says it in a word (graded, unsafe or ungradable).
# Only the class's labs count: a student graded before in the same
# folder may have others.
# Input (jq -nR): each student's submission.json and results.jsonl, the
# student being the folder that holds them, in the class's order.
# Argument: $labs ("0 3").
include "records" {search: "./"};

# students: [{name, sub, records}] from the inputs.
def students:
  reduce numbered as $at ({order: [], by: {}};
    ($at.file | split("/")) as $path
    | $path[-2] as $name
    | (if .by[$name] == null then .order += [$name] | .by[$name] = {name: $name, sub: null, records: []}
       else . end)
    | if $path[-1] == "submission.json" then
        .by[$name].sub = ($at | typed("a submission (grader/lib/publish.sh)"; is_submission))
      else
        .by[$name].records += [$at | typed("a test's record (scripts/results lab)"; is_record)]
      end)
  | [.order[] as $n | .by[$n] | select(.sub != null)];

# figures($labs): a student's figures in the class's labs.
def figures($labs):
  [.records[] | select(.lab | IN($labs[]))] as $r
  | {name, graded: (.sub.ungradable == null), unsafe: .sub.unsafe, seconds: .sub.seconds,
     got: [$labs[] as $l | [$r[] | select(.lab == $l) | .points] | add // 0],
     max: [$labs[] as $l | [$r[] | select(.lab == $l) | .max] | add // 0],
     flagged: [$r[] | select(.step == 0 and (.message | startswith("refused: "))) | .lab],
     records: $r}
  | .total = (.got | add // 0)
  | .status = (if .graded | not then "ungradable" elif .unsafe != null then "unsafe" else "graded" end);

# passed($l; $s): how many graded students passed every test of step S of lab L.
def passed($l; $s):
  map(select(.graded)
      | [.records[] | select(.lab == $l and .step == $s)]
      | select(. != [] and all(.[]; .result == "pass")))
  | length;

(try ([$labs | splits(" +") | select(. != "") | tonumber]) catch
   ("--labs \($labs): expected lab numbers" | stop)) as $labs
| (try students catch stop)
| map(figures($labs))
| ([range(0; $labs | length) as $i | [.[].max[$i]] | max // 0]) as $max
| {labs: $labs, max: $max, top: ($max | add // 0), graded: (map(select(.graded)) | length),
   students: map(del(.records, .max)),
   steps: [$labs[] as $l
           | ([.[] | select(.graded) | .records[] | select(.lab == $l) | .step] | unique[]) as $s
           | {lab: $l, step: $s, passed: passed($l; $s)}]}
