# rxe-image.sh: the QEMU VM's kernel and initramfs: a Debian kernel package,
# extracted once into the cache, and an initramfs made for it. A part of
# vm/rxe-run, which sources it: it uses that script's settings (cache, say,
# die) and defines functions only.

kernel_package() {
	if [ -n "${RDMALAB_KERNEL_DEB:-}" ]; then
		dpkg-deb -f "$RDMALAB_KERNEL_DEB" Package || die "RDMALAB_KERNEL_DEB=$RDMALAB_KERNEL_DEB is not a Debian package"
		return
	fi
	if [ -n "${RDMALAB_KERNEL_PACKAGE:-}" ]; then
		echo "$RDMALAB_KERNEL_PACKAGE"
		return
	fi
	local pkg
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	fi
	if [ -z "$pkg" ]; then
		# An earlier download will do when the package lists are missing.
		pkg=$(ls -d "$cache"/kernel/linux-image-*/ 2>/dev/null | tail -n 1 | xargs -r basename)
	fi
	[ -n "$pkg" ] || die "cannot find Debian's kernel package: run 'apt-get update' (as root), then retry"
	echo "$pkg"
}

# Everything below the lock is done once per kernel and reused.
prepare_kernel() {
	local pkg=$1 dir=$cache/kernel/$1
	if [ -f "$dir/.ready" ]; then
		return
	fi
	echo "$prog: preparing $pkg in $dir (once)" >&2
	local tmp
	tmp=$(mktemp -d "$cache/kernel/.tmp.XXXXXX")
	if [ -n "${RDMALAB_KERNEL_DEB:-}" ]; then
		cp "$RDMALAB_KERNEL_DEB" "$tmp/" || die "cannot copy $RDMALAB_KERNEL_DEB"
	else
		(cd "$tmp" && apt-get download "$pkg" >/dev/null 2>"$tmp/apt.err") ||
			die "apt-get download $pkg failed: $(tail -n 1 "$tmp/apt.err")"
	fi
	dpkg-deb -x "$tmp"/*.deb "$tmp/root" || die "dpkg-deb -x failed for $pkg"
	local ver mods=lib/modules
	# Debian 13's kernel packages ship their modules in usr/lib/modules.
	[ -d "$tmp/root/$mods" ] || mods=usr/lib/modules
	[ -d "$tmp/root/$mods" ] || die "$pkg has no lib/modules nor usr/lib/modules: give another with RDMALAB_KERNEL_DEB"
	ver=$(ls "$tmp/root/$mods")
	[ "$mods" = lib/modules ] || { mkdir -p "$tmp/root/lib" && mv "$tmp/root/$mods" "$tmp/root/lib/modules"; }
	depmod -b "$tmp/root" "$ver" || die "depmod failed for $ver"
	mkdir -p "$dir/lib"
	mv "$tmp/root/boot/vmlinuz-$ver" "$dir/vmlinuz"
	mv "$tmp/root/lib/modules" "$dir/lib/modules"
	echo "$ver" >"$dir/version"
	rm -rf "$tmp"
	touch "$dir/.ready"
}

# The initramfs: static busybox, the stage 1 init, and the modules that reach
# the root filesystem (virtio, 9p, overlay), in load order.
prepare_initramfs() {
	local dir=$1 ver out tmp key
	ver=$(cat "$dir/version")
	key=$( (cat "$here/initramfs-init"; readlink -f "$(command -v busybox)") | md5sum | cut -c1-12)
	out=$dir/initramfs-$key.cpio.gz
	if [ -f "$out" ]; then
		echo "$out"
		return
	fi
	tmp=$(mktemp -d "$dir/.initramfs.XXXXXX")
	mkdir -p "$tmp"/{bin,dev,proc,sys,modules}
	cp "$(command -v busybox)" "$tmp/bin/busybox"
	cp "$here/initramfs-init" "$tmp/init"
	chmod 755 "$tmp/init"
	local m f
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -d "$dir" -S "$ver" --show-depends "$m" 2>/dev/null |
			awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++' | while read -r f; do
		cp "$f" "$tmp/modules/"
		basename "$f" >>"$tmp/modules/order"
	done
	[ -s "$tmp/modules/order" ] || die "could not list the modules for the initramfs"
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1 >"$out.tmp") || die "cpio failed"
	mv "$out.tmp" "$out"
	rm -rf "$tmp"
	echo "$out"
}
