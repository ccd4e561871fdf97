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
# The docs' measured figures (docs/figures.tsv): each still in its doc, the
# cheap ones (host only, seconds) rerun within 2x; a time off is shown, not
# counted (--untimed: speed is make doc-figures' and make bench's to judge,
# and a Docker test runs beside). Needs the build (the labs' rubrics).
TEST_EXTRAS += --extra "docs: every figure has its command; the cheap ones rerun within 2x (times shown)" \
	"scripts/doc-figures --untimed"
TEST_EXTRAS += --extra "docs: the figures check reports a figure gone from its doc and one off by more than 2x" \
	"tests/docs/test-doc-figures"
endif

# make doc-figures [DOC_FIGURES_ALL=1]: the same check of the figures, on its
# own; DOC_FIGURES_ALL=1 reruns every figure that can be read back (guests,
# RDMA, make bench, the Docker test: hours, for a machine with time).
.PHONY: doc-figures
doc-figures: build
	@scripts/doc-figures $(if $(filter 1 yes,$(DOC_FIGURES_ALL)),--all)
