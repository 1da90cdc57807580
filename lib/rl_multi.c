/* rl_multi.c: Redlock, one lock across several independent masters. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rl_int.h"
#include "rl_scripts.h"

void
rl_multi_free(rl_client *c)
{
	size_t i;

	if (c->nodes == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		if (c->nodes[i].ctx != NULL)
			redisFree(c->nodes[i].ctx);
		if (c->nodes[i].reply != NULL)
			freeReplyObject(c->nodes[i].reply);
		rl_url_clear(&c->nodes[i].url);
	}
	free(c->nodes);
	c->nodes = NULL;
}

/* ND has no reply for this exchange, for the reason FMT. Its connection
 * stays: it may still carry a command (see owed in struct rl_node). */
static void __attribute__((format(printf, 2, 3)))
node_fail(struct rl_node *nd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(nd->err, sizeof(nd->err), fmt, ap);
	va_end(ap);
	nd->waiting = 0;
}

/* ND's connection is useless and nothing sent on it can still run: it
 * was never established (hiredis writes nothing before connect(2) ends),
 * or it failed (EOF, reset, a write error: the server has dropped the
 * client and whatever it had not read), or its replies cannot be told
 * apart any more. Close it; the next exchange opens a new one. */
static void
node_drop(struct rl_node *nd)
{
	if (nd->ctx != NULL)
		redisFree(nd->ctx);
	nd->ctx = NULL;
	nd->connecting = 0;
	nd->expect = 0;
	nd->owed = 0;
	nd->waiting = 0;
}

/* Start a non-blocking connect and queue AUTH and SELECT behind it. */
static int
node_connect(rl_client *c, struct rl_node *nd, int64_t now)
{
	nd->ctx = rl_open_nonblock(&nd->url, &nd->expect, nd->err,
	    sizeof(nd->err));
	if (nd->ctx == NULL) {
		node_drop(nd);
		return -1;
	}
	nd->err[0] = '\0';
	nd->connecting = 1;
	nd->owed = 0;
	nd->deadline = now + c->connect_timeout_ms;
	return 0;
}

/* ND did not answer this exchange in time. */
static void
node_late(struct rl_node *nd)
{
	if (nd->connecting) {
		/* Nothing was written yet: nothing can run. */
		node_fail(nd, "connect timed out");
		node_drop(nd);
	} else {
		/* Its command may run yet: keep the connection, and its
		 * reply's place in line. */
		node_fail(nd, "no answer in time (see --timeout)");
		nd->owed++;
	}
}

static int
write_pending(const redisContext *ctx)
{
	return ctx->obuf != NULL && ctx->obuf[0] != '\0';
}

/* Take what has arrived for ND; 1 when its exchange is over. Replies
 * come in the order the commands went: AUTH/SELECT, then those owed to
 * earlier exchanges (dropped as they are, a NOSCRIPT among them too:
 * that command never ran and nobody waits for it), then this one's. */
static int
node_read(struct rl_node *nd, const char **argv, int argc)
{
	void *v;
	redisReply *r;

	for (;;) {
		if (redisGetReplyFromReader(nd->ctx, &v) != REDIS_OK) {
			node_fail(nd, "bad reply: %s", nd->ctx->errstr);
			node_drop(nd);
			return 1;
		}
		if (v == NULL)
			return 0;
		r = v;
		if (nd->expect > 0) {
			nd->expect--;
			if (r->type == REDIS_REPLY_ERROR) {
				node_fail(nd, "authentication or SELECT "
				    "refused: %.100s", r->str);
				freeReplyObject(r);
				node_drop(nd);
				return 1;
			}
			freeReplyObject(r);
			continue;
		}
		if (nd->owed > 0) {
			nd->owed--;
			freeReplyObject(r);
			continue;
		}
		if (r->type == REDIS_REPLY_ERROR && !nd->sent_full &&
		    strncmp(r->str, "NOSCRIPT", 8) == 0) {
			freeReplyObject(r);
			nd->sent_full = 1;
			redisAppendCommandArgv(nd->ctx, argc, argv, NULL);
			continue;
		}
		if (r->type == REDIS_REPLY_ERROR) {
			node_fail(nd, "%.120s", r->str);
			freeReplyObject(r);
			return 1;
		}
		nd->reply = r;
		nd->waiting = 0;
		return 1;
	}
}

/* Finish connect(2) on every master that has no connection yet, in
 * parallel; returns how many masters are connected. */
static size_t
connect_all(rl_client *c)
{
	struct pollfd pfd[RL_MAX_NODES];
	size_t map[RL_MAX_NODES], j, up = 0;
	int64_t now = rl_now_ms(), next;
	int np, i, err;
	socklen_t len;

	for (j = 0; j < c->n; j++)
		if (c->nodes[j].ctx == NULL && !c->nodes[j].skip)
			node_connect(c, &c->nodes[j], now);
	for (;;) {
		np = 0;
		next = INT64_MAX;
		for (j = 0; j < c->n; j++) {
			struct rl_node *nd = &c->nodes[j];

			if (nd->ctx == NULL || !nd->connecting)
				continue;
			pfd[np].fd = nd->ctx->fd;
			pfd[np].events = POLLOUT;
			pfd[np].revents = 0;
			map[np++] = j;
			if (nd->deadline < next)
				next = nd->deadline;
		}
		if (np == 0)
			break;
		now = rl_now_ms();
		if (poll(pfd, (nfds_t)np, next <= now ? 0 :
		    next - now > INT_MAX ? INT_MAX : (int)(next - now)) < 0 &&
		    errno != EINTR)
			break;
		now = rl_now_ms();
		for (i = 0; i < np; i++) {
			struct rl_node *nd = &c->nodes[map[i]];

			if (pfd[i].revents != 0) {
				err = 0;
				len = sizeof(err);
				if (getsockopt(nd->ctx->fd, SOL_SOCKET, SO_ERROR,
				    &err, &len) < 0)
					err = errno;
				if (err != 0) {
					node_fail(nd, "cannot connect: %s",
					    strerror(err));
					node_drop(nd);
				} else
					nd->connecting = 0;
			} else if (now >= nd->deadline) {
				node_fail(nd, "connect timed out (see "
				    "--connect-timeout)");
				node_drop(nd);
			}
		}
	}
	for (j = 0; j < c->n; j++)
		up += c->nodes[j].ctx != NULL && !c->nodes[j].connecting;
	return up;
}

size_t
rl_exchange(rl_client *c, const struct rl_script *s, int nkeys,
    const char **keys, int nargs, const char **args, size_t need)
{
	struct pollfd pfd[RL_MAX_NODES];
	size_t map[RL_MAX_NODES];
	const char *argv[24], *full[24];
	char nk[16];
	int argc = 0, i, left = 0, np, timeout;
	int64_t now = rl_now_ms(), next;
	size_t j, sent;

	snprintf(nk, sizeof(nk), "%d", nkeys);
	argv[argc++] = "EVALSHA";
	argv[argc++] = s->sha;
	argv[argc++] = nk;
	for (i = 0; i < nkeys && argc < 24; i++)
		argv[argc++] = keys[i];
	for (i = 0; i < nargs && argc < 24; i++)
		argv[argc++] = args[i];
	memcpy(full, argv, sizeof(argv));
	full[0] = "EVAL";
	full[1] = s->src;

	for (j = 0; j < c->n; j++) {
		struct rl_node *nd = &c->nodes[j];

		if (nd->reply != NULL)
			freeReplyObject(nd->reply);
		nd->reply = NULL;
		if (nd->ctx != NULL && !nd->skip)
			nd->err[0] = '\0';
	}
	/* Too few masters reachable: send nothing, change nothing. */
	if (connect_all(c) < need) {
		for (j = 0; j < c->n; j++)
			c->nodes[j].skip = 0;
		return 0;
	}
	/* Leaving out the masters that were late just before is worth it
	 * only while enough others are left to ask. */
	for (j = 0, left = 0; j < c->n; j++)
		left += c->nodes[j].ctx != NULL && !c->nodes[j].skip;
	if ((size_t)left < need)
		for (j = 0; j < c->n; j++) {
			c->nodes[j].skip = 0;
			if (c->nodes[j].ctx != NULL)
				c->nodes[j].err[0] = '\0';
		}
	left = 0;
	now = rl_now_ms();
	for (j = 0; j < c->n; j++) {
		struct rl_node *nd = &c->nodes[j];
		int skip = nd->skip;

		nd->sent_full = 0;
		nd->skip = 0;
		if (nd->ctx == NULL || skip)
			continue;
		/* Behind what it still owes, if anything: one connection
		 * runs its commands in order. A late NOSCRIPT cannot be
		 * answered by an EVAL without overtaking what follows it, so
		 * a master that owes replies gets the script itself. */
		if (!nd->connecting)
			nd->deadline = now + c->node_timeout_ms;
		nd->sent_full = nd->owed > 0;
		redisAppendCommandArgv(nd->ctx, argc, nd->sent_full ? full :
		    argv, NULL);
		nd->waiting = 1;
		left++;
	}
	sent = (size_t)left;
	while (left > 0) {
		np = 0;
		next = INT64_MAX;
		for (j = 0; j < c->n; j++) {
			struct rl_node *nd = &c->nodes[j];

			if (!nd->waiting)
				continue;
			pfd[np].fd = nd->ctx->fd;
			pfd[np].events = POLLIN;
			if (nd->connecting || write_pending(nd->ctx))
				pfd[np].events |= POLLOUT;
			pfd[np].revents = 0;
			map[np++] = j;
			if (nd->deadline < next)
				next = nd->deadline;
		}
		now = rl_now_ms();
		timeout = next <= now ? 0 : next - now > INT_MAX ? INT_MAX :
		    (int)(next - now);
		if (poll(pfd, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		now = rl_now_ms();
		for (i = 0; i < np; i++) {
			struct rl_node *nd = &c->nodes[map[i]];
			int done = 0;

			if (pfd[i].revents & (POLLOUT | POLLERR | POLLHUP)) {
				if (redisBufferWrite(nd->ctx, &done) != REDIS_OK) {
					node_fail(nd, "%s", nd->ctx->errstr[0] ?
					    nd->ctx->errstr : "connection failed");
					node_drop(nd);
					left--;
					continue;
				}
				if (nd->connecting) {
					nd->connecting = 0;
					nd->deadline = now + c->node_timeout_ms;
				}
			}
			if (pfd[i].revents & (POLLIN | POLLERR | POLLHUP)) {
				if (redisBufferRead(nd->ctx) != REDIS_OK) {
					node_fail(nd, "%s", nd->ctx->errstr[0] ?
					    nd->ctx->errstr : "connection lost");
					node_drop(nd);
					left--;
					continue;
				}
				if (node_read(nd, full, argc)) {
					left--;
					continue;
				}
			}
			if (nd->waiting && now >= nd->deadline) {
				node_late(nd);
				left--;
			}
		}
	}
	for (j = 0; j < c->n; j++)
		if (c->nodes[j].waiting)	/* poll(2) failed */
			node_late(&c->nodes[j]);
	return sent;
}

/* "2 of 5 masters answered (need 3): redis://h:1: Connection refused" */
static enum rl_err
no_quorum(rl_client *c, size_t answered, const char *doing)
{
	char url[256] = "";
	const char *why = "";
	size_t j;

	answered = 0;
	for (j = 0; j < c->n; j++)
		if (c->nodes[j].err[0] == '\0')
			answered++;
		else if (url[0] == '\0') {
			rl_url_format(&c->nodes[j].url, url, sizeof(url));
			why = c->nodes[j].err;
		}
	return rl_seterr(c, RL_ECONNECT, "no quorum to %s: %zu of %zu masters "
	    "answered (need %zu); %s: %s", doing, answered, c->n,
	    rl_quorum(c->n), url, why);
}

/* Node J answered {-1, key, type}: RL_EWRONGTYPE, its reply kept. */
static enum rl_err
node_wrongtype(rl_client *c, size_t j, const char **key, const char **type);

/* Keep node J's reply past the next exchange, for strings handed out. */
static redisReply *
keep(rl_client *c, size_t j)
{
	if (c->last != NULL)
		freeReplyObject(c->last);
	c->last = c->nodes[j].reply;
	c->nodes[j].reply = NULL;
	return c->last;
}

static enum rl_err
node_wrongtype(rl_client *c, size_t j, const char **key, const char **type)
{
	return rl_wrongtype(c, keep(c, j), key, type);
}

enum rl_err
rl_multi_try_acquire(rl_client *c, const char **keys, int nkeys,
    const char **args, int nargs, int64_t ttl_ms, struct rl_attempt *a)
{
	const char *rkeys[6], *rargs[2];
	size_t j, ok = 0, answered = 0, busy = (size_t)-1, bad = (size_t)-1;
	int64_t start = rl_now_ms(), elapsed;
	redisReply *r;

	a->sent_ms = start;
	if (rl_exchange(c, &rl_script_acquire, nkeys, keys, nargs, args,
	    rl_quorum(c->n)) == 0)
		return no_quorum(c, 0, "acquire");
	elapsed = rl_now_ms() - start;
	for (j = 0; j < c->n; j++) {
		r = c->nodes[j].reply;
		if (r == NULL)
			continue;
		answered++;
		switch (rl_elem_int(r, 0, -2)) {
		case 1:
			ok++;
			if (a->nopub == NULL)
				a->nopub = rl_elem_str(r, 3);
			if (rl_elem_int(r, 1, 0) > a->fence)
				a->fence = rl_elem_int(r, 1, 0);
			if (rl_elem_int(r, 2, 1) > a->holds)
				a->holds = rl_elem_int(r, 2, 1);
			break;
		case 0:
			if (busy == (size_t)-1 ||
			    rl_elem_int(r, 1, -1) > rl_elem_int(c->nodes[busy].reply, 1, -1))
				busy = j;
			break;
		case -1:
			bad = j;
			break;
		}
	}
	a->nodes_ok = ok;
	a->validity_ms = rl_validity_ms(ttl_ms, elapsed);
	if (bad == (size_t)-1 && ok >= rl_quorum(c->n) && a->validity_ms > 0) {
		a->acquired = 1;
		return RL_OK;
	}
	a->fence = 0;
	a->holds = 0;
	a->nopub = NULL;
	a->too_slow = bad == (size_t)-1 && ok >= rl_quorum(c->n);
	if (bad != (size_t)-1 || busy != (size_t)-1)
		r = keep(c, bad != (size_t)-1 ? bad : busy);
	else
		r = NULL;
	/* Not acquired: undo on every master, also those that did not
	 * answer (the script may still run there). */
	rkeys[0] = keys[0];
	rkeys[1] = NULL;	/* filled below */
	if (ok > 0 || answered < c->n) {
		char *ch = rl_key(RL_PREFIX_CHANNEL, keys[0]);

		rkeys[1] = ch ? ch : "";
		rkeys[2] = keys[2];
		rkeys[3] = keys[3];
		rkeys[4] = keys[4];
		rkeys[5] = keys[5];
		rargs[0] = args[1];
		rargs[1] = "0";
		rl_exchange(c, &rl_script_release, 6, rkeys, 2, rargs, 1);
		free(ch);
	}
	if (bad != (size_t)-1)
		return rl_wrongtype(c, r, &a->badkey, &a->badtype);
	if (answered < rl_quorum(c->n))
		return no_quorum(c, answered, "acquire");
	a->pttl = -1;
	a->held_ms = -1;
	a->head_wait_ms = -1;	/* no fair queue: no head to wait for */
	if (r != NULL)
		rl_attempt_holder(r, a);
	return RL_OK;
}

enum rl_err
rl_multi_release(rl_client *c, const char **keys, const char **args,
    enum rl_release *rel, int64_t *holds, struct rl_attempt *a)
{
	size_t j, answered = 0, released = 0, decremented = 0, other = 0;
	redisReply *r;

	rl_exchange(c, &rl_script_release, 6, keys, 2, args, 1);
	*holds = 0;
	for (j = 0; j < c->n; j++) {
		if ((r = c->nodes[j].reply) == NULL)
			continue;
		answered++;
		switch (rl_elem_int(r, 0, -2)) {
		case 2:
			released++;
			if (a->nopub == NULL)
				a->nopub = rl_elem_str(r, 1);
			break;
		case 1:
			decremented++;
			if (rl_elem_int(r, 1, 0) > *holds)
				*holds = rl_elem_int(r, 1, 0);
			break;
		case 0:
			other += rl_elem_int(r, 1, 0) == 1;
			break;
		case -1:
			return node_wrongtype(c, j, &a->badkey,
			    &a->badtype);
		}
	}
	if (answered == 0)
		return no_quorum(c, answered, "release");
	if (decremented > 0)
		*rel = RL_DECREMENTED;
	else if (released > 0)
		*rel = RL_RELEASED;
	else {
		*rel = RL_NOT_OWNER;
		*holds = other > 0;
	}
	return RL_OK;
}

enum rl_err
rl_multi_force(rl_client *c, const char **keys, const char **args,
    int *deleted, struct rl_attempt *a)
{
	size_t j, answered = 0;
	redisReply *r;

	rl_exchange(c, &rl_script_force, 6, keys, 1, args, 1);
	*deleted = 0;
	for (j = 0; j < c->n; j++) {
		if ((r = c->nodes[j].reply) == NULL)
			continue;
		answered++;
		switch (rl_elem_int(r, 0, -2)) {
		case 1:
			*deleted = 1;
			if (a->nopub == NULL)
				a->nopub = rl_elem_str(r, 1);
			break;
		case -1:
			return node_wrongtype(c, j, &a->badkey,
			    &a->badtype);
		}
	}
	if (answered == 0)
		return no_quorum(c, answered, "delete");
	return RL_OK;
}

enum rl_err
rl_multi_renew(rl_client *c, const char **keys, const char **args, int *ours)
{
	size_t j, yes = 0, no = 0;
	redisReply *r;

	rl_exchange(c, &rl_script_renew, 2, keys, 2, args, 1);
	for (j = 0; j < c->n; j++) {
		if ((r = c->nodes[j].reply) == NULL ||
		    r->type != REDIS_REPLY_INTEGER)
			continue;
		if (r->integer == 1)
			yes++;
		else
			no++;
	}
	if (yes >= rl_quorum(c->n)) {
		*ours = 1;
		return RL_OK;
	}
	if (no > c->n - rl_quorum(c->n)) {
		/* A quorum can never be had again: renewals do not
		 * re-create the lock where it is gone. */
		*ours = 0;
		return RL_OK;
	}
	return rl_seterr(c, RL_ECONNECT, "renewed on %zu of %zu masters "
	    "(need %zu)", yes, c->n, rl_quorum(c->n));
}

enum rl_err
rl_multi_status(rl_client *c, const char **keys, struct rl_status *st)
{
	size_t j, k, answered = 0, best = (size_t)-1, best_n = 0;
	struct rl_status s;

	rl_exchange(c, &rl_script_status, 5, keys, 0, NULL, 1);
	for (j = 0; j < c->n; j++) {
		const redisReply *r = c->nodes[j].reply;
		size_t same = 0;

		if (r == NULL)
			continue;
		answered++;
		if (rl_elem_int(r, 0, -2) == -1) {
			return node_wrongtype(c, j, &st->badkey,
			    &st->badtype);
		}
		rl_status_read(r, &s);
		if (!s.held)
			continue;
		for (k = 0; k < c->n; k++) {
			const char *o = rl_elem_str(c->nodes[k].reply, 3);

			if (rl_elem_int(c->nodes[k].reply, 0, -2) == 1 && o &&
			    strcmp(o, s.owner) == 0)
				same++;
		}
		if (same > best_n) {
			best_n = same;
			best = j;
		}
	}
	if (answered == 0)
		return no_quorum(c, answered, "read the lock");
	rl_status_read(best != (size_t)-1 ? c->nodes[best].reply : NULL, st);
	/* The verdict: held only where a quorum agrees on the owner. */
	st->held_on = best_n;
	st->answered = answered;
	st->held = best_n >= rl_quorum(c->n);
	return RL_OK;
}

int
rl_node_status(rl_client *c, size_t i, struct rl_status *st, char *url,
    size_t urllen, const char **err)
{
	if (c->n < 2 || i >= c->n)
		return -1;
	rl_url_format(&c->nodes[i].url, url, urllen);
	*err = c->nodes[i].reply == NULL ? c->nodes[i].err : NULL;
	rl_status_read(c->nodes[i].reply, st);
	return 0;
}

enum rl_err
rl_multi_subscribe(rl_client *c, const char *channel)
{
	const char *argv[2] = { "SUBSCRIBE", channel };
	redisContext *ctx;
	redisReply *r;
	enum rl_err e;
	size_t j;

	for (j = 0; j < c->n; j++) {
		size_t k;

		for (k = 0; k < c->nsubs && c->subnode[k] != j; k++)
			;
		if (k < c->nsubs)
			continue;	/* listening there already */
		if (rl_open_url(c, &c->nodes[j].url, c->node_timeout_ms * 2 +
		    10, c->node_timeout_ms * 2 + 10, &ctx) != RL_OK)
			continue;
		r = redisCommandArgv(ctx, 2, argv, NULL);
		if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
			/* A master that refuses it to this user refuses it
			 * for good: say so rather than wait on timers. */
			e = rl_subscribe_error(c, &c->nodes[j].url, ctx, r,
			    channel);
			if (r != NULL)
				freeReplyObject(r);
			redisFree(ctx);
			if (e == RL_EAUTH)
				return e;
			continue;
		}
		freeReplyObject(r);
		c->subnode[c->nsubs] = j;
		c->subs[c->nsubs++] = ctx;
	}
	/* With no master to listen to, the waits still end on their timers. */
	return RL_OK;
}

/* Two URLs may name one server (127.0.0.1 and localhost, two databases,
 * TCP and its unix socket), which would then count twice towards the
 * quorum. Ask every master for its run_id in one parallel round at the
 * first connection and refuse a repeat. A master that does not tell (no
 * answer, INFO refused by an ACL) is not checked; one that failed here is
 * left out of the exchange right after, rather than waited for twice. */
enum rl_err
rl_multi_distinct(rl_client *c)
{
	const redisReply *ri, *rj;
	char a[512], b[512];
	size_t i, j;

	rl_exchange(c, &rl_script_runid, 0, NULL, 0, NULL, 2);
	for (j = 0; j < c->n; j++) {
		c->nodes[j].skip = c->nodes[j].reply == NULL;
		rj = c->nodes[j].reply;
		if (rj == NULL || rj->type != REDIS_REPLY_STRING)
			continue;
		for (i = 0; i < j; i++) {
			ri = c->nodes[i].reply;
			if (ri == NULL || ri->type != REDIS_REPLY_STRING ||
			    strcmp(ri->str, rj->str) != 0)
				continue;
			rl_url_format(&c->nodes[i].url, a, sizeof(a));
			rl_url_format(&c->nodes[j].url, b, sizeof(b));
			return rl_seterr(c, RL_EUSAGE, "%s and %s are the same "
			    "server (run_id %.8s): give each master once, "
			    "or it counts twice towards the quorum", a, b,
			    rj->str);
		}
	}
	return RL_OK;
}
