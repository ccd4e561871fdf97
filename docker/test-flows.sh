# test-flows.sh: the checks docker/test-in-vm runs once its images are
# built, one function a step, each printing what went wrong and returning
# non-zero. Sourced by test-in-vm, whose say(), $work, $RDMALAB_ADDR and
# rdma_args (docker/compose.yaml's x-rdma settings) they use.

rxe_setup() {
	local out
	# Without a device: --check must fail and say what to do.
	rdma link delete rxe0 || return 1
	if out=$(docker run --rm --network host --entrypoint rxe-setup rdmalab-receiver --check 2>&1); then
		echo "  rxe-setup --check passed with no RDMA device: $out"
		return 1
	fi
	grep -q 'fix: start the rxe-setup service' <<<"$out" || { echo "  unexpected --check output: $out"; return 1; }
	# The compose service rxe-setup: privileged, host network, /lib/modules.
	out=$(docker run --rm --privileged --network host -v /lib/modules:/lib/modules:ro \
		--entrypoint rxe-setup rdmalab-receiver --netdev v0 2>&1) || { echo "  $out"; return 1; }
	echo "$out" | sed 's/^/  | /'
	grep -q 'created rxe0 on v0' <<<"$out" && grep -q "address $RDMALAB_ADDR" <<<"$out"
}

self_study() {
	local port=7471 id=docker-student-$RANDOM key out
	mkdir -p "$work/recv"
	(umask 077 && head -c 32 /dev/urandom >"$work/recv/secret")
	docker run -d --name receiver "${rdma_args[@]}" -v "$work/recv:/var/lib/rdmalab" rdmalab-receiver \
		rdmalab-receiver --secret-file secret --results results.jsonl -p "$port" >/dev/null || return 1
	for _ in $(seq 100); do
		docker logs receiver 2>&1 | grep -q listening && break
		sleep 0.2
	done
	docker logs receiver 2>&1 | grep -q listening || { docker logs receiver 2>&1 | tail -n 5; return 1; }
	say "  receiver container: $(docker logs receiver 2>&1 | grep listening)"
	out=$(docker run --rm "${rdma_args[@]}" rdmalab-lab sh -c \
		"head -c 4M /dev/urandom >/tmp/file && build/solutions/lab3/lab3 --server \$RDMALAB_ADDR:$port --file /tmp/file --id $id" 2>"$work/sender.err")
	if [ $? != 0 ]; then
		echo "  the sender container failed:"
		sed 's/^/  | /' "$work/sender.err"
		docker logs receiver 2>&1 | tail -n 5 | sed 's/^/  receiver| /'
		return 1
	fi
	key=$(printf '%s\n' "$out" | tail -n 1)
	key=${key##* }
	say "  sender container for '$id' got key $key"
	docker stop -t 10 receiver >/dev/null
	say "  results log: $(tail -n 1 "$work/recv/results.jsonl")"
	docker run --rm -v "$work/recv:/var/lib/rdmalab" --entrypoint rdmalab-receiver rdmalab-receiver \
		--secret-file secret --verify "$id" "$key" || return 1
	# The check can fail: another ID's key does not verify.
	if docker run --rm -v "$work/recv:/var/lib/rdmalab" --entrypoint rdmalab-receiver rdmalab-receiver \
		--secret-file secret --verify "$id-other" "$key" >/dev/null 2>&1; then
		echo "  --verify accepted the key for another ID"
		return 1
	fi
}

grading() {
	if [ ! -x grader/rdmalab-grade ] || [ ! -x tests/grader/run-samples ]; then
		echo "  grader not built: grader/rdmalab-grade missing (or tests/grader/run-samples)"
		return 1
	fi
	# As docker/compose.yaml's grader service: its sandbox needs mount namespaces.
	docker run --rm "${rdma_args[@]}" --cap-add SYS_ADMIN --security-opt apparmor=unconfined \
		rdmalab-grader tests/grader/run-samples --quick --mode native -o /tmp/grade-results
}

vm_fallback() {
	local out
	# Prepared at build time: without any network, --prepare finds it ready.
	out=$(docker run --rm --network none rdmalab-vm vm/rxe-run --prepare 2>&1) || { echo "  $out"; return 1; }
	echo "  $out"
	grep -q 'ready in /var/cache/rdmalab/kernel/' <<<"$out" && ! grep -q preparing <<<"$out" || return 1
	# And the UML kernel (x86-64), which auto mode boots where the probe says yes.
	out=$(docker run --rm --network none rdmalab-vm vm/uml-kernel --cached 2>&1) ||
		{ echo "  no UML kernel in the image: $out"; return 1; }
	echo "  UML kernel: $out"
	[ "$out" = /usr/local/lib/rdmalab/uml/linux ] || return 1
	uml_in_a_container
}

# uml_in_a_container: auto mode in the vm image boots User-Mode Linux (here
# nested in this guest) and finds rxe0; when the probe says no, its answer
# is printed, and the image falls back to the QEMU VM.
uml_in_a_container() {
	local answer out
	answer=$(docker run --rm --network none rdmalab-vm vm/uml-probe 2>/dev/null)
	if [ "$answer" != yes ]; then
		say "  User-Mode Linux in the container: ${answer:-no answer} (the image uses the QEMU VM there)"
		return 0
	fi
	out=$(docker run --rm --network none rdmalab-vm vm/run-rdma -- sh -c \
		'ibv_devices | grep rxe0 && echo RDMALAB_ENV=$RDMALAB_ENV RDMALAB_ADDR=$RDMALAB_ADDR' 2>&1)
	echo "$out" | tail -n 3 | sed 's/^/  | /'
	grep -q 'RDMALAB_ENV=uml' <<<"$out"
}

# Nested: the VM inside a container inside this VM. Only on request
# (RDMALAB_DOCKER_NESTED=1): software emulation in emulation takes minutes.
nested_vm() {
	docker run --rm rdmalab-vm vm/rxe-run --timeout 1500 -- sh -c 'ibv_devices; echo nested RDMALAB_ADDR=$RDMALAB_ADDR'
}
