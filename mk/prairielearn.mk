# prairielearn.mk: PrairieLearn's external grader (see docs/instructor.md).
#
#   make prairielearn [LAB=N[,N]] [PL_IMAGE=NAME]   build/prairielearn/:
#                  image/ (the grader image's build context: docker build
#                  it, push it as PL_IMAGE) and questions/rdmalab/labN/ (a
#                  question per lab, for the course's repository)
#
# tests/grader/test_prairielearn.py runs the entrypoint on a fake /grade.

PL_IMAGE ?= rdmalab/rdmalab-prairielearn

.PHONY: prairielearn
prairielearn:
	@grader/prairielearn/bundle -o $(BUILD)/prairielearn --image $(PL_IMAGE) $(if $(LAB),--lab $(LAB))

# make test: a lab graded on a fake /grade, its results.json read back
# against PrairieLearn's documented fields (the kit only: a handout has no
# tests/grader).
ifeq ($(HAVE_SOLUTIONS),yes)
TEST_EXTRAS += --extra "prairielearn: the entrypoint grades a lab on a fake /grade (results.json, PrairieLearn's fields)" \
	"cases tests.grader.test_prairielearn"
endif
