# prepare.sh: a submission's tree, its files taken from the submission (here), each lab built as the
# student (where the tests run: build_one, from grader/test-batch).
# A part of grader/rdmalab-grade and grader/test-batch, which source it: it uses that script's
# settings and globals, and defines functions (and, where it says so, state).

# safe_name SUBMISSION: the student's name a submission gets (its file or
# folder name, less .tar.gz, .tgz or .tar, in characters safe for a file
# name, never starting with a dot). grader/kubernetes/ names them the same.
safe_name() { basename "$1" | sed -E 's/\.(tar\.gz|tgz|tar)$//; s/[^A-Za-z0-9._-]/_/g; s/^\.+/_/'; }

test_programs() { # LAB DIR: the lab's test program, as built in DIR
	echo "$2/steps"
}

manifest_files() { # LAB: the files a student edits in lab LAB (labs/labN/FILES, from make stubs)
	sed '/^#/d' "$kit/labs/lab$1/FILES"
}

# find_labs DIR: the folder holding the submission's labN/ folders.
find_labs() {
	local d=$1 sub n
	for _ in 1 2 3; do
		if [ -d "$d/labs" ] && [ ! -L "$d/labs" ]; then
			echo "$d/labs"
			return 0
		fi
		if compgen -G "$d/lab[0-9]*/" >/dev/null; then
			echo "$d"
			return 0
		fi
		# A tarball usually holds one top folder: look inside it.
		n=0
		for sub in "$d"/*/; do
			[ -d "$sub" ] && [ ! -L "${sub%/}" ] && n=$((n + 1))
		done
		[ "$n" = 1 ] || return 1
		d=$(cd "$d"/*/ && pwd)
	done
	return 1
}

# note_build W LAB MESSAGE: record why lab LAB of the submission in W is not built.
note_build() {
	printf '%s\n' "$3" >"$1/build-lab$2.failed"
}

# refuse WORK/NAME LAB: the lab breaks its rules (scripts/lab-rules): it
# scores 0, and the class summary flags it (scripts/results class). When the
# rules could not be checked (no line says which is broken), the submission
# is ungradable instead.
refuse() {
	local broken
	broken=$(grep "^lab$2/" "$1/build-lab$2.log" | head -n 20)
	if [ -z "$broken" ]; then
		echo "could not check Lab $2's rules: $(grep -v '^make' "$1/build-lab$2.log" | tail -n 1)" >"$1/infra.txt"
		return
	fi
	note_build "$1" "$2" "refused: Lab $2 breaks the rules a lab's files must keep, so it scores 0 (docs/rules.md):
$broken"
}

# unpack TARBALL DIR UID: TARBALL's files into DIR, unpacked as UID with its
# limits: a device node, a file past the size limit or a name with ".."
# stops it, and nothing lands outside DIR. Root opens TARBALL, which need
# not be readable by UID.
unpack() {
	local z=
	[ "$(head -c 2 "$1" | od -An -tx1 | tr -d ' \n')" = 1f8b ] && z=-z
	give_student "$3" "$2"
	as_student "$3" 120 tar $z -xf - -C "$2" --no-same-owner --no-same-permissions <"$1"
	local rc=$?
	end_student "$3"
	return $rc
}

# prepare_one NAME SOURCE UID: a clean tree of the kit in WORK/NAME/tree with
# the submission's manifest files in labs/, and the kit's own objects of
# each lab in build/labs, ready to build (build_one). It runs none of the
# submission's code: a tarball is unpacked by tar, as UID.
prepare_one() {
	local name=$1 src=$2 uid=$3 w=$work/$1 labroot lab f s t size
	rm -rf "$w"
	mkdir -p "$w/src" "$w/results" "$w/tree/build"
	own_folder "$uid" "$w"
	if [ -d "$src" ]; then
		labroot=$(find_labs "$src")
	elif tar -tf "$src" >/dev/null 2>&1; then
		if ! unpack "$src" "$w/src" "$uid" 2>"$w/unpack.log"; then
			labroot=
			echo "could not unpack $(basename "$src"): $(grep -v -e 'Removing leading' \
				-e 'Exiting with failure' "$w/unpack.log" | head -n 1) (make it with: tar -czf NAME.tgz labs)" >"$w/intake.txt"
		else
			labroot=$(find_labs "$w/src")
		fi
	else
		labroot=
		echo "$(basename "$src") is neither a folder nor a tarball (.tar, .tar.gz, .tgz)" >"$w/intake.txt"
	fi
	if [ -z "$labroot" ] && [ ! -s "$w/intake.txt" ]; then
		echo "no labs/ folder and no labN/ folders in $(basename "$src"): nothing of the student's to grade" >"$w/intake.txt"
	fi

	# The kit's own files, read-only for the student's code: only labs/ is a copy.
	for f in Makefile mk framework tests scripts vm receiver; do
		ln -s "$kit/$f" "$w/tree/$f"
	done
	cp -rp "$kit/labs" "$w/tree/labs"
	for f in bin framework lib receiver tests kits rubric; do
		[ -d "$kit/build/$f" ] || continue # kits: not in a handout, which ships them built
		cp -al "$kit/build/$f" "$w/tree/build/" 2>/dev/null || cp -a "$kit/build/$f" "$w/tree/build/"
	done
	rm -rf "$w/tree/build/tests/unit" "$w/tree/build/tests/rdma"/test_*
	# Stamps the kit's make fragments keep in build/ (mk/lab4.mk's mode).
	cp -p "$kit"/build/*.mode "$w/tree/build/" 2>/dev/null

	# Only the files the manifest lists, only regular files, none too big.
	: >"$w/taken.txt"
	for lab in $labs; do
		for f in $(manifest_files "$lab"); do
			s=$labroot/lab$lab/$f
			if [ -z "$labroot" ] || [ ! -e "$s" ]; then
				echo "lab$lab/$f: not in the submission, the stub is used" >>"$w/taken.txt"
			elif [ -L "$s" ] || [ ! -f "$s" ]; then
				echo "lab$lab/$f: not a regular file, the stub is used" >>"$w/taken.txt"
			elif size=$(stat -c %s "$s") && [ "$size" -gt 1048576 ]; then
				echo "lab$lab/$f: $size bytes (over 1 MiB), the stub is used" >>"$w/taken.txt"
			else
				cp "$s" "$w/tree/labs/lab$lab/$f"
				echo "lab$lab/$f: taken" >>"$w/taken.txt"
			fi
		done
	done
	# The student's builds write only in build/labs; the kit's objects
	# (hard links, maybe) stay root's and read-only. Objects of the kit's
	# own lab files and of the step tests are the kit's: only the student's
	# files are compiled.
	mkdir -p "$w/tree/build/labs"
	for lab in $labs; do
		mkdir -p "$w/tree/build/labs/lab$lab/tests"
		for f in "$kit/build/labs/lab$lab"/*.[od] "$kit/build/labs/lab$lab/tests"/*.[od]; do
			[ -f "$f" ] || continue
			case " $(manifest_files "$lab" | tr '\n' ' ') " in
			*" $(basename "${f%.?}").c "*) [ "${f%/tests/*}" = "$f" ] && continue ;;
			esac
			t=${f#"$kit/"}
			ln "$f" "$w/tree/$t" 2>/dev/null || cp -p "$f" "$w/tree/$t"
		done
	done
	find "$w/tree/labs" "$w/tree/build/labs" -type d -exec chmod 755 {} +
	clean_student "$uid"
}

# build_one W UID TREE: the submission in W built in TREE (W/tree, or a
# copy of it local to the guest, where owners can be changed), as UID, in
# the sandbox: each lab on its own (a compile error costs that lab only),
# then its rules checked. Writes W's build logs, its notes of labs not
# built, and the seconds it took.
build_one() {
	local w=$1 uid=$2 tree=$3 lab targets msg started
	started=$(date +%s)
	isolated && find "$tree/build/labs" -type d -exec chown "$uid:$uid" {} +
	for lab in $labs; do
		targets="build/labs/lab$lab/lab$lab $(test_programs "$lab" "build/labs/lab$lab/tests")"
		# shellcheck disable=SC2086
		if ! (cd "$tree" && as_student "$uid" 600 \
			make --no-print-directory LAB_TREES=labs LABS="$all_labs" $targets) \
			>"$w/build-lab$lab.log" 2>&1; then
			msg=$(grep -m 20 -E ': (fatal )?error:|undefined reference|\*\*\* ' "$w/build-lab$lab.log")
			note_build "$w" "$lab" "${msg:-the build failed without a compiler message (timed out?): see logs/build-lab$lab.log}"
		elif [ "$rules" = 1 ] && ! (cd "$tree" && as_student "$uid" 120 \
			make --no-print-directory -s LAB_TREES=labs LABS="$all_labs" rules LAB="$lab") \
			>>"$w/build-lab$lab.log" 2>&1; then
			refuse "$w" "$lab"
		fi
		end_student "$uid"
	done
	# Its builds are done: not even its own uid may write its tree any
	# more (its tests could change the programs of the labs after). They run
	# from a copy (run_lab).
	isolated && chown -R 0:0 "$tree/build/labs"
	echo $(($(date +%s) - started)) >"$w/build-seconds"
}
