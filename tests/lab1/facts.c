/*
 * facts.c: what a Lab 1 check trusts instead of the act: the kernel's RDMA
 * resource tracking (what the act's process holds, while it holds) and the
 * device itself, asked from the parent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fixture.h"

void fx_random(void *p, size_t n)
{
	ck_assert_msg(getrandom(p, n, 0) == (ssize_t)n, "expected %zu random bytes, got %s", n,
		      strerror(errno));
}

uint32_t fx_random_between(uint32_t lo, uint32_t hi)
{
	uint32_t r;

	fx_random(&r, sizeof(r));
	return lo + r % (hi - lo + 1);
}

struct fx_device fx_device(void)
{
	struct ibv_context *ctx = rl_open_device(rl_test_device());
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	struct fx_device d;

	ck_assert_msg(ctx, "expected to open %s in the check, could not", rl_test_device());
	ck_assert_int_eq(ibv_query_device(ctx, &dev), 0);
	ck_assert_int_eq(ibv_query_port(ctx, rl_test_ib_port(), &port), 0);
	ck_assert_int_eq(ibv_query_gid(ctx, rl_test_ib_port(), rl_test_gid_index(), &d.gid), 0);
	d.max_cqe = dev.max_cqe;
	d.active_mtu = port.active_mtu;
	d.lid = port.lid;
	ibv_close_device(ctx);
	return d;
}

int fx_res(struct rl_case *c, const char *kind, struct rl_res *out, int max)
{
	int pid = rl_act_pid(c), n;

	if (!rl_expect(c, pid > 0,
		       "the act ended before the check could ask the kernel (a fault in the "
		       "test: tell the kit's authors)"))
		return -1;
	n = rl_rdma_res(kind, pid, out, max);
	rl_expect(c, n >= 0, "expected 'rdma res show %s' to work, it failed", kind);
	return n;
}

long long fx_res_num(const struct rl_res *r, const char *key)
{
	const char *v = rl_res_get(r, key);

	return v && *v ? strtoll(v, NULL, 10) : -1;
}

const char *fx_res_str(const struct rl_res *r, const char *key)
{
	const char *v = r ? rl_res_get(r, key) : NULL;

	return v ? v : "(none)";
}

const struct rl_res *fx_res_with(const struct rl_res *r, int n, const char *key,
				 unsigned long long value)
{
	int i;

	for (i = 0; i < n; i++)
		if (fx_res_num(&r[i], key) == (long long)value)
			return &r[i];
	return NULL;
}

const struct rl_res *fx_act_qp(struct rl_case *c, const char *name, struct rl_res *buf, int max)
{
	long long qpn = rl_said_int(c, name);
	int n = fx_res(c, "qp", buf, max);
	const struct rl_res *r = n > 0 ? fx_res_with(buf, n < max ? n : max, "lqpn", qpn) : NULL;

	if (n >= 0)
		rl_expect(c, r != NULL,
			  "expected the kernel to list QP 0x%llx of the test's process (rdma res "
			  "show qp), it lists %d other QPs",
			  qpn, n);
	return r;
}

bool fx_made(struct rl_case *c, const char *name, const char *what, int step)
{
	return rl_expect(c, rl_said_int(c, name) != 0,
			 "expected %s, got NULL (step %d: see docs/lab1.md#step-%d)", what, step,
			 step);
}

const char *fx_status_str(long long status)
{
	return status < 0 ? "no completion" : ibv_wc_status_str((enum ibv_wc_status)status);
}

const char *fx_qp_state_str(long long state)
{
	/* In the order of enum ibv_qp_state. */
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	if (state < 0 || state >= (long long)(sizeof(names) / sizeof(names[0])))
		return "unknown";
	return names[state];
}
