"""rdmalab_grade: the grader as a Python package.

The view side: model (the records, rubric, submissions and classes, read
and checked), report (make check's table, report.txt), platforms
(Gradescope, JUnit, GitHub Classroom, PrairieLearn, Autolab), classpages
(class.csv, summary.txt, class.html), grades (make grade's labs.txt), and
results, the command line of scripts/results. jsontext and texts are what
they share: JSON as the grader's files have it, and the records' texts.

What the grader's control calls, each raising model.BadInput (one line)
on a bad input:
  model.read_lab_run(lab, rubric_file, records_file_or_None, logs) -> LabRun
  model.read_lab_not_built(lab, rubric_file, why) -> LabRun
  results.lab_records_text(run) -> the lines of results.jsonl for that lab
  results.write_submission(folder) -> Submission  (report.txt, results.json, junit.xml)
  results.write_class(folder, labs, made) -> summary.txt's text
  results.write_whole(path, text)  (a file whole: temp + rename)
"""
