# docs.mk: make test checks the docs (docs/*.md, README.md) against the kit.
#
# Only with the kit's solutions: the docs are the kit's, and they name on
# purpose what a student handout leaves out (solutions/, tests/grader/,
# docs/labs-howto.md, the framework's sources; see scripts/handout), so in a
# handout the check would fail on what is meant. The kit's run covers the
# handout's docs: they are the same files. No RDMA, no build needed.
ifeq ($(HAVE_SOLUTIONS),yes)
TEST_EXTRAS += --extra "docs: every path, anchor and make target the docs name exists" \
	"tests/docs/check-paths"
TEST_EXTRAS += --extra "docs: the docs check reports a broken path, anchor and make target" \
	"tests/docs/test-check-paths"
endif
