# trace.mk: make trace, a lab's RoCEv2 packets captured, decoded and
# explained (docs/trace.md).
#
#   make trace LAB=N [SOL=1]       lab N's programs (labs/, or solutions/ with
#                                  SOL=1), a server and a client: the pcap in
#                                  build/trace/labN-TIME.pcap, the timeline and
#                                  the summary on the terminal
#   make trace LAB=N RUN="CMD"     CMD (a shell command line) in their place
#
# (CHECK_TREE: labs or solutions, as make check's; RECEIVER_BIN: Lab 3's
# server, mk/receiver.mk.)

.PHONY: trace
trace:
	@if [ -z "$(LAB)" ] || [ -z "$(filter $(LAB),$(LABS))" ]; then \
		echo "usage: make trace LAB=N [SOL=1] [RUN=\"COMMAND\"]   (labs: $(LABS))" >&2; exit 2; fi
	@if [ ! -d $(CHECK_TREE)/lab$(LAB) ]; then \
		echo "make trace: no $(CHECK_TREE)/lab$(LAB) here$(if $(HAVE_SOLUTIONS),, (SOL=1 needs solutions/, which a student handout does not have))" >&2; exit 2; fi
	@scripts/deps ensure build run vm uml trace
	@$(MAKE) --no-print-directory $($(CHECK_TREE)_lab$(LAB)_PROG) $(if $(filter 3,$(LAB)),$(RECEIVER_BIN))
	@scripts/trace --mode $(RDMA_MODE) --lab $(LAB) --tree $(CHECK_TREE) $(if $(RUN),--run "$$RUN")

# make test: make trace LAB=2 SOL=1 end to end, then Lab 4 and a planted
# wrong rkey in one more guest boot, each timeline against tshark's own
# renderings of its capture (tests/make/test_trace.py). Solutions needed: not
# in a handout.
ifeq ($(HAVE_SOLUTIONS),yes)
TEST_EXTRAS += --extra "make trace: Lab 2's WRITE rkey and READ, Lab 4's WRITE with Immediate, a wrong rkey's NAK, Lab 5's SIDR and group datagrams, each as tshark shows it" \
	"cases tests.make.test_trace"
endif
