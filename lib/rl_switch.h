/* rl_switch.h: hearing the sentinels announce a failover.
 *
 * Through redis+sentinel://, a connection goes to the master the
 * sentinels named when it opened. After a failover the old master calls
 * itself master until Sentinel demotes it, some 10 s after the switch,
 * and what a connection opened before the switch sends there (a waiter's
 * acquisition, a holder's renewal or release) goes on there. A waiter or
 * a watchdog therefore listens on one sentinel to +switch-master, which
 * every sentinel publishes when it switches, and drops the connections
 * that go to another master than the one announced (rl_switch_stale);
 * the next command asks the sentinels again. The listening connection
 * moves to the next sentinel when its own fails. Nothing blocks: the
 * caller polls rl_switch_fd and calls rl_switch_io. */
#ifndef RL_SWITCH_H
#define RL_SWITCH_H

#include <poll.h>
#include <stdint.h>

#include "rl_conn.h"

struct rl_switch {
	const struct rl_url *of;	/* the redis+sentinel:// URL; NULL:
					 * not through Sentinel */
	struct rl_url url;	/* the sentinel listened to, with the
				 * sentinel credentials (borrowed from OF) */
	struct rl_conn conn;
	size_t i;		/* which of OF's sentinels */
	int listening;		/* SUBSCRIBE was confirmed */
	int64_t end;		/* subscribing until then */
	int64_t at;		/* when to open again (after a failure) */
	int64_t backoff;
	char host[256];		/* the new master of the last switch heard */
	int port;
	int heard;		/* a switch came that rl_switch_stale has not
				 * been asked about yet */
	int polled;		/* its entry in the caller's poll set; -1 */
};

/* Listening to the sentinels of U, a node's URL (nothing when U is not
 * redis+sentinel://): closed until rl_switch_fd opens it. */
void rl_switch_init(struct rl_switch *s, const struct rl_url *u);
void rl_switch_close(struct rl_switch *s);
/* At NOW: open or reopen the subscription when it is due (every step
 * bounded by CONNECT_MS), and fill *P with what to poll: 1, or 0 when
 * there is nothing to poll now. */
int rl_switch_fd(struct rl_switch *s, int64_t now, int64_t connect_ms,
    struct pollfd *p);
/* When rl_switch_fd must be called again at the latest (-1: only when
 * its descriptor is ready). */
int64_t rl_switch_wake(const struct rl_switch *s);
/* Do what REVENTS allow: 1 when a switch of the node's master was
 * announced (heard is set), else 0. */
int rl_switch_io(struct rl_switch *s, short revents, int64_t now);
/* Whether C, a connection of the node, goes to another master than the
 * one the last switch heard announced: to be closed. Only a connection
 * opened before the switch is: call it for each of the node's
 * connections when heard is set, then clear heard. */
int rl_switch_stale(const struct rl_switch *s, const struct rl_conn *c);

#endif
