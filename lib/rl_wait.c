/* rl_wait.c: waiting for a lock: pub/sub wake-ups, timers, reconnects. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rl_client.h"
#include "rl_keys.h"
#include "rl_kind.h"
#include "rl_lock.h"
#include "rl_quorum.h"

/* A wait on a lock without expiry (never set by redlock) still retries
 * this often, so a lost release message cannot hang a waiter. */
#define RL_NO_TTL_RETRY_MS 1000
/* A waiter of a read-write lock (-s, --write) tries again at least this
 * often: a writer renews its announcement, and a Redisson writer that
 * gives back its write while its own reads stay turns the lock to read
 * mode and publishes nothing. */
/* How often a waiting caller's callback is called between attempts. */
#define RL_TICK_MS 1000
/* Reconnecting: the delays double from RL_BACKOFF_MIN_MS up to
 * RL_BACKOFF_MAX_MS, each with up to half again at random, so that the
 * waiters of a restarted server do not all come back at once. */
#define RL_BACKOFF_MIN_MS 50
#define RL_BACKOFF_MAX_MS 1000

/* One wait of rl_acquire: its arguments, what it listens to, and when it
 * tries to reconnect. */
struct wait {
	rl_client *c;
	const struct rl_lock *l;	/* the hold wanted */
	const struct rl_kind_ops *k;	/* its kind */
	const char *name, *owner;
	int64_t ttl_ms;
	const struct rl_meta *meta;
	const struct rl_fair *fair;
	struct rl_fair plainq;	/* a plain waiter's queue (queue_behind_java) */
	int room;		/* a plain or --limit waiter: in the room */
	int announced;		/* an exclusive waiter that an attempt
				 * announced to readers: it withdraws the
				 * announcement when it gives up */
	rl_wait_cb cb;
	void *cbarg;
	struct rl_attempt *a;
	char *subcmd[2];	/* SUBSCRIBE channel, and SSUBSCRIBE where
				 * channels are sharded, formatted */
	size_t subcmdlen[2];
	char *headcmd[2];	/* the same for the name's channel, which
				 * the head of a fair queue and the room's
				 * listener listen to as well (a plain
				 * holder's release, Redisson's), and for an
				 * exclusive waiter the read-write lock's */
	size_t headcmdlen[2];
	int nhead;		/* channels in headcmd */
	int head;		/* the caller is the head, or the listener */
	int headsub[RL_MAX_NODES];	/* master i was sent headcmd */
	/* Subscription i's commands sent and answered (confirmed or
	 * refused; messages aside), and which answer may be a refusal
	 * that does not matter (0: none): the read-write lock's channel
	 * for an exclusive waiter, which a user granted the lock's
	 * channels only may not have. */
	int asked[RL_MAX_NODES], answered[RL_MAX_NODES];
	int optional[RL_MAX_NODES];
	char doing[2][256];	/* "SUBSCRIBE to channel", for messages */
	int kind[RL_MAX_NODES];	/* which one master i was sent */
	int moved[RL_MAX_NODES];	/* MOVED to a new node followed by
					 * subscription i, since it last
					 * came or failed */
	struct rl_hops hops[RL_MAX_NODES];	/* where i was before */
	int64_t bounce_end[RL_MAX_NODES];	/* ping-pongs of i followed
						 * until then; 0 */
	int listening[RL_MAX_NODES];	/* subscribed on master i */
	int64_t sub_end[RL_MAX_NODES];	/* subscribing on i until then */
	int regained;		/* a subscription came (back) */
	int64_t deadline;	/* -1: forever */
	int64_t sub_at;		/* when to subscribe the missing ones */
	int64_t sub_backoff;	/* last delay between failed subscriptions */
	int64_t try_backoff;	/* last delay between failed attempts */
	int try_failed;		/* the last attempt could not reach a quorum */
	int waiting;		/* busy at its first attempt, and waits */
};

/* A random delay of 0..N ms. */
static int64_t
random_ms(int64_t n)
{
	unsigned int r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned int)rl_now_ms();
	return (int64_t)(r % (unsigned int)(n + 1));
}

static int64_t
backoff_ms(int64_t *last)
{
	*last = *last == 0 ? RL_BACKOFF_MIN_MS : *last * 2;
	if (*last > RL_BACKOFF_MAX_MS)
		*last = RL_BACKOFF_MAX_MS;
	return *last + random_ms(*last / 2);
}

/* A fair waiter refreshes its place this often. */
static int64_t
heartbeat_ms(const struct rl_fair *fair)
{
	int64_t h = fair->waiter_timeout_ms / 3;

	return h > 0 ? h : 1;
}

static size_t
listening(const struct wait *w)
{
	size_t j, n = 0;

	for (j = 0; j < w->c->n; j++)
		n += w->listening[j];
	return n;
}

/* Subscriptions on their way. */
static size_t
subscribing(const struct wait *w)
{
	size_t j, n = 0;

	for (j = 0; j < w->c->n; j++)
		n += !w->listening[j] &&
		    w->c->nodes[j].sub.state != RL_CONN_CLOSED;
	return n;
}

/* Subscriptions between a MOVED and their next try (sub_moved): on their
 * way still, not lost. */
static size_t
redirected(const struct wait *w)
{
	size_t j, n = 0;

	for (j = 0; j < w->c->n; j++)
		n += !w->listening[j] && w->hops[j].n > 0 &&
		    w->c->nodes[j].sub.state == RL_CONN_CLOSED;
	return n;
}

/* Out of reach: the attempt failed, or no subscription is left. */
static void
note_lost(struct wait *w)
{
	w->a->lost = w->try_failed || (listening(w) == 0 &&
	    subscribing(w) == 0 && redirected(w) == 0) ? w->c->errstr : NULL;
}

/* Subscription J came, or failed: the MOVEDs it followed are forgotten. */
static void
forget_moves(struct wait *w, size_t j)
{
	w->moved[j] = 0;
	w->bounce_end[j] = 0;
	rl_hops_clear(&w->hops[j]);
}

/* Subscription J failed or was lost: say why, and subscribe again after
 * a backoff (the first loss at once). */
static void
sub_failed(struct wait *w, size_t j, int64_t now)
{
	struct rl_node *nd = &w->c->nodes[j];

	forget_moves(w, j);
	rl_seterr(w->c, nd->sub.err != RL_OK ? nd->sub.err : RL_ECONNECT,
	    "%s", nd->sub.why);
	rl_conn_close(&nd->sub);
	if (w->listening[j] && w->sub_backoff == 0)
		w->sub_at = now;
	else if (w->sub_at <= now)
		w->sub_at = now + backoff_ms(&w->sub_backoff);
	w->listening[j] = 0;
	note_lost(w);
}

/* A fair waiter at the head of the queue listens to the lock's channel
 * too, where a release that wakes no fair waiter (a Redisson RLock's)
 * publishes; those behind it need not: only the head may take the lock.
 * So does the listener of the room, for all of its waiters. The
 * confirmation counts as a message: one attempt more. */
static int
listen_as_head(struct wait *w, size_t j)
{
	struct rl_conn *sub = &w->c->nodes[j].sub;

	if (!w->head || w->headcmd[0] == NULL || w->headsub[j] ||
	    sub->state == RL_CONN_CLOSED)
		return 0;
	w->headsub[j] = 1;
	w->asked[j] += w->nhead;
	if (w->nhead > 1)
		w->optional[j] = w->asked[j];
	return rl_conn_send(sub, w->headcmd[w->kind[j]],
	    w->headcmdlen[w->kind[j]]);
}

/* Start subscribing where no subscription is. */
static void
subscribe_missing(struct wait *w, int64_t now)
{
	size_t j;

	for (j = 0; j < w->c->n; j++) {
		struct rl_node *nd = &w->c->nodes[j];

		if (nd->sub.state != RL_CONN_CLOSED)
			continue;
		w->sub_end[j] = now + w->c->connect_timeout_ms;
		if (w->deadline >= 0 && w->sub_end[j] > w->deadline)
			w->sub_end[j] = w->deadline;
		w->kind[j] = nd->sharded > 0;
		w->headsub[j] = 0;
		w->asked[j] = 1;
		w->answered[j] = w->optional[j] = 0;
		if (rl_conn_open(&nd->sub) < 0 || rl_conn_send(&nd->sub,
		    w->subcmd[w->kind[j]], w->subcmdlen[w->kind[j]]) < 0 ||
		    listen_as_head(w, j) < 0)
			sub_failed(w, j, now);
	}
}

/* Subscription J's MOVED (STR) from the node at its address to HOST:PORT
 * goes back to a node it came from (rl_hops_back): followed while a
 * reply may take from the first such, as a command's (rl_round.h); 1
 * when that is over, and it failed, naming both nodes. */
static int
sub_bounce_over(struct wait *w, size_t j, char *host, int port,
    const char *str, int64_t now)
{
	struct rl_node *nd = &w->c->nodes[j];
	int64_t ms = rl_opts(w->c, 1).reply_ms;

	if (w->bounce_end[j] == 0)
		w->bounce_end[j] = now + ms;
	if (now + RL_TRYAGAIN_MS < w->bounce_end[j])
		return 0;
	rl_hops_why(&(struct rl_bounce){ &nd->url, host, port,
	    w->doing[w->kind[j]], str, now - (w->bounce_end[j] - ms) },
	    nd->sub.why, sizeof(nd->sub.why));
	nd->sub.err = RL_ECONNECT;
	sub_failed(w, j, now);
	return 1;
}

/* SSUBSCRIBE answered MOVED (the channel's slot is served elsewhere): the
 * master's address becomes the node named, for its commands too, and the
 * subscription is made there: at once, or after RL_TRYAGAIN_MS when it
 * goes back to a node it came from (a ping-pong while the slot changes
 * owner). 0 when followed, or failed already. */
static int
sub_moved(struct wait *w, size_t j, const char *str, int64_t now)
{
	struct rl_node *nd = &w->c->nodes[j];
	char *host;
	int port, ask, back;

	if (rl_redirection(str, &host, &port, &ask) < 0)
		return -1;
	back = rl_hops_back(&w->hops[j], &nd->url, host, port);
	if (ask || (!back && w->moved[j] >= RL_MAX_REDIRECTS)) {
		free(host);
		return -1;
	}
	if (back && sub_bounce_over(w, j, host, port, str, now)) {
		free(host);
		return 0;
	}
	if (rl_hops_add(&w->hops[j], &nd->url) < 0) {
		free(host);
		snprintf(nd->sub.why, sizeof(nd->sub.why), "out of memory");
		nd->sub.err = RL_ENOMEM;
		sub_failed(w, j, now);
		return 0;
	}
	w->moved[j] += !back;
	rl_node_move(nd, host, port, 0);
	w->listening[j] = 0;
	w->sub_at = now + (back ? RL_TRYAGAIN_MS : 0);
	return 0;
}

/* A refusal on subscription J: returned when waiting cannot cure it. */
static enum rl_err
sub_refused(struct wait *w, size_t j, redisReply *r, int64_t now)
{
	struct rl_node *nd = &w->c->nodes[j];
	enum rl_err e;

	if (sub_moved(w, j, r->str, now) == 0) {
		freeReplyObject(r);
		return RL_OK;
	}
	e = rl_error_reply(&nd->url, r->str, w->doing[w->kind[j]],
	    nd->sub.why, sizeof(nd->sub.why));
	freeReplyObject(r);
	nd->sub.err = e;
	if (e == RL_EAUTH)
		return rl_seterr(w->c, e, "%s", nd->sub.why);
	sub_failed(w, j, now);
	return RL_OK;
}

/* A push that is not a message: the server dropped the subscription
 * (sunsubscribe: the channel's slot moved to another master). */
static int
unsubscribed(const redisReply *r)
{
	return r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
	    r->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(r->element[0]->str, "sunsubscribe") == 0;
}

/* A confirmation of (S)SUBSCRIBE, not a message. */
static int
confirmed(const redisReply *r)
{
	return r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
	    r->element[0]->type == REDIS_REPLY_STRING &&
	    (strcmp(r->element[0]->str, "subscribe") == 0 ||
	    strcmp(r->element[0]->str, "ssubscribe") == 0);
}

/* What came on subscription J: the confirmation, messages (*GOT), or a
 * refusal. Only a refusal that waiting cannot cure is returned; that of
 * the optional channel is let be (its releases are heard at the next
 * try instead). */
static enum rl_err
sub_io(struct wait *w, size_t j, short revents, int64_t now, int *got)
{
	struct rl_node *nd = &w->c->nodes[j];
	redisReply *r;
	enum rl_io io;

	while ((io = rl_conn_io(&nd->sub, revents, &r)) == RL_IO_REPLY) {
		revents = 0;
		if (r->type == REDIS_REPLY_ERROR || confirmed(r))
			w->answered[j]++;
		if (r->type == REDIS_REPLY_ERROR &&
		    w->answered[j] == w->optional[j]) {
			*got |= w->answered[j] == w->asked[j];
			freeReplyObject(r);
			continue;
		}
		if (r->type == REDIS_REPLY_ERROR)
			return sub_refused(w, j, r, now);
		if (w->listening[j] && unsubscribed(r)) {
			freeReplyObject(r);
			snprintf(nd->sub.why, sizeof(nd->sub.why), "%s dropped "
			    "the subscription (the slot moved?)", nd->url.host);
			nd->sub.err = RL_ECONNECT;
			sub_failed(w, j, now);
			return RL_OK;
		}
		/* A message, or the last confirmation asked for (the head's
		 * channels: one attempt more, for a release between the
		 * attempt that made it the head and then). */
		if (w->listening[j])
			*got |= !confirmed(r) || w->answered[j] == w->asked[j];
		else {
			w->listening[j] = 1;
			w->regained = 1;
			forget_moves(w, j);
		}
		freeReplyObject(r);
	}
	if (io == RL_IO_FAIL) {
		if (nd->sub.err == RL_EAUTH)
			return rl_seterr(w->c, RL_EAUTH, "%s", nd->sub.why);
		sub_failed(w, j, now);
	} else if (!w->listening[j] && now >= w->sub_end[j]) {
		rl_error_io(&nd->url, "cannot subscribe on", nd->sub.stage !=
		    NULL ? nd->sub.stage : "timed out (see --connect-timeout)",
		    nd->sub.why, sizeof(nd->sub.why));
		sub_failed(w, j, now);
	}
	if (listening(w) == w->c->n)
		w->sub_backoff = 0;
	return RL_OK;
}

/* When the pause must end at the latest. */
static int64_t
wake_at(const struct wait *w, int64_t retry, int64_t now)
{
	int64_t wake = retry;
	size_t j;

	if (w->deadline >= 0 && w->deadline < wake)
		wake = w->deadline;
	if (w->cb != NULL && now + RL_TICK_MS < wake)
		wake = now + RL_TICK_MS;
	if (listening(w) + subscribing(w) < w->c->n && w->sub_at < wake)
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

/* The sentinels announced a failover (rl_switch.h): the connections left
 * on the old master are closed, subscriptions with them (made again on
 * the new one), and the waiter tries at once (*GOT). */
static void
follow_switch(struct wait *w, int64_t now, int *got)
{
	int closed[RL_MAX_NODES];
	size_t j;

	if (rl_switch_follow(w->c, closed) == 0)
		return;
	for (j = 0; j < w->c->n; j++)
		if (closed[j]) {
			rl_seterr(w->c, RL_ECONNECT, "the sentinels "
			    "announced a failover to %s:%d",
			    w->c->nodes[j].sw.host, w->c->nodes[j].sw.port);
			w->listening[j] = 0;
			w->sub_at = now;
		}
	*got = 1;
}

/* The waits of one rl_acquire_any: a wait per name of the pool, each on
 * a client of its own, in one poll. */
struct pool {
	struct wait *w;
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
		struct wait *w = &p->w[i];

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
			e = sub_io(&p->w[i], node[k], pfd[k].revents, now,
			    &got[i]);
		if (e != RL_OK)
			p->which = i;
		else if (rl_switch_step(p->w[i].c, pfd + at[i] + subs[i],
		    now))
			follow_switch(&p->w[i], now, &got[i]);
	}
	free(pfd);
	free(node);
	return e;
}

/* Subscriptions a round closed (it followed MOVED elsewhere), or of the
 * wrong kind now that the master is known to shard its channels: made
 * again at once. */
static void
forget_stale(struct wait *w, int64_t now)
{
	size_t j;

	for (j = 0; j < w->c->n; j++) {
		struct rl_node *nd = &w->c->nodes[j];

		if (nd->sub.state == RL_CONN_CLOSED && !w->listening[j])
			continue;
		if (nd->sub.state != RL_CONN_CLOSED &&
		    w->kind[j] == (nd->sharded > 0))
			continue;
		rl_conn_close(&nd->sub);
		w->listening[j] = 0;
		w->sub_at = now;
	}
}

/* Subscribe wait W where a subscription is missing; when its pause must
 * end at the latest, for a retry at RETRY. */
static int64_t
pause_prepare(struct wait *w, int64_t retry, int64_t now)
{
	forget_stale(w, now);
	if (listening(w) + subscribing(w) < w->c->n && now >= w->sub_at)
		subscribe_missing(w, now);
	return wake_at(w, retry, now);
}

/* Wait W's pause, as it ended with GOT: 1 to try it again. */
static int
pause_over(struct wait *w, int got, int64_t retry, int64_t now)
{
	note_lost(w);
	/* A subscription regained: a release may have gone unheard. */
	if (w->regained && subscribing(w) == 0) {
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

/* A plain waiter behind a holder that is not redlock's (a Java service)
 * queues too, since Redisson's fair lock wakes only the head of its queue
 * and never publishes on the lock's channel; it still takes a free lock
 * as a plain lock does. Only the room's listener does, which listens to
 * the lock's channel as well, so that one waiter retries on each release
 * of Redisson's. One master only, as fair locks. 1 when it is to queue. */
static int
queue_behind_java(struct wait *w)
{
	const struct rl_attempt *a = w->a;

	if (w->fair != NULL || !w->head || a->owner == NULL ||
	    a->host != NULL || !rl_one_master(w->c) || !w->k->queue)
		return 0;
	w->plainq.waiter_timeout_ms = w->c->waiter_ms;
	w->plainq.want_position = 0;
	w->plainq.plain = 1;
	w->fair = &w->plainq;
	return 1;
}

/* What an attempt told a waiter: the head of a fair queue, or the
 * listener of the room, listens to the name's channel as well. */
static enum rl_err
after_attempt(struct wait *w)
{
	size_t j;

	if (w->head || ((w->fair == NULL || w->a->ahead != 0) &&
	    (!w->room || !w->a->listen)))
		return RL_OK;
	w->head = 1;
	for (j = 0; j < w->c->n; j++)
		if (listen_as_head(w, j) < 0)
			return rl_seterr(w->c, RL_ENOMEM, "out of memory");
	return RL_OK;
}

/* Through Sentinel, in the default of --replicas, an acquisition that no
 * replica acknowledged (given back already) was most likely made on a
 * master that a failover has replaced, which its replicas have left: the
 * waiter drops its connections there, subscription included, asks the
 * sentinels again at its next attempt and waits on. */
static int
replaced(struct wait *w, enum rl_err e)
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
quorum_in_reach(const struct wait *w, enum rl_err e)
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
arrived(struct wait *w)
{
	if (w->c->supersede == 1 && !w->try_failed)
		w->c->supersede = 2;
}

/* One attempt while waiting; when it could not reach the masters (or
 * reached a replaced one), RL_OK with w->try_failed set. */
static enum rl_err
attempt(struct wait *w)
{
	enum rl_err e;

	/* Connecting and answering take at most the time left. */
	w->c->until_ms = w->deadline;
	e = rl_try_acquire(w->c, &(struct rl_try){ w->l, w->ttl_ms, w->meta,
	    w->fair, w->fair != NULL || w->room ? RL_JOIN_AGAIN :
	    RL_JOIN_YES }, w->a);
	if (e == RL_OK && !w->a->acquired && (e = after_attempt(w)) == RL_OK &&
	    queue_behind_java(w))
		e = rl_try_acquire(w->c, &(struct rl_try){ w->l, w->ttl_ms,
		    w->meta, w->fair, RL_JOIN_YES }, w->a);
	w->c->until_ms = -1;
	w->try_failed = e == RL_ECONNECT || replaced(w, e);
	if (w->try_failed)
		e = RL_OK;
	else
		w->try_backoff = 0;
	note_lost(w);
	arrived(w);
	return e;
}

/* How often an exclusive waiter that announced itself to readers renews
 * the announcement. */
static int64_t
announce_ms(const struct wait *w)
{
	int64_t ms = (w->fair != NULL ? w->fair->waiter_timeout_ms :
	    w->c->waiter_ms) / 3;

	return ms > 0 ? ms : 1;
}

/* When to try again after a busy attempt. */
static int64_t
next_retry(struct wait *w)
{
	const struct rl_attempt *a = w->a;
	int64_t now = rl_now_ms(), retry;

	if (w->try_failed)
		return now + backoff_ms(&w->try_backoff);
	retry = now + (a->pttl >= 0 ? a->pttl + 1 : RL_NO_TTL_RETRY_MS);
	if (w->fair != NULL && now + heartbeat_ms(w->fair) < retry)
		retry = now + heartbeat_ms(w->fair);
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
	if (a->announced && now + announce_ms(w) < retry)
		retry = now + announce_ms(w);
	if (a->head_wait_ms >= 0 && now + a->head_wait_ms + 1 < retry)
		retry = now + a->head_wait_ms + 1;
	/* Nobody won a split vote: wait 0..200 ms at random (or for a
	 * release), so that contenders do not split again. */
	if (a->pttl < 0 && a->nodes_ok > 0)
		retry = now + random_ms(200);
	return retry;
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
		retry[i] = next_retry(&p->w[i]);
	}
	for (;;) {
		if (!pause_all(p, retry, ready, &e))
			return e;
		for (i = 0; i < p->n; i++) {
			if (!ready[i])
				continue;
			p->last = p->which = i;
			if ((e = attempt(&p->w[i])) != RL_OK ||
			    p->w[i].a->acquired || p->w[i].a->superseded)
				return e;
			p->w[i].announced |= p->w[i].a->announced;
			retry[i] = next_retry(&p->w[i]);
		}
	}
}

/* What a waiter subscribes to: a waiter of a read-write lock to the
 * read-write lock's channel, and the lock's as well (headcmd: there
 * Redisson's RLock and redlock's exclusive releases publish); a fair
 * waiter, or one of the room, to its own, and at the head of the queue or
 * as the room's listener to the name's channel as well, and an exclusive
 * one to the read-write lock's too, where Redisson's readers and writers
 * publish their releases and nowhere else. */
static int
subscribe_cmd(struct wait *w)
{
	int rw = !w->k->room;
	char *ch, *head[2] = { NULL, NULL };
	size_t nhead = 1;
	int r = -1;

	ch = rw ? rl_kind_channel(w->l) : rl_kind_waiter_channel(w->l);
	head[0] = rw ? rl_key(RL_PREFIX_CHANNEL, w->name) :
	    rl_kind_channel(w->l);
	if (w->k->queue)
		head[nhead++] = rl_kind_rw_channel(w->name);
	w->nhead = (int)nhead;
	if (ch != NULL && head[0] != NULL && head[nhead - 1] != NULL) {
		snprintf(w->doing[0], sizeof(w->doing[0]), "SUBSCRIBE to %s",
		    ch);
		snprintf(w->doing[1], sizeof(w->doing[1]), "SSUBSCRIBE to %s",
		    ch);
		r = rl_format_sub((const char *const *)&ch, 1, w->subcmd,
		    w->subcmdlen) < 0 || rl_format_sub((const char *const *)head,
		    nhead, w->headcmd, w->headcmdlen) < 0 ? -1 : 0;
	}
	free(ch);
	free(head[0]);
	free(head[1]);
	w->head = w->head || rw;
	return r;
}

/* Leave the fair queue on every way out (also when the wait failed: the
 * connection may still work, and if it does not, the waiter timeout drops
 * the entry), keeping the first error's message and, in a round on the
 * side, the last attempt's replies (the strings in A point into them). */
static void
leave_queue(rl_client *c, const char *name, const char *owner,
    struct rl_attempt *a)
{
	char keep[sizeof(c->errstr)];
	int64_t position = 0;

	memcpy(keep, c->errstr, sizeof(keep));
	if (rl_leave_aside(c, name, owner, &position) == RL_OK &&
	    position > 0)
		a->ahead = position - 1;
	memcpy(c->errstr, keep, sizeof(keep));
}

/* A last call on the way out (CALL built, RL_OK), on every master,
 * keeping the first error's message and the last attempt's replies. */
static void
last_call(rl_client *c, enum rl_err made, struct rl_call *call)
{
	char keep[sizeof(c->errstr)];
	struct rl_round_opts o = rl_opts_pub(c);

	if (made != RL_OK)
		return;
	memcpy(keep, c->errstr, sizeof(keep));
	o.aside = 1;
	rl_run(c, &o, call);
	memcpy(c->errstr, keep, sizeof(keep));
	rl_call_free(call);
}

/* Stop waiting without the lock: leave the fair queue, or the room (the
 * listener hands its role on), and a writer, or an exclusive waiter that
 * announced itself, withdraws its announcement, so that readers held back
 * by it come in. Each records giving up in the name's history. */
static void
give_up(struct wait *w)
{
	char keep[sizeof(w->c->errstr)];
	struct rl_call call;
	enum rl_err made;

	/* A call that cannot be built (out of memory) says so in errstr:
	 * the wait's own message is the one to keep. */
	memcpy(keep, w->c->errstr, sizeof(keep));
	rl_client_way_out(w->c);
	if (w->fair != NULL)
		leave_queue(w->c, w->name, w->owner, w->a);
	/* The kind's way out: the room's, or a read-write lock's (a
	 * reader has no announcement, but is recorded giving up). A
	 * superseded waiter is out of the room already where the newer
	 * one's call came, and recorded there: its call (for a master
	 * that call missed) records nothing. */
	if (w->room || !w->k->room) {
		made = w->k->leave(w->c, w->l, w->meta, rl_now_ms() -
		    w->c->wait_since_ms, &call);
		if (made == RL_OK && w->a->superseded && !w->a->lapsed)
			rl_call_unrecorded(&call);
		last_call(w->c, made, &call);
	}
	if (w->announced && w->k->room)
		last_call(w->c, rl_call_unannounce(w->c, w->l, &call), &call);
	memcpy(w->c->errstr, keep, sizeof(keep));
}

/* The first attempt of wait W: RL_OK when acquired, or busy (and, with
 * WAIT_MS not 0, set to wait: w->waiting), else an error. */
static enum rl_err
first_attempt(struct wait *w, int64_t wait_ms)
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
		note_lost(w);
	}
	arrived(w);
	/* Nothing to re-enter: no wait brings it back. */
	if (e != RL_OK || a->acquired || wait_ms == 0 || a->gone)
		return e;
	w->room = w->fair == NULL && w->k->room;
	if ((e = after_attempt(w)) != RL_OK)
		return e;
	if (queue_behind_java(w) && ((e = rl_try_acquire(c, &(struct rl_try){
	    w->l, w->ttl_ms, w->meta, w->fair, RL_JOIN_YES }, a)) != RL_OK ||
	    a->acquired))
		return e;
	w->waiting = 1;
	w->sub_at = rl_now_ms();
	if (a->superseded)
		return RL_OK;
	if (subscribe_cmd(w) < 0)
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	return RL_OK;
}

/* Wait W is over: its subscriptions closed, and unless it acquired, it
 * leaves the queue or the room. */
static void
wait_end(struct wait *w)
{
	size_t j;

	for (j = 0; j < 2; j++) {
		redisFreeCommand(w->subcmd[j]);
		redisFreeCommand(w->headcmd[j]);
	}
	for (j = 0; j < w->c->n; j++) {
		rl_conn_close(&w->c->nodes[j].sub);
		rl_hops_clear(&w->hops[j]);
	}
	if (!w->a->acquired)
		give_up(w);
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
		if ((e = first_attempt(&p->w[i], wait_ms)) != RL_OK ||
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

enum rl_err
rl_acquire_any(rl_client *const *c, const struct rl_lock *l, size_t n,
    int64_t ttl_ms, int64_t wait_ms, const struct rl_meta *meta,
    const struct rl_fair *fair, rl_wait_cb cb, void *cbarg,
    struct rl_attempt *a, size_t *which)
{
	struct pool p = { .n = n, .deadline = -1, .cb = cb, .cbarg = cbarg };
	int64_t now = rl_now_ms();
	enum rl_err e;
	size_t i;

	*which = 0;
	if (n == 0 || n > RL_ANY_MAX)
		return rl_seterr(c[0], RL_EUSAGE, "a pool has 1 to %d names",
		    RL_ANY_MAX);
	if ((p.w = calloc(n, sizeof(*p.w))) == NULL)
		return rl_seterr(c[0], RL_ENOMEM, "out of memory");
	if (wait_ms >= 0)
		p.deadline = now + wait_ms;
	/* -w bounds the whole call: from its start, where connecting began
	 * (rl_set_connect_until), not again once connected. */
	if (wait_ms > 0 && c[0]->connect_until_ms > 0 &&
	    c[0]->connect_until_ms < p.deadline)
		p.deadline = c[0]->connect_until_ms > now ?
		    c[0]->connect_until_ms : now + 1;
	for (i = 0; i < n; i++) {
		p.w[i] = (struct wait){ .c = c[i], .l = &l[i],
		    .k = rl_kind_ops(l[i].kind), .name = l[i].name,
		    .owner = l[i].owner, .ttl_ms = ttl_ms, .meta = meta,
		    .fair = fair, .cb = cb, .cbarg = cbarg, .a = &a[i],
		    .deadline = p.deadline };
		c[i]->wait_since_ms = p.deadline >= 0 && wait_ms > 0 ?
		    p.deadline - wait_ms : now;
		c[i]->wait_until_ms = p.deadline;
		/* -w bounds the whole call (rl_client_run). */
		c[i]->end_ms = wait_ms > 0 ? p.deadline + RL_LATE_MS : -1;
		c[i]->intr_seen = 0;
		/* --supersede: the first call arrives, the later ones look. */
		if (c[i]->supersede != 0)
			c[i]->supersede = 1;
	}
	e = pool_acquire(&p, wait_ms);
	for (i = 0; i < n; i++) {
		/* A round the interrupt cut short failed for it. */
		if (c[i]->intr_seen && (e != RL_OK || !a[p.which].acquired))
			e = RL_EINTR;
		c[i]->wait_since_ms = c[i]->intr_seen = 0;
		c[i]->wait_until_ms = -2;
		c[i]->end_ms = -1;
	}
	*which = p.which;
	free(p.w);
	return e;
}

enum rl_err
rl_acquire(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    int64_t wait_ms, const struct rl_meta *meta, const struct rl_fair *fair,
    rl_wait_cb cb, void *cbarg, struct rl_attempt *a)
{
	size_t which;

	return rl_acquire_any(&c, l, 1, ttl_ms, wait_ms, meta, fair, cb,
	    cbarg, a, &which);
}
