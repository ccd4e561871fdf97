# bench.mk: make bench, the throughput benchmark (see docs/bench.md). The
# Lab 3 and Lab 4 reference senders, ib_write_bw and ib_write_lat, in one run
# where RDMA works (a native device, else one boot of the Soft-RoCE VM); then
# the table, build/bench/bench.csv and build/bench/bench.png.
#
#   make bench                         files of 1, 4, 16, 64 and 256 MiB
#   make bench BENCH_SIZES="1 4"       other sizes, in MiB

BENCH_SIZES ?= 1 4 16 64 256

.PHONY: bench
bench:
	@scripts/deps ensure
	@$(MAKE) --no-print-directory build
	@scripts/bench --mode $(RDMA_MODE) --sizes "$(BENCH_SIZES)"

# make test: the benchmark runs and draws its plot, on small files and one
# round (the figures come from make bench itself; the 90% target is not
# enforced in a test: docs/bench.md).
TEST_EXTRAS += --extra "bench: make bench prints the table and writes the plot" \
	"rm -f $(BUILD)/bench/bench.png && BENCH_REPEAT=1 scripts/bench --mode $(RDMA_MODE) --sizes '1 4' && test -s $(BUILD)/bench/bench.png"
