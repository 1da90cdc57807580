/* rl_quorum.c: lease and quorum arithmetic; combining masters' replies. */
#include <stdio.h>
#include <string.h>

#include "rl_quorum.h"

int64_t
rl_renew_period_ms(int64_t ttl_ms)
{
	return ttl_ms / 3 > 0 ? ttl_ms / 3 : 1;
}

int64_t
rl_drift_ms(int64_t ttl_ms)
{
	return ttl_ms / 100 + 2;
}

int64_t
rl_lease_deadline_ms(int64_t sent_ms, int64_t ttl_ms)
{
	return sent_ms + ttl_ms - rl_drift_ms(ttl_ms);
}

int64_t
rl_validity_ms(int64_t ttl_ms, int64_t elapsed_ms)
{
	return ttl_ms - elapsed_ms - rl_drift_ms(ttl_ms);
}

size_t
rl_quorum(size_t n)
{
	return n / 2 + 1;
}

size_t
rl_quorum_spare(size_t n)
{
	return n - rl_quorum(n);
}

int64_t
rl_node_timeout_for(int64_t ttl_ms)
{
	int64_t t = ttl_ms / 100;

	return t < 5 ? 5 : t > 50 ? 50 : t;
}

int64_t
rl_reply_timeout_ms(size_t n, int64_t node_ms, int64_t timeout_ms)
{
	return n == 1 ? timeout_ms : node_ms;
}

int64_t
rl_straggle_ms(size_t n, int64_t node_ms)
{
	return n == 1 ? 0 : node_ms;
}

int
rl_quorum_check_distinct(size_t n)
{
	return n > 1;
}

/* Counts of each verdict; the first master with each of the odd ones. */
struct tally {
	size_t answered, yes, no, released, bad, wrongtype, refused, unacked;
	size_t first_bad, first_wrongtype;
};

static void
count(const enum rl_verdict *v, size_t n, struct tally *t)
{
	size_t j;

	memset(t, 0, sizeof(*t));
	for (j = 0; j < n; j++) {
		t->answered += v[j] != RL_V_NONE && v[j] != RL_V_REFUSED &&
		    v[j] != RL_V_UNACKED;
		switch (v[j]) {
		case RL_V_REFUSED:
			t->refused++;
			break;
		case RL_V_UNACKED:
			t->unacked++;
			break;
		case RL_V_YES:
			t->yes++;
			break;
		case RL_V_NO:
			t->no++;
			break;
		case RL_V_RELEASED:
			t->released++;
			break;
		case RL_V_WRONGTYPE:
			if (t->wrongtype++ == 0)
				t->first_wrongtype = j;
			break;
		case RL_V_BAD:
			if (t->bad++ == 0)
				t->first_bad = j;
			break;
		case RL_V_NONE:
			break;
		}
	}
}

/* The odd replies first: a key of another type, then a stranger. */
static enum rl_outcome
odd(const struct tally *t, size_t *who)
{
	if (t->wrongtype > 0) {
		*who = t->first_wrongtype;
		return RL_OUT_WRONGTYPE;
	}
	if (t->bad > 0) {
		*who = t->first_bad;
		return RL_OUT_BAD;
	}
	return RL_OUT_OK;
}

/* Acquired on a quorum: the highest fence and hold count any gave. */
static void
granted(const enum rl_verdict *v, const struct rl_attempt *per, size_t n,
    struct rl_attempt *a)
{
	size_t j;

	a->acquired = 1;
	for (j = 0; j < n; j++) {
		if (v[j] != RL_V_YES)
			continue;
		if (a->nopub == NULL)
			a->nopub = per[j].nopub;
		if (a->skipped == NULL)
			a->skipped = per[j].skipped;
		if (per[j].fence > a->fence)
			a->fence = per[j].fence;
		if (per[j].holds > a->holds)
			a->holds = per[j].holds;
	}
}

/* The masters that lost the caller's record as a --supersede waiter
 * (rl_attempt's lapsed). */
static size_t
lapsed(const enum rl_verdict *v, const struct rl_attempt *per, size_t n)
{
	size_t j, k = 0;

	for (j = 0; j < n; j++)
		k += v[j] == RL_V_NO && per[j].lapsed;
	return k;
}

/* Not acquired: the holder as the master with the longest lease sees it;
 * the listener of the room, and an announced waiter, on any master. */
static void
refused(const enum rl_verdict *v, const struct rl_attempt *per, size_t n,
    struct rl_attempt *a)
{
	size_t j, busy = n;

	for (j = 0; j < n; j++)
		if (v[j] == RL_V_NO && (busy == n || per[j].pttl > per[busy].pttl))
			busy = j;
	a->pttl = -1;
	a->held_ms = -1;
	a->head_wait_ms = -1;
	a->ahead = -1;
	/* The listener on any master listens on all of them. */
	a->listen = 0;
	a->announced = 0;
	for (j = 0; j < n; j++) {
		a->listen |= v[j] == RL_V_NO && per[j].listen;
		/* Announced on any master: it renews and withdraws it on
		 * all of them. */
		a->announced |= v[j] == RL_V_NO && per[j].announced;
		/* Superseded on any master: the newer waiter's call may
		 * have missed the others. */
		if (v[j] == RL_V_NO && per[j].superseded && !per[j].lapsed &&
		    (!a->superseded || a->lapsed)) {
			a->superseded = 1;
			a->lapsed = 0;
			a->by_owner = per[j].by_owner;
			a->by_host = per[j].by_host;
			a->by_pid = per[j].by_pid;
			a->by_cmd = per[j].by_cmd;
		}
		/* Nothing to re-enter on any master: not taken. */
		a->gone |= v[j] == RL_V_NO && per[j].gone;
	}
	if (!a->superseded && lapsed(v, per, n) >= rl_quorum(n))
		a->superseded = a->lapsed = 1;
	if (busy == n)
		return;
	a->pttl = per[busy].pttl;
	a->owner = per[busy].owner;
	a->host = per[busy].host;
	a->pid = per[busy].pid;
	a->cmd = per[busy].cmd;
	a->held_ms = per[busy].held_ms;
	a->position = per[busy].position;
	a->queued = per[busy].queued;
	a->head_wait_ms = per[busy].head_wait_ms;
	a->rejoined = per[busy].rejoined;
	a->ahead = per[busy].ahead;
	a->held_until_ms = per[busy].held_until_ms;
}

/* A master that superseded the caller (rl_request's supersede): it takes
 * nothing, whatever the others granted. So does a quorum of masters
 * that lost its record: one master alone may only have missed the call
 * that made it. */
static int
superseded(const enum rl_verdict *v, const struct rl_attempt *per, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (v[j] == RL_V_NO && per[j].superseded && !per[j].lapsed)
			return 1;
	return lapsed(v, per, n) >= rl_quorum(n);
}

/* A master where NAME is held by a client that keeps no holder record of
 * redlock's: a Java service's RLock (or read-write lock) on that master
 * alone, which the other masters know nothing of. A majority without it
 * would be a second holder beside it: with several masters such a hold
 * makes NAME busy, as on one. */
static int
foreign(const enum rl_verdict *v, const struct rl_attempt *per, size_t n)
{
	size_t j;

	if (n < 2)
		return 0;
	for (j = 0; j < n; j++)
		if (v[j] == RL_V_NO && per[j].owner != NULL &&
		    per[j].host == NULL)
			return 1;
	return 0;
}

enum rl_outcome
rl_combine_acquire(const struct rl_votes *vs, int64_t ttl_ms,
    int64_t elapsed_ms, struct rl_attempt *a, int *undo, size_t *who)
{
	const enum rl_verdict *v = vs->v;
	const struct rl_attempt *per = vs->per;
	size_t n = vs->n;
	struct tally t;
	enum rl_outcome o;

	count(v, n, &t);
	o = odd(&t, who);
	a->nodes_ok = t.yes;
	a->validity_ms = rl_validity_ms(ttl_ms, elapsed_ms);
	*undo = 0;
	a->foreign = foreign(v, per, n);
	if (o == RL_OUT_OK && t.yes >= rl_quorum(n) && a->validity_ms > 0 &&
	    !a->foreign && !superseded(v, per, n)) {
		granted(v, per, n, a);
		return RL_OUT_OK;
	}
	/* Undo on every master, also those that did not answer: the
	 * script may still run there. A refusal is an answer: it did not. */
	*undo = t.yes > 0 || t.answered + t.refused < n;
	a->too_slow = o == RL_OUT_OK && t.yes >= rl_quorum(n) &&
	    !a->foreign && !superseded(v, per, n);
	/* Granted on a quorum in time, but for the replicas: say that. */
	if (o == RL_OUT_OK && t.yes < rl_quorum(n) && t.unacked > 0 &&
	    t.yes + t.unacked >= rl_quorum(n))
		return RL_OUT_UNACKED;
	if (o == RL_OUT_WRONGTYPE) {
		a->badkey = per[*who].badkey;
		a->badtype = per[*who].badtype;
	}
	if (o != RL_OUT_OK)
		return o;
	if (t.answered < rl_quorum(n))
		return RL_OUT_NO_QUORUM;
	refused(v, per, n, a);
	return RL_OUT_OK;
}

enum rl_outcome
rl_combine_release(const struct rl_votes *vs, enum rl_release *rel,
    int64_t *holds_left, const char **nopub_out, size_t *who)
{
	const enum rl_verdict *v = vs->v;
	const int64_t *holds = vs->holds;
	const char *const *nopub = vs->nopub;
	size_t j, n = vs->n;
	struct tally t;
	int exists = 0;

	count(v, n, &t);
	*holds_left = 0;
	*nopub_out = NULL;
	if (t.wrongtype > 0 || (t.bad > 0 && t.bad == t.answered))
		return odd(&t, who);
	if (t.answered == 0)
		return RL_OUT_NO_QUORUM;
	for (j = 0; j < n; j++) {
		if (v[j] == RL_V_YES && holds[j] > *holds_left)
			*holds_left = holds[j];
		if (v[j] == RL_V_RELEASED && *nopub_out == NULL)
			*nopub_out = nopub[j];
		if (v[j] == RL_V_NO && holds[j] == 1)
			exists = 1;
	}
	if (t.yes > 0)
		*rel = RL_DECREMENTED;
	else if (t.released > 0)
		*rel = RL_RELEASED;
	else {
		*rel = RL_NOT_OWNER;
		*holds_left = exists;
	}
	return RL_OUT_OK;
}

enum rl_outcome
rl_combine_force(const struct rl_votes *vs, int *deleted,
    const char **nopub_out, size_t *who)
{
	const enum rl_verdict *v = vs->v;
	const char *const *nopub = vs->nopub;
	size_t j, n = vs->n;
	struct tally t;

	count(v, n, &t);
	*deleted = t.yes > 0;
	*nopub_out = NULL;
	if (t.wrongtype > 0 || (t.bad > 0 && t.bad == t.answered))
		return odd(&t, who);
	if (t.answered == 0)
		return RL_OUT_NO_QUORUM;
	for (j = 0; j < n && *nopub_out == NULL; j++)
		if (v[j] == RL_V_YES)
			*nopub_out = nopub[j];
	return RL_OUT_OK;
}

enum rl_outcome
rl_combine_renew(const enum rl_verdict *v, size_t n, int *ours, size_t *yes)
{
	struct tally t;

	count(v, n, &t);
	*yes = t.yes;
	*ours = 0;
	if (t.yes >= rl_quorum(n)) {
		*ours = 1;
		return RL_OUT_OK;
	}
	if (t.no > rl_quorum_spare(n))
		return RL_OUT_OK;
	return RL_OUT_NO_QUORUM;
}

int
rl_combine_renew_taken(const int *taken, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (taken[j])
			return 1;
	return 0;
}

/* Who holds it on one master, to compare with the others: the owner; for
 * a read-write lock in read mode, its first reader (by owner), or the
 * mode when it has none. NULL when not held. */
static const char *
holder(enum rl_verdict v, const struct rl_status *st)
{
	struct rl_reader r;

	if (v != RL_V_YES)
		return NULL;
	if (st->owner != NULL || st->kind != RL_KIND_RWLOCK)
		return st->owner;
	if (rl_status_reader(st, 0, &r) == 0 && r.owner != NULL)
		return r.owner;
	return st->mode;
}

/* Masters whose holder is OWNER. */
static size_t
agree(const enum rl_verdict *v, const struct rl_status *per, size_t n,
    const char *owner)
{
	const char *h;
	size_t k, same = 0;

	for (k = 0; k < n; k++)
		if ((h = holder(v[k], &per[k])) != NULL &&
		    strcmp(h, owner) == 0)
			same++;
	return same;
}

enum rl_outcome
rl_combine_status(const enum rl_verdict *v, const struct rl_status *per,
    size_t n, struct rl_status *st, size_t *who)
{
	size_t j, best = n, best_n = 0, same, first = n;
	const char *h;
	struct tally t;

	count(v, n, &t);
	memset(st, 0, sizeof(*st));
	if (t.wrongtype > 0 || (t.bad > 0 && t.bad == t.answered)) {
		enum rl_outcome o = odd(&t, who);

		*st = per[*who];	/* the key, and a semaphore's permits */
		return o;
	}
	if (t.answered == 0)
		return RL_OUT_NO_QUORUM;
	for (j = 0; j < n; j++) {
		if (first == n && (v[j] == RL_V_YES || v[j] == RL_V_NO))
			first = j;
		if ((h = holder(v[j], &per[j])) == NULL)
			continue;
		if ((same = agree(v, per, n, h)) > best_n) {
			best_n = same;
			best = j;
		}
	}
	*who = best != n ? best : first;
	if (*who < n)
		*st = per[*who];
	st->held_on = best_n;
	st->answered = t.answered;
	st->held = best_n >= rl_quorum(n);
	return RL_OUT_OK;
}

void
rl_quorum_acks(enum rl_verdict *v, const int64_t *acks, size_t n,
    int64_t want, struct rl_acks *k)
{
	size_t j;
	int64_t got;

	memset(k, 0, sizeof(*k));
	k->n = n;
	k->want = want;
	k->fewest = want;
	k->first = n;
	for (j = 0; j < n; j++) {
		if (v[j] != RL_V_YES)
			continue;
		k->granted++;
		got = acks[j] < 0 ? 0 : acks[j];
		if (acks[j] >= want)
			continue;
		v[j] = RL_V_UNACKED;
		if (k->unacked++ == 0)
			k->first = j;
		if (got < k->fewest)
			k->fewest = got;
	}
}

void
rl_quorum_acks_why(char *buf, size_t len, const char *done,
    const char *name, const struct rl_acks *k, int undone)
{
	const char *why = k->why != NULL ? k->why : "";
	int64_t wait_ms = k->wait_ms;
	size_t n = k->n;
	char within[32], reason[300] = "";
	const char *advice = k->dflt ? "A failover may be under way, or "
	    "the replicas cut off: try again, or give --replicas 0 (the "
	    "Sentinel default waits for one)" : "Check the replicas (INFO "
	    "replication) or lower --replicas";

	rl_duration_format(wait_ms, within, sizeof(within));
	if (why[0] != '\0')
		snprintf(reason, sizeof(reason), " (%s)", why);
	if (n == 1)
		snprintf(buf, len, "%s %s but only %lld of %lld replicas "
		    "acknowledged it within %s%s%s. %s", done, name,
		    (long long)k->fewest, (long long)k->want, within, reason,
		    undone ? "; released it" : "", advice);
	else
		snprintf(buf, len, "%s %s on %zu of %zu masters, but on %zu of "
		    "them fewer than %lld replicas acknowledged it within %s "
		    "(the fewest: %lld of %lld)%s, leaving no quorum (need "
		    "%zu)%s. %s", done, name, k->granted, n, k->unacked,
		    (long long)k->want, within, (long long)k->fewest,
		    (long long)k->want, reason, rl_quorum(n),
		    undone ? "; released it everywhere" : "", advice);
}
