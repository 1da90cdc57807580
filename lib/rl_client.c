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

static int
copy(char **dst, const char *src)
{
	if (src == NULL)
		return 0;
	return (*dst = strdup(src)) == NULL ? -1 : 0;
}

rl_client *
rl_client_new(const struct rl_url *u, int64_t connect_timeout_ms,
    int64_t timeout_ms)
{
	rl_client *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->url.port = u->port;
	c->url.db = u->db;
	if (copy(&c->url.host, u->host) < 0 || copy(&c->url.path, u->path) < 0 ||
	    copy(&c->url.user, u->user) < 0 ||
	    copy(&c->url.password, u->password) < 0) {
		rl_client_free(c);
		return NULL;
	}
	c->connect_timeout_ms = connect_timeout_ms;
	c->timeout_ms = timeout_ms;
	c->intr_fd = -1;
	return c;
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
	if (c->sub != NULL)
		redisFree(c->sub);
	free(c->subchannel);
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
static enum rl_err
ctx_error(rl_client *c, redisContext *ctx, const char *what)
{
	char url[512];
	const char *why = ctx->errstr;

	rl_url_format(&c->url, url, sizeof(url));
	if (strstr(why, "temporarily unavailable") != NULL ||
	    strstr(why, "timed out") != NULL)
		why = "timed out (see --connect-timeout and --timeout)";
	else if (ctx->err == REDIS_ERR_EOF)
		why = "the server closed the connection";
	return rl_seterr(c, RL_ECONNECT, "%s %s: %s", what, url,
	    why[0] ? why : "unknown error");
}

/* Map a server error reply to an enum rl_err and a message. */
static enum rl_err
reply_error(rl_client *c, const redisReply *r, const char *doing)
{
	char url[512];

	rl_url_format(&c->url, url, sizeof(url));
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
	if (strncmp(r->str, "NOPERM", 6) == 0)
		return rl_seterr(c, RL_EAUTH,
		    "%s refused %s for this user (%.120s): grant it EVALSHA, "
		    "EVAL, SUBSCRIBE and SCAN", url, doing, r->str);
	if (strncmp(r->str, "READONLY", 8) == 0)
		return rl_seterr(c, RL_ECONNECT,
		    "%s is a read-only replica: point --url at the master", url);
	if (strncmp(r->str, "LOADING", 7) == 0 ||
	    strncmp(r->str, "BUSY", 4) == 0 ||
	    strncmp(r->str, "MASTERDOWN", 10) == 0)
		return rl_seterr(c, RL_ECONNECT,
		    "%s cannot serve now (%.120s): try again shortly", url, r->str);
	return rl_seterr(c, RL_EPROTO, "%s failed on %s: %.160s", doing, url,
	    r->str);
}

static enum rl_err
command(rl_client *c, redisContext *ctx, int argc, const char **argv,
    const char *doing)
{
	redisReply *r = redisCommandArgv(ctx, argc, argv, NULL);
	enum rl_err e = RL_OK;

	if (r == NULL)
		return ctx_error(c, ctx, "lost connection to");
	if (r->type == REDIS_REPLY_ERROR)
		e = reply_error(c, r, doing);
	freeReplyObject(r);
	return e;
}

enum rl_err
rl_open(rl_client *c, redisContext **out)
{
	struct timeval ct = tv_ms(c->connect_timeout_ms);
	redisContext *ctx;
	const char *argv[3];
	enum rl_err e;
	char db[16];
	int fl;

	if (c->url.path != NULL)
		ctx = redisConnectUnixWithTimeout(c->url.path, ct);
	else
		ctx = redisConnectWithTimeout(c->url.host, c->url.port, ct);
	if (ctx == NULL)
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	if (ctx->err) {
		e = ctx_error(c, ctx, "cannot connect to");
		redisFree(ctx);
		return e;
	}
	fl = fcntl(ctx->fd, F_GETFD);
	if (fl < 0 || fcntl(ctx->fd, F_SETFD, fl | FD_CLOEXEC) < 0) {
		redisFree(ctx);
		return rl_seterr(c, RL_ECONNECT, "cannot set close-on-exec: %s",
		    strerror(errno));
	}
	if (c->timeout_ms > 0 &&
	    redisSetTimeout(ctx, tv_ms(c->timeout_ms)) != REDIS_OK) {
		e = ctx_error(c, ctx, "cannot set the timeout on");
		redisFree(ctx);
		return e;
	}
	if (c->url.password != NULL) {
		int n = 0;

		argv[n++] = "AUTH";
		if (c->url.user != NULL)
			argv[n++] = c->url.user;
		argv[n++] = c->url.password;
		if ((e = command(c, ctx, n, argv, "AUTH")) != RL_OK) {
			redisFree(ctx);
			return e == RL_EPROTO ? RL_EAUTH : e;
		}
	}
	if (c->url.db != 0) {
		snprintf(db, sizeof(db), "%d", c->url.db);
		argv[0] = "SELECT";
		argv[1] = db;
		if ((e = command(c, ctx, 2, argv, "SELECT")) != RL_OK) {
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
}

enum rl_err
rl_connect(rl_client *c)
{
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
	int argc = 0, i;

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
	r = redisCommandArgv(c->ctx, argc, argv, NULL);
	if (r != NULL && r->type == REDIS_REPLY_ERROR &&
	    strncmp(r->str, "NOSCRIPT", 8) == 0) {
		freeReplyObject(r);
		argv[0] = "EVAL";
		argv[1] = s->src;
		r = redisCommandArgv(c->ctx, argc, argv, NULL);
	}
	if (r == NULL) {
		enum rl_err e = ctx_error(c, c->ctx, "lost connection to");

		redisFree(c->ctx);
		c->ctx = NULL;
		return e;
	}
	c->last = r;
	if (r->type == REDIS_REPLY_ERROR)
		return reply_error(c, r, s->name);
	*out = r;
	return RL_OK;
}
