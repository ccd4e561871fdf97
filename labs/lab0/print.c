/* print.c: how the lab0 program shows what the steps found (given code, not a step). */
#include <arpa/inet.h>

#include "lab0.h"

/* The transport names ibv_devinfo prints. */
const char *lab0_transport_str(enum ibv_transport_type t)
{
	switch (t) {
	case IBV_TRANSPORT_IB:
		return "InfiniBand";
	case IBV_TRANSPORT_IWARP:
		return "iWARP";
	case IBV_TRANSPORT_USNIC:
		return "usNIC";
	case IBV_TRANSPORT_USNIC_UDP:
		return "usNIC UDP";
	case IBV_TRANSPORT_UNSPECIFIED:
		return "unspecified";
	default:
		return "unknown";
	}
}

/* The GID type names sysfs and ibv_devinfo print. */
const char *lab0_gid_type_str(enum ibv_gid_type t)
{
	switch (t) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	default:
		return "unknown";
	}
}

const char *lab0_gid_form_str(enum lab0_gid_form f)
{
	switch (f) {
	case LAB0_GID_EMPTY:
		return "empty";
	case LAB0_GID_LINK_LOCAL:
		return "link-local";
	case LAB0_GID_IPV4_MAPPED:
		return "IPv4-mapped";
	case LAB0_GID_IPV6:
		return "IPv6";
	default:
		return "unknown";
	}
}

static const char *atomic_cap_str(enum ibv_atomic_cap cap)
{
	switch (cap) {
	case IBV_ATOMIC_NONE:
		return "none";
	case IBV_ATOMIC_HCA:
		return "atomic within this device (ATOMIC_HCA)";
	case IBV_ATOMIC_GLOB:
		return "atomic with the CPU too (ATOMIC_GLOB)";
	default:
		return "unknown";
	}
}

/* The limits a program sizes its queues and buffers from. */
void lab0_print_device_attr(FILE *out, const struct ibv_device_attr *attr)
{
	fprintf(out, "  firmware        %s\n", attr->fw_ver[0] ? attr->fw_ver : "(none)");
	fprintf(out, "  vendor          0x%x, part %u, hardware %u\n", attr->vendor_id,
		attr->vendor_part_id, attr->hw_ver);
	fprintf(out, "  ports           %u\n", attr->phys_port_cnt);
	fprintf(out, "  max QPs         %d, %d work requests each\n", attr->max_qp,
		attr->max_qp_wr);
	fprintf(out, "  max CQs         %d, %d entries each\n", attr->max_cq, attr->max_cqe);
	fprintf(out, "  max MRs         %d, up to 0x%llx bytes each\n", attr->max_mr,
		(unsigned long long)attr->max_mr_size);
	fprintf(out, "  max PDs         %d\n", attr->max_pd);
	fprintf(out, "  max SGEs        %d per work request (%d for RDMA reads)\n", attr->max_sge,
		attr->max_sge_rd);
	fprintf(out, "  RDMA reads      %d outstanding per QP\n", attr->max_qp_rd_atom);
	fprintf(out, "  atomics         %s\n", atomic_cap_str(attr->atomic_cap));
}

static int mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

/* active_width is a bit: 1, 2, 4, 8, 16 mean 1, 4, 8, 12 and 2 lanes. */
static const char *width_str(uint8_t width)
{
	switch (width) {
	case 1:
		return "1X";
	case 2:
		return "4X";
	case 4:
		return "8X";
	case 8:
		return "12X";
	case 16:
		return "2X";
	default:
		return "?X";
	}
}

/* active_speed is a code for the rate of one lane. */
static const char *speed_str(uint8_t speed)
{
	switch (speed) {
	case 1:
		return "2.5 Gbps";
	case 2:
		return "5.0 Gbps";
	case 4:
	case 8:
		return "10.0 Gbps";
	case 16:
		return "14.0 Gbps";
	case 32:
		return "25.0 Gbps";
	case 64:
		return "50.0 Gbps";
	case 128:
		return "100.0 Gbps";
	default:
		return "unknown speed";
	}
}

static const char *link_layer_str(uint8_t link_layer)
{
	switch (link_layer) {
	case IBV_LINK_LAYER_INFINIBAND:
		return "InfiniBand";
	case IBV_LINK_LAYER_ETHERNET:
		return "Ethernet (RoCE)";
	default:
		return "unspecified";
	}
}

void lab0_print_port(FILE *out, uint8_t port, const struct ibv_port_attr *attr)
{
	fprintf(out, "  port %u\n", port);
	fprintf(out, "    state         %s\n", ibv_port_state_str(attr->state));
	fprintf(out, "    MTU           %d active, %d max\n", mtu_bytes(attr->active_mtu),
		mtu_bytes(attr->max_mtu));
	fprintf(out, "    link layer    %s\n", link_layer_str(attr->link_layer));
	fprintf(out, "    speed         %s, %s per lane\n", width_str(attr->active_width),
		speed_str(attr->active_speed));
	fprintf(out, "    LID           %u%s\n", attr->lid,
		attr->link_layer == IBV_LINK_LAYER_ETHERNET ?
			" (unused on Ethernet: GIDs address peers)" :
			"");
	fprintf(out, "    GID slots     %d\n", attr->gid_tbl_len);
}

void lab0_print_gid(FILE *out, const struct lab0_gid *g)
{
	char addr[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, g->gid.raw, addr, sizeof(addr)))
		snprintf(addr, sizeof(addr), "?");
	fprintf(out, "    GID[%3d]  %-28s %-8s %s\n", g->index, addr, lab0_gid_type_str(g->type),
		lab0_gid_form_str(g->form));
}
