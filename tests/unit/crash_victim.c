/* crash_victim.c: a Check program whose tests crash on purpose, run by test_crash_report.c. */
#include <stdio.h>
#include <stdlib.h>

#include "../harness.h"

/* NULL, read at run time, so the compiler cannot see the crash coming. */
static int *volatile nowhere;

/*
 * Says on which line it dereferences NULL, without a newline (the harness
 * must not lose a line cut short by a crash), then does.
 */
__attribute__((noinline)) static int victim_read_through_null(void)
{
	printf("victim: dereferencing NULL at crash_victim.c:%d", __LINE__ + 1);
	return *nowhere;
}

__attribute__((noinline)) static void victim_abort(void)
{
	printf("victim: calling abort() at crash_victim.c:%d\n", __LINE__ + 1);
	abort();
}

START_TEST(reads_through_null)
{
	ck_assert_int_eq(victim_read_through_null(), 0);
}
END_TEST

START_TEST(aborts)
{
	victim_abort();
}
END_TEST

START_TEST(passes)
{
	ck_assert_int_eq(1, 1);
}
END_TEST

Suite *rl_test_suite(void)
{
	Suite *s = suite_create("crash_victim");
	TCase *tc = tcase_create("crashes");

	tcase_add_test(tc, reads_through_null);
	tcase_add_test(tc, aborts);
	tcase_add_test(tc, passes);
	suite_add_tcase(s, tc);
	return s;
}
