# handout.mk: the student handout (see docs/instructor.md).
#
#   make handout   build/rdmalab-handout.tar.gz: the committed kit without
#                  solutions/, the grader's samples or instructor secrets
#
# make test checks it too (scripts/handout --check: the file list, a dry
# run of make, no VM; and its docs: every path, anchor and make target they
# name is in it, none names solutions/, SOL=1 or make stubs), when the kit
# is a git checkout with its solutions.

HANDOUT := $(BUILD)/rdmalab-handout.tar.gz

.PHONY: handout
handout:
	@scripts/handout -o $(HANDOUT)

TEST_HANDOUT_CHECK = $(if $(and $(HAVE_SOLUTIONS),$(shell git rev-parse --git-dir 2>/dev/null)),scripts/handout --check)
