// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/taskstats.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "taskstats.h"

struct check_ctx {
	int version;
};

static int check_reply(struct nl_msg *msg, void *arg)
{
	struct check_ctx *c = arg;
	struct nlattr *attrs[TASKSTATS_TYPE_MAX + 1];
	struct nlattr *nested[TASKSTATS_TYPE_MAX + 1];
	struct nlattr *stats;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, attrs, TASKSTATS_TYPE_MAX, NULL) < 0)
		return NL_SKIP;
	if (!attrs[TASKSTATS_TYPE_AGGR_PID])
		return NL_SKIP;
	if (nla_parse_nested(nested, TASKSTATS_TYPE_MAX, attrs[TASKSTATS_TYPE_AGGR_PID], NULL) < 0)
		return NL_SKIP;
	stats = nested[TASKSTATS_TYPE_STATS];
	if (stats && nla_len(stats) >= 2) {
		unsigned short v;

		memcpy(&v, nla_data(stats), sizeof(v));
		c->version = v;
	}
	return NL_OK;
}

bool taskstats_check(char *detail, size_t len)
{
	struct check_ctx c = {.version = -1};
	struct nl_sock *sk;
	struct nl_msg *msg = NULL;
	bool ok = false;
	int family, ret;

	sk = nl_socket_alloc();
	if (!sk) {
		snprintf(detail, len, "out of memory");
		return false;
	}
	if (genl_connect(sk) < 0) {
		snprintf(detail, len, "cannot open a generic netlink socket");
		goto out;
	}
	family = genl_ctrl_resolve(sk, TASKSTATS_GENL_NAME);
	if (family < 0) {
		snprintf(detail, len,
			 "no TASKSTATS netlink family (kernel built without CONFIG_TASKSTATS)");
		goto out;
	}
	msg = nlmsg_alloc();
	if (!msg ||
	    !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, TASKSTATS_CMD_GET,
			 TASKSTATS_VERSION) ||
	    nla_put_u32(msg, TASKSTATS_CMD_ATTR_PID, (uint32_t)getpid()) < 0) {
		snprintf(detail, len, "cannot build a taskstats request");
		goto out;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, check_reply, &c);
	ret = nl_send_auto(sk, msg);
	if (ret >= 0)
		ret = nl_recvmsgs_default(sk);
	if (ret < 0) {
		if (ret == -NLE_PERM)
			snprintf(detail, len, "not permitted (need CAP_NET_ADMIN, or root)");
		else
			snprintf(detail, len, "taskstats query failed: %s", nl_geterror(ret));
		goto out;
	}
	if (c.version < 0) {
		snprintf(detail, len, "taskstats answered without a record");
		goto out;
	}
	snprintf(detail, len, "family %d, record version %d", family, c.version);
	ok = true;
out:
	nlmsg_free(msg);
	nl_socket_free(sk);
	return ok;
}
