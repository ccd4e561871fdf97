# gradescope.mk: the Gradescope autograder (see docs/instructor.md).
#
#   make gradescope [LAB=N[,N]]   build/gradescope.zip: setup.sh and
#                  run_autograder at its top, and the kit (the student
#                  handout, with the grader); LAB: grade only these labs
#
# tests/grader/gradescope-test runs the bundle on a fake /autograder.

GRADESCOPE_ZIP := $(BUILD)/gradescope.zip

.PHONY: gradescope
gradescope:
	@grader/gradescope/bundle -o $(GRADESCOPE_ZIP) $(if $(LAB),--lab $(LAB))


# Not in make test yet: on 2026-11-22 tests/grader/gradescope-test ran
# run_autograder on Lab 0's solution and got a score of 0 (see the issue's
# note); run it on its own until that is found.
