# receivers.sh: the reference receivers a lab's tests talk to (.receiver in
# tests/harness.h; Lab 3's, one per test), run by the grader.
# A part of grader/rdmalab-grade and grader/test-batch, which source it: thin
# calls of build/bin/rdmalab-receivers (tests/rdma/receivers.c), which
# starts them with the code make check's fixture starts its own with, and
# keeps its state in the folder it is given. Its contract is in
# grader/README.md ("The reference receivers").

# receivers_start RECEIVERS SLOT DIR ADDR: a receiver on ADDR for each line
# of RECEIVERS ("TEST<tab>OPTIONS", make grader-kit's), as root, each with a
# random secret only it holds; DIR/table for the tests (RDMALAB_RECEIVERS)
# and DIR/pids for receivers_stop. Returns 1, with the reason in DIR/infra,
# when one does not start.
receivers_start() {
	"$kit/build/bin/rdmalab-receivers" start "$@"
}

# receivers_stop DIR: SIGTERM to each receiver of DIR/pids, then SIGKILL
# to what is left after 5 s.
receivers_stop() {
	"$kit/build/bin/rdmalab-receivers" stop "$1"
}

# receivers_logs DIR RECORDS OUT: the log of the receiver of each test that
# did not pass in RECORDS (the test program's), as OUT/TEST.receiver.log.
receivers_logs() {
	"$kit/build/bin/rdmalab-receivers" logs "$@"
}
