# junit.jq: a submission's junit.xml (scripts/results submission;
# tests/grader/schemas/junit.xsd): a suite per lab, a case per record, a
# failure's message and what the student's code printed.
# Input (jq -nR): the lines of $submission (submission.json) and of the
# submission's records (results.jsonl). Output: the XML's lines (jq -r).
include "records" {search: "./"};

# text: a value as XML text, in an element or an attribute: escaped by jq,
# line ends kept as character references (an attribute's would become
# spaces), and the control characters XML 1.0 refuses as spaces.
def text:
  tostring
  | if test("[\u0000-\u0008\u000b\u000c\u000e-\u001f]") then gsub("[\u0000-\u0008\u000b\u000c\u000e-\u001f]"; " ") else . end
  | @html
  | if test("[\n\r\t]") then gsub("\n"; "&#10;") | gsub("\r"; "&#13;") | gsub("\t"; "&#9;") else . end;

def outcome:
  if .result == "FAIL" then "<failure message=\"\(.message | text)\"/>"
  elif .result == "skipped" then "<skipped message=\"\(.message | text)\"/>"
  else "" end
  + (if .result == "FAIL" and .said != "" then "<system-out>\(.said | text)</system-out>" else "" end);

def count($r): map(select(.result == $r)) | length;

(try submission_inputs($submission) catch stop) as {sub: $s, records: $r}
| "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
  "<testsuites name=\"\($s.name | text)\">",
  (select($s.unsafe != null)
   | "  <testsuite name=\"\($s.name | text).sandbox\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">",
     "    <testcase classname=\"grader\" name=\"sandbox\"><error message=\"\(unsafe_note($s) | text)\"/></testcase>",
     "  </testsuite>"),
  (select($s.ungradable != null)
   | "  <testsuite name=\"\($s.name | text)\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">",
     "    <testcase classname=\"grader\" name=\"ungradable\"><error message=\"\($s.ungradable | text)\"/></testcase>",
     "  </testsuite>"),
  ($r | lab_order[] as $l
   | [$r[] | select(.lab == $l)] as $lab
   | "  <testsuite name=\"\($s.name | text).lab\($l)\" tests=\"\($lab | length)\" failures=\"\($lab | count("FAIL"))\" errors=\"0\" skipped=\"\($lab | count("skipped"))\">",
     ($lab[] | "    <testcase classname=\"lab\($l).\(if .step == 0 then "build" else "step\(.step)" end)\" name=\"\(.test | text)\" time=\"\(.ms / 1000)\">\(outcome)</testcase>"),
     "  </testsuite>"),
  "</testsuites>"
