# lab3.mk: what Lab 3's step tests need besides mk/labs.mk's rules. They
# start the reference receiver with tests/rdma/receiver_fixture.c, so they
# compile against its header and link it ($(RECEIVER_TESTKIT)), the
# receiver's objects and the framework, and they run build/bin/rdmalab-receiver
# and the lab3 program itself (order-only: they are run, not linked).
#
# (Included before labs.mk and receiver.mk: only variables of the Makefile
# and literal paths here. A student handout has no solutions/.)

LAB3_TREES := labs $(if $(wildcard solutions/lab3/),solutions)

LAB3_TEST_NAMES := steps
LAB3_LINK := $(RECEIVER_TESTKIT) $(BUILD)/lib/libreceiver.a $(FW_LIB)

define lab3_test_rules
$(BUILD)/$(1)/lab3/tests/%.o: private override CPPFLAGS += -Ireceiver -Itests/rdma
$(addprefix $(BUILD)/$(1)/lab3/tests/,$(LAB3_TEST_NAMES)): $(LAB3_LINK) | \
	$(BUILD)/bin/rdmalab-receiver $(BUILD)/$(1)/lab3/lab3
$(addprefix $(BUILD)/$(1)/lab3/tests/,$(LAB3_TEST_NAMES)): private LDLIBS := $(LAB3_LINK) $(LDLIBS)
endef
$(foreach tree,$(LAB3_TREES),$(eval $(call lab3_test_rules,$(tree))))

# The student's program is also built as `sender`, the name the course uses.
LAB3_SENDERS := $(foreach tree,$(LAB3_TREES),$(BUILD)/$(tree)/lab3/sender)
$(LAB3_SENDERS): %/sender: %/lab3
	ln -sf lab3 $@
build: $(LAB3_SENDERS)
