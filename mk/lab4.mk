# lab4.mk: what Lab 4 needs besides mk/labs.mk's rules.
#
#   make LAB4_SRD=1    compile Lab 4 (both trees and its tests) with
#                      -DLAB4_WITH_SRD and link libefa: the SRD variant of
#                      docs/efa.md. Needs infiniband/efadv.h (Debian:
#                      libibverbs-dev, in scripts/deps' build part; libefa.so.1
#                      is ibverbs-providers', its run part); stops with one
#                      line when it is missing. SRD needs EFA's RDMA write,
#                      which rdma-core has from 46 on: with an older efadv.h
#                      (Debian 12 has 44) it still builds, says so once, and
#                      the program refuses --transport srd on every device.
#                      A stamp file holding the mode and its flags makes
#                      switching the option, or a new efadv.h, rebuild
#                      Lab 4's objects.
#   make lab4-srd-test that build, in $(BUILD)/srd (the normal build is left
#                      alone), and step 4's tests on its solution in the guest;
#                      a lane of make test.
#
# Lab 4's test programs also run the lab4 program itself (order-only).
# (Included before labs.mk: only variables of the Makefile and literal paths here.)

LAB4_TEST_NAMES := steps
LAB4_TESTS := $(foreach t,labs solutions,$(addprefix $(BUILD)/$(t)/lab4/tests/,$(LAB4_TEST_NAMES)))
LAB4_OBJS := $(foreach t,labs solutions,$(patsubst %.c,$(BUILD)/%.o,$(wildcard $(t)/lab4/*.c))) \
	$(foreach t,labs solutions,$(patsubst tests/lab4/%.c,$(BUILD)/$(t)/lab4/tests/%.o,$(wildcard tests/lab4/test_*.c)))
LAB4_EFADV_H ?= infiniband/efadv.h
LAB4_SRD_MODE := $(if $(filter 1 yes,$(LAB4_SRD)),on,off)

# EFA's RDMA write capability bit, EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE, came
# with rdma-core 46 ("efa: Add RDMA write support"). An enum constant, not
# a macro: a line using it is compiled to find out ("yes" or nothing;
# expanded only where used).
lab4_efadv_write = $(shell printf '\043include <%s>\nint x = EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE;\n' \
	'$(LAB4_EFADV_H)' | $(CC) $(CPPFLAGS) -fsyntax-only -x c - >/dev/null 2>&1 && echo yes)

ifeq ($(LAB4_SRD_MODE),on)
LAB4_EFADV := $(shell printf '\043include <%s>\n' '$(LAB4_EFADV_H)' | \
	$(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1 && echo yes)
ifneq ($(LAB4_EFADV),yes)
$(error LAB4_SRD=1: $(LAB4_EFADV_H) is not installed (apt-get install libibverbs-dev, rdma-core 46 or newer); see docs/efa.md)
endif
LAB4_EFADV_WRITE := $(lab4_efadv_write)
LAB4_SRD_FLAGS := -DLAB4_WITH_SRD $(if $(LAB4_EFADV_WRITE),-DLAB4_EFADV_RDMA_WRITE)
$(BUILD)/labs/lab4/%.o $(BUILD)/solutions/lab4/%.o: private override CPPFLAGS += $(LAB4_SRD_FLAGS)
$(BUILD)/labs/lab4/lab4 $(BUILD)/solutions/lab4/lab4 $(LAB4_TESTS): private override LDLIBS += -lefa
endif

# The stamp holds the mode and its flags, rewritten only when they change
# (a rule would not do: labs.mk makes every target .SECONDARY, and a missing
# secondary file triggers nothing). A new efadv.h rebuilds Lab 4 too.
LAB4_SRD_STAMP := $(BUILD)/lab4-srd.mode
LAB4_SRD_STATE := $(strip $(LAB4_SRD_MODE) $(LAB4_SRD_FLAGS))
LAB4_SRD_NEW := $(shell mkdir -p $(BUILD) && { [ "$$(cat $(LAB4_SRD_STAMP) 2>/dev/null)" = '$(LAB4_SRD_STATE)' ] || \
	{ echo '$(LAB4_SRD_STATE)' >$(LAB4_SRD_STAMP) && echo yes; }; })
# Said once, when the build switches to this mode.
ifeq ($(LAB4_SRD_MODE):$(LAB4_EFADV_WRITE):$(LAB4_SRD_NEW),on::yes)
$(info LAB4_SRD=1: $(LAB4_EFADV_H) has no EFA RDMA write (rdma-core 46 or newer has it): lab4 builds and refuses --transport srd on every device)
endif

$(LAB4_OBJS): $(LAB4_SRD_STAMP)

$(filter $(BUILD)/labs/%,$(LAB4_TESTS)): | $(BUILD)/labs/lab4/lab4
$(filter $(BUILD)/solutions/%,$(LAB4_TESTS)): | $(BUILD)/solutions/lab4/lab4

# The host unit test of Lab 4's given file helpers links the stubs' file.c
# (the same given code in both trees, and the tree a handout has). It comes
# after the framework library on the link line, which it needs: once more.
LAB4_UNIT_TEST := $(BUILD)/tests/unit/test_lab4_file
$(LAB4_UNIT_TEST): $(BUILD)/labs/lab4/file.o
$(LAB4_UNIT_TEST): private LDLIBS := $(FW_LIB) $(LDLIBS)
$(LAB4_UNIT_TEST).o: private override CPPFLAGS += -Ilabs/lab4

# make lab4-srd-test: the LAB4_SRD=1 build of Lab 4, which no other test
# builds, in a build directory of its own (its framework and kits too: the
# normal build's objects and stamp are left as they are), and step 4's
# tests on its solution in the guest: RC available, SRD refused with
# EOPNOTSUPP (no EFA here); the stubs are compiled in that mode too. Then
# that the program it tested is that variant: linked with libefa. Where
# efadv.h has no RDMA write (Debian 12), the solution's branch for an
# rdma-core that has it is compiled all the same, its constant given the
# value rdma-core 46 gives it, so that a mistake there shows before an EFA.
LAB4_SRD_BUILD := $(BUILD)/srd
.PHONY: lab4-srd-test
ifeq ($(HAVE_SOLUTIONS),yes)
lab4-srd-test:
	@$(MAKE) --no-print-directory -s BUILD=$(LAB4_SRD_BUILD) LAB4_SRD=1 \
		$(LAB4_SRD_BUILD)/labs/lab4/lab4 $(LAB4_SRD_BUILD)/labs/lab4/tests/steps
	@$(MAKE) --no-print-directory -s BUILD=$(LAB4_SRD_BUILD) LAB4_SRD=1 check LAB=4 SOL=1 STEP=4
	@readelf -d $(LAB4_SRD_BUILD)/solutions/lab4/tests/steps | grep -q 'NEEDED.*libefa' || \
		{ echo "lab4-srd-test: $(LAB4_SRD_BUILD)/solutions/lab4/tests/steps is not linked with libefa: not the SRD build" >&2; exit 1; }
	$(if $(lab4_efadv_write),,@$(CC) $(CPPFLAGS) $(CFLAGS) $(LAB_CFLAGS) -DLAB4_WITH_SRD -DLAB4_EFADV_RDMA_WRITE \
		-D'EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE=(1 << 3)' -c -o $(LAB4_SRD_BUILD)/transport-rdma-write.o \
		solutions/lab4/transport.c)
TEST_EXTRAS += --extra "lab4: the LAB4_SRD=1 build (its own build directory) passes step 4 on rxe: RC available, SRD refused" \
	"$(MAKE) --no-print-directory -s lab4-srd-test"
else
lab4-srd-test:
	@echo "$(NO_SOLUTIONS)"
endif
