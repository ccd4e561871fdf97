# records.jq: the graded tests' records, and what every view of them shares
# (scripts/results includes it in each of its jq programs). A record, as a
# lab's test program writes it (tests/graded.c), one JSON line per test:
#   {"lab":3,"step":1,"test":"...","result":"pass"|"FAIL"|"skipped",
#    "points":1,"max":1,"message":"...","skipped_because":null|"step 6 failed","said":"...",
#    "ms":12}
# points are earned (0 unless the test passed), message says why it did not
# pass, said is what its processes printed, ms how long it took. The grader's record of a lab's
# build is a record of step 0, labN_builds, worth 0. A rubric line, as the
# test program prints it with --rubric:
#   {"lab":3,"step":1,"test":"...","max":1,"needs":null|6,"receiver":null|"..."}
# A submission (grader/lib/publish.sh writes it, as submission.json):
#   {"name","made","graded","source","intake": strings,
#    "unsafe": null|"what the sandbox lacked" (rdmalab-grade --unsafe),
#    "ungradable": null|"why", "seconds": null|N}
# Written for jq 1.6 and 1.7.

# --- Reading ------------------------------------------------------------------

# numbered: the lines of the inputs (jq -nR) that are not blank, each as
# {file, line, text}, so that an error can say where.
def numbered:
  foreach inputs as $text ({file: null, line: 0};
    if input_filename == .file then .line += 1 else {file: input_filename, line: 1} end;
    . + {text: $text})
  | select(.text | test("^\\s*$") | not);

def is_record:
  type == "object"
  and (.lab | type) == "number" and (.step | type) == "number"
  and (.test | type) == "string" and (.result | IN("pass", "FAIL", "skipped"))
  and (.points | type) == "number" and (.max | type) == "number"
  and (.message | type) == "string" and (.skipped_because | type | IN("string", "null"))
  and (.said | type) == "string" and (.ms | type) == "number"
  and .points >= 0 and .points <= .max and (.result == "pass" or .points == 0);

def is_rubric_line:
  type == "object"
  and (.lab | type) == "number" and (.step | type) == "number"
  and (.test | type) == "string" and (.max | type) == "number"
  and (.needs | type | IN("number", "null")) and (.receiver | type | IN("string", "null"));

def is_submission:
  type == "object"
  and all(.name, .made, .graded, .source, .intake; type == "string")
  and (.unsafe | type | IN("string", "null")) and (.ungradable | type | IN("string", "null"))
  and (.seconds | type | IN("number", "null"));

# typed(WHAT; CHECK): a numbered line as the JSON value it holds, when CHECK
# holds for that value; else an error naming the file and line, WHAT was
# expected and what it got.
def typed($what; check):
  . as $at
  | (try (.text | fromjson) catch null) as $v
  | if $v != null and ($v | try check catch false) then $v
    else error("\($at.file):\($at.line): expected \($what), got: \($at.text | .[:160])") end;

# utf8: a text as the C writer escaped it, byte by byte (every byte past
# 0x7e as \u00XX: framework/json.c), back to the characters its bytes spell
# in UTF-8. A byte that starts no valid sequence stays the character of its
# value (Latin-1), and a text with characters past U+00FF was not escaped so.
def utf8:
  def cont: . >= 128 and . <= 191;
  if test("[\u0080-\u00ff]") and (test("[^\u0000-\u00ff]") | not) then
    explode as $b
    | [foreach range(0; $b | length) as $i ({skip: 0, out: null};
        if .skip > 0 then {skip: (.skip - 1), out: null}
        else
          $b[$i] as $c
          | (if $c >= 194 and $c <= 223 then 1 elif $c >= 224 and $c <= 239 then 2
             elif $c >= 240 and $c <= 244 then 3 else 0 end) as $n
          | ($b[$i + 1:$i + 1 + $n]) as $t
          | if $n > 0 and ($t | length) == $n and all($t[]; cont) then
              (if $n == 1 then ($c - 192) * 64 + $t[0] - 128
               elif $n == 2 then ($c - 224) * 4096 + ($t[0] - 128) * 64 + $t[1] - 128
               else ($c - 240) * 262144 + ($t[0] - 128) * 4096 + ($t[1] - 128) * 64 + $t[2] - 128 end) as $u
              # Not too long a form, no surrogate, nothing past U+10FFFF.
              | if $n == 1 or ($n == 2 and $u >= 2048 and ($u < 55296 or $u > 57343))
                   or ($n == 3 and $u >= 65536 and $u <= 1114111)
                then {skip: $n, out: $u} else {skip: 0, out: $c} end
            else {skip: 0, out: $c} end
        end;
        .out | select(. != null))]
    | implode
  else . end;

# --- A lab's records against its rubric ---------------------------------------

# lab_inputs($rubric_file): {rubric, records} from the inputs (jq -nR): the
# lines of RUBRIC_FILE are the rubric, every other line a record; each record
# as {at: "FILE:LINE", r: RECORD}.
def lab_inputs($rubric_file):
  reduce numbered as $at ({rubric: [], records: []};
    if $at.file == $rubric_file then
      .rubric += [$at | typed("a rubric line (the test program's --rubric)"; is_rubric_line)]
    else
      .records += [{at: "\($at.file):\($at.line)",
                    r: ($at | typed("a test's record (tests/graded.c)"; is_record))}]
    end)
  | if .rubric == [] then error("\($rubric_file): no test in it: make it again (make labs)") else . end;

# agreeing($rubric; $rubric_file): the records (from lab_inputs), each of a
# test of the rubric, once, with the rubric's lab, step and points.
def agreeing($rubric; $rubric_file):
  ($rubric | INDEX(.test)) as $by
  | reduce .[] as {at: $at, r: $r} ([];
      $by[$r.test] as $t
      | if $t == null then
          error("\($at): test \($r.test) ran but is not in \($rubric_file): make it again (make labs)")
        elif [$r.lab, $r.step, $r.max] != [$t.lab, $t.step, $t.max] then
          error("\($at): test \($r.test) is lab \($r.lab) step \($r.step), \($r.max) points; \($rubric_file) says lab \($t.lab) step \($t.step), \($t.max) points: make it again (make labs)")
        elif any(.[]; .test == $r.test) then
          error("\($at): test \($r.test) has a record already")
        else . + [$r] end);

# clip: a line of at most 400 characters.
def clip: if length > 400 then .[:400] + "..." else . end;

# lines: a text's lines, without carriage returns and trailing blank lines.
def lines:
  split("\n") | map(rtrimstr("\r"))
  | until(length == 0 or (.[-1] | test("^\\s*$") | not); .[:-1]);

# is_note: the line a stub's step prints, which tests/case.c adds to a
# failure's message ("step 3 not implemented", and where to read about it).
def is_note: test("^step [0-9]+ not implemented");

# bounded($max; $where): a text of at most MAX lines of at most 400
# characters, and, when it is longer, a last line that says WHERE it is whole.
def bounded($max; $where):
  lines | map(clip)
  | if length > $max then .[:$max] + ["... (\(length - $max) more lines: see \($where))"] else . end
  | join("\n");

# bounded_message($where): a message bounded to 20 lines, its notes kept.
def bounded_message($where):
  lines as $l
  | [([$l[] | select(is_note | not)] | join("\n") | bounded(20; $where) | select(. != "")),
     ($l[] | select(is_note) | clip)]
  | join("\n");

# completed($rubric; $records; $logs): each test of the rubric, in its order,
# with its record (its message and what it printed decoded and bounded), or
# failed when it has none. LOGS is where the test program's records
# (steps.jsonl) and output (steps.out) are, as the reader sees it.
def completed($rubric; $records; $logs):
  ($records | INDEX(.test)) as $by
  | $rubric[]
  | $by[.test] as $r
  | if $r == null then
      {lab, step, test, result: "FAIL", points: 0, max, message: "did not run: see \($logs)/steps.out",
       skipped_because: null, said: "", ms: 0}
    else
      $r
      | .message |= (utf8 | bounded_message("\($logs)/steps.jsonl"))
      # 20 lines, and the program's own note of what it left out (tests/case.c).
      | .said |= (utf8 | bounded(21; "\($logs)/steps.jsonl"))
    end;

# --- Showing records ----------------------------------------------------------

# pad(N), lpad(N): a value as text of at least N characters, aligned left, right.
def pad($n): tostring | . + (" " * ($n - length));
def lpad($n): tostring | (" " * ($n - length)) + .;

# seconds: a record's time, in seconds with one decimal ("0.4 s").
def seconds: (.ms / 100 | round) as $t | "\($t / 10 | floor).\($t % 10) s";

def step_label: if .step == 0 then "build" else .step | tostring end;

def title: if .step == 0 then "Lab \(.lab): the lab builds" else "Lab \(.lab) step \(.step): \(.test)" end;

# output: what a student reads under a test on a course platform (Gradescope's
# results.json, GitHub Classroom's report): nothing under a pass, why it
# was skipped, or the message and what the student's code printed.
def output:
  if .result == "pass" then ""
  elif .result == "skipped" then "skipped: \(.message)"
  elif .said != "" then "\(.message)\n\nyour code printed:\n\(.said)"
  else .message end;

# detail($first; $next): the lines shown under a record: its message's first
# line indented FIRST spaces, its others NEXT (a stub's note FIRST), then,
# under a failure, what the student's code printed.
def detail($first; $next):
  (" " * $first) as $a | (" " * $next) as $b
  | (.message | lines | to_entries[]
     | if .key == 0 or (.value | is_note) then $a + .value else $b + .value end),
    (select(.result == "FAIL" and .said != "")
     | $a + "your code printed:", (.said | lines[] | $b + .));

# lab_order: the labs of records, in the order they first come.
def lab_order: reduce .[].lab as $l ([]; if any(.[]; . == $l) then . else . + [$l] end);

# --- A submission -------------------------------------------------------------

# submission_inputs($file): {sub, records} from the inputs (jq -nR): FILE, the
# submission on one line, and its records.
def submission_inputs($file):
  reduce numbered as $at ({sub: null, records: []};
    if $at.file == $file then .sub = ($at | typed("a submission (grader/lib/publish.sh)"; is_submission))
    else .records += [$at | typed("a test's record (scripts/results lab)"; is_record)] end)
  | if .sub == null then error("\($file): no submission in it") else . end;

# status($s; $records): "7/14 points", or why it could not be graded.
def status($s; $records):
  if $s.ungradable != null then "UNGRADABLE: \($s.ungradable)"
  else "\([$records[].points] | add // 0)/\([$records[].max] | add // 0) points" end;

# unsafe_note($s): the line every view of a submission graded without the
# whole sandbox (rdmalab-grade --unsafe) shows, naming what it lacked.
def unsafe_note($s): "UNSAFE: graded without the grader's whole sandbox (--unsafe): it lacked \($s.unsafe)";

# about($s): what the report is: when it was made, of which labs and files,
# and what the sandbox lacked when it did.
def about($s):
  "made:   \($s.made)\ngraded: \($s.graded)"
  + (if $s.source != "" then "\nfrom:   " + ($s.source | split("\n") | join("\n        ")) else "" end)
  + (if $s.unsafe != null then "\n" + unsafe_note($s) else "" end);

# stop: the error that ends a view, as one line on stderr and exit status 2.
def stop: "results: \(.)\n" | halt_error(2);
