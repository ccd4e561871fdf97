# docs.mk: make test checks the docs (docs/*.md, README.md) against the kit.
#
# Only with the kit's solutions: the docs are the kit's, and they name on
# purpose what a student handout leaves out (solutions/, tests/grader/,
# docs/labs-howto.md, the framework's sources; see scripts/handout), so in a
# handout the check would fail on what is meant. The handout's docs, as it
# ships them (kit-only parts left out, scripts/handout-docs), are checked by
# scripts/handout --check (make test's --handout-check, mk/handout.mk).
# No RDMA, no build needed.
ifeq ($(HAVE_SOLUTIONS),yes)
# Each path, anchor and make target they name exists, and each figure of
# docs/figures.tsv is still in its doc, the cheap ones (host only, seconds)
# rerun within 2x; a time off is shown, not counted (--untimed: speed is make
# doc-figures' and make bench's to judge). Needs the build (the labs'
# rubrics). And each checker fails on a made-up kit (tests/docs/test_docs.py).
TEST_EXTRAS += --extra "docs: paths, anchors, make targets and figures hold; each checker can fail" \
	"cases tests.docs.test_docs"
endif

# make doc-figures [DOC_FIGURES_ALL=1]: the same check of the figures, on its
# own; DOC_FIGURES_ALL=1 reruns every figure that can be read back (guests,
# RDMA, make bench, the Docker test: hours, for a machine with time).
.PHONY: doc-figures
doc-figures: build
	@scripts/doc-figures $(if $(filter 1 yes,$(DOC_FIGURES_ALL)),--all)
