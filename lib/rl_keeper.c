/* rl_keeper.c: renew a held lease on schedule, from a caller's poll loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_client.h"
#include "rl_decode.h"
#include "rl_kind.h"
#include "rl_quorum.h"
#include "rl_scripts.h"

struct rl_keeper {
	rl_client *c;
	char *lock;
	struct rl_call renew;	/* the renewal, of the hold's kind */
	int64_t ttl_ms;
	int64_t period;
	int64_t confirmed;	/* send time of the last confirmed renewal */
	int64_t tried;		/* send time of the first renewal since;
				 * -1: none was sent */
	int64_t renewals;
	struct rl_round round;	/* the renewal in flight */
	int inflight;
	int64_t next;		/* when the next renewal is due */
};

/* Set up K to renew L on C (a copy of its name), the acquisition sent at
 * SENT_MS. */
static enum rl_err
keeper_init(rl_keeper *k, rl_client *c, const struct rl_lock *l,
    int64_t ttl_ms, int64_t sent_ms)
{
	const struct rl_kind_ops *ops = rl_kind_check(c, l, 0);
	struct rl_lock mine = *l;

	memset(k, 0, sizeof(*k));
	k->c = c;
	k->round.done = 1;
	if (ops == NULL)
		return RL_EUSAGE;
	if (l->name[0] == '\0')
		return rl_seterr(c, RL_EUSAGE, "the lock name is empty");
	if ((k->lock = strdup(l->name)) == NULL)
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	mine.name = k->lock;
	if (ops->renew(c, &mine, ttl_ms, &k->renew) != RL_OK)
		return RL_ENOMEM;
	k->ttl_ms = ttl_ms;
	k->period = rl_kind_renew_period_ms(l->kind, ttl_ms);
	k->confirmed = sent_ms;
	k->tried = -1;
	k->next = sent_ms + k->period;
	return RL_OK;
}

static void
keeper_clear(rl_keeper *k)
{
	rl_round_end(&k->round);
	rl_call_free(&k->renew);
	free(k->lock);
}

rl_keeper *
rl_keeper_new(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    int64_t sent_ms)
{
	rl_keeper *k = malloc(sizeof(*k));

	if (k != NULL && keeper_init(k, c, l, ttl_ms, sent_ms) != RL_OK) {
		rl_keeper_free(k);
		return NULL;
	}
	return k;
}

void
rl_keeper_free(rl_keeper *k)
{
	if (k == NULL)
		return;
	keeper_clear(k);
	free(k);
}

size_t
rl_keeper_pollfds(const rl_keeper *k, struct pollfd *pfd)
{
	size_t n = k->inflight ? rl_round_pollfds(&k->round, pfd) : 0;

	return n + rl_switch_pollfds(k->c, rl_now_ms(), pfd + n);
}

/* After a failure, try again soon, but never spin. */
static int64_t
retry_gap(const rl_keeper *k)
{
	int64_t g = k->period / 10;

	return g < 10 ? 10 : g;
}

int64_t
rl_keeper_wake_ms(const rl_keeper *k)
{
	int64_t wake = k->inflight ? rl_round_wake(&k->round) : k->next;
	int64_t sw = rl_switch_wake_ms(k->c);

	return sw >= 0 && (wake < 0 || sw < wake) ? sw : wake;
}

int64_t
rl_keeper_confirmed_ms(const rl_keeper *k)
{
	return k->confirmed;
}

int64_t
rl_keeper_tried_ms(const rl_keeper *k)
{
	return k->tried;
}

int64_t
rl_keeper_deadline_ms(const rl_keeper *k)
{
	return rl_lease_deadline_ms(k->confirmed, k->ttl_ms);
}

int64_t
rl_keeper_renewals(const rl_keeper *k)
{
	return k->renewals;
}

/* How long a renewal WAITs for the replicas (0: it does not):
 * --reply-timeout, but at most half a period, so that the renewal's
 * reply fits in one; in the Sentinel default a quarter, so that two fit,
 * with the time to ask the sentinels again: a WAIT blocks for its whole
 * timeout when no replica follows the master any more (after a
 * failover), and the renewal that finds that out is followed by one on a new connection. */
static int64_t
ack_ms(const rl_keeper *k)
{
	int64_t ms = k->c->timeout_ms, most = k->period / 2;

	if (k->c->replicas == 0)
		return 0;
	if (k->c->replicas < 0)
		most = k->period / 4;
	if (ms > most)
		ms = most;
	return ms > 0 ? ms : 1;
}

/* Start a renewal round: no step of it may take longer than a period
 * (the next one is due by then). */
static enum rl_err
start(rl_keeper *k, int64_t now)
{
	struct rl_round_opts o = rl_opts(k->c, 1);
	struct rl_call *r = &k->renew;
	int64_t wait_ms = ack_ms(k);

	if (o.connect_ms > k->period)
		o.connect_ms = k->period;
	if (o.reply_ms > k->period - wait_ms)
		o.reply_ms = k->period - wait_ms;
	if (rl_round_script(&k->round, k->c->nodes, k->c->n, &o, r) < 0 ||
	    (wait_ms > 0 &&
	    rl_round_ack(&k->round, k->c->replicas, wait_ms) < 0)) {
		rl_round_end(&k->round);
		k->next = now + retry_gap(k);
		return rl_seterr(k->c, RL_ENOMEM, "out of memory");
	}
	k->inflight = 1;
	if (k->tried < 0)
		k->tried = now;
	return RL_OK;
}

/* Renewed, but too few replicas acknowledged it: a failed renewal. */
static enum rl_err
unacked(rl_keeper *k, const struct rl_acks *ak)
{
	rl_client *c = k->c;
	const char *why = ak->first < c->n ? c->nodes[ak->first].why : "";

	rl_quorum_acks_why(c->errstr, sizeof(c->errstr), "renewed", k->lock,
	    c->n, ak, ack_ms(k), why, 0);
	return RL_EREPLICAS;
}

/* Through Sentinel, a master that stopped answering, or whose replicas
 * stopped acknowledging (they follow the new master after a failover),
 * may have been replaced: its connection is closed, so the next renewal
 * asks the sentinels again instead of going back to the old master. Only
 * renewals went out on it, owner-checked and never re-creating a lock:
 * one that runs late, after a release on the new connection, does
 * nothing. */
static void
rediscover(rl_keeper *k)
{
	int64_t want = k->c->replicas < 0 ? 1 : k->c->replicas;
	size_t j;

	for (j = 0; j < k->c->n; j++) {
		struct rl_node *nd = &k->c->nodes[j];

		if (nd->url.master != NULL && ((nd->reply == NULL &&
		    !nd->refused && nd->err != RL_OK) ||
		    (nd->waits && !nd->wait_refused && nd->acks < want)))
			rl_conn_close(&nd->conn);
	}
}

/* The round is over: add up the masters' answers. */
static enum rl_err
finish(rl_keeper *k, int64_t now, enum rl_keep *state)
{
	enum rl_verdict v[RL_MAX_NODES];
	int64_t acks[RL_MAX_NODES];
	int taken[RL_MAX_NODES];
	struct rl_acks ak;
	size_t j, yes;
	int ours;

	k->inflight = 0;
	rl_round_end(&k->round);
	rediscover(k);
	for (j = 0; j < k->c->n; j++)
		v[j] = rl_decode_renew(k->c->nodes[j].reply);
	if (k->c->replicas != 0)
		rl_quorum_acks(v, acks, k->c->n, rl_acks(k->c, acks), &ak);
	ak.dflt = k->c->replicas < 0;
	if (rl_combine_renew(v, k->c->n, &ours, &yes) != RL_OUT_OK) {
		k->next = now + retry_gap(k);
		if (k->c->replicas != 0 && ak.unacked > 0)
			return unacked(k, &ak);
		return rl_no_quorum(k->c, "renew");
	}
	if (!ours) {
		for (j = 0; j < k->c->n; j++)
			taken[j] = rl_decode_renew_taken(k->c->nodes[j].reply);
		*state = rl_combine_renew_taken(taken, k->c->n) ?
		    RL_KEEP_TAKEN : RL_KEEP_GONE;
		return RL_OK;
	}
	k->confirmed = k->round.sent_ms;
	k->tried = -1;
	k->renewals++;
	k->next = k->round.sent_ms + k->period;
	return RL_OK;
}

enum rl_err
rl_keeper_step(rl_keeper *k, int64_t now, enum rl_keep *state)
{
	enum rl_err e;

	*state = RL_KEEP_OK;
	rl_switch_step(k->c, NULL, now);
	/* The sentinels announced a failover: connections to the old
	 * master are dropped, and the lease renewed on the new one now. */
	if (!k->inflight && rl_switch_follow(k->c, NULL) > 0)
		k->next = now;
	if (!k->inflight) {
		if (now < k->next)
			return RL_OK;
		if ((e = start(k, now)) != RL_OK)
			return e;
	}
	if (!rl_round_step(&k->round, now))
		return RL_OK;
	return finish(k, now, state);
}

void
rl_keeper_settle(rl_keeper *k)
{
	/* A renewal still out is given up on: its reply is dropped when it
	 * comes, and what follows goes behind it on the same connection.
	 * A late renewal only lengthens a lease its owner holds. */
	if (k->inflight)
		rl_round_end(&k->round);
	k->inflight = 0;
	/* The release goes to the master the sentinels last announced. */
	rl_switch_step(k->c, NULL, rl_now_ms());
	rl_switch_follow(k->c, NULL);
}

/* One renewal of a keeper's, run to its end at once: the same call,
 * round, timeouts and verdict as the watchdog's. */
enum rl_err
rl_renew(rl_client *c, const struct rl_lock *l, int64_t ttl_ms, int *ours)
{
	enum rl_keep state = RL_KEEP_OK;
	rl_keeper k;
	enum rl_err e;

	*ours = 0;
	if ((e = keeper_init(&k, c, l, ttl_ms, rl_now_ms())) == RL_OK &&
	    (e = start(&k, rl_now_ms())) == RL_OK) {
		rl_round_run(&k.round);
		e = finish(&k, rl_now_ms(), &state);
		*ours = e == RL_OK && state == RL_KEEP_OK;
	}
	keeper_clear(&k);
	return e;
}
