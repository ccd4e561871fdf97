# harness.mk: the victims, test programs whose tests fail on purpose.
# tests/unit/test_crash_report runs it and checks the harness's crash report.
CRASH_VICTIM := $(BUILD)/tests/unit/crash_victim

$(CRASH_VICTIM): $(BUILD)/tests/unit/crash_victim.o $(HARNESS_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit/test_crash_report: | $(CRASH_VICTIM)
build: $(CRASH_VICTIM)

# The graded victim: a lab's test program in miniature (tests/graded.c's
# main), run by tests/grader/test_graded.py.
GRADED_VICTIM := $(BUILD)/tests/unit/graded_victim

# Linked twice, as a lab's: first plain, to write its hide script
# (tests/hide.c), then with it.
$(GRADED_VICTIM)-plain: $(BUILD)/tests/unit/graded_victim.o $(GRADED_OBJ) $(FW_LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(GRADED_VICTIM).hide.ld: $(GRADED_VICTIM)-plain
	@$< --hide-script >$@.tmp && mv $@.tmp $@ || { rm -f $@.tmp; exit 1; }

$(GRADED_VICTIM): $(BUILD)/tests/unit/graded_victim.o $(GRADED_OBJ) $(FW_LIB) $(GRADED_VICTIM).hide.ld
	$(CC) $(CFLAGS) -Wl,-T,$(GRADED_VICTIM).hide.ld -o $@ $(filter-out %.ld,$^) $(LDLIBS)

build: $(GRADED_VICTIM)
