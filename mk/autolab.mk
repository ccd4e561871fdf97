# autolab.mk: Autolab's autograder (see docs/instructor.md).
#
#   make autolab [LAB=N[,N]]   build/autolab/: autograde-Makefile and
#                  autograde.tar (the kit, with the grader, no solutions),
#                  for the assessment's folder; LAB: grade only these labs
#
# tests/grader/autolab-test runs them as Autolab and Tango's autodriver do.

.PHONY: autolab
autolab:
	@grader/autolab/bundle -o $(BUILD)/autolab $(if $(LAB),--lab $(LAB))

# make test: a handin graded as Autolab runs the files, as an unprivileged
# user within autodriver's limits (the kit only: a handout has no
# tests/grader).
ifeq ($(HAVE_SOLUTIONS),yes)
TEST_EXTRAS += --extra "autolab: autograde.tar grades a handin within autodriver's limits; its last line is the scores" \
	"tests/grader/autolab-test"
endif
