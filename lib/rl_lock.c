/* rl_lock.c: acquire, wait, release, renew and inspect one lock. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rl_int.h"
#include "rl_scripts.h"

/* A wait on a lock without expiry (never set by redlock) still retries
 * this often, so a lost release message cannot hang a waiter. */
#define RL_NO_TTL_RETRY_MS 1000
/* How often a waiting caller's callback is called between attempts. */
#define RL_TICK_MS 1000

struct keys {
	char *lock, *channel, *holder, *token, *queue, *timeout, *waiter;
};

static void
keys_free(struct keys *k)
{
	free(k->lock);
	free(k->channel);
	free(k->holder);
	free(k->token);
	free(k->queue);
	free(k->timeout);
	free(k->waiter);
}

static enum rl_err
keys_make(rl_client *c, const char *name, struct keys *k)
{
	memset(k, 0, sizeof(*k));
	if (name[0] == '\0')
		return rl_seterr(c, RL_EUSAGE, "the lock name is empty");
	k->lock = strdup(name);
	k->channel = rl_key(RL_PREFIX_CHANNEL, name);
	k->holder = rl_key(RL_PREFIX_HOLDER, name);
	k->token = rl_key(RL_PREFIX_TOKEN, name);
	k->queue = rl_key(RL_PREFIX_QUEUE, name);
	k->timeout = rl_key(RL_PREFIX_TIMEOUT, name);
	k->waiter = rl_key(RL_PREFIX_WAITER, name);
	if (!k->lock || !k->channel || !k->holder || !k->token || !k->queue ||
	    !k->timeout || !k->waiter) {
		keys_free(k);
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	}
	return RL_OK;
}

/* Reply accessors: NULL, -1 or DEF when the element is missing or nil. */
static const redisReply *
elem(const redisReply *r, size_t i)
{
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
		return NULL;
	return r->element[i];
}

int64_t
rl_elem_int(const redisReply *r, size_t i, int64_t def)
{
	const redisReply *e = elem(r, i);
	long long v;
	char *end;

	if (e != NULL && e->type == REDIS_REPLY_INTEGER)
		return e->integer;
	/* Scripts send numbers past 2^53 (fencing tokens) as strings. */
	if (e != NULL && e->type == REDIS_REPLY_STRING && e->len > 0 &&
	    e->str[0] >= '0' && e->str[0] <= '9') {
		errno = 0;
		v = strtoll(e->str, &end, 10);
		if (errno == 0 && *end == '\0')
			return v;
	}
	return def;
}

const char *
rl_elem_str(const redisReply *r, size_t i)
{
	const redisReply *e = elem(r, i);

	if (e == NULL || (e->type != REDIS_REPLY_STRING &&
	    e->type != REDIS_REPLY_STATUS))
		return NULL;
	return e->str;
}

static enum rl_err
unexpected(rl_client *c, const char *script)
{
	return rl_seterr(c, RL_EPROTO,
	    "unexpected reply from the %s script: is this a Redis server?",
	    script);
}

enum rl_err
rl_wrongtype(rl_client *c, const redisReply *r, const char **key,
    const char **type)
{
	*key = rl_elem_str(r, 1);
	*type = rl_elem_str(r, 2);
	return rl_seterr(c, RL_EWRONGTYPE, "key %s holds a %s",
	    *key ? *key : "?", *type ? *type : "?");
}

enum rl_err
rl_try_acquire(rl_client *c, const char *name, const char *owner,
    int64_t ttl_ms, const struct rl_meta *meta, const struct rl_fair *fair,
    enum rl_join join, struct rl_attempt *a)
{
	struct keys k;
	char ttl[24], pid[24], wt[24], flags[4], *f = flags;
	const char *keys[6], *args[10];
	redisReply *r;
	enum rl_err e;
	int64_t st;

	memset(a, 0, sizeof(*a));
	a->ahead = -1;
	if ((e = keys_make(c, name, &k)) != RL_OK)
		return e;
	snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	snprintf(pid, sizeof(pid), "%ld", meta ? meta->pid : 0L);
	snprintf(wt, sizeof(wt), "%lld",
	    (long long)(fair ? fair->waiter_timeout_ms : 0));
	if (fair && join != RL_JOIN_NO)
		*f++ = 'j';
	if (fair && join == RL_JOIN_AGAIN)
		*f++ = 'r';
	if (fair && fair->want_position)
		*f++ = 'p';
	*f = '\0';
	keys[0] = k.lock;
	keys[1] = k.token;
	keys[2] = k.holder;
	keys[3] = k.queue;
	keys[4] = k.timeout;
	keys[5] = k.waiter;
	args[0] = ttl;
	args[1] = owner;
	args[2] = meta && meta->host ? meta->host : "";
	args[3] = pid;
	args[4] = meta && meta->user ? meta->user : "";
	args[5] = meta && meta->cmd ? meta->cmd : "";
	args[6] = fair ? "fair" : "";
	args[7] = wt;
	args[8] = flags;
	args[9] = k.channel;
	if (c->n > 1) {
		if (fair != NULL)
			e = rl_seterr(c, RL_EUSAGE, "fair locks are not "
			    "available across several masters");
		else
			e = rl_multi_try_acquire(c, keys, 6, args, 10, ttl_ms, a);
		keys_free(&k);
		return e;
	}
	a->sent_ms = rl_now_ms();
	e = rl_eval(c, &rl_script_acquire, 6, keys, 10, args, &r);
	keys_free(&k);
	if (e != RL_OK)
		return e;
	st = rl_elem_int(r, 0, -2);
	if (st == 1) {
		a->acquired = 1;
		a->fence = rl_elem_int(r, 1, 0);
		a->holds = rl_elem_int(r, 2, 1);
		a->nopub = rl_elem_str(r, 3);
	} else if (st == 0) {
		rl_attempt_holder(r, a);
		a->position = rl_elem_int(r, 8, 0);
		a->queued = rl_elem_int(r, 9, 0);
		a->head_wait_ms = rl_elem_int(r, 10, -1);
		a->rejoined = rl_elem_int(r, 11, 0) == 1;
		a->ahead = rl_elem_int(r, 12, -1);
	} else if (st == -1)
		return rl_wrongtype(c, r, &a->badkey, &a->badtype);
	else
		return unexpected(c, "acquire");
	return RL_OK;
}

static void
unsubscribe(rl_client *c)
{
	size_t i;

	for (i = 0; i < c->nsubs; i++)
		redisFree(c->subs[i]);
	c->nsubs = 0;
}

/* One master: subscribe to CHANNEL on a connection of its own. */
static enum rl_err
subscribe(rl_client *c, const char *channel)
{
	const char *argv[2] = { "SUBSCRIBE", channel };
	redisReply *r;
	enum rl_err e;

	if ((e = rl_open(c, &c->subs[0])) != RL_OK)
		return e;
	c->subnode[0] = 0;
	c->nsubs = 1;
	r = redisCommandArgv(c->subs[0], 2, argv, NULL);
	if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
		e = rl_subscribe_error(c, &c->url, c->subs[0], r, channel);
		if (r != NULL)
			freeReplyObject(r);
		unsubscribe(c);
		return e;
	}
	freeReplyObject(r);
	return RL_OK;
}

/* Subscription I failed: say why on the client and drop it. */
static void
drop_sub(rl_client *c, size_t i)
{
	const struct rl_url *u = c->n > 1 ? &c->nodes[c->subnode[i]].url :
	    &c->url;

	rl_ctx_error(c, u, c->subs[i], "lost the release channel's "
	    "connection to");
	redisFree(c->subs[i]);
	c->nsubs--;
	c->subs[i] = c->subs[c->nsubs];
	c->subnode[i] = c->subnode[c->nsubs];
}

/* Take every reply already read; *GOT says whether one was a message. */
static enum rl_err
drain(rl_client *c, int *got)
{
	size_t i;
	void *v;

	for (i = 0; i < c->nsubs; i++) {
		for (;;) {
			if (redisGetReplyFromReader(c->subs[i], &v) != REDIS_OK)
				return rl_seterr(c, RL_EPROTO,
				    "bad reply on the release channel: %s",
				    c->subs[i]->errstr);
			if (v == NULL)
				break;
			*got = 1;
			freeReplyObject(v);
		}
	}
	return RL_OK;
}

/* Block until a release message (*GOT), TIMEOUT_MS, or an interrupt; a
 * subscription whose connection fails is dropped (*LOST). With none left
 * this is the backoff: a poll on the interrupt descriptor alone. */
static enum rl_err
wait_message(rl_client *c, int64_t timeout_ms, int *got, int *lost)
{
	struct pollfd pfd[RL_MAX_NODES + 1];
	size_t i, ns = c->nsubs;
	int n, nfds;
	enum rl_err e;

	*got = 0;
	*lost = 0;
	if ((e = drain(c, got)) != RL_OK || *got)
		return e;
	for (i = 0; i < ns; i++) {
		pfd[i].fd = c->subs[i]->fd;
		pfd[i].events = POLLIN;
	}
	nfds = (int)ns;
	if (c->intr_fd >= 0) {
		pfd[ns].fd = c->intr_fd;
		pfd[ns].events = POLLIN;
		nfds++;
	}
	if (timeout_ms > INT_MAX)
		timeout_ms = INT_MAX;
	n = poll(pfd, (nfds_t)nfds, (int)timeout_ms);
	if (n < 0 && errno != EINTR)
		return rl_seterr(c, RL_EPROTO, "poll: %s", strerror(errno));
	if (n < 0 && c->intr_fd < 0)
		return RL_OK;
	if (c->intr_fd >= 0 && (n < 0 || pfd[ns].revents != 0))
		return RL_EINTR;
	if (n <= 0)
		return RL_OK;
	for (i = ns; i-- > 0;) {
		if (pfd[i].revents == 0 ||
		    redisBufferRead(c->subs[i]) == REDIS_OK)
			continue;
		drop_sub(c, i);
		*lost = 1;
	}
	return drain(c, got);
}

/* A random delay of 0..N ms. */
static int64_t
random_ms(int64_t n)
{
	unsigned int r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned int)rl_now_ms();
	return (int64_t)(r % (unsigned int)(n + 1));
}

/* Redlock: after an attempt that nobody won, wait 0..200 ms at random
 * (or for a release message), so that contenders do not split again. */
static int64_t
random_delay_ms(void)
{
	return random_ms(200);
}

/* A fair waiter refreshes its place this often. */
static int64_t
heartbeat_ms(const struct rl_fair *fair)
{
	int64_t h = fair->waiter_timeout_ms / 3;

	return h > 0 ? h : 1;
}

/* Reconnecting: the delays double from RL_BACKOFF_MIN_MS up to
 * RL_BACKOFF_MAX_MS, each with up to half again at random, so that the
 * waiters of a restarted server do not all come back at once. */
#define RL_BACKOFF_MIN_MS 50
#define RL_BACKOFF_MAX_MS 1000

static int64_t
backoff_ms(int64_t *last)
{
	*last = *last == 0 ? RL_BACKOFF_MIN_MS : *last * 2;
	if (*last > RL_BACKOFF_MAX_MS)
		*last = RL_BACKOFF_MAX_MS;
	return *last + random_ms(*last / 2);
}

/* One wait of rl_acquire: its arguments, what it listens to, and when it
 * tries to reconnect. */
struct wait {
	rl_client *c;
	const char *name, *owner;
	int64_t ttl_ms;
	const struct rl_meta *meta;
	const struct rl_fair *fair;
	rl_wait_cb cb;
	void *cbarg;
	struct rl_attempt *a;
	char *channel;
	size_t want;		/* subscriptions: one per master */
	int64_t deadline;	/* -1: forever */
	int64_t sub_at;		/* when to subscribe the missing ones again */
	int64_t sub_backoff;	/* last delay between failed subscriptions */
	int64_t try_backoff;	/* last delay between failed attempts */
	int try_failed;		/* the last attempt could not reach a quorum */
	int64_t connect_ms;	/* --connect-timeout, restored at the end */
};

/* A connect while waiting takes at most the time left of the wait. */
static void
bound_connect(struct wait *w)
{
	int64_t left;

	w->c->connect_timeout_ms = w->connect_ms;
	if (w->deadline < 0)
		return;
	left = w->deadline - rl_now_ms();
	if (left < 1)
		left = 1;
	if (left < w->connect_ms)
		w->c->connect_timeout_ms = left;
}

/* Out of reach: every subscription lost, or the attempt failed. */
static void
note_lost(struct wait *w)
{
	w->a->lost = w->try_failed || w->c->nsubs == 0 ? w->c->errstr : NULL;
}

/* Subscribe where no subscription is. Only errors that waiting cannot
 * cure are returned; the rest are tried again after a backoff. */
static enum rl_err
resubscribe(struct wait *w)
{
	rl_client *c = w->c;
	enum rl_err e;

	bound_connect(w);
	if (c->n > 1)
		e = rl_multi_subscribe(c, w->channel);
	else
		e = subscribe(c, w->channel);
	if (e != RL_OK && e != RL_ECONNECT)
		return e;
	if (c->nsubs < w->want)
		w->sub_at = rl_now_ms() + backoff_ms(&w->sub_backoff);
	else
		w->sub_backoff = 0;
	note_lost(w);
	return RL_OK;
}

/* One attempt while waiting; when it could not reach the server, RL_OK
 * with w->try_failed set. */
static enum rl_err
attempt(struct wait *w)
{
	enum rl_err e;

	bound_connect(w);
	e = rl_try_acquire(w->c, w->name, w->owner, w->ttl_ms, w->meta,
	    w->fair, w->fair != NULL ? RL_JOIN_AGAIN : RL_JOIN_YES, w->a);
	w->try_failed = e == RL_ECONNECT;
	if (w->try_failed)
		e = RL_OK;
	else
		w->try_backoff = 0;
	note_lost(w);
	return e;
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
	if (a->head_wait_ms >= 0 && now + a->head_wait_ms + 1 < retry)
		retry = now + a->head_wait_ms + 1;
	if (w->c->n > 1 && a->pttl < 0)
		retry = now + random_delay_ms();
	return retry;
}

/* Sleep until RETRY, a release message, the deadline or an interrupt,
 * subscribing again where a subscription was lost and ticking the caller.
 * Returns 1 to try again, 0 to stop (*E: RL_OK when the wait ran out or
 * the caller ended it). */
static int
pause_wait(struct wait *w, int64_t retry, enum rl_err *e)
{
	rl_client *c = w->c;
	struct rl_attempt *a = w->a;
	int64_t now = rl_now_ms(), then, wake;
	size_t had;
	int got, lost;

	for (;;) {
		*e = RL_OK;
		if (w->cb != NULL && w->cb(w->cbarg, a) != 0)
			return 0;
		if (w->deadline >= 0 && now >= w->deadline)
			return 0;
		wake = retry;
		if (w->deadline >= 0 && w->deadline < wake)
			wake = w->deadline;
		if (w->cb != NULL && now + RL_TICK_MS < wake)
			wake = now + RL_TICK_MS;
		if (c->nsubs < w->want && w->sub_at < wake)
			wake = w->sub_at > now ? w->sub_at : now;
		if ((*e = wait_message(c, wake - now, &got, &lost)) != RL_OK)
			return 0;
		then = now;
		now = rl_now_ms();
		if (lost && w->sub_backoff == 0)
			w->sub_at = now;	/* the first time at once */
		if (c->nsubs < w->want && now >= w->sub_at) {
			had = c->nsubs;
			if ((*e = resubscribe(w)) != RL_OK)
				return 0;
			if (c->nsubs > had)
				return 1;	/* a release may have gone unheard */
		}
		if (got || now >= retry || (w->deadline >= 0 && now >= w->deadline))
			return 1;
		/* A tick for the caller: advance what it was told. */
		if (a->held_ms >= 0)
			a->held_ms += now - then;
		if (a->pttl >= 0)
			a->pttl = a->pttl > now - then ? a->pttl - (now - then) : 0;
	}
}

/* Subscribe, then try again (a release between the first attempt and the
 * subscription would otherwise go unheard), and so on until acquired. */
static enum rl_err
wait_loop(struct wait *w)
{
	enum rl_err e;

	for (;;) {
		if (w->c->nsubs < w->want && rl_now_ms() >= w->sub_at &&
		    (e = resubscribe(w)) != RL_OK)
			return e;
		if ((e = attempt(w)) != RL_OK || w->a->acquired)
			return e;
		if (!pause_wait(w, next_retry(w), &e))
			return e;
	}
}

/* The channel a waiter listens to: the lock's, or a fair waiter's own. */
static char *
wait_channel(const char *name, const char *owner, int fair)
{
	char *lockch = rl_key(RL_PREFIX_CHANNEL, name), *ch;
	size_t n;

	if (lockch == NULL || !fair)
		return lockch;
	n = strlen(lockch) + strlen(owner) + 2;
	if ((ch = malloc(n)) != NULL)
		snprintf(ch, n, "%s:%s", lockch, owner);
	free(lockch);
	return ch;
}

/* Leave the fair queue on every way out (also when the wait failed: the
 * command connection may still work, and if it does not, the waiter
 * timeout drops the entry), keeping the first error's message and the
 * last attempt's reply (the strings in A point into it). */
static void
leave_queue(rl_client *c, const char *name, const char *owner,
    struct rl_attempt *a)
{
	char keep[sizeof(c->errstr)];
	redisReply *last = c->last;
	int64_t position = 0;

	memcpy(keep, c->errstr, sizeof(keep));
	c->last = NULL;
	if (rl_leave(c, name, owner, &position) == RL_OK && position > 0)
		a->ahead = position - 1;
	if (c->last != NULL)
		freeReplyObject(c->last);
	c->last = last;
	memcpy(c->errstr, keep, sizeof(keep));
}

enum rl_err
rl_acquire(rl_client *c, const char *name, const char *owner, int64_t ttl_ms,
    int64_t wait_ms, const struct rl_meta *meta, const struct rl_fair *fair,
    rl_wait_cb cb, void *cbarg, struct rl_attempt *a)
{
	struct wait w = { .c = c, .name = name, .owner = owner,
	    .ttl_ms = ttl_ms, .meta = meta, .fair = fair, .cb = cb,
	    .cbarg = cbarg, .a = a, .deadline = -1,
	    .connect_ms = c->connect_timeout_ms };
	enum rl_err e;

	if (wait_ms >= 0)
		w.deadline = rl_now_ms() + wait_ms;
	e = rl_try_acquire(c, name, owner, ttl_ms, meta, fair,
	    wait_ms == 0 ? RL_JOIN_NO : RL_JOIN_YES, a);
	if (e != RL_OK || a->acquired || wait_ms == 0)
		return e;
	w.want = c->n;
	if ((w.channel = wait_channel(name, owner, fair != NULL)) == NULL)
		e = rl_seterr(c, RL_ENOMEM, "out of memory");
	else
		e = wait_loop(&w);
	free(w.channel);
	unsubscribe(c);
	c->connect_timeout_ms = w.connect_ms;
	if (fair != NULL && !a->acquired)
		leave_queue(c, name, owner, a);
	return e;
}

enum rl_err
rl_leave(rl_client *c, const char *name, const char *owner,
    int64_t *position)
{
	struct keys k;
	const char *keys[5];
	redisReply *r;
	enum rl_err e;

	*position = 0;
	if (c->n > 1)
		return rl_seterr(c, RL_EUSAGE, "fair locks are not available "
		    "across several masters");
	if ((e = keys_make(c, name, &k)) != RL_OK)
		return e;
	keys[0] = k.lock;
	keys[1] = k.channel;
	keys[2] = k.queue;
	keys[3] = k.timeout;
	keys[4] = k.waiter;
	e = rl_eval(c, &rl_script_leave, 5, keys, 1, &owner, &r);
	keys_free(&k);
	if (e == RL_OK)
		*position = rl_elem_int(r, 1, 0);
	return e;
}

enum rl_err
rl_release(rl_client *c, const char *name, const char *owner,
    enum rl_release *rel, int64_t *holds, struct rl_attempt *a)
{
	struct keys k;
	const char *keys[6], *args[2];
	redisReply *r;
	enum rl_err e;
	int64_t st;

	memset(a, 0, sizeof(*a));
	if ((e = keys_make(c, name, &k)) != RL_OK)
		return e;
	keys[0] = k.lock;
	keys[1] = k.channel;
	keys[2] = k.holder;
	keys[3] = k.queue;
	keys[4] = k.timeout;
	keys[5] = k.waiter;
	args[0] = owner;
	args[1] = "0";
	if (c->n > 1) {
		e = rl_multi_release(c, keys, args, rel, holds, a);
		keys_free(&k);
		return e;
	}
	e = rl_eval(c, &rl_script_release, 6, keys, 2, args, &r);
	keys_free(&k);
	if (e != RL_OK)
		return e;
	st = rl_elem_int(r, 0, -2);
	*holds = rl_elem_int(r, 1, 0);
	switch (st) {
	case 2:
		*rel = RL_RELEASED;
		*holds = 0;
		a->nopub = rl_elem_str(r, 1);
		break;
	case 1:
		*rel = RL_DECREMENTED;
		break;
	case 0:
		*rel = RL_NOT_OWNER;
		break;
	case -1:
		return rl_wrongtype(c, r, &a->badkey, &a->badtype);
	default:
		return unexpected(c, "release");
	}
	return RL_OK;
}

enum rl_err
rl_force_release(rl_client *c, const char *name, int *deleted,
    struct rl_attempt *a)
{
	struct keys k;
	const char *keys[6], *args[1] = { "0" };
	redisReply *r;
	enum rl_err e;

	memset(a, 0, sizeof(*a));
	if ((e = keys_make(c, name, &k)) != RL_OK)
		return e;
	keys[0] = k.lock;
	keys[1] = k.channel;
	keys[2] = k.holder;
	keys[3] = k.queue;
	keys[4] = k.timeout;
	keys[5] = k.waiter;
	if (c->n > 1) {
		e = rl_multi_force(c, keys, args, deleted, a);
		keys_free(&k);
		return e;
	}
	e = rl_eval(c, &rl_script_force, 6, keys, 1, args, &r);
	keys_free(&k);
	if (e != RL_OK)
		return e;
	switch (rl_elem_int(r, 0, -2)) {
	case 1:
		a->nopub = rl_elem_str(r, 1);
		/* FALLTHROUGH */
	case 0:
		*deleted = rl_elem_int(r, 0, 0) == 1;
		return RL_OK;
	case -1:
		return rl_wrongtype(c, r, &a->badkey, &a->badtype);
	default:
		return unexpected(c, "force");
	}
}

enum rl_err
rl_renew(rl_client *c, const char *name, const char *owner, int64_t ttl_ms,
    int *ours)
{
	struct keys k;
	const char *keys[2], *args[2];
	char ttl[24];
	redisReply *r;
	enum rl_err e;

	if ((e = keys_make(c, name, &k)) != RL_OK)
		return e;
	snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	keys[0] = k.lock;
	keys[1] = k.holder;
	args[0] = ttl;
	args[1] = owner;
	if (c->n > 1) {
		e = rl_multi_renew(c, keys, args, ours);
		keys_free(&k);
		return e;
	}
	e = rl_eval(c, &rl_script_renew, 2, keys, 2, args, &r);
	keys_free(&k);
	if (e != RL_OK)
		return e;
	if (r->type != REDIS_REPLY_INTEGER)
		return unexpected(c, "renew");
	*ours = r->integer == 1;
	return RL_OK;
}

void
rl_attempt_holder(const redisReply *r, struct rl_attempt *a)
{
	a->pttl = rl_elem_int(r, 1, -1);
	a->owner = rl_elem_str(r, 2);
	a->host = rl_elem_str(r, 3);
	a->pid = (long)rl_elem_int(r, 4, 0);
	a->cmd = rl_elem_str(r, 6);
	a->held_ms = rl_elem_int(r, 7, -1);
}

void
rl_status_read(const redisReply *r, struct rl_status *st)
{
	memset(st, 0, sizeof(*st));
	st->pttl = -1;
	st->since_ms = -1;
	st->fence = -1;
	st->held_ms = -1;
	if (rl_elem_int(r, 0, -2) == 1) {
		st->held = 1;
		st->pttl = rl_elem_int(r, 2, -1);
		st->owner = rl_elem_str(r, 3);
		st->holds = rl_elem_int(r, 4, 0);
		st->host = rl_elem_str(r, 5);
		st->pid = (long)rl_elem_int(r, 6, 0);
		st->user = rl_elem_str(r, 7);
		st->cmd = rl_elem_str(r, 8);
		st->since_ms = rl_elem_int(r, 9, -1);
		st->fence = rl_elem_int(r, 10, -1);
		st->held_ms = rl_elem_int(r, 11, -1);
	}
	st->waiting = rl_elem_int(r, 1, 0);
}

enum rl_err
rl_status(rl_client *c, const char *name, struct rl_status *st)
{
	struct keys k;
	const char *keys[5];
	redisReply *r;
	enum rl_err e;

	memset(st, 0, sizeof(*st));
	if ((e = keys_make(c, name, &k)) != RL_OK)
		return e;
	keys[0] = k.lock;
	keys[1] = k.holder;
	keys[2] = k.queue;
	keys[3] = k.timeout;
	keys[4] = k.waiter;
	if (c->n > 1) {
		e = rl_multi_status(c, keys, st);
		keys_free(&k);
		return e;
	}
	e = rl_eval(c, &rl_script_status, 5, keys, 0, NULL, &r);
	keys_free(&k);
	if (e != RL_OK)
		return e;
	switch (rl_elem_int(r, 0, -2)) {
	case 1:
	case 0:
		rl_status_read(r, st);
		return RL_OK;
	case -1:
		return rl_wrongtype(c, r, &st->badkey, &st->badtype);
	default:
		return unexpected(c, "status");
	}
}

static void
qentry(const redisReply *e, struct rl_qentry *q)
{
	q->owner = rl_elem_str(e, 0);
	q->ms = rl_elem_int(e, 1, INT64_MIN);
	q->host = rl_elem_str(e, 2);
	q->pid = (long)rl_elem_int(e, 3, 0);
	q->user = rl_elem_str(e, 4);
	q->cmd = rl_elem_str(e, 5);
	q->since_ms = rl_elem_int(e, 6, -1);
}

enum rl_err
rl_queue(rl_client *c, const char *name, struct rl_queue *q)
{
	struct keys k;
	const char *keys[5];
	redisReply *r;
	enum rl_err e;
	size_t i;

	memset(q, 0, sizeof(*q));
	if (c->n > 1)
		return rl_seterr(c, RL_EUSAGE, "fair queues are not available "
		    "across several masters");
	if ((e = keys_make(c, name, &k)) != RL_OK)
		return e;
	keys[0] = k.lock;
	keys[1] = k.holder;
	keys[2] = k.queue;
	keys[3] = k.timeout;
	keys[4] = k.waiter;
	e = rl_eval(c, &rl_script_queue, 5, keys, 0, NULL, &r);
	keys_free(&k);
	if (e != RL_OK)
		return e;
	if (rl_elem_int(r, 0, 0) == -1)
		return rl_wrongtype(c, r, &q->badkey, &q->badtype);
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
	    r->element[1]->type != REDIS_REPLY_ARRAY)
		return unexpected(c, "queue");
	if (r->element[1]->elements > 0) {
		q->held = 1;
		qentry(r->element[1], &q->holder);
	}
	q->n = r->elements - 2;
	if (q->n > 0 &&
	    (q->waiters = calloc(q->n, sizeof(*q->waiters))) == NULL) {
		q->n = 0;
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	}
	for (i = 0; i < q->n; i++)
		qentry(r->element[i + 2], &q->waiters[i]);
	return RL_OK;
}

void
rl_queue_clear(struct rl_queue *q)
{
	free(q->waiters);
	memset(q, 0, sizeof(*q));
}

enum rl_err
rl_scan(rl_client *c, uint64_t *cursor, int (*fn)(void *, const char *),
    void *arg)
{
	char cur[24], pattern[64];
	const char *argv[6];
	redisReply *r;
	enum rl_err e = RL_OK;
	size_t i;

	if (c->n > 1 && c->ctx == NULL) {
		/* Names come from the first master that answers. */
		size_t j;

		for (j = 0; j < c->n && c->ctx == NULL; j++)
			e = rl_open_url(c, &c->nodes[j].url,
			    c->connect_timeout_ms, c->timeout_ms, &c->ctx);
		if (c->ctx == NULL)
			return e;
	}
	if (c->ctx == NULL && (e = rl_connect(c)) != RL_OK)
		return e;
	snprintf(cur, sizeof(cur), "%llu", (unsigned long long)*cursor);
	snprintf(pattern, sizeof(pattern), "%s:*", RL_PREFIX_HOLDER);
	argv[0] = "SCAN";
	argv[1] = cur;
	argv[2] = "MATCH";
	argv[3] = pattern;
	argv[4] = "COUNT";
	argv[5] = "1000";
	r = redisCommandArgv(c->ctx, 6, argv, NULL);
	if (r == NULL) {
		char url[512];

		rl_url_format(&c->url, url, sizeof(url));
		return rl_seterr(c, RL_ECONNECT, "lost connection to %s: %s",
		    url, c->ctx->errstr);
	}
	if (r->type == REDIS_REPLY_ERROR) {
		e = rl_seterr(c, RL_EPROTO, "SCAN failed: %.160s", r->str);
		goto out;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_ARRAY) {
		e = unexpected(c, "SCAN");
		goto out;
	}
	*cursor = strtoull(r->element[0]->str, NULL, 10);
	for (i = 0; i < r->element[1]->elements; i++) {
		const redisReply *k = r->element[1]->element[i];
		char *names[2];
		int j, n, stop = 0;

		if (k->type != REDIS_REPLY_STRING)
			continue;
		/* "x" and "{x}" share one holder key: offer both. */
		n = rl_key_names(RL_PREFIX_HOLDER, k->str, k->len, names);
		if (n < 0) {
			e = rl_seterr(c, RL_ENOMEM, "out of memory");
			goto out;
		}
		for (j = 0; j < n; j++) {
			if (!stop)
				stop = fn(arg, names[j]);
			free(names[j]);
		}
		if (stop) {
			*cursor = 0;
			break;
		}
	}
out:
	freeReplyObject(r);
	return e;
}
