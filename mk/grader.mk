# grader.mk: the automatic grader (grader/, docs/instructor.md).
#
#   make grade [LAB=N]     grade your own labs/ with the grader (as in class)
#   make grade-samples     grade the sample submissions in tests/grader and
#                          check each gets its expected score (make test runs it)

GRADE_OUT ?= grade-results

.PHONY: grade grade-samples

grade: build
	@grader/rdmalab-grade --mode $(RDMA_MODE) --name $(or $(USER),me) -o $(GRADE_OUT) \
		$(if $(LAB),--lab $(LAB)) .
	@echo "grade: your report is $(GRADE_OUT)/$(or $(USER),me)/report.txt"

grade-samples: build
	@tests/grader/run-samples --mode $(RDMA_MODE)
