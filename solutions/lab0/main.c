/* main.c: lab0, what RDMA devices this machine has and what they can do. */
#include <stdlib.h>

#include "lab0.h"

/* Show each port of CTX, its GID table and the GID index to use. */
static int show_ports(struct ibv_context *ctx, const struct ibv_device_attr *dattr)
{
	struct ibv_port_attr pattr;
	struct lab0_gid *gids;
	const char *why;
	uint8_t port;
	int i, n, best;

	for (port = 1; port <= dattr->phys_port_cnt; port++) {
		if (lab0_query_port(ctx, port, &pattr) < 0)
			return -1;
		lab0_print_port(stdout, port, &pattr);

		gids = calloc(pattr.gid_tbl_len, sizeof(*gids));
		if (!gids) {
			fprintf(stderr, "Couldn't allocate %d GID entries\n", pattr.gid_tbl_len);
			return -1;
		}
		n = lab0_query_gids(ctx, port, gids, pattr.gid_tbl_len);
		if (n < 0) {
			free(gids);
			return -1;
		}
		for (i = 0; i < n; i++)
			lab0_print_gid(stdout, &gids[i]);

		best = lab0_pick_gid(gids, n, &why);
		free(gids);
		if (best == -ENOSYS)
			return -1;
		if (best < 0)
			printf("    use: none: %s\n", why);
		else
			printf("    use: GID index %d: %s\n", best, why);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dattr;
	struct ibv_device **list;
	struct ibv_context *ctx;
	char line[256];
	int i, num, ret = EXIT_FAILURE;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [DEVICE]   (default: $RDMALAB_DEVICE, else the first)\n",
			argv[0]);
		return EXIT_FAILURE;
	}

	list = lab0_get_devices(&num);
	if (!list)
		return EXIT_FAILURE;
	printf("%d RDMA device%s:\n", num, num == 1 ? "" : "s");
	for (i = 0; i < num; i++) {
		if (lab0_describe_device(list[i], line, sizeof(line)) < 0)
			goto clean_list;
		printf("  %s\n", line);
	}

	ctx = lab0_open_device(list, num, argc > 1 ? argv[1] : NULL);
	if (!ctx)
		goto clean_list;
	printf("\nOpened %s\n", ibv_get_device_name(ctx->device));

	if (lab0_query_device(ctx, &dattr) < 0)
		goto clean_ctx;
	lab0_print_device_attr(stdout, &dattr);

	if (show_ports(ctx, &dattr) < 0)
		goto clean_ctx;
	ret = EXIT_SUCCESS;

clean_ctx:
	ibv_close_device(ctx);
clean_list:
	ibv_free_device_list(list);
	return ret;
}
