#!/bin/bash
# setup.sh: Gradescope runs this once, as root, when it builds the
# autograder's image (see docs/instructor.md). It unpacks the kit (the
# student handout plus the grader), installs the Debian packages it needs,
# makes the User-Mode Linux guest's own Debian root (vm/guest-root: the same
# rdma-core whatever the image), prepares the Soft-RoCE guests' kernels and
# builds the kit, so that each run_autograder only builds and grades one
# submission.
#
# Environment: AUTOGRADER_ROOT (default /autograder), RDMALAB_CACHE (default
# AUTOGRADER_ROOT/cache: the kernels and the guest root), RDMALAB_GUEST_SUITE
# (default trixie: the guest root's Debian release), RDMALAB_DEBIAN_SUITE
# (default trixie: where the QEMU VM's kernel comes from on Ubuntu).
case ${1-} in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; ?*) echo "usage: setup.sh (no arguments; -h for help)" >&2; exit 2 ;; esac
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

# Only what grading needs: no Docker, fuzzing or Chromium on the image.
scripts/deps install build run vm uml gradescope ||
	die "could not install the kit's packages (scripts/deps list build run vm uml gradescope shows them)"
# Debian's keys, to check what comes from Debian's archive (Ubuntu lacks them).
. scripts/lib.sh
rl_debian_keyring >/dev/null 2>&1 || apt-get install -y -qq --no-install-recommends debian-archive-keyring >/dev/null ||
	die "cannot install debian-archive-keyring (needed to check Debian's packages)"

# The User-Mode Linux guest runs on a Debian root of its own, made once
# here; run_autograder finds it with vm/guest-root --cached.
guest_root=$(vm/guest-root) || die "could not make the guest's Debian root (vm/guest-root)"
echo "$prog: the guest's root: $guest_root"

# Debian's archive, through a private apt configuration that leaves the
# system's sources alone (scripts/lib.sh), for what an Ubuntu image's lists
# lack: the QEMU VM's kernel package. User-Mode Linux's kernel source
# (vm/uml-source) vm/uml-kernel fetches the same way itself.
debian_apt= suite=${RDMALAB_DEBIAN_SUITE:-trixie}
use_debian_apt() {
	[ -z "$debian_apt" ] || return 0
	debian_apt=$(rl_debian_apt "$RDMALAB_CACHE/debian-apt" "$suite") || die "cannot reach Debian $suite's archive"
}

# The VM boots a Debian kernel package: Ubuntu has no linux-image-amd64.
if [ -z "${RDMALAB_KERNEL_PACKAGE:-}" ] && ! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
	use_debian_apt
	echo "$prog: no Debian kernel package here: taking it from Debian $suite" >&2
	export APT_CONFIG=$debian_apt
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
echo "$prog: ready: kit in $kit, kernel $pkg, guest root $guest_root"
