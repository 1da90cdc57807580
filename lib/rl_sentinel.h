/* rl_sentinel.h: what a sentinel answers, read without a connection (the
 * Sentinel transport itself is rl_transport_sentinel, in rl_conn.h). */
#ifndef RL_SENTINEL_H
#define RL_SENTINEL_H

#include <stddef.h>

#include <hiredis/hiredis.h>

struct rl_conn;

/* What a reply to SENTINEL GET-MASTER-ADDR-BY-NAME says. */
enum rl_sentinel_said {
	RL_SS_ADDR,		/* the master's address */
	RL_SS_NOAUTH,		/* an error reply: a password is needed */
	RL_SS_REFUSED,		/* another error reply */
	RL_SS_UNKNOWN,		/* no master by that name (nil, empty) */
	RL_SS_BAD		/* not an address: not a sentinel? */
};

/* R's verdict; RL_SS_ADDR with the master's host in HOST (HOSTLEN bytes,
 * NUL-terminated: a longer name is RL_SS_BAD) and its port in *PORT (a
 * decimal number from 1 to 65535 and nothing else, or RL_SS_BAD); HOST
 * and *PORT are left alone for any other verdict. */
enum rl_sentinel_said rl_sentinel_addr(const redisReply *r, char *host,
    size_t hostlen, int *port);
/* How many replicas a reply to SENTINEL REPLICAS lists that the sentinel
 * reaches and does not hold down (none of s_down, o_down, disconnected
 * among their flags), whatever else it says of them: its view of their
 * link, role and master can be 10 s old (INFO), while the list itself is
 * kept up to date. So a replica cut off from the master counts, and one
 * a failover has promoted before the sentinels name it, so that the
 * master they left is WAITed on, and refuses; and so does a failover's
 * old master, listed as the new one's replica from the switch on, until
 * Sentinel demotes it (the new master refuses until then) or finds it
 * unreachable (a crash). -1 when R is no such list (an error: an old
 * sentinel, an ACL). */
int rl_sentinel_replicas(const redisReply *r);
/* The master C, a connection through Sentinel, went to, as the sentinel
 * named it (its port in *PORT); NULL when C is not connected so. */
const char *rl_sentinel_master(const struct rl_conn *c, int *port);

#endif
