/* rl_client.c: connecting, authenticating and running scripts. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_int.h"

enum rl_err
rl_seterr(rl_client *c, enum rl_err e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errstr, sizeof(c->errstr), fmt, ap);
	va_end(ap);
	return e;
}

const char *
rl_errstr(const rl_client *c)
{
	return c->errstr;
}

/* The ACL user a URL logs in as. */
static const char *
url_user(const struct rl_url *u)
{
	return u->user != NULL ? u->user : "default";
}

const char *
rl_user(const rl_client *c)
{
	return url_user(&c->url);
}

static int
copy(char **dst, const char *src)
{
	if (src == NULL)
		return 0;
	return (*dst = strdup(src)) == NULL ? -1 : 0;
}

static int
url_copy(struct rl_url *d, const struct rl_url *u)
{
	d->port = u->port;
	d->db = u->db;
	if (copy(&d->host, u->host) < 0 || copy(&d->path, u->path) < 0 ||
	    copy(&d->user, u->user) < 0 || copy(&d->password, u->password) < 0)
		return -1;
	return 0;
}

rl_client *
rl_client_new(const struct rl_url *u, int64_t connect_timeout_ms,
    int64_t timeout_ms)
{
	return rl_client_new_multi(u, 1, connect_timeout_ms, timeout_ms);
}

rl_client *
rl_client_new_multi(const struct rl_url *urls, size_t n,
    int64_t connect_timeout_ms, int64_t timeout_ms)
{
	rl_client *c;
	size_t i;

	if (n == 0 || n > RL_MAX_NODES || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->n = n;
	c->connect_timeout_ms = connect_timeout_ms;
	c->timeout_ms = timeout_ms;
	c->node_timeout_ms = rl_node_timeout_for(30000);
	c->intr_fd = -1;
	if (url_copy(&c->url, &urls[0]) < 0)
		goto fail;
	if (n > 1) {
		if ((c->nodes = calloc(n, sizeof(*c->nodes))) == NULL)
			goto fail;
		for (i = 0; i < n; i++)
			if (url_copy(&c->nodes[i].url, &urls[i]) < 0)
				goto fail;
	}
	return c;
fail:
	rl_client_free(c);
	return NULL;
}

size_t
rl_nodes(const rl_client *c)
{
	return c->n;
}

void
rl_set_node_timeout(rl_client *c, int64_t ms)
{
	c->node_timeout_ms = ms;
}

void
rl_set_interrupt_fd(rl_client *c, int fd)
{
	c->intr_fd = fd;
}

void
rl_client_free(rl_client *c)
{
	if (c == NULL)
		return;
	if (c->last != NULL)
		freeReplyObject(c->last);
	if (c->ctx != NULL)
		redisFree(c->ctx);
	for (size_t i = 0; i < c->nsubs; i++)
		redisFree(c->subs[i]);
	rl_multi_free(c);
	rl_url_clear(&c->url);
	free(c);
}

static struct timeval
tv_ms(int64_t ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	return tv;
}

/* The error of a failed context as one line naming the URL. */
enum rl_err
rl_ctx_error(rl_client *c, const struct rl_url *u, redisContext *ctx,
    const char *what)
{
	char url[512];
	const char *why = ctx->errstr;

	rl_url_format(u, url, sizeof(url));
	if (strstr(why, "temporarily unavailable") != NULL ||
	    strstr(why, "timed out") != NULL)
		why = "timed out (see --connect-timeout and --timeout)";
	else if (ctx->err == REDIS_ERR_EOF)
		why = "the server closed the connection";
	return rl_seterr(c, RL_ECONNECT, "%s %s: %s", what, url,
	    why[0] ? why : "unknown error");
}

/* Error replies that are a condition of the server, not a fault of
 * redlock's: how they start, and what the operator can do about them. */
static const struct {
	const char *code;
	const char *todo;
} refusals[] = {
	{ "OOM ", "the server is out of memory: free some, raise maxmemory "
	    "or choose an eviction policy" },
	{ "CLUSTERDOWN ", "the cluster is down or does not serve this "
	    "name's slot: check CLUSTER INFO" },
	{ "CROSSSLOT ", "the keys of this name fall in different cluster "
	    "slots: a name with braces needs one non-empty {tag}, as in "
	    "'jobs{backup}'" },
	{ "MOVED ", "this cluster node does not serve the name's slot: give "
	    "the URL of the node that does" },
	{ "ASK ", "this cluster node does not serve the name's slot: give "
	    "the URL of the node that does" },
	{ "TRYAGAIN ", "the cluster is moving this slot: try again shortly" },
	{ "MISCONF ", "the server cannot save to disk and refuses writes: "
	    "fix its disk or its save settings" },
	{ "NOREPLICAS ", "too few replicas are connected to the master "
	    "(min-replicas-to-write)" },
	{ "ERR unknown command ", "the command is renamed or disabled "
	    "(rename-command); redlock needs EVAL and EVALSHA" },
	{ "ERR max number of clients", "the server has as many clients as "
	    "maxclients allows: try again later or raise it" },
};

/* The server's text up to where a script's location or a command's
 * arguments begin, for a line. */
static int
reason_len(const char *s)
{
	const char *p = strstr(s, " script: ");
	const char *q = strstr(s, ", with args beginning with");
	size_t n = p != NULL ? (size_t)(p - s) : strlen(s);

	if (q != NULL && (size_t)(q - s) < n)
		n = (size_t)(q - s);

	while (n > 0 && (s[n - 1] == '.' || s[n - 1] == ' '))
		n--;
	return n > 160 ? 160 : (int)n;
}

/* Map a server error reply to an enum rl_err and a message. */
enum rl_err
rl_reply_error(rl_client *c, const struct rl_url *u, const redisReply *r,
    const char *doing)
{
	char url[512];
	size_t i;

	rl_url_format(u, url, sizeof(url));
	if (strncmp(r->str, "NOAUTH", 6) == 0 ||
	    strstr(r->str, "unauthenticated") != NULL)
		return rl_seterr(c, RL_EAUTH,
		    "%s requires authentication: give the password in the URL "
		    "or in REDLOCK_PASSWORD", url);
	if (strncmp(r->str, "WRONGPASS", 9) == 0 ||
	    strstr(r->str, "invalid password") != NULL ||
	    strstr(r->str, "without any password configured") != NULL)
		return rl_seterr(c, RL_EAUTH,
		    "authentication to %s refused (%.120s): check the user and "
		    "password", url, r->str);
	if (strncmp(r->str, "NOPERM", 6) == 0 ||
	    strstr(r->str, "user executing the script can't") != NULL)
		return rl_seterr(c, RL_EAUTH,
		    "%s refused %s for user %s (%.*s): grant it EVALSHA, EVAL, "
		    "the commands the scripts run, the keys and the channels "
		    RL_ACL_CHANNELS, url, doing, url_user(u),
		    reason_len(r->str), r->str);
	if (strncmp(r->str, "READONLY", 8) == 0)
		return rl_seterr(c, RL_ECONNECT,
		    "%s is a read-only replica: point --url at the master", url);
	if (strncmp(r->str, "LOADING", 7) == 0 ||
	    strncmp(r->str, "BUSY", 4) == 0 ||
	    strncmp(r->str, "MASTERDOWN", 10) == 0)
		return rl_seterr(c, RL_ECONNECT,
		    "%s cannot serve now (%.120s): try again shortly", url, r->str);
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		if (strncmp(r->str, refusals[i].code,
		    strlen(refusals[i].code)) == 0)
			return rl_seterr(c, RL_ESERVER, "%s refused %s (%.*s): "
			    "%s", url, doing, reason_len(r->str), r->str,
			    refusals[i].todo);
	return rl_seterr(c, RL_EPROTO, "%s failed on %s: %.160s", doing, url,
	    r->str);
}

enum rl_err
rl_subscribe_error(rl_client *c, const struct rl_url *u, redisContext *ctx,
    const redisReply *r, const char *channel)
{
	const char *user = url_user(u);
	char url[512];

	if (r == NULL)
		return rl_ctx_error(c, u, ctx, "lost connection while "
		    "subscribing on");
	rl_url_format(u, url, sizeof(url));
	if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOPERM", 6) == 0)
		return rl_seterr(c, RL_EAUTH, "%s refused SUBSCRIBE to %s for "
		    "user %s (%.*s): a waiter needs it to be woken; grant it "
		    "with ACL SETUSER %s " RL_ACL_CHANNELS, url,
		    channel, user, reason_len(r->str), r->str, user);
	if (r->type == REDIS_REPLY_ERROR)
		return rl_reply_error(c, u, r, "SUBSCRIBE");
	return rl_seterr(c, RL_EPROTO, "unexpected reply to SUBSCRIBE from %s",
	    url);
}

static enum rl_err
command(rl_client *c, const struct rl_url *u, redisContext *ctx, int argc,
    const char **argv, const char *doing)
{
	redisReply *r = redisCommandArgv(ctx, argc, argv, NULL);
	enum rl_err e = RL_OK;

	if (r == NULL)
		return rl_ctx_error(c, u, ctx, "lost connection to");
	if (r->type == REDIS_REPLY_ERROR)
		e = rl_reply_error(c, u, r, doing);
	freeReplyObject(r);
	return e;
}

redisContext *
rl_open_nonblock(const struct rl_url *u, int *expect, char *why,
    size_t whylen)
{
	redisContext *ctx;
	const char *argv[3];
	char db[16];
	int fl, n = 0;

	ctx = u->path != NULL ? redisConnectUnixNonBlock(u->path) :
	    redisConnectNonBlock(u->host, u->port);
	if (ctx == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	if (ctx->err) {
		snprintf(why, whylen, "cannot connect: %s", ctx->errstr);
		redisFree(ctx);
		return NULL;
	}
	fl = fcntl(ctx->fd, F_GETFD);
	if (fl < 0 || fcntl(ctx->fd, F_SETFD, fl | FD_CLOEXEC) < 0) {
		snprintf(why, whylen, "cannot set close-on-exec: %s",
		    strerror(errno));
		redisFree(ctx);
		return NULL;
	}
	*expect = 0;
	if (u->password != NULL) {
		argv[n++] = "AUTH";
		if (u->user != NULL)
			argv[n++] = u->user;
		argv[n++] = u->password;
		redisAppendCommandArgv(ctx, n, argv, NULL);
		(*expect)++;
	}
	if (u->db != 0) {
		snprintf(db, sizeof(db), "%d", u->db);
		argv[0] = "SELECT";
		argv[1] = db;
		redisAppendCommandArgv(ctx, 2, argv, NULL);
		(*expect)++;
	}
	return ctx;
}

enum rl_err
rl_open(rl_client *c, redisContext **out)
{
	return rl_open_url(c, &c->url, c->connect_timeout_ms, c->timeout_ms,
	    out);
}

enum rl_err
rl_open_url(rl_client *c, const struct rl_url *u, int64_t connect_ms,
    int64_t timeout_ms, redisContext **out)
{
	struct timeval ct = tv_ms(connect_ms);
	redisContext *ctx;
	const char *argv[3];
	enum rl_err e;
	char db[16];
	int fl;

	if (u->path != NULL)
		ctx = redisConnectUnixWithTimeout(u->path, ct);
	else
		ctx = redisConnectWithTimeout(u->host, u->port, ct);
	if (ctx == NULL)
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	if (ctx->err) {
		e = rl_ctx_error(c, u, ctx, "cannot connect to");
		redisFree(ctx);
		return e;
	}
	fl = fcntl(ctx->fd, F_GETFD);
	if (fl < 0 || fcntl(ctx->fd, F_SETFD, fl | FD_CLOEXEC) < 0) {
		redisFree(ctx);
		return rl_seterr(c, RL_ECONNECT, "cannot set close-on-exec: %s",
		    strerror(errno));
	}
	if (timeout_ms > 0 &&
	    redisSetTimeout(ctx, tv_ms(timeout_ms)) != REDIS_OK) {
		e = rl_ctx_error(c, u, ctx, "cannot set the timeout on");
		redisFree(ctx);
		return e;
	}
	if (u->password != NULL) {
		int n = 0;

		argv[n++] = "AUTH";
		if (u->user != NULL)
			argv[n++] = u->user;
		argv[n++] = u->password;
		if ((e = command(c, u, ctx, n, argv, "AUTH")) != RL_OK) {
			redisFree(ctx);
			return e == RL_EPROTO ? RL_EAUTH : e;
		}
	}
	if (u->db != 0) {
		snprintf(db, sizeof(db), "%d", u->db);
		argv[0] = "SELECT";
		argv[1] = db;
		if ((e = command(c, u, ctx, 2, argv, "SELECT")) != RL_OK) {
			redisFree(ctx);
			return e == RL_EPROTO ? RL_EAUTH : e;
		}
	}
	*out = ctx;
	return RL_OK;
}

void
rl_disconnect(rl_client *c)
{
	if (c->last != NULL) {
		freeReplyObject(c->last);
		c->last = NULL;
	}
	if (c->ctx != NULL)
		redisFree(c->ctx);
	c->ctx = NULL;
	c->owed = 0;
}

/* CTX failed only because --timeout passed: the command may still run. */
static int
timed_out(const redisContext *ctx)
{
	return ctx->err == REDIS_ERR_IO &&
	    (strstr(ctx->errstr, "temporarily unavailable") != NULL ||
	    strstr(ctx->errstr, "timed out") != NULL);
}

/* No reply in time, or no connection: say so. After a timeout the
 * connection stays, its reply owed, so that the next command goes behind
 * this one (a new connection could overtake it); otherwise it is gone,
 * and with it whatever the server had not read. */
static enum rl_err
eval_failed(rl_client *c)
{
	enum rl_err e = rl_ctx_error(c, &c->url, c->ctx, "lost connection to");

	if (timed_out(c->ctx)) {
		c->ctx->err = 0;
		c->ctx->errstr[0] = '\0';
		c->owed++;
	} else
		rl_disconnect(c);
	return e;
}

/* The reply to the command just sent, after dropping those owed to
 * earlier ones (a late NOSCRIPT among them too: that command never ran),
 * all within one --timeout. */
static redisReply *
own_reply(rl_client *c)
{
	int64_t end = rl_now_ms() + c->timeout_ms;
	void *v;

	for (;;) {
		if (redisGetReply(c->ctx, &v) != REDIS_OK)
			return NULL;
		if (c->owed == 0)
			return v;
		freeReplyObject(v);
		c->owed--;
		if (c->timeout_ms > 0 && rl_now_ms() >= end) {
			char url[512];

			/* Still late: ours joins the owed ones. */
			c->owed++;
			rl_url_format(&c->url, url, sizeof(url));
			rl_seterr(c, RL_ECONNECT, "no answer from %s in time "
			    "(see --timeout)", url);
			return NULL;
		}
	}
}

enum rl_err
rl_connect(rl_client *c)
{
	/* Several masters connect in parallel, the first time to check
	 * that no server is named twice. */
	if (c->n > 1) {
		if (c->checked)
			return RL_OK;
		c->checked = 1;
		return rl_multi_distinct(c);
	}
	if (c->ctx != NULL)
		return RL_OK;
	return rl_open(c, &c->ctx);
}

enum rl_err
rl_eval(rl_client *c, const struct rl_script *s, int nkeys, const char **keys,
    int nargs, const char **args, redisReply **out)
{
	const char *argv[24];
	char nk[16];
	redisReply *r;
	int argc = 0, i, full;

	if (3 + nkeys + nargs > (int)(sizeof(argv) / sizeof(argv[0])))
		return rl_seterr(c, RL_EPROTO, "too many script arguments");
	if (c->last != NULL) {
		freeReplyObject(c->last);
		c->last = NULL;
	}
	if (c->ctx == NULL) {
		enum rl_err e = rl_connect(c);

		if (e != RL_OK)
			return e;
	}
	snprintf(nk, sizeof(nk), "%d", nkeys);
	argv[argc++] = "EVALSHA";
	argv[argc++] = s->sha;
	argv[argc++] = nk;
	for (i = 0; i < nkeys; i++)
		argv[argc++] = keys[i];
	for (i = 0; i < nargs; i++)
		argv[argc++] = args[i];
	/* Behind replies still owed, send the script itself: a late
	 * NOSCRIPT cannot be answered with an EVAL in order. */
	full = c->owed > 0;
	if (full) {
		argv[0] = "EVAL";
		argv[1] = s->src;
	}
	if (redisAppendCommandArgv(c->ctx, argc, argv, NULL) != REDIS_OK)
		return eval_failed(c);
	r = own_reply(c);
	if (r != NULL && r->type == REDIS_REPLY_ERROR && !full &&
	    strncmp(r->str, "NOSCRIPT", 8) == 0) {
		freeReplyObject(r);
		argv[0] = "EVAL";
		argv[1] = s->src;
		r = redisCommandArgv(c->ctx, argc, argv, NULL);
	}
	if (r == NULL)
		return c->ctx->err ? eval_failed(c) : RL_ECONNECT;
	c->last = r;
	if (r->type == REDIS_REPLY_ERROR) {
		char doing[64];

		snprintf(doing, sizeof(doing), "the %s script", s->name);
		return rl_reply_error(c, &c->url, r, doing);
	}
	*out = r;
	return RL_OK;
}
