/* rl_keeper.c: renew a held lease on schedule, from a caller's poll loop. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rl_int.h"
#include "rl_scripts.h"

struct rl_keeper {
	rl_client *c;
	char *lock, *holder, *owner;
	char ttl[24];
	int64_t ttl_ms;
	int64_t period;
	int64_t confirmed;	/* send time of the last confirmed renewal */
	int64_t renewals;
	int inflight;
	int64_t sent;		/* send time of the renewal in flight */
	int64_t next;		/* when the next renewal is due */
	int own;		/* the connection is the keeper's non-blocking one */
	int connecting;		/* its connect(2) is in progress */
	int expect;		/* AUTH and SELECT replies still to come */
};

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

int64_t
rl_node_timeout_for(int64_t ttl_ms)
{
	int64_t t = ttl_ms / 100;

	return t < 5 ? 5 : t > 50 ? 50 : t;
}

rl_keeper *
rl_keeper_new(rl_client *c, const char *name, const char *owner,
    int64_t ttl_ms, int64_t sent_ms)
{
	rl_keeper *k = calloc(1, sizeof(*k));

	if (k == NULL)
		return NULL;
	k->c = c;
	k->lock = strdup(name);
	k->holder = rl_key(RL_PREFIX_HOLDER, name);
	k->owner = strdup(owner);
	if (k->lock == NULL || k->holder == NULL || k->owner == NULL) {
		rl_keeper_free(k);
		return NULL;
	}
	snprintf(k->ttl, sizeof(k->ttl), "%lld", (long long)ttl_ms);
	k->ttl_ms = ttl_ms;
	k->period = rl_renew_period_ms(ttl_ms);
	k->confirmed = sent_ms;
	k->next = sent_ms + k->period;
	return k;
}

void
rl_keeper_free(rl_keeper *k)
{
	if (k == NULL)
		return;
	free(k->lock);
	free(k->holder);
	free(k->owner);
	free(k);
}

int
rl_keeper_fd(const rl_keeper *k)
{
	if (k->c->n > 1)
		return -1;	/* renewal rounds run to their end at once */
	return k->inflight && k->c->ctx != NULL ? k->c->ctx->fd : -1;
}

static int
write_pending(const redisContext *ctx)
{
	return ctx->obuf != NULL && ctx->obuf[0] != '\0';
}

short
rl_keeper_events(const rl_keeper *k)
{
	if (k->c->ctx != NULL && (k->connecting || write_pending(k->c->ctx)))
		return POLLOUT;
	return POLLIN;
}

/* How long a renewal may go unanswered before the connection is dropped
 * and the renewal sent again on a new one. */
static int64_t
reply_timeout(const rl_keeper *k)
{
	int64_t t = k->period;

	if (k->c->timeout_ms > 0 && k->c->timeout_ms < t)
		t = k->c->timeout_ms;
	return t;
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
	return k->inflight ? k->sent + reply_timeout(k) : k->next;
}

int64_t
rl_keeper_confirmed_ms(const rl_keeper *k)
{
	return k->confirmed;
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

static void
drop(rl_keeper *k)
{
	rl_disconnect(k->c);
	k->own = k->connecting = k->expect = 0;
}

static enum rl_err
failed(rl_keeper *k, int64_t now, int drop_it)
{
	if (drop_it)
		drop(k);
	k->inflight = 0;
	k->next = now + (drop_it ? 0 : retry_gap(k));
	return RL_ECONNECT;
}

/* A new connection without blocking: connect(2) in progress, AUTH and
 * SELECT queued behind it; the renewal is queued next, and the caller's
 * poll loop drives them all (rl_keeper_events). */
static enum rl_err
open_nonblock(rl_keeper *k)
{
	redisContext *ctx;
	char url[512], why[160];

	ctx = rl_open_nonblock(&k->c->url, &k->expect, why, sizeof(why));
	if (ctx == NULL) {
		rl_url_format(&k->c->url, url, sizeof(url));
		return rl_seterr(k->c, RL_ECONNECT, "%s: %s", url, why);
	}
	rl_disconnect(k->c);
	k->c->ctx = ctx;
	k->own = 1;
	k->connecting = 1;
	return RL_OK;
}

/* Write what is queued, as far as the socket takes it now. */
static int
flush(rl_keeper *k)
{
	int done = 0;

	while (!done)
		if (redisBufferWrite(k->c->ctx, &done) != REDIS_OK)
			return -1;
		else if (k->own && !done)
			return 0;	/* the rest when it is writable */
	return 0;
}

static enum rl_err
send_renewal(rl_keeper *k, int64_t now, int full)
{
	const struct rl_script *s = &rl_script_renew;
	const char *argv[7];

	argv[0] = full ? "EVAL" : "EVALSHA";
	argv[1] = full ? s->src : s->sha;
	argv[2] = "2";
	argv[3] = k->lock;
	argv[4] = k->holder;
	argv[5] = k->ttl;
	argv[6] = k->owner;
	if (redisAppendCommandArgv(k->c->ctx, 7, argv, NULL) != REDIS_OK)
		goto fail;
	if (!k->connecting && flush(k) < 0)
		goto fail;
	if (!full) {
		k->inflight = 1;
		k->sent = now;
	}
	return RL_OK;
fail:
	rl_seterr(k->c, RL_ECONNECT, "cannot send a renewal: %s",
	    k->c->ctx->errstr);
	failed(k, now, 1);
	k->next = now + retry_gap(k);
	return RL_ECONNECT;
}

/* The connect(2) in progress: done, failed, or still going. */
static enum rl_err
finish_connect(rl_keeper *k, int64_t now)
{
	struct pollfd p = { k->c->ctx->fd, POLLOUT, 0 };
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&p, 1, 0) <= 0)
		return RL_OK;
	if (getsockopt(k->c->ctx->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err != 0) {
		char url[512];

		rl_url_format(&k->c->url, url, sizeof(url));
		rl_seterr(k->c, RL_ECONNECT, "cannot connect to %s: %s", url,
		    strerror(err));
		return failed(k, now, 1);
	}
	k->connecting = 0;
	return RL_OK;
}

/* Read what has arrived, without blocking. */
static enum rl_err
read_reply(rl_keeper *k, int64_t now, enum rl_keep *state)
{
	struct pollfd p = { k->c->ctx->fd, POLLIN, 0 };
	redisReply *r = NULL;
	void *v;

	if (k->connecting && (finish_connect(k, now) != RL_OK ||
	    !k->inflight || k->connecting))
		goto pending_or_failed;
	if (write_pending(k->c->ctx) && flush(k) < 0)
		goto broken;
	if (redisGetReplyFromReader(k->c->ctx, &v) != REDIS_OK)
		goto broken;
	if (v == NULL) {
		if (poll(&p, 1, 0) <= 0)
			goto pending;
		if (redisBufferRead(k->c->ctx) != REDIS_OK ||
		    redisGetReplyFromReader(k->c->ctx, &v) != REDIS_OK)
			goto broken;
		if (v == NULL)
			goto pending;
	}
	r = v;
	if (k->expect > 0) {
		/* AUTH or SELECT on the keeper's new connection. */
		k->expect--;
		if (r->type == REDIS_REPLY_ERROR) {
			rl_reply_error(k->c, &k->c->url, r, "AUTH or SELECT");
			freeReplyObject(r);
			return failed(k, now, 1);
		}
		freeReplyObject(r);
		return read_reply(k, now, state);
	}
	if (r->type == REDIS_REPLY_INTEGER) {
		k->inflight = 0;
		if (r->integer == 1) {
			k->confirmed = k->sent;
			k->renewals++;
			k->next = k->sent + k->period;
		} else
			*state = RL_KEEP_GONE;
		freeReplyObject(r);
		return RL_OK;
	}
	if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0) {
		/* The server lost its script cache: send the script itself,
		 * keeping the earlier send time (the conservative one). */
		freeReplyObject(r);
		return send_renewal(k, now, 1);
	}
	rl_seterr(k->c, RL_EPROTO, "renewal failed: %.160s",
	    r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
	freeReplyObject(r);
	return failed(k, now, 0);
pending_or_failed:
	if (!k->inflight)
		return RL_ECONNECT;	/* failed() has said why */
pending:
	if (now >= k->sent + reply_timeout(k)) {
		rl_seterr(k->c, RL_ECONNECT,
		    "no answer to a renewal after %lldms",
		    (long long)reply_timeout(k));
		return failed(k, now, 1);
	}
	return RL_OK;
broken:
	rl_seterr(k->c, RL_ECONNECT, "lost connection while renewing: %s",
	    k->c->ctx->errstr);
	return failed(k, now, 1);
}

/* Several masters: one round on all of them, which counts only with a
 * quorum, returning by UNTIL (the caller's next deadline). */
static enum rl_err
step_round(rl_keeper *k, int64_t now, int64_t until, enum rl_keep *state)
{
	int64_t ct = k->c->connect_timeout_ms, nt = k->c->node_timeout_ms;
	int64_t room = k->period;
	enum rl_err e;
	int ours = 0;

	if (now < k->next)
		return RL_OK;
	if (until >= 0 && until - now < room)
		room = until - now > 1 ? until - now : 1;
	if (ct > room)
		k->c->connect_timeout_ms = room;
	if (nt > room)
		k->c->node_timeout_ms = room;
	e = rl_renew(k->c, k->lock, k->owner, k->ttl_ms, &ours);
	k->c->connect_timeout_ms = ct;
	k->c->node_timeout_ms = nt;
	if (e != RL_OK) {
		k->next = rl_now_ms() + retry_gap(k);
		return e;
	}
	if (!ours) {
		*state = RL_KEEP_GONE;
		return RL_OK;
	}
	k->confirmed = now;
	k->renewals++;
	k->next = now + k->period;
	return RL_OK;
}

enum rl_err
rl_keeper_step(rl_keeper *k, int64_t now, int64_t until_ms,
    enum rl_keep *state)
{
	enum rl_err e;

	*state = RL_KEEP_OK;
	if (k->c->n > 1)
		return step_round(k, now, until_ms, state);
	if (k->inflight)
		return read_reply(k, now, state);
	if (now < k->next)
		return RL_OK;
	if (k->c->ctx == NULL && (e = open_nonblock(k)) != RL_OK) {
		k->next = now + retry_gap(k);
		return e;
	}
	return send_renewal(k, now, 0);
}

void
rl_keeper_settle(rl_keeper *k)
{
	void *v = NULL;

	if (k->c->n > 1 || k->c->ctx == NULL)
		return;
	if (k->own) {
		/* The keeper's non-blocking connection, whether a renewal is
		 * on its way or not: the release that follows opens a
		 * blocking one. A late renewal only lengthens a lease its
		 * owner holds: harmless. */
		k->inflight = 0;
		drop(k);
		return;
	}
	if (!k->inflight)
		return;
	k->inflight = 0;
	/* One reply is due: that of the renewal, or of the EVAL sent after
	 * its NOSCRIPT (a NOSCRIPT read here had nothing sent after it). */
	if (redisGetReply(k->c->ctx, &v) != REDIS_OK || v == NULL)
		rl_disconnect(k->c);
	else
		freeReplyObject(v);
}
