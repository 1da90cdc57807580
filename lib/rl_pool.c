/* rl_pool.c: rl_acquire and rl_acquire_any: the waits of a pool in one
 * poll, woken by release messages, timers, failovers and the interrupt. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "rl_waiter.h"

/* How often a waiting caller's callback is called between attempts. */
#define RL_TICK_MS 1000

/* The waits of one rl_acquire_any: a wait per name of the pool, each on
 * a client of its own, in one poll. */
struct pool {
	struct rl_waiter *w;
	size_t n;
	size_t which;		/* the wait acquired, or whose client says
				 * what failed */
	size_t last;		/* the wait last tried: what the caller's
				 * callback is shown */
	int64_t deadline;	/* -1: forever */
	rl_wait_cb cb;
	void *cbarg;
};

/* Room in a poll for every wait's subscriptions and sentinels' (one each
 * a master), and the interrupt descriptor. */
#define RL_POOL_FDS (RL_ANY_MAX * 2 * RL_MAX_NODES + 1)

/* When the pause must end at the latest. */
static int64_t
wake_at(const struct rl_waiter *w, int64_t retry, int64_t now)
{
	int64_t wake = retry;
	size_t j;

	if (w->deadline >= 0 && w->deadline < wake)
		wake = w->deadline;
	if (w->cb != NULL && now + RL_TICK_MS < wake)
		wake = now + RL_TICK_MS;
	if (rl_sub_listening(w) + rl_sub_subscribing(w) < w->c->n &&
	    w->sub_at < wake)
		wake = w->sub_at;
	if (rl_switch_wake_ms(w->c) >= 0 && rl_switch_wake_ms(w->c) < wake)
		wake = rl_switch_wake_ms(w->c);
	for (j = 0; j < w->c->n; j++)
		if (!w->listening[j] &&
		    w->c->nodes[j].sub.state != RL_CONN_CLOSED &&
		    w->sub_end[j] < wake)
			wake = w->sub_end[j];
	return wake > now ? wake : now;
}

/* Poll the subscriptions of every wait of P, the sentinels' (rl_switch.h)
 * and the interrupt descriptor until WAKE; GOT[i] when a release message
 * came for wait i, or a switch of master. */
static enum rl_err
listen_all(struct pool *p, int64_t wake, int *got)
{
	struct pollfd *pfd;
	size_t *node, at[RL_ANY_MAX], subs[RL_ANY_MAX], np = 0, i, j, k;
	int64_t now = rl_now_ms();
	enum rl_err e = RL_OK;
	int n, intr = p->w[0].c->intr_fd;

	pfd = malloc(RL_POOL_FDS * sizeof(*pfd));
	node = malloc(RL_POOL_FDS * sizeof(*node));
	if (pfd == NULL || node == NULL) {
		free(pfd);
		free(node);
		return rl_seterr(p->w[0].c, RL_ENOMEM, "out of memory");
	}
	for (i = 0; i < p->n; i++) {
		struct rl_waiter *w = &p->w[i];

		at[i] = np;
		for (j = 0; j < w->c->n; j++) {
			if (w->c->nodes[j].sub.state == RL_CONN_CLOSED)
				continue;
			pfd[np].fd = rl_conn_fd(&w->c->nodes[j].sub);
			pfd[np].events = rl_conn_events(&w->c->nodes[j].sub);
			pfd[np].revents = 0;
			node[np++] = j;
		}
		subs[i] = np - at[i];
		np += rl_switch_pollfds(w->c, now, pfd + np);
	}
	pfd[np].fd = intr;
	pfd[np].events = POLLIN;
	pfd[np].revents = 0;
	n = poll(pfd, (nfds_t)(np + 1), wake - now > INT_MAX ? INT_MAX :
	    (int)(wake - now));
	if (n < 0 && errno != EINTR) {
		p->which = 0;
		e = rl_seterr(p->w[0].c, RL_EPROTO, "poll: %s",
		    strerror(errno));
	} else if (intr >= 0 && (n < 0 || pfd[np].revents != 0)) {
		e = RL_EINTR;
		for (i = 0; i < p->n; i++)
			rl_client_interrupted(p->w[i].c);
	}
	now = rl_now_ms();
	for (i = 0; e == RL_OK && i < p->n; i++) {
		for (k = at[i]; e == RL_OK && k < at[i] + subs[i]; k++)
			e = rl_sub_io(&p->w[i], node[k], pfd[k].revents, now,
			    &got[i]);
		if (e != RL_OK)
			p->which = i;
		else if (rl_switch_step(p->w[i].c, pfd + at[i] + subs[i],
		    now))
			rl_sub_switch(&p->w[i], now, &got[i]);
	}
	free(pfd);
	free(node);
	return e;
}

/* Subscribe wait W where a subscription is missing; when its pause must
 * end at the latest, for a retry at RETRY. */
static int64_t
pause_prepare(struct rl_waiter *w, int64_t retry, int64_t now)
{
	rl_sub_stale(w, now);
	if (rl_sub_listening(w) + rl_sub_subscribing(w) < w->c->n &&
	    now >= w->sub_at)
		rl_sub_missing(w, now);
	return wake_at(w, retry, now);
}

/* Wait W's pause, as it ended with GOT: 1 to try it again. */
static int
pause_over(struct rl_waiter *w, int got, int64_t retry, int64_t now)
{
	rl_sub_note_lost(w);
	/* A subscription regained: a release may have gone unheard. */
	if (w->regained && rl_sub_subscribing(w) == 0) {
		w->regained = 0;
		return 1;
	}
	return got || now >= retry || (w->deadline >= 0 && now >= w->deadline);
}

/* Sleep until a wait's RETRY, a release message on any name, the
 * deadline or an interrupt, subscribing where a subscription is missing
 * and ticking the caller. Returns 1 with READY[i] set for the waits to
 * try again, 0 to stop (*E: RL_OK when the wait ran out or the caller
 * ended it). */
static int
pause_all(struct pool *p, const int64_t *retry, int *ready, enum rl_err *e)
{
	int64_t now = rl_now_ms(), then, wake, t;
	int got[RL_ANY_MAX], any;
	size_t i;

	for (;;) {
		*e = RL_OK;
		if (p->cb != NULL && p->cb(p->cbarg, p->w[p->last].a) != 0)
			return 0;
		if (p->deadline >= 0 && now >= p->deadline)
			return 0;
		wake = INT64_MAX;
		for (i = 0; i < p->n; i++) {
			got[i] = 0;
			if ((t = pause_prepare(&p->w[i], retry[i], now)) < wake)
				wake = t;
		}
		if ((*e = listen_all(p, wake, got)) != RL_OK)
			return 0;
		then = now;
		now = rl_now_ms();
		for (i = 0, any = 0; i < p->n; i++)
			any |= ready[i] = pause_over(&p->w[i], got[i], retry[i],
			    now);
		if (any)
			return 1;
		/* A tick for the caller: advance what it was told. */
		for (i = 0; i < p->n; i++) {
			struct rl_attempt *a = p->w[i].a;

			if (a->held_ms >= 0)
				a->held_ms += now - then;
			if (a->pttl >= 0)
				a->pttl = a->pttl > now - then ?
				    a->pttl - (now - then) : 0;
		}
	}
}

/* Until a name is acquired, the wait over, superseded (--supersede: a
 * newer waiter's call took this one out of the queue and the room, and
 * its message woke it), or an error: pause, then try again the names a
 * pause made ready, in the pool's order. */
static enum rl_err
wait_all(struct pool *p)
{
	int64_t retry[RL_ANY_MAX];
	int ready[RL_ANY_MAX];
	enum rl_err e;
	size_t i;

	for (i = 0; i < p->n; i++) {
		p->w[i].announced |= p->w[i].a->announced;
		retry[i] = rl_wait_retry(&p->w[i]);
	}
	for (;;) {
		if (!pause_all(p, retry, ready, &e))
			return e;
		for (i = 0; i < p->n; i++) {
			if (!ready[i])
				continue;
			p->last = p->which = i;
			if ((e = rl_wait_attempt(&p->w[i])) != RL_OK ||
			    p->w[i].a->acquired || p->w[i].a->superseded)
				return e;
			p->w[i].announced |= p->w[i].a->announced;
			retry[i] = rl_wait_retry(&p->w[i]);
		}
	}
}

/* Wait W is over: its subscriptions closed, and unless it acquired, it
 * leaves the queue or the room. */
static void
wait_end(struct rl_waiter *w)
{
	rl_sub_end(w);
	if (!w->a->acquired)
		rl_room_give_up(w);
}

/* rl_acquire_any's steps: a first attempt on each name in turn until one
 * is acquired, then, when none was, the wait on all of them. */
static enum rl_err
pool_acquire(struct pool *p, int64_t wait_ms)
{
	enum rl_err e = RL_OK;
	size_t i;

	for (i = 0; i < p->n; i++) {
		p->last = p->which = i;
		if ((e = rl_wait_first(&p->w[i], wait_ms)) != RL_OK ||
		    p->w[i].a->acquired || p->w[i].a->superseded ||
		    p->w[i].a->gone)
			break;
	}
	if (i == p->n) {
		p->last = p->which = 0;
		if (wait_ms != 0)
			e = wait_all(p);
	}
	for (i = 0; i < p->n; i++)
		if (p->w[i].waiting)
			wait_end(&p->w[i]);
	return e;
}

/* Wait I of pool P, for RQ's hold I on client C, from NOW; its call's
 * state is C's for as long as the call runs. */
static void
wait_init(struct pool *p, size_t i, rl_client *c,
    const struct rl_request *rq, struct rl_attempt *a, int64_t now)
{
	struct rl_waiter *w = &p->w[i];

	*w = (struct rl_waiter){ .c = c, .l = &rq->l[i],
	    .k = rl_kind_ops(rq->l[i].kind), .name = rq->l[i].name,
	    .owner = rq->l[i].owner, .ttl_ms = rq->ttl_ms, .meta = rq->meta,
	    .fair = rq->fair, .cb = rq->cb, .cbarg = rq->cbarg, .a = &a[i],
	    .deadline = p->deadline, .ctx = RL_CALL_CTX_NONE };
	w->ctx.since_ms = p->deadline >= 0 && rq->wait_ms > 0 ?
	    p->deadline - rq->wait_ms : now;
	w->ctx.wait_until_ms = p->deadline;
	/* -w bounds the whole call (rl_client_run). */
	w->ctx.end_ms = rq->wait_ms > 0 ? p->deadline + RL_LATE_MS : -1;
	/* --supersede: the first call arrives, the later ones look. */
	w->ctx.supersede = rq->supersede ? 1 : 0;
	c->ctx = &w->ctx;
}

enum rl_err
rl_acquire_any(rl_client *const *c, const struct rl_request *rq,
    struct rl_attempt *a, size_t *which)
{
	struct pool p = { .n = rq->n, .deadline = -1, .cb = rq->cb,
	    .cbarg = rq->cbarg };
	int64_t now = rl_now_ms(), wait_ms = rq->wait_ms;
	enum rl_err e;
	size_t i;

	*which = 0;
	if (p.n == 0 || p.n > RL_ANY_MAX)
		return rl_seterr(c[0], RL_EUSAGE, "a pool has 1 to %d names",
		    RL_ANY_MAX);
	if ((p.w = calloc(p.n, sizeof(*p.w))) == NULL)
		return rl_seterr(c[0], RL_ENOMEM, "out of memory");
	if (wait_ms >= 0)
		p.deadline = now + wait_ms;
	/* -w bounds the whole call: from its start, where connecting began
	 * (rl_set_connect_until), not again once connected. */
	if (wait_ms > 0 && c[0]->connect_until_ms > 0 &&
	    c[0]->connect_until_ms < p.deadline)
		p.deadline = c[0]->connect_until_ms > now ?
		    c[0]->connect_until_ms : now + 1;
	for (i = 0; i < p.n; i++)
		wait_init(&p, i, c[i], rq, a, now);
	e = pool_acquire(&p, wait_ms);
	for (i = 0; i < p.n; i++) {
		/* A round the interrupt cut short failed for it. */
		if (p.w[i].ctx.intr_seen && (e != RL_OK ||
		    !a[p.which].acquired))
			e = RL_EINTR;
		c[i]->ctx = NULL;
	}
	*which = p.which;
	free(p.w);
	return e;
}

enum rl_err
rl_acquire(rl_client *c, const struct rl_request *rq, struct rl_attempt *a)
{
	struct rl_request one = *rq;
	size_t which;

	one.n = 1;
	return rl_acquire_any(&c, &one, a, &which);
}
