# docker.mk: the container images and their test (see docs/docker.md).
#
#   make docker-build   build the images with your Docker engine (network:
#                       debian:bookworm and Debian packages; DOCKER_BASE
#                       picks another bookworm base image)
#   make docker-test    no engine needed: dockerd runs in the Soft-RoCE VM;
#                       builds the images from an offline base image and runs
#                       the self-study and grading flows there (as root)

DOCKER       ?= docker
DOCKER_BASE  ?= debian:bookworm
DOCKER_IMAGES := lab receiver grader vm grader-vm

.PHONY: docker-build docker-test

docker-build:
	@for t in $(DOCKER_IMAGES); do \
		echo "docker-build: rdmalab-$$t"; \
		$(DOCKER) build --build-arg BASE=$(DOCKER_BASE) \
			-f docker/Dockerfile --target $$t -t rdmalab-$$t . || exit 1; \
	done

docker-test:
	@scripts/deps ensure
	@docker/test


# make test: the Docker test (root only: debootstrap makes the offline base).
# A guest kernel lockup (seen once in a few runs) costs a second boot on one
# CPU, not a failure: docker/test says so. The longest test, in a one-CPU
# guest: it runs beside the rest of make test (tests/run.py --beside).
ifeq ($(TEST_HEAVY),1)
TEST_EXTRAS += --beside "docker: a key from the receiver container, the grader container's scores" \
	"$(MAKE) --no-print-directory -s docker-test-if-root"
else
TEST_EXTRAS += --skip "docker: a key from the receiver container, the grader container's scores" \
	"TEST_HEAVY=1 runs it (or make docker-test): 20 min or more beside the rest"
endif
.PHONY: docker-test-if-root
docker-test-if-root:
	@if [ $$(id -u) = 0 ]; then docker/test; \
	else echo "docker-test: skipped: it needs root (debootstrap), as CI runs it"; fi
