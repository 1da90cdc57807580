/* rl_sentinel.h: what a sentinel answers, read without a connection (the
 * Sentinel transport itself is rl_transport_sentinel, in rl_conn.h). */
#ifndef RL_SENTINEL_H
#define RL_SENTINEL_H

#include <stddef.h>

#include <hiredis/hiredis.h>

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
 * does not hold down (no s_down or o_down among their flags) and that
 * reported following a master (a master-host other than "?"), whatever
 * their link or role says now: a replica cut off from the master, or one
 * a failover has just promoted (before the sentinels name it), still
 * counts, so that the master it left is WAITed on, and refuses; a
 * failover's old master, listed as the new one's replica from the switch
 * on with master-host "?" until Sentinel demotes it, does not. -1 when R
 * is no such list (an error: an old sentinel, an ACL). */
int rl_sentinel_replicas(const redisReply *r);

#endif
