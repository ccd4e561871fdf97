/*
 * mc_fixture.c: the Lab 5 step 3 tests' inputs, and what their checks read
 * from outside the act: /proc/net/igmp, the device's hw_counters, the
 * port's MTU.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "mc_fixture.h"

uint32_t mc_random(void)
{
	uint32_t x;

	ck_assert_msg(getrandom(&x, sizeof(x), 0) == sizeof(x),
		      "expected a random number from getrandom, got %s", strerror(errno));
	return x;
}

uint32_t mc_between(uint32_t lo, uint32_t hi)
{
	return lo + mc_random() % (hi - lo + 1);
}

void mc_random_group(char *out, size_t size)
{
	/* 239.X.Y.Z, Z from 1 to 254: organisation-local, never a reserved 239.0.0.x. */
	snprintf(out, size, "239.%u.%u.%u", mc_between(1, 254), mc_between(0, 255),
		 mc_between(1, 254));
}

void mc_fill(uint8_t *buf, uint32_t n, uint32_t seed)
{
	uint32_t x = seed, i;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
}

uint64_t mc_hash(const void *p, uint32_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

int mc_igmp_users(const char *group)
{
	struct in_addr want;
	unsigned int hex;
	char line[256];
	int users, total = 0;
	FILE *f;

	if (inet_pton(AF_INET, group, &want) != 1)
		return -1;
	f = fopen("/proc/net/igmp", "r");
	if (!f)
		return -1;
	/* An interface's line starts with its index; its groups' lines with a tab:
	 * the group as the kernel holds it (network order, printed as a host
	 * integer) and its users. */
	while (fgets(line, sizeof(line), f))
		if (line[0] == '\t' && sscanf(line, " %x %d", &hex, &users) == 2 &&
		    hex == want.s_addr)
			total += users;
	fclose(f);
	return total;
}
RL_HIDDEN(mc_igmp_users, 0);

/* The number in the file PATH, or -1. */
static long long read_number(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * The kernel keeps a device's counters for hw_counters/lifespan ms after a
 * read (10 by default) and answers from that copy, a jiffy's rounding on
 * top: two reads closer than that give the same figure, however many
 * packets went between them. So wait out twice the lifespan and two
 * jiffies of the slowest clock (HZ 100) before reading.
 */
long long mc_counter(const char *name)
{
	char path[256];
	long long life;
	struct timespec ts;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/hw_counters/lifespan",
		 rl_test_device(), rl_test_ib_port());
	life = read_number(path);
	if (life < 0 || life > 1000)
		life = 10;
	ts.tv_sec = 0;
	ts.tv_nsec = (2 * life + 20) * 1000000L;
	nanosleep(&ts, NULL);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/hw_counters/%s",
		 rl_test_device(), rl_test_ib_port(), name);
	return read_number(path);
}
RL_HIDDEN(mc_counter, 0);

uint32_t mc_port_mtu(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr attr;
	uint32_t mtu = 0;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), rl_test_device()))
			ctx = ibv_open_device(list[i]);
	if (ctx && ibv_query_port(ctx, rl_test_ib_port(), &attr) == 0)
		mtu = 128U << attr.active_mtu;
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
	return mtu;
}
RL_HIDDEN(mc_port_mtu, 0);
