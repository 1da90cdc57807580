/* rl_lock.c: acquire, release, renew and inspect one lock on N masters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_client.h"
#include "rl_decode.h"
#include "rl_keys.h"
#include "rl_kind.h"
#include "rl_lock.h"
#include "rl_quorum.h"
#include "rl_scripts.h"

static enum rl_err
unexpected(rl_client *c, size_t j, const char *script)
{
	char url[512];

	rl_url_format(&c->nodes[j].url, url, sizeof(url));
	return rl_seterr(c, RL_EPROTO, "unexpected reply from the %s script "
	    "on %s: is this a Redis server?", script, url);
}

/* KEY of another type, or (TYPE says so: the scripts' rl_not_lock) a
 * hash of another shape than a lock's: an application's key, named with
 * what is in it (RL_EKIND: the message is the whole line). */
static enum rl_err
wrongtype(rl_client *c, const char *key, const char *type)
{
	if (type != NULL && strncmp(type, RL_NOT_LOCK,
	    sizeof(RL_NOT_LOCK) - 1) == 0)
		return rl_seterr(c, RL_EKIND, "%s is a Redis %s: choose "
		    "another name", key ? key : "?", type);
	return rl_seterr(c, RL_EWRONGTYPE, "key %s holds a %s",
	    key ? key : "?", type ? type : "?");
}

/* What a round did, for messages: its script ("unexpected reply from
 * the acquire script"), and what it could not do ("no quorum to
 * acquire"). */
struct what {
	const char *script, *doing;
};

/* The outcome of adding up the masters' replies, as an error. */
static enum rl_err
outcome(rl_client *c, enum rl_outcome o, size_t who, const struct what *w,
    const char *key, const char *type)
{
	switch (o) {
	case RL_OUT_OK:
		return RL_OK;
	case RL_OUT_WRONGTYPE:
		return wrongtype(c, key, type);
	case RL_OUT_BAD:
		return unexpected(c, who, w->script);
	default:
		return rl_no_quorum(c, w->doing);
	}
}

/* RL_EUSAGE for an empty lock name. */
static enum rl_err
named(rl_client *c, const char *name)
{
	if (name[0] == '\0')
		return rl_seterr(c, RL_EUSAGE, "the lock name is empty");
	return RL_OK;
}

/* {-1, key, type} from R into A. */
static void
badtype(const redisReply *r, struct rl_attempt *a)
{
	a->badkey = rl_elem_str(r, RL_RET_WRONGTYPE_KEY);
	a->badtype = rl_elem_str(r, RL_RET_WRONGTYPE_TYPE);
}

/* Not acquired: release what may have been granted, on every master.
 * QUIET (busy beside a Java client's hold on one master): the release
 * wakes nobody, or this waiter, subscribed on every master, would be
 * woken by its own undo and try again at once, for as long as that hold
 * lasts; nobody can take NAME before that holder's release, which wakes
 * the waiters itself. */
static void
undo(rl_client *c, const struct rl_kind_ops *k, const struct rl_lock *l,
    int quiet)
{
	struct rl_round_opts o = rl_opts_pub(c);
	struct rl_call call;

	if (k->release(c, l, &call) != RL_OK)
		return;
	if (quiet)
		rl_call_quiet(&call);
	/* Not acquired: its minimum hold (--min-hold) is not kept. */
	rl_call_unused(&call);
	o.aside = 1;
	o.hold = 1;
	/* Behind an acquisition given up on: sent at once (not waiting
	 * for HELLO to say whether to SPUBLISH), whole (it must run, and
	 * no NOSCRIPT would be read), and not waited for: it runs after
	 * it, in order, or not at all, and nothing reads its answer. */
	if (rl_client_behind_late(c)) {
		o.whole = 1;
		o.learn = 0;
		o.reply_ms = 1;
	}
	rl_run(c, &o, &call);
	rl_call_free(&call);
}

/* Acquired, but too few replicas acknowledged it: released again. */
static enum rl_err
unacked(rl_client *c, const char *name, const struct rl_acks *ak)
{
	const char *why = ak->first < c->n ? c->nodes[ak->first].why : "";

	rl_quorum_acks_why(c->errstr, sizeof(c->errstr), "acquired", name,
	    c->n, ak, c->timeout_ms, why, 1);
	return RL_EREPLICAS;
}

/* Add up the acquire round into A. */
static enum rl_err
acquire_outcome(rl_client *c, const struct rl_kind_ops *k,
    const struct rl_lock *l, int64_t ttl_ms, struct rl_attempt *a)
{
	struct rl_attempt per[RL_MAX_NODES];
	enum rl_verdict v[RL_MAX_NODES];
	int64_t acks[RL_MAX_NODES];
	struct rl_acks ak;
	enum rl_outcome o;
	enum rl_err e;
	size_t j, who = 0;
	int must_undo;

	for (j = 0; j < c->n; j++) {
		memset(&per[j], 0, sizeof(per[j]));
		v[j] = c->nodes[j].refused ? RL_V_REFUSED :
		    rl_decode_acquire(c->nodes[j].reply, &per[j]);
	}
	if (c->replicas != 0)
		rl_quorum_acks(v, acks, c->n, rl_acks(c, acks), &ak);
	ak.dflt = c->replicas < 0;
	o = rl_combine_acquire(v, per, c->n, ttl_ms,
	    rl_now_ms() - a->sent_ms, a, &must_undo, &who);
	if (o == RL_OUT_UNACKED)
		e = unacked(c, l->name, &ak);
	else
		e = outcome(c, o, who, &(const struct what){ "acquire",
		    "acquire" }, a->badkey, a->badtype);
	if (must_undo)
		undo(c, k, l, a->foreign);
	return e;
}

/* In the Sentinel default, the ROLE sent in place of a WAIT found
 * replicas that attached since the connection opened (rl_round roles_on):
 * the command needs the WAIT it went without. */
static int
recounted(const rl_client *c)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		if (c->nodes[j].recount)
			return 1;
	return 0;
}

/* A waiter's attempts refresh its place in the queue or the room
 * (heartbeats): they go without WAIT, and one that acquires WAITs in a
 * round of its own right after, on the same connections (WAIT counts
 * the writes of its connection: a new one would count nothing). */
static void
ack_after(rl_client *c)
{
	struct rl_round_opts o = rl_opts(c, 1);
	char n[16], ms[24];
	const char *argv[3] = { "WAIT", n, ms };
	size_t j, yes = 0, seen = 0;

	for (j = 0; j < c->n; j++) {
		yes += rl_verdict(c->nodes[j].reply) == RL_V_YES;
		seen += c->nodes[j].conn.replicas > 0;
	}
	/* The Sentinel default: no master had replicas, nothing to wait
	 * for. */
	if (yes == 0 || (c->replicas < 0 && seen == 0))
		return;
	snprintf(n, sizeof(n), "%d", c->replicas < 0 ? 1 : c->replicas);
	snprintf(ms, sizeof(ms), "%lld", (long long)(c->timeout_ms > 0 ?
	    c->timeout_ms : 1));
	o.keep = 1;
	o.aside = 1;
	o.reply_ms += c->timeout_ms;
	rl_round_end(&c->round);
	if (rl_round_command(&c->round, c->nodes, c->n, &o, 3, argv) == 0)
		rl_client_run(c);
	for (j = 0; j < c->n; j++) {
		/* The Sentinel default: a master without replicas
		 * waited in vain, and is not held back. */
		c->nodes[j].waits = c->replicas > 0 ||
		    c->nodes[j].conn.replicas > 0;
		c->nodes[j].recount = 0;
		c->nodes[j].wait_refused = c->nodes[j].refused;
		c->nodes[j].acks = c->nodes[j].reply != NULL &&
		    c->nodes[j].reply->type == REDIS_REPLY_INTEGER ?
		    c->nodes[j].reply->integer : -1;
	}
	rl_round_end(&c->round);
}

/* After an acquire round: where it never went, it did not run, and this
 * hold's undo and release leave those masters out (opts hold). */
static void
went(rl_client *c)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		c->nodes[j].away = !c->nodes[j].sent;
}

/* The acquire round, with WAIT for the replicas behind it. */
static enum rl_err
acquire_round(rl_client *c, enum rl_join join, struct rl_call *call)
{
	struct rl_round_opts o = rl_opts(c, rl_quorum(c->n));
	int heartbeat = join == RL_JOIN_AGAIN;
	enum rl_err e;

	o.pub = 1;
	/* As a release (rl_opts_pub): an acquisition by SHA whose NOSCRIPT
	 * came past the node timeout did not run there, and the undo or the
	 * release that follows would take a hold of the same owner's (an
	 * outer one) off that master. */
	o.whole = rl_opts_early(c, &o);
	e = rl_run_ack(c, &o, heartbeat ? 0 : c->timeout_ms, call);
	went(c);
	if (e == RL_OK && c->replicas != 0 && (heartbeat || recounted(c)))
		ack_after(c);
	return e;
}

/* The acquire round of a kind taken on its one master. */
static enum rl_err
one_round(rl_client *c, struct rl_call *call)
{
	struct rl_round_opts o = rl_opts(c, 1);
	enum rl_err e;

	o.pub = 1;
	e = rl_run_ack(c, &o, c->timeout_ms, call);
	went(c);
	if (e == RL_OK && recounted(c))
		ack_after(c);
	return e;
}

/* NAME is one of Redisson's semaphores: what it holds, as an error. */
static enum rl_err
semaphore(rl_client *c, const struct rl_status *st)
{
	if (st->kind == RL_KIND_SEMAPHORE)
		return rl_seterr(c, RL_EWRONGTYPE, "it is a Redisson semaphore "
		    "with %lld permit%s free", (long long)st->free,
		    st->free == 1 ? "" : "s");
	return rl_seterr(c, RL_EWRONGTYPE, "it is a Redisson permit-expirable "
	    "semaphore with %lld permit%s free and %lld taken",
	    (long long)st->free, st->free == 1 ? "" : "s",
	    (long long)st->taken);
}

/* rl_status with the options RO (NULL: rl_opts(c, 1)): a round on the
 * side (RO aside) is read before the caller's rl_round_end(&c->round)
 * frees what ST points into. */
static enum rl_err
status_open(rl_client *c, const char *name, struct rl_status *st,
    const struct rl_round_opts *ro)
{
	struct rl_status per[RL_MAX_NODES];
	enum rl_verdict v[RL_MAX_NODES];
	struct rl_call call;
	enum rl_outcome o;
	enum rl_err e;
	size_t j, who = 0;

	memset(st, 0, sizeof(*st));
	if ((e = named(c, name)) != RL_OK)
		return e;
	rl_call_make(&call, &rl_script_status, name, NULL);
	RL_CALL_ARGS(STATUS, 1);
	call.args[RL_STATUS_ARG_RWCHANNEL] = rl_call_own(&call,
	    rl_key(RL_PREFIX_RWLOCK, name));
	if ((e = rl_call_made(c, &call)) != RL_OK)
		return e;
	e = rl_run_open(c, ro, 0, &call);
	rl_call_free(&call);
	if (e != RL_OK)
		return e;
	for (j = 0; j < c->n; j++)
		v[j] = rl_decode_status(c->nodes[j].reply, &per[j]);
	o = rl_combine_status(v, per, c->n, st, &who);
	if (o == RL_OUT_WRONGTYPE && st->kind != RL_KIND_LOCK)
		return semaphore(c, st);
	return outcome(c, o, who, &(const struct what){ "status",
	    "read the lock" }, st->badkey, st->badtype);
}

/* What L->name is, from status ST (E: what rl_status returned), when it
 * is of another kind than the call takes (QUEUE: a queue is read; else
 * L->kind is taken), into BUF with what to do: 1, or 0 when ST says no
 * more than the key's type. */
static int
kind_said(const struct rl_lock *l, enum rl_err e, const struct rl_status *st,
    int queue, char *buf, size_t len)
{
	const char *name = l->name;
	enum rl_lock_kind kind = l->kind;
	int64_t all = st->free + st->taken;
	char what[512];

	if (e == RL_EWRONGTYPE && st->kind == RL_KIND_EXPIRABLE)
		snprintf(what, sizeof(what), "%s is a semaphore of %lld "
		    "permit%s (%lld taken), not a lock", name, (long long)all,
		    all == 1 ? "" : "s", (long long)st->taken);
	else if (e == RL_EWRONGTYPE && st->kind == RL_KIND_SEMAPHORE)
		snprintf(what, sizeof(what), "%s is a semaphore with %lld "
		    "permit%s free, not a lock", name, (long long)st->free,
		    st->free == 1 ? "" : "s");
	else if (e == RL_OK && !queue && kind == RL_PERMIT &&
	    st->kind == RL_KIND_RWLOCK)
		snprintf(what, sizeof(what), "%s is a read-write lock, not a "
		    "semaphore", name);
	else if (e == RL_OK && !queue && kind == RL_PERMIT && st->held)
		snprintf(what, sizeof(what), "%s is a lock, not a semaphore",
		    name);
	else
		return 0;
	if (queue)
		snprintf(buf, len, "%s: it has no queue; redlock status %s "
		    "shows its permits and how many wait for one", what, name);
	else if (st->kind == RL_KIND_EXPIRABLE ||
	    st->kind == RL_KIND_SEMAPHORE)
		snprintf(buf, len, "%s: take a permit with --limit %lld, or "
		    "choose another name", what, (long long)all);
	else if (st->kind == RL_KIND_RWLOCK)
		snprintf(buf, len, "%s: take it with -s or --write instead of "
		    "--limit, or choose another name", what);
	else
		snprintf(buf, len, "%s: take it without --limit, or choose "
		    "another name", what);
	return 1;
}

/* A call refused because the key NAME itself (BADKEY) is of another
 * kind, a semaphore for a lock or the other way round: RL_EKIND, saying
 * what NAME is, read with the status script (which writes nothing) in a
 * round on the side; else RL_EWRONGTYPE with the message as it was. The
 * replies of the call are kept. */
static enum rl_err
other_kind(rl_client *c, const char *name, enum rl_lock_kind kind,
    const char *badkey, int queue)
{
	char keep[sizeof(c->errstr)], what[sizeof(c->errstr)];
	struct rl_round_opts o;
	struct rl_status st;
	int said;

	if (badkey == NULL || strcmp(badkey, name) != 0)
		return RL_EWRONGTYPE;
	memcpy(keep, c->errstr, sizeof(keep));
	o = rl_opts(c, 1);
	o.aside = 1;
	said = kind_said(&(const struct rl_lock){ .name = name, .kind = kind },
	    status_open(c, name, &st, &o), &st, queue, what, sizeof(what));
	rl_round_end(&c->round);
	if (!said) {
		memcpy(c->errstr, keep, sizeof(keep));
		return RL_EWRONGTYPE;
	}
	return rl_seterr(c, RL_EKIND, "%s", what);
}

/* A semaphore answered {-2, permits, taken}: it has another number of
 * them, and some are taken, so it was not resized. */
static enum rl_err
other_limit(rl_client *c, const char *name, long limit)
{
	const redisReply *r = c->nodes[0].reply;
	long long size = rl_elem_int(r, RL_RET_OTHER_LIMIT_PERMITS, 0);
	long long taken = rl_elem_int(r, RL_RET_OTHER_LIMIT_TAKEN, 0);

	if (rl_verdict(r) != RL_RET_OTHER_LIMIT)
		return RL_OK;
	return rl_seterr(c, RL_EUSAGE, "%s is a semaphore of %lld permit%s, "
	    "not %ld, and %lld %s taken; nothing was changed: it is resized "
	    "only when no permit is taken; wait for %s, or free every permit "
	    "(its holders lose theirs): redlock unlock --force %s%s", name,
	    size, size == 1 ? "" : "s", limit, taken, taken == 1 ? "is" :
	    "are", taken == 1 ? "it" : "them", name[0] == '-' ? "-- " : "",
	    name);
}

/* Whether attempt T may be made of kind K: a fair queue is an exclusive
 * lock's, on one master, with a waiter timeout of at most the most. */
static enum rl_err
may_try(rl_client *c, const struct rl_kind_ops *k, const struct rl_try *t)
{
	const struct rl_fair *fair = t->fair;
	enum rl_err e;

	if (fair != NULL && !k->queue)
		return rl_seterr(c, RL_EUSAGE, "fair queues are for exclusive "
		    "locks only");
	if (fair != NULL && fair->waiter_timeout_ms > RL_WAITER_TIMEOUT_MAX_MS)
		return rl_seterr(c, RL_EUSAGE, "a waiter timeout of %lldms is "
		    "longer than the most, %lldms",
		    (long long)fair->waiter_timeout_ms,
		    (long long)RL_WAITER_TIMEOUT_MAX_MS);
	if ((e = rl_policy(c, fair != NULL ? "fair locks" : NULL)) != RL_OK)
		return e;
	return named(c, t->l->name);
}

enum rl_err
rl_try_acquire(rl_client *c, const struct rl_try *t, struct rl_attempt *a)
{
	const struct rl_lock *l = t->l;
	const struct rl_kind_ops *k;
	struct rl_call call;
	enum rl_err e;

	memset(a, 0, sizeof(*a));
	a->ahead = -1;
	if ((k = rl_kind_check(c, l, 1)) == NULL)
		return RL_EUSAGE;
	if ((e = may_try(c, k, t)) != RL_OK ||
	    (e = k->acquire(c, t, &call)) != RL_OK)
		return e;
	a->sent_ms = rl_now_ms();
	if (k->redlock)
		e = acquire_round(c, t->join, &call);
	else if ((e = one_round(c, &call)) == RL_OK)
		e = other_limit(c, l->name, l->limit);
	if (e == RL_OK)
		e = acquire_outcome(c, k, l, t->ttl_ms, a);
	rl_call_free(&call);
	if (e == RL_EWRONGTYPE)
		e = other_kind(c, l->name, l->kind, a->badkey, 0);
	return e;
}

/* The leave script's reply: where the waiter was in the queue. */
static enum rl_err
left(rl_client *c, int64_t *position)
{
	switch (rl_decode_leave(c->nodes[0].reply, position)) {
	case RL_V_YES:
		return RL_OK;
	case RL_V_NONE:
		return rl_no_quorum(c, "leave the queue");
	default:
		return unexpected(c, 0, "leave");
	}
}

/* rl_leave, its round on the side of a call when ASIDE (the replies of
 * the call are kept, put back once it is read). */
static enum rl_err
leave(rl_client *c, const char *name, const char *owner, int64_t *position,
    int aside)
{
	struct rl_call call;
	struct rl_round_opts o = rl_opts_pub(c);
	enum rl_err e;

	*position = 0;
	o.aside = aside;
	if ((e = rl_policy(c, "fair locks")) != RL_OK ||
	    (e = named(c, name)) != RL_OK)
		return e;
	rl_call_make(&call, &rl_script_leave, name, owner);
	RL_CALL_ARGS(LEAVE, 5);
	call.args[RL_LEAVE_ARG_OWNER] = owner;
	call.args[RL_LEAVE_ARG_HIST_MAX] = c->hist_max;
	call.args[RL_LEAVE_ARG_HIST_TTL] = c->hist_ttl;
	call.args[RL_LEAVE_ARG_WAITED] = rl_call_num(&call,
	    c->wait_since_ms > 0 ? rl_now_ms() - c->wait_since_ms : 0);
	if ((e = rl_call_made(c, &call)) != RL_OK)
		return e;
	e = rl_run_open(c, &o, 0, &call);
	rl_call_free(&call);
	if (e == RL_OK)
		e = left(c, position);
	rl_round_end(&c->round);
	return e;
}

enum rl_err
rl_leave(rl_client *c, const char *name, const char *owner,
    int64_t *position)
{
	return leave(c, name, owner, position, 0);
}

enum rl_err
rl_leave_aside(rl_client *c, const char *name, const char *owner,
    int64_t *position)
{
	return leave(c, name, owner, position, 1);
}

/* rl_release; UNUSED: the hold was never used (rl_release_unused). */
static enum rl_err
release(rl_client *c, const struct rl_lock *l, int unused,
    enum rl_release *rel, int64_t *holds, struct rl_attempt *a)
{
	const struct rl_kind_ops *k = rl_kind_check(c, l, 0);
	int64_t h[RL_MAX_NODES];
	const char *np[RL_MAX_NODES];
	enum rl_verdict v[RL_MAX_NODES];
	struct rl_call call;
	struct rl_round_opts ro = rl_opts_pub(c);
	enum rl_outcome o;
	enum rl_err e;
	size_t j, who = 0;

	memset(a, 0, sizeof(*a));
	if (k == NULL)
		return RL_EUSAGE;
	if (l->name[0] == '\0')
		return rl_seterr(c, RL_EUSAGE, "the lock name is empty");
	if ((e = k->release(c, l, &call)) != RL_OK)
		return e;
	if (unused)
		rl_call_unused(&call);
	ro.hold = 1;
	e = rl_run(c, &ro, &call);
	rl_call_free(&call);
	if (e != RL_OK)
		return e;
	for (j = 0; j < c->n; j++)
		v[j] = rl_decode_release(c->nodes[j].reply, &h[j], &np[j]);
	o = rl_combine_release(v, h, np, c->n, rel, holds, &a->nopub, &who);
	for (j = 0; j < c->n; j++)
		a->nodes_ok += v[j] == RL_V_YES || v[j] == RL_V_RELEASED;
	a->confirmed = a->nodes_ok >= rl_quorum(c->n);
	for (j = 0; j < c->n && o == RL_OUT_OK && *rel == RL_RELEASED; j++)
		if (rl_decode_release_until(c->nodes[j].reply) >
		    a->held_until_ms)
			a->held_until_ms =
			    rl_decode_release_until(c->nodes[j].reply);
	if (o == RL_OUT_WRONGTYPE)
		badtype(c->nodes[who].reply, a);
	return outcome(c, o, who, &(const struct what){ "release",
	    "release" }, a->badkey, a->badtype);
}

enum rl_err
rl_release(rl_client *c, const struct rl_lock *l, enum rl_release *rel,
    int64_t *holds, struct rl_attempt *a)
{
	return release(c, l, 0, rel, holds, a);
}

enum rl_err
rl_release_unused(rl_client *c, const struct rl_lock *l,
    enum rl_release *rel, int64_t *holds, struct rl_attempt *a)
{
	return release(c, l, 1, rel, holds, a);
}

enum rl_err
rl_force_release(rl_client *c, const char *name, enum rl_lock_kind kind,
    const struct rl_meta *by, int *deleted, struct rl_attempt *a)
{
	const struct rl_lock l = { .name = name, .kind = kind };
	const struct rl_kind_ops *k = rl_kind_check(c, &l, 0);
	const char *np[RL_MAX_NODES];
	enum rl_verdict v[RL_MAX_NODES];
	struct rl_call call;
	struct rl_round_opts ro = rl_opts_pub(c);
	enum rl_outcome o;
	enum rl_err e;
	size_t j, who = 0;

	memset(a, 0, sizeof(*a));
	*deleted = 0;
	if (k == NULL)
		return RL_EUSAGE;
	if (name[0] == '\0')
		return rl_seterr(c, RL_EUSAGE, "the lock name is empty");
	if ((e = k->force(c, &l, by, &call)) != RL_OK)
		return e;
	e = rl_run(c, &ro, &call);
	rl_call_free(&call);
	if (e != RL_OK)
		return e;
	for (j = 0; j < c->n; j++)
		v[j] = rl_decode_force(c->nodes[j].reply, &np[j]);
	o = rl_combine_force(v, np, c->n, deleted, &a->nopub, &who);
	for (j = 0; j < c->n && *deleted && a->owner == NULL; j++)
		rl_decode_forced(c->nodes[j].reply, a);
	if (o == RL_OUT_WRONGTYPE)
		badtype(c->nodes[who].reply, a);
	return outcome(c, o, who, &(const struct what){ "force", "delete" },
	    a->badkey, a->badtype);
}

enum rl_err
rl_status(rl_client *c, const char *name, struct rl_status *st)
{
	enum rl_err e = status_open(c, name, st, NULL);

	rl_round_end(&c->round);
	return e;
}

int
rl_node_status(rl_client *c, size_t i, struct rl_status *st, char *url,
    size_t urllen, const char **err)
{
	if (i >= c->n)
		return -1;
	rl_url_format(&c->nodes[i].url, url, urllen);
	*err = c->nodes[i].reply == NULL ? c->nodes[i].why : NULL;
	rl_decode_status(c->nodes[i].reply, st);
	return 0;
}

enum rl_err
rl_queue(rl_client *c, const char *name, struct rl_queue *q)
{
	struct rl_call call;
	enum rl_verdict v;
	enum rl_err e;

	memset(q, 0, sizeof(*q));
	if ((e = rl_policy(c, "fair queues")) != RL_OK ||
	    (e = named(c, name)) != RL_OK)
		return e;
	rl_call_make(&call, &rl_script_queue, name, NULL);
	RL_CALL_ARGS(QUEUE, 1);
	call.args[RL_QUEUE_ARG_RWCHANNEL] = rl_call_own(&call,
	    rl_key(RL_PREFIX_RWLOCK, name));
	if ((e = rl_call_made(c, &call)) != RL_OK)
		return e;
	e = rl_run(c, NULL, &call);
	rl_call_free(&call);
	if (e != RL_OK)
		return e;
	if (rl_decode_queue(c->nodes[0].reply, q, &v) < 0)
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	switch (v) {
	case RL_V_YES:
		return RL_OK;
	case RL_V_WRONGTYPE:
		if (wrongtype(c, q->badkey, q->badtype) == RL_EKIND)
			return RL_EKIND;
		return other_kind(c, name, RL_EXCLUSIVE, q->badkey, 1);
	case RL_V_NONE:
		return rl_no_quorum(c, "read the queue");
	default:
		return unexpected(c, 0, "queue");
	}
}

void
rl_queue_clear(struct rl_queue *q)
{
	free(q->waiters);
	free(q->guests);
	memset(q, 0, sizeof(*q));
}
