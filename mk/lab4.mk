# lab4.mk: what Lab 4 needs besides mk/labs.mk's rules.
#
#   make LAB4_SRD=1    compile Lab 4 (both trees and its tests) with
#                      -DLAB4_WITH_SRD and link libefa: the SRD variant of
#                      docs/efa.md. Needs infiniband/efadv.h; stops with one
#                      line when it is missing. A stamp file holding the mode
#                      makes switching the option rebuild Lab 4's objects.
#
# Lab 4's test programs also run the lab4 program itself (order-only).
# (Included before labs.mk: only variables of the Makefile and literal paths here.)

LAB4_TEST_NAMES := steps
LAB4_TESTS := $(foreach t,labs solutions,$(addprefix $(BUILD)/$(t)/lab4/tests/,$(LAB4_TEST_NAMES)))
LAB4_OBJS := $(foreach t,labs solutions,$(patsubst %.c,$(BUILD)/%.o,$(wildcard $(t)/lab4/*.c))) \
	$(foreach t,labs solutions,$(patsubst tests/lab4/%.c,$(BUILD)/$(t)/lab4/tests/%.o,$(wildcard tests/lab4/test_*.c)))
LAB4_EFADV_H ?= infiniband/efadv.h
LAB4_SRD_MODE := $(if $(filter 1 yes,$(LAB4_SRD)),on,off)
LAB4_SRD_STAMP := $(BUILD)/lab4-srd.mode
# Rewritten only when the mode changes (a rule would not do: labs.mk makes
# every target .SECONDARY, and a missing secondary file triggers nothing).
$(shell mkdir -p $(BUILD) && [ "$$(cat $(LAB4_SRD_STAMP) 2>/dev/null)" = $(LAB4_SRD_MODE) ] || \
	echo $(LAB4_SRD_MODE) >$(LAB4_SRD_STAMP))

ifeq ($(LAB4_SRD_MODE),on)
LAB4_EFADV := $(shell printf '\043include <%s>\n' '$(LAB4_EFADV_H)' | \
	$(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1 && echo yes)
ifneq ($(LAB4_EFADV),yes)
$(error LAB4_SRD=1: $(LAB4_EFADV_H) is not installed (apt-get install libibverbs-dev, rdma-core 44 or newer); see docs/efa.md)
endif
$(BUILD)/labs/lab4/%.o $(BUILD)/solutions/lab4/%.o: private override CPPFLAGS += -DLAB4_WITH_SRD
$(BUILD)/labs/lab4/lab4 $(BUILD)/solutions/lab4/lab4 $(LAB4_TESTS): private override LDLIBS += -lefa
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
