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

# make test checks the view and the bundle (mk/grader.mk, after the
# samples it reads); a job as autodriver runs it, the kit's build included,
# is tests/grader/autolab-test, by hand.
