# kits.mk: the tests' helpers, compiled into archives (see LAB_KIT in the
# Makefile). Their sources hold working code for every step (the tests' own
# version of each one, to run a student's step between them), so a student
# handout ships them compiled only, as CS:APP ships its drivers; the
# framework's library too (FW_LIB).
#
#   make kits      build/kits/labN.a for every lab with helpers, and the
#                  receiver's test kit
#   make kits-ship build/kits/ship/MACHINE/: those and the framework's
#                  library, without debug information, under the names the
#                  makefiles link in a handout: what scripts/handout ships in
#                  tests/lib/ (MACHINE: KIT_ARCH, the CPU and C library of
#                  $(CC) -dumpmachine: x86_64-linux-gnu for gcc and clang)
#
# A lab's helpers are compiled once, against labs/labN/labN.h: the headers
# of labs/ and solutions/ are the same file (students do not edit them).

KIT_LABS := $(foreach n,$(LABS),$(if $(call LAB_KIT_SRCS,$(n)),$(n)))

define kit_rules
$(BUILD)/kits/lab$(1).a: $(patsubst tests/lab$(1)/%.c,$(BUILD)/kits/lab$(1)/%.o,$(call LAB_KIT_SRCS,$(1)))
	@mkdir -p $$(@D)
	rm -f $$@
	$$(AR) rcs $$@ $$^

$(BUILD)/kits/lab$(1)/%.o: tests/lab$(1)/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(CPPFLAGS) -Ilabs/lab$(1) -Ireceiver -Itests/rdma $$(CFLAGS) -c -o $$@ $$<
endef
$(foreach n,$(KIT_LABS),$(eval $(call kit_rules,$(n))))

.PHONY: kits kits-ship
kits: $(foreach n,$(KIT_LABS),$(call LAB_KIT,$(n))) $(RECEIVER_TESTKIT)

KIT_SHIP := $(BUILD)/kits/ship/$(KIT_ARCH)
kits-ship: kits $(FW_LIB)
	@rm -rf $(BUILD)/kits/ship
	@mkdir -p $(KIT_SHIP)
	cp $(foreach n,$(KIT_LABS),$(call LAB_KIT,$(n))) $(RECEIVER_TESTKIT) $(FW_LIB) $(KIT_SHIP)/
	strip --strip-debug $(KIT_SHIP)/*.a

# In a handout: a lab whose helpers were shipped for other machines only.
$(KIT_SHIPPED)/%.a:
	@echo "make: this handout has the framework and the tests' helpers compiled for $(notdir $(wildcard tests/lib/*)) only, not for $(KIT_ARCH): ask your instructor for a handout made on $(KIT_ARCH) (docs/instructor.md, \"The handout\")" >&2; exit 1
