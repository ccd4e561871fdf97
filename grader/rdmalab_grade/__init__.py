"""rdmalab_grade: the grader as a Python package.

The view side: model (the records, rubric, submissions and classes, read
and checked), report (make check's table, report.txt), platforms
(Gradescope, JUnit, GitHub Classroom, PrairieLearn, Autolab), classpages
(class.csv, summary.txt, class.html), grades (make grade's labs.txt), and
results, the command line of scripts/results. jsontext and texts are what
they share: JSON as the grader's files have it, and the records' texts.
"""
