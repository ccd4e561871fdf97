# harness.mk: the crash victim, a test program whose tests crash on purpose.
# tests/unit/test_crash_report runs it and checks the harness's crash report.
CRASH_VICTIM := $(BUILD)/tests/unit/crash_victim

$(CRASH_VICTIM): $(BUILD)/tests/unit/crash_victim.o $(HARNESS_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit/test_crash_report: | $(CRASH_VICTIM)
build: $(CRASH_VICTIM)
