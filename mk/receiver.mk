# receiver.mk: the Lab 3 reference receiver, its tests and its fuzz target
# (see docs/receiver.md and docs/protocol.md).
#
#   make build        also builds build/bin/rdmalab-receiver and
#                     build/bin/rdmalab-receivers (the grader's, which starts
#                     them: tests/rdma/receivers.c)
#   make fuzz         runs the protocol decoder under libFuzzer for
#                     FUZZ_SECONDS (default 30)

RECEIVER_SRCS := $(filter-out receiver/main.c,$(wildcard receiver/*.c))
RECEIVER_OBJS := $(RECEIVER_SRCS:%.c=$(BUILD)/%.o)
RECEIVER_LIB  := $(BUILD)/lib/libreceiver.a
RECEIVER_BIN  := $(BUILD)/bin/rdmalab-receiver
RECEIVERS_BIN := $(BUILD)/bin/rdmalab-receivers

# What the RDMA tests link besides the receiver, RECEIVER_TESTKIT (the
# Makefile's): the reference sender, the fixture that starts a receiver and
# the code that starts receivers and waits until they listen, the fixture's
# and rdmalab-receivers'. An archive, so listing it twice is harmless. A
# handout ships it compiled.
RECEIVER_TESTKIT_OBJS := $(BUILD)/tests/rdma/refsend.o $(BUILD)/tests/rdma/receiver_fixture.o \
	$(BUILD)/tests/rdma/receiver_launch.o

$(RECEIVER_LIB): $(RECEIVER_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/lib/libreceiver-testkit.a: $(RECEIVER_TESTKIT_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(RECEIVER_BIN): $(BUILD)/receiver/main.o $(RECEIVER_LIB) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(RECEIVERS_BIN): $(BUILD)/tests/rdma/receivers.o $(RECEIVER_TESTKIT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build: $(RECEIVER_BIN) $(RECEIVERS_BIN)

# The receiver's tests link its objects before the framework library
# ("private": what they need is not passed on to their prerequisites). The
# RDMA tests run build/bin/rdmalab-receiver, which `build` makes too.
RECEIVER_UNIT_TESTS := $(filter $(BUILD)/tests/unit/test_receiver_%,$(UNIT_TESTS))
RECEIVER_RDMA_TESTS := $(filter $(BUILD)/tests/rdma/test_receiver_%,$(RDMA_TESTS))

$(RECEIVER_UNIT_TESTS): $(RECEIVER_LIB)
$(RECEIVER_UNIT_TESTS): private LDLIBS := $(RECEIVER_LIB) $(FW_LIB) $(LDLIBS)
$(RECEIVER_RDMA_TESTS): $(RECEIVER_TESTKIT) $(RECEIVER_LIB)
$(RECEIVER_RDMA_TESTS): private LDLIBS := $(RECEIVER_TESTKIT) $(RECEIVER_LIB) $(FW_LIB) $(LDLIBS)
$(BUILD)/tests/unit/test_receiver_%.o $(BUILD)/tests/rdma/test_receiver_%.o \
$(BUILD)/tests/rdma/receiver_fixture.o: private override CPPFLAGS += -Ireceiver

# make fuzz: the decoder under libFuzzer and AddressSanitizer, built with
# clang apart from the rest (the gcc-built library has no sanitizer hooks).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_PROTO   := $(FUZZ_DIR)/fuzz_proto
FUZZ_SRCS    := tests/fuzz/fuzz_proto.c framework/proto.c framework/wire.c

.PHONY: fuzz fuzz-build
ifeq ($(FW_SRCS),)
fuzz fuzz-build:
	@echo "make fuzz: a student handout has the framework compiled only: nothing to fuzz"
else
fuzz-build: $(FUZZ_PROTO)

$(FUZZ_PROTO): $(FUZZ_SRCS) framework/rdmalab.h
	@mkdir -p $(@D)
	$(FUZZ_CC) -g -O1 -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined $(CPPFLAGS) -o $@ $(FUZZ_SRCS)

fuzz: $(FUZZ_PROTO)
	@mkdir -p $(FUZZ_DIR)/corpus
	$(FUZZ_PROTO) -max_total_time=$(FUZZ_SECONDS) -max_len=$$((256 + 16)) \
		-print_final_stats=1 $(FUZZ_DIR)/corpus
endif
