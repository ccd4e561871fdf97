# grader.mk: the automatic grader (grader/, docs/instructor.md).
#
#   make grade [LAB=N]     grade your own labs/ with the grader (as in class)
#   make grader-kit        what the grader builds in the kit before any lab
#   make grade-bench       time the grader on a class of 50 (GRADE_BENCH_N)
#   make grade-samples     grade the sample submissions in tests/grader and
#                          check each gets its expected score (make test runs it)

GRADE_OUT  ?= grade-results
GRADE_NAME := $(or $(USER),me)

# make test, with the kit's solutions (a handout has neither, nor
# tests/grader): the grader's own tests, then the samples.
ifeq ($(HAVE_SOLUTIONS),yes)
# make test: make grade on a lab that does not compile: on this machine,
# no RDMA (a handout has no tests/grader).
TEST_EXTRAS += --extra "grader: make grade LAB=0 with a Lab 1 that does not compile" \
	"cases tests.grader.test_make_grade"
TEST_EXTRAS += --extra "grader: a test program's parent decides every result (exit(0), daemons, skips)" \
	"cases tests.grader.test_graded"
TEST_EXTRAS += --extra "grader: its control without a guest: settings, limits, names, intake, the command line" \
	"cases tests.grader.test_control"
TEST_EXTRAS += --extra "grader: each test declares its points once; the rubric-only program prints them" \
	"cases tests.grader.test_rubric"
TEST_EXTRAS += --extra "grader: scripts/results shows every field of the records in every view, long messages bounded; the model refuses a bad line" \
	"cases tests.grader.test_views tests.grader.test_model"
TEST_EXTRAS += --extra "grader: a course's records: a regrade merges, a roster, late days, what kind of 0, provenance, preflight and keys" \
	"cases tests.grader.test_course"
TEST_EXTRAS += --extra "grader: a lab's files keep its rules (includes, calls, no constructors, no assembly)" \
	"cases tests.grader.test_lab_rules"
TEST_EXTRAS += --extra "grader: intake of links, devices, absolute and .. paths, big files, odd names" \
	"cases tests.grader.test_intake"
TEST_EXTRAS += --extra "grader: refuses without root or namespaces, one line; --unsafe marks every view" \
	"cases tests.grader.test_sandbox"
TEST_EXTRAS += --extra "grader: the preflight refuses a lab whose solution fails, --force marks it, its verdict is cached; a harness crash is the grader's failure" \
	"cases tests.grader.test_preflight"
# The samples last of the grader's own tests: two guests at once, they fill
# both CPUs, so a test beside them (tests/run.py --beside, TEST_HEAVY=1's) is
# best done by then.
TEST_EXTRAS += --extra "grader: the sample submissions get their expected scores" \
	"cases tests.grader.test_samples"
# After the samples: what they wrote, read back by parsers of each format,
# and their classes' pages, drawn by Chromium, beside a made-up class.
TEST_EXTRAS += --extra "grader: results.json, junit.xml and class.csv read back against their formats" \
	"cases tests.grader.test_formats"
TEST_EXTRAS += --extra "grader: class.html, drawn by Chromium, shows class.csv's figures" \
	"cases tests.grader.test_class_html"
# GitHub Classroom's workflow, and the reporter's JSON of the samples' records.
TEST_EXTRAS += --extra "grader: GitHub Classroom's workflow, and its reporter's JSON of the samples' records" \
	"cases tests.grader.test_classroom"
# Autolab: the autoresult line of crafted records and of each Lab 3 sample's
# records, and autograde.tar without solutions (a whole job builds the kit:
# tests/grader/autolab-test, by hand).
TEST_EXTRAS += --extra "autolab: the last line of every Lab 3 sample is its records' scores; autograde.tar holds no solutions" \
	"cases tests.grader.test_autolab"
# Kubernetes: the manifests against the API's schema, the driver, and the
# pod's command for two indexes of a class of two (Lab 0, in the guest).
ifeq ($(TEST_HEAVY),1)
TEST_EXTRAS += --extra "grader: Kubernetes' Indexed Job grades submission JOB_COMPLETION_INDEX; gather makes class.csv" \
	"tests/grader/test-kubernetes"
else
TEST_EXTRAS += --skip "grader: Kubernetes' Indexed Job grades submission JOB_COMPLETION_INDEX; gather makes class.csv" \
	"TEST_HEAVY=1 runs it (or tests/grader/test-kubernetes)"
endif
endif

.PHONY: grade grade-samples grader-kit

# What make grade grades, for the report's "from:" line: the commit of this
# checkout and whether labs/ differs from it (nothing outside git: the
# report then lists the files taken).
GRADE_COMMIT = $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
	git rev-parse --short HEAD 2>/dev/null)
GRADE_SOURCE = $(if $(GRADE_COMMIT),commit $(GRADE_COMMIT)$(if \
	$(shell git status --porcelain labs/ 2>/dev/null), (with uncommitted changes in labs/)))

# make grade builds nothing first: the grader builds what it needs itself
# (grader-kit), then each lab of labs/ on its own, so a lab that does not
# compile costs that lab only. scripts/grade keeps each run's report in a
# folder of its own (GRADE_OUT/GRADE_NAME/TIME, the newest graded one as
# latest) and says what it supersedes; labs.txt lists every lab's last grade.
grade:
	@scripts/grade --mode $(RDMA_MODE) --name $(GRADE_NAME) --out $(GRADE_OUT) \
		--source "$(GRADE_SOURCE)" $(if $(LAB),--lab $(LAB))

# What grader/rdmalab-grade builds in the kit before any lab: the receiver
# and the program that starts the tests' receivers,
# the libraries the step tests link (Lab 3's link the receiver's), and the
# rubric, receivers and hide script (mk/labs.mk) of each lab it grades
# (GRADER_LABS, default all), which it grades with and links the tests with.
grader-kit:
	@$(MAKE) --no-print-directory $(RECEIVER_BIN) $(RECEIVERS_BIN) $(FW_LIB) $(GRADED_OBJ) $(LAB3_LINK) kits \
		$(foreach n,$(or $(GRADER_LABS),$(LABS)),$(call LAB_RUBRIC,$(n)) $(call LAB_RECEIVERS,$(n)) \
		$(call LAB_HIDE,$(n)))

grade-samples: build
	@tests/grader/run-samples --mode $(RDMA_MODE)

# make grade-bench: the grader's time on a class (GRADE_BENCH_N submissions
# across all labs, GRADE_BENCH_JOBS at once). A benchmark: it prints figures.
GRADE_BENCH_N    ?= 50
GRADE_BENCH_JOBS ?= 4
.PHONY: grade-bench
grade-bench: build
	@tests/grader/batch-bench -n $(GRADE_BENCH_N) -j $(GRADE_BENCH_JOBS) --mode $(RDMA_MODE)
