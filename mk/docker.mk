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
DOCKER_IMAGES := lab receiver grader vm

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


# Not in make test yet: in the final CI run of 2026-11-22 the guest hung in a
# soft lockup (containerd-shim and the image build, both vCPUs stuck for
# 900+ s) while building the images; see the issue's note.
