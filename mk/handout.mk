# handout.mk: the student handout (see docs/instructor.md).
#
#   make handout   build/rdmalab-handout.tar.gz: the committed kit without
#                  solutions/, the grader's samples or instructor secrets
#
# make test checks it too (scripts/handout --check: the file list and a dry
# run of make, no VM), when the kit is a git checkout with its solutions.

HANDOUT := $(BUILD)/rdmalab-handout.tar.gz

.PHONY: handout
handout:
	@scripts/handout -o $(HANDOUT)

TEST_HANDOUT_CHECK = $(if $(and $(HAVE_SOLUTIONS),$(shell git rev-parse --git-dir 2>/dev/null)),scripts/handout --check)
