# labs.mk: the labs. Stubs generated from solutions/, lab programs, and the
# graded step tests (RL_GRADED in tests/labN/test_*.c, see docs/labs-howto.md).
#
#   make stubs                     regenerate labs/ from solutions/
#   make stubs-check               fail when the committed labs/ is stale
#   make labs                      build every lab program, stubs and solutions
#   make check LAB=N [SOL=1] [STEP=k]
#                                  grade lab N (labs/, or solutions/ with SOL=1)
#   make watch LAB=N [SOL=1] [STEP=k]
#                                  make check again at each save of the lab
#   make check-labs                for CI: solutions pass, every stub test fails
#
# A student handout (make handout) has labs/ but no solutions/: the labs are
# found in either tree, and the targets that compare the two say so in one
# line and do nothing.

# (LABS, LAB_TREES, HAVE_SOLUTIONS: the Makefile's, shared by every fragment.)

# Stubs leave parameters unused until the student fills them in.
LAB_CFLAGS := -Wno-unused-parameter


# lab_rules TREE N: the objects, program and test program of lab N in TREE.
# The test program, tests/steps, links the graded tests (RL_GRADED in
# tests/labN/test_*.c) and the lab's kit of helpers (mk/kits.mk).
define lab_rules
$(1)_lab$(2)_OBJS := $$(patsubst %.c,$(BUILD)/%.o,$$(filter-out $(1)/lab$(2)/main.c,$$(wildcard $(1)/lab$(2)/*.c)))
$(1)_lab$(2)_TEST_OBJS := $$(patsubst tests/lab$(2)/%.c,$(BUILD)/$(1)/lab$(2)/tests/%.o,$$(wildcard tests/lab$(2)/test_*.c)) \
	$$(call LAB_KIT,$(2))
$(1)_lab$(2)_TESTS := $(BUILD)/$(1)/lab$(2)/tests/steps
$(1)_lab$(2)_PROG := $(BUILD)/$(1)/lab$(2)/lab$(2)

$(BUILD)/$(1)/lab$(2)/%.o: $(1)/lab$(2)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$(LAB_CFLAGS) -c -o $$@ $$<

$(BUILD)/$(1)/lab$(2)/tests/%.o: tests/lab$(2)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) -I$(1)/lab$(2) $$(CFLAGS) -c -o $$@ $$<

$$($(1)_lab$(2)_TESTS): $$($(1)_lab$(2)_TEST_OBJS) $$($(1)_lab$(2)_OBJS) $$(GRADED_OBJ) $$(FW_LIB) \
		$(call LAB_HIDE,$(2))
	$$(CC) $$(CFLAGS) -Wl,-T,$(call LAB_HIDE,$(2)) -o $$@ $$(filter-out %.ld,$$^) $$(LDLIBS)

$$($(1)_lab$(2)_PROG): $(BUILD)/$(1)/lab$(2)/main.o $$($(1)_lab$(2)_OBJS) $$(FW_LIB)
	$$(CC) $$(CFLAGS) $$(LAB_PROG_LDFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
# A lab's own program holds what it calls and no more: of the framework,
# the functions the lab's rules let it call and what those call.
LAB_PROG_LDFLAGS := -Wl,--gc-sections

# The hide script of lab N's test program (tests/hide.c): what its acts
# must not hold, gathered into sections they unmap. Written by the rubric's
# program (below), from the tests' own declarations.
LAB_HIDE = $(BUILD)/rubric/lab$(1).hide.ld
$(foreach tree,$(LAB_TREES),$(foreach n,$(LABS),$(eval $(call lab_rules,$(tree),$(n)))))

# The rubric of lab N, its tests and points (`steps --rubric`, one JSON line
# a test), and the tests that need a reference receiver (`steps
# --receivers`), from a program of the lab's test objects and the graded
# runner alone: no lab code, its symbols left unresolved, as these two
# options call no lab function (and linked at fixed addresses, -no-pie, so
# that the loader is left none of them to bind). So the grader has the
# rubric of a lab that does not build, and never asks a submission's
# program for it.
LAB_RUBRIC_PROG = $(BUILD)/rubric/steps-lab$(1)
LAB_RUBRIC      = $(BUILD)/rubric/lab$(1).jsonl
LAB_RECEIVERS   = $(BUILD)/rubric/lab$(1).receivers
RUBRIC_LDFLAGS := -no-pie -Wl,--unresolved-symbols=ignore-all
define rubric_rule
$(call LAB_RUBRIC_PROG,$(1)): $$(labs_lab$(1)_TEST_OBJS) $$(GRADED_OBJ) $$(FW_LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $(RUBRIC_LDFLAGS) -o $$@ $$^ $$(LDLIBS)

$(call LAB_RUBRIC,$(1)): $(call LAB_RUBRIC_PROG,$(1))
	@$$< --rubric >$$@.tmp && mv $$@.tmp $$@ || { rm -f $$@.tmp; exit 1; }

$(call LAB_RECEIVERS,$(1)): $(call LAB_RUBRIC_PROG,$(1))
	@$$< --receivers >$$@.tmp && mv $$@.tmp $$@ || { rm -f $$@.tmp; exit 1; }

$(call LAB_HIDE,$(1)): $(call LAB_RUBRIC_PROG,$(1))
	@$$< --hide-script >$$@.tmp && mv $$@.tmp $$@ || { rm -f $$@.tmp; exit 1; }
endef
$(foreach n,$(LABS),$(eval $(call rubric_rule,$(n))))
LAB_RUBRICS := $(foreach n,$(LABS),$(call LAB_RUBRIC,$(n)) $(call LAB_RECEIVERS,$(n)) $(call LAB_HIDE,$(n)))

.PHONY: stubs stubs-check labs check watch rules check-labs check-labs-report act-memory
.SECONDARY:

ifeq ($(HAVE_SOLUTIONS),yes)
stubs:
	@scripts/gen-stubs

stubs-check:
	@scripts/gen-stubs --check
else
stubs stubs-check:
	@echo "$(NO_SOLUTIONS)"
endif

labs: $(foreach tree,$(LAB_TREES),$(foreach n,$(LABS),$($(tree)_lab$(n)_PROG) $($(tree)_lab$(n)_TESTS))) \
	$(LAB_RUBRICS)

# `make` builds the lab programs and their tests too.
build: labs

# make check LAB=N [SOL=1] [STEP=k]
# It runs the student's own code for that student: in User-Mode Linux, the
# faster seccomp mode (docs/environment.md, "Guest modes"; the grader's
# guests never: vm/uml-run refuses it there). RDMALAB_UML_SECCOMP=0 in the
# environment gives ptrace mode; the QEMU VM and a native device ignore it.
CHECK_UML  := RDMALAB_UML_SECCOMP=$${RDMALAB_UML_SECCOMP:-1}
CHECK_TREE := $(if $(filter 1 yes,$(SOL)),solutions,labs)
CHECK_DIR  := $(BUILD)/$(CHECK_TREE)/lab$(LAB)/results

check:
	@if [ -z "$(LAB)" ] || [ -z "$(filter $(LAB),$(LABS))" ]; then \
		echo "usage: make check LAB=N [SOL=1] [STEP=k]   (labs: $(LABS))" >&2; exit 2; fi
	@if [ ! -d $(CHECK_TREE)/lab$(LAB) ]; then \
		echo "make check: no $(CHECK_TREE)/lab$(LAB) here$(if $(HAVE_SOLUTIONS),, (SOL=1 needs solutions/, which a student handout does not have))" >&2; exit 2; fi
	@$(MAKE) --no-print-directory $($(CHECK_TREE)_lab$(LAB)_PROG) $($(CHECK_TREE)_lab$(LAB)_TESTS) \
		$(call LAB_RUBRIC,$(LAB))
	@$(call LAB_RULES,$(LAB),$(CHECK_TREE)) || { echo "make check: Lab $(LAB) breaks the rules above," \
		"so the grader would score it 0 (docs/rules.md): fix them first" >&2; exit 1; }
	@rm -f $(CHECK_DIR)/*.jsonl
	@$(CHECK_UML) $(RUN_RDMA) -- scripts/lab-check run $(if $(STEP),--step $(STEP)) \
		--dir $(CHECK_DIR) $($(CHECK_TREE)_lab$(LAB)_TESTS) || true
	@scripts/lab-check report $(if $(STEP),--step $(STEP)) --lab $(LAB) --from $(CHECK_TREE) \
		$(call LAB_RUBRIC,$(LAB)) $(CHECK_DIR)

watch:
	@scripts/watch "$(LAB)" "$(STEP)" $(CHECK_TREE)

# make rules LAB=N [SOL=1]: what the student's files of lab N may contain
# (scripts/lab-rules: headers, functions called and defined, no constructors,
# no assembly), checked on their objects. make check and the grader check
# them first: a lab that breaks one scores 0.
LAB_RULES = CC="$(CC)" CPPFLAGS="$(CPPFLAGS)" scripts/lab-rules $(1) $(2) $(BUILD)/$(2)/lab$(1)
rules:
	@$(call LAB_RULES,$(LAB),$(CHECK_TREE))

# make act-memory: every lab's test program (stubs and solutions) shows,
# step by step, that its acts hold none of what they must not (`steps
# --act-memory`, tests/hide.c). No RDMA: make test runs it on this
# machine's kernel, which enforces no-execute.
ACT_MEMORY_PROGS := $(foreach tree,$(LAB_TREES),$(foreach n,$(LABS),$($(tree)_lab$(n)_TESTS)))
act-memory: $(ACT_MEMORY_PROGS)
	@status=0; for p in $^; do \
		out=$$($$p --act-memory 2>&1) || { printf '%s: %s\n' "$$p" "$$out" | grep -v 'none of the'; status=1; }; \
	done; [ $$status = 0 ] && echo "act-memory: $(words $^) test programs, no act holds what it must not"; exit $$status
TEST_EXTRAS += --extra "labs: no step's act holds the kit's hidden code (steps --act-memory, every lab)" \
	"$(MAKE) --no-print-directory -s act-memory"

# For CI: labs/ is what solutions/ generate; with the solutions every test
# passes; on the untouched stubs every test fails. One run for all labs
# (make test runs it in the same VM boot as the other RDMA tests).
# On the stubs, every test runs (--all): none of them may pass.
CHECK_LABS_RUN := scripts/lab-check run $(foreach tree,$(LAB_TREES),$(foreach n,$(LABS), \
		$(if $(filter labs,$(tree)),--all) --dir $(BUILD)/$(tree)/lab$(n)/results $($(tree)_lab$(n)_TESTS)))

# make test runs the stubs check, CHECK_LABS_RUN (in its VM boot) and the
# check-labs report. In a handout it leaves the lab step tests out: they
# grade the student's work in progress, not the kit (make check LAB=N shows
# them), so a fresh handout's make test is green.
ifeq ($(HAVE_SOLUTIONS),yes)
TEST_STUBS_CHECK := scripts/gen-stubs --check
TEST_LABS_RUN    := $(CHECK_LABS_RUN)
TEST_LABS_REPORT := $(MAKE) --no-print-directory -s check-labs-report

check-labs: stubs-check labs
	@$(CHECK_UML) $(RUN_RDMA) -- $(CHECK_LABS_RUN) || true
	@$(MAKE) --no-print-directory check-labs-report

check-labs-report:
	@status=0; for n in $(LABS); do \
		for t in solutions labs; do \
			CC="$(CC)" CPPFLAGS="$(CPPFLAGS)" scripts/lab-rules $$n $$t $(BUILD)/$$t/lab$$n || status=1; \
		done; \
		scripts/allow-list $$n --check || status=1; \
		scripts/lab-check report --lab $$n --from solutions $(BUILD)/rubric/lab$$n.jsonl \
			$(BUILD)/solutions/lab$$n/results || status=1; echo; \
		scripts/lab-check report --stubs --lab $$n --from labs $(BUILD)/rubric/lab$$n.jsonl \
			$(BUILD)/labs/lab$$n/results || status=1; echo; \
	done; \
	if [ $$status = 0 ]; then echo "check-labs: all labs pass with solutions/ and fail on their stubs"; \
	else echo "check-labs: FAILED (see above)"; fi; exit $$status
else
TEST_STUBS_CHECK :=
TEST_LABS_RUN    :=
TEST_LABS_REPORT :=

check-labs check-labs-report:
	@echo "$(NO_SOLUTIONS)"
endif
