/* rl_wait.c: one wait's attempts: the first, those while waiting, and
 * when to try again. */
#include "rl_quorum.h"
#include "rl_waiter.h"

/* A wait on a lock without expiry (never set by redlock) still retries
 * this often, so a lost release message cannot hang a waiter. */
#define RL_NO_TTL_RETRY_MS 1000

/* Through Sentinel, in the default of --replicas, an acquisition that no
 * replica acknowledged (given back already) was most likely made on a
 * master that a failover has replaced, which its replicas have left: the
 * waiter drops its connections there, subscription included, asks the
 * sentinels again at its next attempt and waits on. */
static int
replaced(struct rl_waiter *w, enum rl_err e)
{
	size_t j;

	if (e != RL_EREPLICAS || w->c->replicas >= 0)
		return 0;
	for (j = 0; j < w->c->n; j++) {
		rl_conn_close(&w->c->nodes[j].conn);
		rl_conn_close(&w->c->nodes[j].sub);
		w->listening[j] = 0;
	}
	return 1;
}

/* A first attempt on several masters that found no quorum though enough
 * of them were reached for one: the others' answers came too late (past
 * the node timeout, ms: masters busy, or a box too loaded), or few enough
 * could not be reached that a quorum is left (one master of five down, as
 * Redlock allows). A waiter waits that out as it does a later attempt
 * that fails. One that could not connect to so many that no quorum is
 * left (wrong URLs, masters down) still fails at once, as without -w. */
static int
quorum_in_reach(const struct rl_waiter *w, enum rl_err e)
{
	const struct rl_round_opts o = rl_opts(w->c, 1);
	const struct rl_node *nd;
	size_t j, reached = 0;

	/* Late past the node timeout of several masters, not past
	 * --reply-timeout, which is what bounds one master's answer. */
	if (e != RL_ECONNECT || !rl_opts_early(w->c, &o))
		return 0;
	for (j = 0; j < w->c->n; j++) {
		nd = &w->c->nodes[j];
		reached += nd->reply != NULL || nd->err == RL_OK ||
		    nd->conn.state == RL_CONN_READY;
	}
	return reached >= rl_quorum(w->c->n);
}

/* --supersede: the first call that reaches the masters arrives (it
 * supersedes the older waiters and leaves the record by which this one
 * is known); the later ones look. One that reached none is made again:
 * a later one would find no record and take this waiter for one stopped
 * past its record's life. */
static void
arrived(struct rl_waiter *w)
{
	if (w->ctx.supersede == 1 && !w->try_failed)
		w->ctx.supersede = 2;
}

enum rl_err
rl_wait_attempt(struct rl_waiter *w)
{
	enum rl_err e;

	/* Connecting and answering take at most the time left. */
	w->ctx.until_ms = w->deadline;
	e = rl_try_acquire(w->c, &(struct rl_try){ w->l, w->ttl_ms, w->meta,
	    w->fair, w->fair != NULL || w->room ? RL_JOIN_AGAIN :
	    RL_JOIN_YES }, w->a);
	if (e == RL_OK && !w->a->acquired &&
	    (e = rl_room_after_attempt(w)) == RL_OK && rl_room_behind_java(w))
		e = rl_try_acquire(w->c, &(struct rl_try){ w->l, w->ttl_ms,
		    w->meta, w->fair, RL_JOIN_YES }, w->a);
	w->ctx.until_ms = -1;
	w->try_failed = e == RL_ECONNECT || replaced(w, e);
	if (w->try_failed)
		e = RL_OK;
	else {	/* The server answers: the next loss is retried at once. */
		w->try_backoff = w->sub_backoff = 0;
		w->sub_lost = 0;
	}
	rl_sub_note_lost(w);
	arrived(w);
	return e;
}

int64_t
rl_wait_retry(struct rl_waiter *w)
{
	const struct rl_attempt *a = w->a;
	int64_t now = rl_now_ms(), retry;

	if (w->try_failed)
		return now + rl_backoff_ms(&w->try_backoff);
	retry = now + (a->pttl >= 0 ? a->pttl + 1 : RL_NO_TTL_RETRY_MS);
	if (w->fair != NULL && now + rl_room_heartbeat_ms(w->fair) < retry)
		retry = now + rl_room_heartbeat_ms(w->fair);
	/* A waiter of the room refreshes its place: the listener every
	 * third of the waiter timeout, the others every waiter timeout. */
	if (w->room && now + (w->head ? w->c->waiter_ms / 3 :
	    w->c->waiter_ms) < retry)
		retry = now + (w->head ? w->c->waiter_ms / 3 : w->c->waiter_ms);
	/* A waiter of a read-write lock looks again every third of its
	 * waiter timeout (a writer refreshes its announcement then, which
	 * lives that long); an exclusive waiter that announced itself
	 * refreshes it every third of its waiter timeout (that of the room
	 * or the fair queue, its announcement's life). */
	if (!w->k->room && now + w->c->waiter_ms / 3 < retry)
		retry = now + w->c->waiter_ms / 3;
	if (a->announced && now + rl_room_announce_ms(w) < retry)
		retry = now + rl_room_announce_ms(w);
	if (a->head_wait_ms >= 0 && now + a->head_wait_ms + 1 < retry)
		retry = now + a->head_wait_ms + 1;
	/* Nobody won a split vote: wait 0..200 ms at random (or for a
	 * release), so that contenders do not split again. */
	if (a->pttl < 0 && a->nodes_ok > 0)
		retry = now + rl_random_ms(200);
	return retry;
}

enum rl_err
rl_wait_first(struct rl_waiter *w, int64_t wait_ms)
{
	rl_client *c = w->c;
	struct rl_attempt *a = w->a;
	enum rl_err e;

	e = rl_try_acquire(c, &(struct rl_try){ w->l, w->ttl_ms, w->meta,
	    w->fair, wait_ms == 0 ? RL_JOIN_NO : RL_JOIN_YES }, a);
	/* Refused for want of replicas in the Sentinel default: a master
	 * being replaced, or one whose replicas the sentinels do not see
	 * down yet; a waiter waits that out too. */
	if (wait_ms != 0 && (replaced(w, e) || quorum_in_reach(w, e))) {
		w->try_failed = 1;
		e = RL_OK;
		rl_sub_note_lost(w);
	}
	arrived(w);
	/* Nothing to re-enter: no wait brings it back. */
	if (e != RL_OK || a->acquired || wait_ms == 0 || a->gone)
		return e;
	w->room = w->fair == NULL && w->k->room;
	if ((e = rl_room_after_attempt(w)) != RL_OK)
		return e;
	if (rl_room_behind_java(w) && ((e = rl_try_acquire(c,
	    &(struct rl_try){ w->l, w->ttl_ms, w->meta, w->fair,
	    RL_JOIN_YES }, a)) != RL_OK || a->acquired))
		return e;
	w->waiting = 1;
	w->sub_at = rl_now_ms();
	if (a->superseded)
		return RL_OK;
	if (rl_sub_cmd(w) < 0)
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	return RL_OK;
}
