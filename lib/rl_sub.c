/* rl_sub.c: a waiter's subscriptions: made, lost and made again with
 * backoff, their messages, MOVED (rl_follow) and failovers followed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rl_keys.h"
#include "rl_waiter.h"

int64_t
rl_random_ms(int64_t n)
{
	unsigned int r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned int)rl_now_ms();
	return (int64_t)(r % (unsigned int)(n + 1));
}

int64_t
rl_backoff_ms(int64_t *last)
{
	*last = *last == 0 ? RL_BACKOFF_MIN_MS : *last * 2;
	if (*last > RL_BACKOFF_MAX_MS)
		*last = RL_BACKOFF_MAX_MS;
	return *last + rl_random_ms(*last / 2);
}

size_t
rl_sub_listening(const struct rl_waiter *w)
{
	size_t j, n = 0;

	for (j = 0; j < w->c->n; j++)
		n += w->listening[j];
	return n;
}

size_t
rl_sub_subscribing(const struct rl_waiter *w)
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
redirected(const struct rl_waiter *w)
{
	size_t j, n = 0;

	for (j = 0; j < w->c->n; j++)
		n += !w->listening[j] && w->fw[j].hops.n > 0 &&
		    w->c->nodes[j].sub.state == RL_CONN_CLOSED;
	return n;
}

void
rl_sub_note_lost(struct rl_waiter *w)
{
	w->a->lost = w->try_failed || (rl_sub_listening(w) == 0 &&
	    rl_sub_subscribing(w) == 0 && redirected(w) == 0) ?
	    w->c->errstr : NULL;
}

/* Subscription J came, or failed: the MOVEDs it followed are forgotten. */
static void
forget_moves(struct rl_waiter *w, size_t j)
{
	rl_follow_clear(&w->fw[j]);
}

/* Subscription J failed or was lost: say why, and subscribe again after
 * a backoff (the first loss since an attempt was answered at once). */
static void
sub_failed(struct rl_waiter *w, size_t j, int64_t now)
{
	struct rl_node *nd = &w->c->nodes[j];

	forget_moves(w, j);
	rl_seterr(w->c, nd->sub.err != RL_OK ? nd->sub.err : RL_ECONNECT,
	    "%s", nd->sub.why);
	rl_conn_close(&nd->sub);
	if (w->listening[j] && !w->sub_lost) {
		w->sub_lost = 1;
		w->sub_at = now;
	} else if (w->sub_at <= now)
		w->sub_at = now + rl_backoff_ms(&w->sub_backoff);
	w->listening[j] = 0;
	rl_sub_note_lost(w);
}

int
rl_sub_as_head(struct rl_waiter *w, size_t j)
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

void
rl_sub_missing(struct rl_waiter *w, int64_t now)
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
		    rl_sub_as_head(w, j) < 0)
			sub_failed(w, j, now);
	}
}

/* SSUBSCRIBE answered MOVED (the channel's slot is served elsewhere): the
 * master's address becomes the node named, for its commands too, and the
 * subscription is made there: at once, or after RL_TRYAGAIN_MS when it
 * goes back to a node it came from (a ping-pong while the slot changes
 * owner), for as long as a reply may take from the first such, as a
 * command's (rl_follow); once that is over, it failed, naming both
 * nodes. 0 when followed, or failed already. */
static int
sub_moved(struct rl_waiter *w, size_t j, const char *str, int64_t now)
{
	struct rl_node *nd = &w->c->nodes[j];
	struct rl_redir to = { .doing = w->doing[w->kind[j]],
	    .reply_ms = rl_opts(w->c, 1).reply_ms, .why = nd->sub.why,
	    .whylen = sizeof(nd->sub.why) };
	enum rl_follow_step step = rl_follow(&w->fw[j], &nd->url, str, now,
	    &to);

	switch (step) {
	case RL_FOLLOW_NOT:
		return -1;
	case RL_FOLLOW_OVER:
		nd->sub.err = RL_ECONNECT;
		sub_failed(w, j, now);
		return 0;
	case RL_FOLLOW_NOMEM:
		snprintf(nd->sub.why, sizeof(nd->sub.why), "out of memory");
		nd->sub.err = RL_ENOMEM;
		sub_failed(w, j, now);
		return 0;
	case RL_FOLLOW_NEW:
	case RL_FOLLOW_BACK:
		break;
	}
	rl_node_move(nd, to.host, to.port, 0);
	w->listening[j] = 0;
	w->sub_at = now + (step == RL_FOLLOW_BACK ? RL_TRYAGAIN_MS : 0);
	return 0;
}

/* A refusal on subscription J: returned when waiting cannot cure it. */
static enum rl_err
sub_refused(struct rl_waiter *w, size_t j, redisReply *r, int64_t now)
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

enum rl_err
rl_sub_io(struct rl_waiter *w, size_t j, short revents, int64_t now, int *got)
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
	/* Listening again does not end the backoff: a server that takes
	 * subscriptions and hangs up at each attempt would be hammered.
	 * An attempt answered ends it (rl_wait.c). */
	return RL_OK;
}

void
rl_sub_switch(struct rl_waiter *w, int64_t now, int *got)
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

void
rl_sub_stale(struct rl_waiter *w, int64_t now)
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

int
rl_sub_cmd(struct rl_waiter *w)
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

void
rl_sub_end(struct rl_waiter *w)
{
	size_t j;

	for (j = 0; j < 2; j++) {
		redisFreeCommand(w->subcmd[j]);
		redisFreeCommand(w->headcmd[j]);
	}
	for (j = 0; j < w->c->n; j++) {
		rl_conn_close(&w->c->nodes[j].sub);
		rl_hops_clear(&w->fw[j].hops);
	}
}
