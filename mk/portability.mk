# portability.mk: make test tries the kit past this machine's Debian and
# compiler (docs/environment.md, "The portability matrix"):
#   - Debian 13 (trixie: gcc 14, rdma-core 56, OpenSSL 3.5, Check 0.15) in
#     a fresh chroot, from a clean clone of the committed kit: make deps,
#     make, the unit tests, and Lab 3's solution in User-Mode Linux
#     (tests/portability/test_debian.py; root only, as CI runs it);
#   - this machine's clang: make CC=clang BUILD=build-clang and its unit
#     tests.
# Only in the kit: a handout has no git HEAD to clone, and its code is the
# kit's.
#
#   make portability-clang   the clang build and its unit tests, alone

ifeq ($(HAVE_SOLUTIONS),yes)
ifeq ($(TEST_HEAVY),1)
TEST_EXTRAS += --beside "portability: Debian 13 in a chroot: make deps, make, unit tests, Lab 3's solution in UML" \
	"cases tests.portability.test_debian"
else
TEST_EXTRAS += --skip "portability: Debian 13 in a chroot: make deps, make, unit tests, Lab 3's solution in UML" \
	"TEST_HEAVY=1 runs it (or tests/portability/test-debian): 1 min with its chroot cached, 16 min without, beside the rest"
endif
TEST_EXTRAS += --extra "portability: make CC=clang builds without a warning; its unit tests pass" \
	"$(MAKE) --no-print-directory -s portability-clang"
endif

# The objects' .comment names the compiler that made them: clang's, or
# CC was not used.
.PHONY: portability-clang
portability-clang:
	@$(MAKE) --no-print-directory CC=clang BUILD=build-clang
	@$(MAKE) --no-print-directory CC=clang BUILD=build-clang unit-test
	@readelf -p .comment build-clang/framework/error.o | grep -q 'clang version' || \
		{ echo "portability-clang: build-clang/framework/error.o was not compiled by clang" >&2; exit 1; }
