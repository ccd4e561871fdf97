#!/bin/bash
# setup.sh: Gradescope runs this once, as root, when it builds the
# autograder's image (see docs/instructor.md). It unpacks the kit (the
# student handout plus the grader), installs the Debian packages it needs,
# prepares the Soft-RoCE guests' kernels and builds the kit, so that each
# run_autograder only builds and grades one submission.
#
# Environment: AUTOGRADER_ROOT (default /autograder), RDMALAB_CACHE (default
# AUTOGRADER_ROOT/cache: the VM's kernel), RDMALAB_DEBIAN_SUITE (default
# bookworm: where the kernel comes from on Ubuntu).
set -euo pipefail

root=${AUTOGRADER_ROOT:-/autograder}
src=$root/source
kit=$src/rdmalab
export RDMALAB_CACHE=${RDMALAB_CACHE:-$root/cache}
prog=setup.sh

die() {
	echo "$prog: $*" >&2
	exit 1
}

# The kit, from the tarball (which keeps the scripts' modes, unlike a zip).
[ -f "$src/rdmalab-handout.tar.gz" ] || die "no $src/rdmalab-handout.tar.gz: make the bundle with make gradescope"
rm -rf "$kit"
tar -xzf "$src/rdmalab-handout.tar.gz" -C "$src" || die "cannot unpack the kit into $src"
cd "$kit"
[ -x grader/rdmalab-grade ] || echo "$prog: warning: this kit has no grader/rdmalab-grade: every submission will fail" >&2

scripts/deps install || die "could not install the kit's packages (scripts/deps list shows them)"

# The VM boots a Debian kernel package. Ubuntu has no linux-image-amd64:
# fetch it from Debian's archive through a private apt configuration that
# leaves the system's sources alone.
if [ -z "${RDMALAB_KERNEL_PACKAGE:-}" ] && ! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
	suite=${RDMALAB_DEBIAN_SUITE:-bookworm}
	apt=$RDMALAB_CACHE/debian-apt
	echo "$prog: no Debian kernel package here: taking it from Debian $suite" >&2
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -f "$keyring" ] || apt-get install -y -qq --no-install-recommends debian-archive-keyring >/dev/null ||
		die "cannot install debian-archive-keyring (needed to check Debian's kernel package)"
	mkdir -p "$apt/lists/partial" "$apt/archives/partial"
	echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" >"$apt/sources.list"
	cat >"$apt/apt.conf" <<CONF
Dir::Etc::sourcelist "$apt/sources.list";
Dir::Etc::sourceparts "-";
Dir::State::lists "$apt/lists";
Dir::Cache::archives "$apt/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CONF
	export APT_CONFIG=$apt/apt.conf
	apt-get update -qq || die "apt-get update from deb.debian.org failed"
fi
vm/rxe-run --prepare || die "could not prepare the VM (vm/rxe-run --prepare)"
# User-Mode Linux grades 3 times faster: build its kernel now (about 5 min)
# and probe it once; where it does not run, grading uses the QEMU VM.
echo "$prog: User-Mode Linux: $(vm/uml-probe 2>&1 | tail -n 1)"

# Pin the kernel just prepared, so grading makes no package lookups.
pkg=$(cd "$RDMALAB_CACHE/kernel" && ls -d linux-image-*/ | sed 's|/$||' | while read -r d; do
	[ -f "$d/.ready" ] && echo "$d"
done | sort -V | tail -n 1)
[ -n "$pkg" ] || die "no prepared kernel in $RDMALAB_CACHE/kernel"
echo "$pkg" >"$RDMALAB_CACHE/kernel-package"

make -s build || die "the kit does not build (make build in $kit)"
echo "$prog: ready: kit in $kit, kernel $pkg"
