/*
 * check.c: what the Lab 2 checks share, in the test program's parent: the
 * return values the act said, its times, and the kernel's view of what it
 * holds (tests/res.c).
 */
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

bool fx_ok(struct rl_case *c, const char *name, int step)
{
	long long ret = rl_said_int(c, name);

	return rl_expect(c, ret == 0,
			 "expected %s to return 0, got %lld (%s) (step %d: see "
			 "docs/lab2.md#step-%d)",
			 name, ret, strerror((int)-ret), step, step);
}

long fx_took_ms(struct rl_case *c)
{
	return fx_now_ms() - (long)rl_said_int(c, "start_ms");
}

int fx_act_res(struct rl_case *c, const char *kind, struct rl_res *out, int max)
{
	int pid = rl_act_pid(c), n;

	/* Only while the act holds: pid 0 would ask for every process's. */
	if (!rl_expect(c, pid > 0, "the test's act was not held (a fault in the test)"))
		return -1;
	n = rl_rdma_res(kind, pid, out, max);
	rl_expect(c, n >= 0, "expected `rdma res show %s` to answer, it did not", kind);
	return n;
}

bool fx_expect_act_qp(struct rl_case *c, const char *state, uint32_t peer_qpn, const char *why)
{
	struct rl_res qp[4];
	const char *got, *rqpn;
	int n = fx_act_res(c, "qp", qp, 4);

	if (n < 0)
		return false;
	if (!rl_expect(c, n == 1,
		       "expected the kernel to list one QP of the test's process, it lists %d", n))
		return false;
	got = rl_res_get(&qp[0], "state");
	rqpn = rl_res_get(&qp[0], "rqpn");
	if (!rl_expect(c, got && strcmp(got, state) == 0,
		       "expected the test's QP in state %s%s%s%s, the kernel says %s", state,
		       why ? " (" : "", why ? why : "", why ? ")" : "", got ? got : "nothing"))
		return false;
	return rl_expect(c, !peer_qpn || (rqpn && strtoul(rqpn, NULL, 10) == peer_qpn),
			 "expected the test's QP connected to the reference peer's QP %u, the "
			 "kernel says to %s",
			 peer_qpn, rqpn ? rqpn : "none");
}
