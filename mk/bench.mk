# bench.mk: make bench, the throughput benchmark (see docs/bench.md). The
# Lab 3 sender, the Lab 4 sender under each of its waits (busy, event,
# adaptive), ib_write_bw and ib_write_lat, in one run where RDMA works (a
# native device, else one boot of User-Mode Linux or of the QEMU VM); then
# the table, build/bench/bench.csv and build/bench/bench.png, naming the
# backend and the load.
#
#   make bench                         files of 1, 4, 16, 64 and 256 MiB
#   make bench BENCH_SIZES="64 256"    other sizes, in MiB
#   make bench BENCH_LOAD=2            with 2 CPU-bound host processes running
#   make bench TRACE=1                 each client on a device of its own, its
#                                      packets across a link; the first round of
#                                      each sender captured (build/bench/trace/),
#                                      packets per MiB and retransmissions shown

BENCH_SIZES ?= 1 4 16 64 256
BENCH_LOAD ?= 0
BENCH_TRACE := $(if $(filter 1 yes,$(TRACE)),1,0)

.PHONY: bench
bench:
	@scripts/deps ensure build run vm uml bench $(if $(filter 1,$(BENCH_TRACE)),trace)
	@$(MAKE) --no-print-directory build
	@BENCH_LOAD=$(BENCH_LOAD) BENCH_TRACE=$(BENCH_TRACE) scripts/bench --mode $(RDMA_MODE) --sizes "$(BENCH_SIZES)"

# make test: the benchmark runs and draws its plot, on small files and one
# round (the figures come from make bench itself; the 90% target is not
# enforced in a test: docs/bench.md).
TEST_EXTRAS += --extra "bench: make bench prints the table and writes the plot" \
	"$(MAKE) --no-print-directory -s bench-smoke"
.PHONY: bench-smoke
bench-smoke:
	@rm -f $(BUILD)/bench/bench.png
	@BENCH_REPEAT=1 scripts/bench --mode $(RDMA_MODE) --sizes '1 4'
	@test -s $(BUILD)/bench/bench.png
