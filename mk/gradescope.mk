# gradescope.mk: the Gradescope autograder (see docs/instructor.md).
#
#   make gradescope [LAB=N[,N]]   build/gradescope.zip: setup.sh and
#                  run_autograder at its top, and the kit (the student
#                  handout, with the grader); LAB: grade only these labs.
#                  It prints the settings to make on the assignment's
#                  Gradescope page (timeout, memory, CPU, base image)
#
# tests/grader/test_gradescope.py runs the bundle on a fake /autograder.

GRADESCOPE_ZIP := $(BUILD)/gradescope.zip

.PHONY: gradescope
gradescope:
	@grader/gradescope/bundle -o $(GRADESCOPE_ZIP) $(if $(LAB),--lab $(LAB))


# make test: the bundle graded on a fake /autograder (the kit only: a
# handout has no tests/grader).
ifeq ($(HAVE_SOLUTIONS),yes)
TEST_EXTRAS += --extra "gradescope: the bundle sets up and grades a submission" "cases tests.grader.test_gradescope"
endif
