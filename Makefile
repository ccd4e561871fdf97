# rdmalab: build, test and run the kit. `make help` lists the targets.

BUILD    := build
PKGS     := libibverbs librdmacm libcrypto check
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CC       ?= cc
# The tests' runner, the grader and its views (Debian's python3).
PYTHON   ?= python3
CFLAGS   ?= -O2
# Debug info, frame pointers and no tail calls (which drop the caller's
# frame) in everything, the labs included, so that a crash report, gdb and
# perf show each function on the way with its line (see docs/debugging.md).
# override: kept when CFLAGS, CPPFLAGS or LDLIBS are set on the command
# line (make CFLAGS=-O1 sets the optimisation, not the kit's own flags).
override CFLAGS   += -g -fno-omit-frame-pointer -fno-optimize-sibling-calls
override CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -MMD -MP
# Each function in a section of its own: a test program's hide script
# gathers by name what its acts must not hold (tests/hide.c), and a lab's
# program keeps only the framework functions it calls (--gc-sections).
override CFLAGS   += -ffunction-sections
override CPPFLAGS += -Iframework $(PKG_CFLAGS)
override LDLIBS   += $(PKG_LIBS) -lpthread

# Where RDMA tests run: auto (a native device if there is one, else User-Mode
# Linux when it works here, else the QEMU VM), native, uml or vm. See
# docs/environment.md.
RDMA_MODE ?= auto
RUN_RDMA  := vm/run-rdma --mode $(RDMA_MODE)

# What a student handout ships compiled, not as source, for the machine
# kinds in tests/lib/ (see mk/kits.mk): the framework and the tests'
# helpers, which hold working code for the labs' steps. The kind is the
# CPU and the C library, not the compiler's spelling of its triplet (gcc
# says x86_64-linux-gnu, clang x86_64-pc-linux-gnu, Fedora's gcc
# x86_64-redhat-linux): one handout links with either.
KIT_TRIPLET := $(shell $(CC) -dumpmachine 2>/dev/null || uname -m)
KIT_ARCH    := $(firstword $(subst -, ,$(KIT_TRIPLET)))-linux-$(if $(findstring musl,$(KIT_TRIPLET)),musl,gnu)
KIT_SHIPPED := tests/lib/$(KIT_ARCH)

# The framework library every lab, the receiver and the grader link (in a
# handout, compiled: its rl_qp_to_rtr is Lab 1's step 6, and so on).
FW_SRCS  := $(wildcard framework/*.c)
FW_OBJS  := $(FW_SRCS:%.c=$(BUILD)/%.o)
FW_LIB   := $(if $(FW_SRCS),$(BUILD)/lib,$(KIT_SHIPPED))/librdmalab.a

# Check suites: tests/unit runs on the host, tests/rdma needs a device.
# Each test_*.c is one program, linked with the shared harness and its
# main(). A lab's graded tests are one program, with the graded runner's.
HARNESS_OBJ := $(BUILD)/tests/harness.o $(BUILD)/tests/main.o
GRADED_OBJ  := $(BUILD)/tests/harness.o $(BUILD)/tests/graded.o $(BUILD)/tests/case.o \
	       $(BUILD)/tests/res.o $(BUILD)/tests/hide.o $(BUILD)/tests/act.o \
	       $(BUILD)/tests/say.o
UNIT_TESTS  := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/unit/test_*.c))
RDMA_TESTS  := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/rdma/test_*.c))

# The labs, and the trees that hold them: labs/ (the stubs) and, except in
# a student handout, solutions/.
LABS      := $(sort $(patsubst labs/lab%/,%,$(wildcard labs/lab*/)) \
		$(patsubst solutions/lab%/,%,$(wildcard solutions/lab*/)))
HAVE_SOLUTIONS := $(if $(wildcard solutions/),yes)
LAB_TREES := labs $(if $(HAVE_SOLUTIONS),solutions)
NO_SOLUTIONS := no solutions/ in a student handout: nothing to check

# The tests' helpers link as archives: one per lab (tests/labN/*.c besides
# test_*.c: fixtures and the tests' own version of each step) and the
# receiver's (its reference sender and fixture). The kit builds them from
# source, a handout ships them. LAB_KIT is empty for a lab without helpers.
LAB_KIT_SRCS = $(filter-out tests/lab$(1)/test_%,$(wildcard tests/lab$(1)/*.c))
LAB_KIT = $(if $(call LAB_KIT_SRCS,$(1)),$(BUILD)/kits/lab$(1).a,$(if \
	$(wildcard tests/lib/*/lab$(1).a),$(KIT_SHIPPED)/lab$(1).a))
RECEIVER_TESTKIT := $(if $(wildcard tests/rdma/refsend.c),$(BUILD)/lib,$(KIT_SHIPPED))/libreceiver-testkit.a

.PHONY: all build deps deps-check test unit-test rdma-test demo doctor \
	vm-shell vm-prepare format clean help
.DEFAULT_GOAL := all

all: deps-check
	@$(MAKE) --no-print-directory build

build: $(FW_LIB) $(UNIT_TESTS) $(RDMA_TESTS)

deps:
	@scripts/deps install

deps-check:
	@scripts/deps check build

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

ifneq ($(FW_SRCS),)
$(FW_LIB): $(FW_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^
endif

$(UNIT_TESTS) $(RDMA_TESTS): $(BUILD)/%: $(BUILD)/%.o $(HARNESS_OBJ) $(FW_LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# make test: install what is missing (as root), build, run the host unit
# tests, then the RDMA tests natively or in one boot of the Soft-RoCE VM.
# The lab step tests run in the same boot; their tables are printed after.
# The protocol decoder is fuzzed for TEST_FUZZ_SECONDS on the way (where
# the framework's sources are: not in a handout), and the
# student handout is built and its file list checked (no VM). In a student
# handout the stubs and lab step checks are left out (see mk/labs.mk).
TEST_FUZZ_SECONDS ?= 20
# TEST_HEAVY=1 also runs the longest end-to-end checks beside the rest (the
# Docker flows, Debian 13 in a chroot, the Kubernetes pods): together about
# 40 min of our 2 cores, which took CI past its 90 min. make test names
# each one it leaves out, counted as skipped (tests/run.py --skip, from the
# fragments), and every wrong choice a lab plants that waits out the lab's
# own timeout (tests/make/test_common_errors.py reads it from the
# environment: about 5 min more).
TEST_HEAVY ?= 0
export TEST_HEAVY
test:
	@scripts/deps ensure
	@$(MAKE) --no-print-directory build
	@$(if $(HAVE_SOLUTIONS),,echo "$(NO_SOLUTIONS) (the lab step tests: make check LAB=N)")
	@$(PYTHON) tests/run.py --mode $(RDMA_MODE) --unit "$(UNIT_TESTS)" --rdma "$(RDMA_TESTS)" --memcheck \
		--stubs-check "$(TEST_STUBS_CHECK)" --handout-check "$(TEST_HANDOUT_CHECK)" \
		--fuzz "$(if $(FW_SRCS),$(MAKE) --no-print-directory -s fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS))" \
		--also "$(TEST_LABS_RUN)" --report "$(TEST_LABS_REPORT)" $(TEST_EXTRAS)

# Where auto picks User-Mode Linux, the QEMU VM (the path of Apple Silicon
# and of hosts where UML does not run) still gets one boot: a smoke run, and
# the receiver's race between its two event channels, which only two CPUs
# show (UML has one).
TEST_EXTRAS += --extra "the QEMU VM path: a smoke run and the receiver's step race, one boot" \
	"$(MAKE) --no-print-directory -s vm-smoke"
.PHONY: vm-smoke
vm-smoke:
	@vm/run-rdma --mode vm -- sh -c '$(BUILD)/tests/rdma/test_smoke && $(BUILD)/tests/rdma/test_receiver_steps'
TEST_EXTRAS += --extra "vm/uml-run: status, output, shares, timeout, a dying guest, --host-uid" \
	"cases tests.vm.test_uml_run"
# The course's hub (vm/hub): two User-Mode Linux guests on it, a student's
# Lab 3 sender earning its key from the receiver's guest; the switch's
# security (cookies, no student to student) from this process.
TEST_EXTRAS += --extra "vm/hub: a student's guest earns its Lab 3 key from the receiver's guest through the hub; wrong cookies and student-to-student frames dropped" \
	"cases tests.vm.test_hub"
# The same from a QEMU guest (its own L2TPv3 code): one boot under software
# emulation, about 15 s, beside the rest.
TEST_EXTRAS += --beside "vm/hub: a QEMU guest earns its Lab 3 key from a User-Mode Linux receiver through the hub" \
	"cases tests.vm.test_hub_qemu"
# The real kernel's proof (QEMU, software-emulated here: about 7 min), in
# the lane beside the rest: it writes only build/test-native.
TEST_EXTRAS += --beside "native mode on a real kernel (the QEMU guest): every lab's solution passes and its stub fails, make demo and make grade" \
	"cases tests.vm.test_native"
# User-Mode Linux on other CPUs (QEMU's Haswell and max: 832 and 2696 bytes
# of FP/XSTATE): about 7 min of one CPU, in the lane beside the rest.
TEST_EXTRAS += --beside "vm: UML boots and Lab 0's solution passes on CPUs of other FP/XSTATE sizes (in QEMU)" \
	"cases tests.vm.test_cpus"
TEST_EXTRAS += --extra "make: the fragments (mk/*.mk) define the same in any order" \
	"cases tests.make.test_fragments"
# Every script a user may run, found in the tree: seconds, no guest.
TEST_EXTRAS += --extra "scripts: each answers -h and --help, and refuses an unknown option with exit 2" \
	"cases tests.make.test_help"
# The kit's Python, every file found when it runs (scripts/deps' part check
# installs the tools): a second or two each.
TEST_EXTRAS += --extra "python: pyflakes and mypy find nothing in the kit's Python" \
	"cases tests.test_python"
# Planted into a copy of each lab's solution (a handout has none).
ifeq ($(HAVE_SOLUTIONS),yes)
TEST_EXTRAS += --extra "make check: a handout's listed common error, planted in each lab, shows in its row" \
	"cases tests.make.test_common_errors"
endif

unit-test: build
	@$(PYTHON) tests/run.py --unit "$(UNIT_TESTS)"

rdma-test: build
	@$(PYTHON) tests/run.py --mode $(RDMA_MODE) --rdma "$(RDMA_TESTS)"

demo:
	@$(if $(HAVE_SOLUTIONS),,echo "make demo runs the reference Lab 3 sender, which a student handout does not have: finish Lab 3, then make check LAB=3" >&2; exit 2)
	@scripts/deps ensure build run vm uml
	@$(MAKE) --no-print-directory build
	@scripts/demo --mode $(RDMA_MODE)

doctor:
	@vm/doctor

vm-shell:
	@vm/run-rdma --mode $(RDMA_MODE) --shell

# The guests' kernels, ahead of time: the UML kernel (built here, once) and
# its probe, and the QEMU VM's kernel package.
vm-prepare:
	@vm/uml-probe || true
	@vm/rxe-run --prepare

# labs/ is generated: format solutions/, then regenerate the stubs (not in a
# student handout, which has no solutions/: see mk/labs.mk).
format:
	$(if $(HAVE_SOLUTIONS),clang-format -i $(wildcard framework/*.[ch] tests/*.[ch] tests/*/*.[ch] \
		solutions/*/*.[ch] receiver/*.[ch] grader/*.[ch]),@echo "$(NO_SOLUTIONS)")
	$(if $(HAVE_SOLUTIONS),@scripts/gen-stubs)

clean:
	rm -rf $(BUILD)

help:
	@echo "make            build everything (objects and programs under build/)"
	@echo "make deps       install the Debian packages the kit needs (as root)"
	@echo "make test       run all tests: host unit tests, then RDMA tests"
	@echo "make demo       the main flow: a Lab 3 transfer earning a key (device or VM)"
	@echo "make doctor     diagnose this machine's RDMA set-up, with fixes"
	@echo "make vm-shell   open a shell where RDMA runs (User-Mode Linux, the VM, or here)"
	@echo "make check LAB=N [SOL=1] [STEP=k]  run lab N's step tests on labs/ (SOL=1: solutions/)"
	@echo "make grade [LAB=N]  grade your labs/ as the course's grader does (report in grade-results/)"
	@echo "make grade-samples  the grader on its sample submissions, checked against their expected scores"
	@echo "make grade-bench    time the grader on a class of 50 submissions (GRADE_BENCH_N, GRADE_BENCH_JOBS)"
	@echo "make stubs      regenerate labs/ from solutions/ (make stubs-check: verify)"
	@echo "make LAB4_SRD=1 build Lab 4 with its SRD (AWS EFA) variant; needs efadv.h, SRD runs with rdma-core 46+"
	@echo "make lab4-srd-test  that build in build/srd and Lab 4 step 4's tests on it (no EFA needed)"
	@echo "make fuzz       fuzz the Lab 3 protocol decoder (FUZZ_SECONDS, default 30)"
	@echo "make handout    the student tarball, build/rdmalab-handout.tar.gz (no solutions/)"
	@echo "make gradescope the Gradescope autograder, build/gradescope.zip [LAB=N: one lab]"
	@echo "make prairielearn  PrairieLearn's grader image context and questions, build/prairielearn/ [LAB=N, PL_IMAGE=NAME]"
	@echo "make autolab    Autolab's autograde-Makefile and autograde.tar, build/autolab/ [LAB=N]"
	@echo "make bench [BENCH_SIZES=\"1 4\"]  Lab 3 and Lab 4 senders vs ib_write_bw: table, CSV, plot"
	@echo "make trace LAB=N [SOL=1] [RUN=\"CMD\"]  lab N's RoCEv2 packets: a pcap, the timeline, a summary"
	@echo "make doc-figures  the docs' figures still there, the cheap ones rerun within 2x (DOC_FIGURES_ALL=1: all)"
	@echo "make docker-build  build the container images (needs a Docker engine; docs/docker.md)"
	@echo "make docker-test   test the images: self-study and grading flows, in the Soft-RoCE VM (as root)"
	@echo "make format     clang-format the C sources"
	@echo "make clean      remove build/"
	@echo "RDMA_MODE=auto|native|uml|vm picks where RDMA code runs (default auto)"

# The compiler's header dependencies, of the kit's own objects only: build/
# also holds whole copies of kits (the grader's work trees, handouts), whose
# thousands of .d files made every make take a second to start.
-include $(shell find $(addprefix $(BUILD)/,framework tests labs solutions receiver fuzz kits) \
	-name '*.d' 2>/dev/null)

# Lab builds, stubs and step checks live in their own fragments.
-include mk/*.mk
