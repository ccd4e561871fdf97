# classroom.jq: a submission's result as GitHub Classroom's grading reporter
# reads it (classroom-resources/autograding-grading-reporter@v1; the format
# of its src/main.js and of the graders that feed it, autograding-command-
# grader and autograding-python-grader: tests/grader/schemas/classroom-
# result.json): the status, the most points, and one test per record with
# the points it earned. The reporter adds up the tests' scores for the grade
# it sends Classroom ("Points X/Y", src/notify-classroom.js), so they are
# the records' own points. An ungradable submission is an error, with its
# reason; its maximum is 0, so the reporter sends Classroom no grade. One
# graded without the grader's whole sandbox (--unsafe) fails, with a test
# of no points that says what was missing.
# Input (jq -nR): the lines of $submission (submission.json) and of the
# submission's records (results.jsonl). Output: one JSON line.
include "records" {search: "./"};

# points: "(2 points)" after a test's name (the reporter's own table counts
# tests, not points: docs/instructor.md, "GitHub Classroom").
def points: if .max == 0 then "" else " (\(.max) point\(if .max == 1 then "" else "s" end))" end;

# rerun: the student's command that runs this test again, under a failure.
def rerun:
  if .result == "pass" then ""
  elif .step == 0 then "make check LAB=\(.lab)"
  else "make check LAB=\(.lab) STEP=\(.step)" end;

# brief: the first line of what went wrong, at most 200 characters. The
# reporter reaches it through one environment variable, base64, which Linux
# bounds to 128 KiB (MAX_ARG_STRLEN): every test of every lab failing with
# long messages must still fit (tests/grader/test-classroom checks it). The
# whole message is in report.txt, which the workflow prints.
def brief: output | lines | (.[0] // "") | .[:200];

def test:
  {name: (title + points), status: (if .result == "pass" then "pass" else "fail" end),
   score: .points, message: brief, test_code: rerun, filename: "", line_no: 0, duration: .ms};

(try submission_inputs($submission) catch stop) as {sub: $s, records: $r}
| {
    version: 1,
    status: (if $s.ungradable != null then "error"
             elif $s.unsafe == null and all($r[]; .result == "pass") then "pass" else "fail" end),
    max_score: ([$r[].max] | add // 0),
    tests: (if $s.ungradable != null then
              [{name: "grading \($s.name)", status: "error", score: 0, message: "UNGRADABLE: \($s.ungradable)",
                test_code: "", filename: "", line_no: 0, duration: 0}]
            else [select($s.unsafe != null)
                  | {name: "sandbox", status: "fail", score: 0, message: unsafe_note($s)[:200],
                     test_code: "", filename: "", line_no: 0, duration: 0}]
                 + [$r[] | test] end)
  }
