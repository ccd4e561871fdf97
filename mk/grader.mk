# grader.mk: the automatic grader (grader/, docs/instructor.md).
#
#   make grade [LAB=N]     grade your own labs/ with the grader (as in class)
#   make grade-bench       time the grader on a class of 50 (GRADE_BENCH_N)
#   make grade-samples     grade the sample submissions in tests/grader and
#                          check each gets its expected score (make test runs it)

GRADE_OUT ?= grade-results

# make test: the samples, with the kit's solutions (a handout has neither).
TEST_EXTRAS += $(if $(HAVE_SOLUTIONS),--extra "grader: the sample submissions get their expected scores" \
	"tests/grader/run-samples --mode $(RDMA_MODE)")

.PHONY: grade grade-samples

grade: build
	@grader/rdmalab-grade --mode $(RDMA_MODE) --name $(or $(USER),me) -o $(GRADE_OUT) \
		$(if $(LAB),--lab $(LAB)) .
	@echo "grade: your report is $(GRADE_OUT)/$(or $(USER),me)/report.txt"

grade-samples: build
	@tests/grader/run-samples --mode $(RDMA_MODE)

# make grade-bench: the grader's time on a class (GRADE_BENCH_N submissions
# across all labs, GRADE_BENCH_JOBS at once). A benchmark: it prints figures.
GRADE_BENCH_N    ?= 50
GRADE_BENCH_JOBS ?= 4
.PHONY: grade-bench
grade-bench: build
	@tests/grader/batch-bench -n $(GRADE_BENCH_N) -j $(GRADE_BENCH_JOBS) --mode $(RDMA_MODE)
