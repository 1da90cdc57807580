/* rl_sentinel.c: the Sentinel transport: ask the sentinels in turn where
 * the master named in the URL is, and which replicas it has, then connect
 * to it.
 *
 * Nothing blocks: connecting to a sentinel, asking it (AUTH first when
 * sentinel credentials are given, then SENTINEL GET-MASTER-ADDR-BY-NAME)
 * and connecting to the master are steps of finish(), each taken when the
 * socket is ready; the connection's connect timeout bounds them all. A
 * sentinel that fails in any way hands over to the next. Nothing is
 * cached: every connect asks again, so a reconnect after a failover finds
 * the new master. Once connected, reads and writes go to the master's
 * socket as over rl_tcp.c. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rl_conn.h"
#include "rl_sentinel.h"
#include "rl_tcp.h"

enum phase {
	PH_CONNECT,		/* connecting to sentinel I */
	PH_ASK,			/* asking it */
	PH_MASTER,		/* connecting to the master it named */
	PH_DONE			/* connected to the master */
};

/* How telling a sentinel's failure is: the most telling one is reported
 * when none answers. */
enum rank { RK_NONE, RK_UNREACHABLE, RK_ANSWER };

struct sentinel {
	struct rl_tcp tcp;
	enum phase phase;
	size_t i;		/* the sentinel being tried */
	size_t tried;		/* how many have been */
	redisReader *reader;
	char *out;		/* AUTH and the question */
	size_t outlen, outoff;
	int due;		/* replies still to come */
	int auth;		/* the first of them is AUTH's */
	char *authwhy;		/* AUTH's error reply, if any */
	enum rank rank;		/* of the failure in c->why */
	char mhost[256];	/* the master, as the sentinel named it */
	int mport;
	int named;		/* it did (the replicas' count is due) */
	int replicas;		/* its replicas that are up; -1 unknown */
};

static const struct rl_hostport *
current(const struct rl_conn *c, const struct sentinel *s)
{
	return &c->url->sentinels[s->i];
}

/* "127.0.0.1:26379", "[::1]:26379" */
static void
addr(char *buf, size_t len, const char *host, int port)
{
	const char *lb = strchr(host, ':') ? "[" : "";

	snprintf(buf, len, "%s%s%s:%d", lb, host, *lb ? "]" : "", port);
}

/* A failure of the sentinel being tried: kept in c->why unless one
 * more telling was kept already. */
static void
note(struct rl_conn *c, struct sentinel *s, enum rank rank,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
note(struct rl_conn *c, struct sentinel *s, enum rank rank,
    const char *fmt, ...)
{
	va_list ap;

	if (rank <= s->rank)
		return;
	s->rank = rank;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

static void
forget_question(struct sentinel *s)
{
	free(s->out);
	s->out = NULL;
	s->outlen = s->outoff = 0;
	free(s->authwhy);
	s->authwhy = NULL;
	if (s->reader != NULL)
		redisReaderFree(s->reader);
	s->reader = NULL;
	s->due = s->auth = s->named = 0;
}

/* Why none of the sentinels led to the master. */
static void
none_answered(struct rl_conn *c, struct sentinel *s)
{
	char last[112];	/* 100 bytes, an ellipsis */
	char url[512];

	if (s->rank == RK_ANSWER || c->url->nsentinels == 0)
		return;
	/* Every one unreachable: c->why names the last and its errno. */
	rl_clip(c->why, strlen(c->why), 100, last, sizeof(last));
	rl_url_format(c->url, url, sizeof(url));
	snprintf(c->why, sizeof(c->why), "no sentinel of %.200s answered "
	    "(%s): check the sentinel addresses in the URL and that they "
	    "run", url, last);
}

/* Start connecting to the next sentinel that does not fail at once:
 * 0, or -1 when none is left (c->why says why). */
static int
next_sentinel(struct rl_conn *c, struct sentinel *s)
{
	const struct rl_hostport *h;
	char a[300];

	forget_question(s);
	while (s->tried < c->url->nsentinels) {
		if (s->tried++ > 0)
			s->i = (s->i + 1) % c->url->nsentinels;
		h = current(c, s);
		s->phase = PH_CONNECT;
		if (rl_tcp_start(&s->tcp, h->host, h->port, NULL) == 0) {
			c->fd = s->tcp.fd;
			c->want = 0;
			return 0;
		}
		addr(a, sizeof(a), h->host, h->port);
		note(c, s, RK_UNREACHABLE, "sentinel %s: %s", a, s->tcp.why);
	}
	c->fd = -1;
	none_answered(c, s);
	return -1;
}

static int
queue_cmd(struct sentinel *s, int argc, const char **argv)
{
	char *cmd, *p;
	int n = redisFormatCommandArgv(&cmd, argc, argv, NULL);

	if (n < 0)
		return -1;
	if ((p = realloc(s->out, s->outlen + (size_t)n)) == NULL) {
		redisFreeCommand(cmd);
		return -1;
	}
	memcpy(p + s->outlen, cmd, (size_t)n);
	redisFreeCommand(cmd);
	s->out = p;
	s->outlen += (size_t)n;
	s->due++;
	return 0;
}

/* Connected to a sentinel: AUTH (with sentinel credentials) and the
 * questions go out in one write: where the master is, and its replicas
 * (the Sentinel default of --replicas WAITs for one of them when there
 * are any: rl_conn replicas). */
static int
ask(struct rl_conn *c, struct sentinel *s)
{
	const struct rl_url *u = c->url;
	const char *argv[3];
	int n = 0;

	s->phase = PH_ASK;
	if ((s->reader = redisReaderCreate()) == NULL)
		return -1;
	if (u->sentinel_password != NULL) {
		argv[n++] = "AUTH";
		if (u->sentinel_user != NULL)
			argv[n++] = u->sentinel_user;
		argv[n++] = u->sentinel_password;
		if (queue_cmd(s, n, argv) < 0)
			return -1;
		s->auth = 1;
	}
	argv[0] = "SENTINEL";
	argv[1] = "GET-MASTER-ADDR-BY-NAME";
	argv[2] = u->master;
	if (queue_cmd(s, 3, argv) < 0)
		return -1;
	argv[1] = "REPLICAS";
	return queue_cmd(s, 3, argv);
}

/* What AUTH's refusal means, and what to do. */
static void
auth_refused(struct rl_conn *c, struct sentinel *s, const char *a,
    const char *str)
{
	char why[RL_REASON_MAX + 8];

	rl_clip(str, strlen(str), 100, why, sizeof(why));
	note(c, s, RK_ANSWER, "sentinel %s refused AUTH (%s): check "
	    "--sentinel-user and --sentinel-password (or "
	    "REDLOCK_SENTINEL_PASSWORD)", a, why);
}

enum rl_sentinel_said
rl_sentinel_addr(const redisReply *r, char *host, size_t hostlen, int *port)
{
	char *end;
	long p = 0;

	if (r->type == REDIS_REPLY_ERROR)
		return strncmp(r->str, "NOAUTH", 6) == 0 ? RL_SS_NOAUTH :
		    RL_SS_REFUSED;
	if (r->type == REDIS_REPLY_NIL || (r->type == REDIS_REPLY_ARRAY &&
	    r->elements == 0))
		return RL_SS_UNKNOWN;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_STRING ||
	    r->element[0]->len >= hostlen ||
	    (p = strtol(r->element[1]->str, &end, 10)) < 1 || p > 65535 ||
	    *end != '\0')
		return RL_SS_BAD;
	memcpy(host, r->element[0]->str, r->element[0]->len + 1);
	*port = (int)p;
	return RL_SS_ADDR;
}

/* Field F of E, a replica's fields and values in turn; NULL: none. */
static const char *
field(const redisReply *e, const char *f)
{
	size_t k;

	for (k = 0; k + 1 < e->elements; k += 2)
		if (e->element[k]->type == REDIS_REPLY_STRING &&
		    e->element[k + 1]->type == REDIS_REPLY_STRING &&
		    strcmp(e->element[k]->str, f) == 0)
			return e->element[k + 1]->str;
	return NULL;
}

int
rl_sentinel_replicas(const redisReply *r)
{
	const redisReply *e;
	const char *flags;
	size_t i;
	int n = 0;

	if (r->type != REDIS_REPLY_ARRAY)
		return -1;
	for (i = 0; i < r->elements && n < INT_MAX; i++) {
		e = r->element[i];
		if (e->type == REDIS_REPLY_ARRAY &&
		    (flags = field(e, "flags")) != NULL &&
		    strstr(flags, "s_down") == NULL &&
		    strstr(flags, "o_down") == NULL &&
		    strstr(flags, "disconnected") == NULL)
			n++;
	}
	return n;
}

/* The answer to the question: 0 with the master's address, or -1 (a
 * failure noted). */
static int
answer(struct rl_conn *c, struct sentinel *s, const redisReply *r,
    const char *a)
{
	const char *name = c->url->master;
	char why[RL_REASON_MAX + 8];

	if (s->authwhy != NULL) {
		auth_refused(c, s, a, s->authwhy);
		return -1;
	}
	switch (rl_sentinel_addr(r, s->mhost, sizeof(s->mhost), &s->mport)) {
	case RL_SS_ADDR:
		return 0;
	case RL_SS_NOAUTH:
		note(c, s, RK_ANSWER, "sentinel %s requires a password: "
		    "give --sentinel-password or REDLOCK_SENTINEL_PASSWORD", a);
		break;
	case RL_SS_REFUSED:
		rl_clip(r->str, strlen(r->str), 120, why, sizeof(why));
		note(c, s, RK_ANSWER, "sentinel %s refused SENTINEL "
		    "GET-MASTER-ADDR-BY-NAME (%s): is it a sentinel, and "
		    "may this user ask it?", a, why);
		break;
	case RL_SS_UNKNOWN:
		note(c, s, RK_ANSWER, "sentinel %s does not know a master "
		    "named '%.100s': check the name in the URL (SENTINEL "
		    "MASTERS on the sentinel lists them)", a, name);
		break;
	case RL_SS_BAD:
		note(c, s, RK_ANSWER, "sentinel %s gave no address for "
		    "master '%.100s': is it a sentinel?", a, name);
		break;
	}
	return -1;
}

/* Take the replies that have come: 1 when more are due, 0 with the
 * master's address, -1 on a failure (noted). */
static int
replies(struct rl_conn *c, struct sentinel *s, const char *a)
{
	void *v;
	redisReply *r;
	int rc;

	while (s->due > 0) {
		if (redisReaderGetReply(s->reader, &v) != REDIS_OK) {
			note(c, s, RK_ANSWER, "sentinel %s answered something "
			    "that is not the Redis protocol (%s): is it a "
			    "sentinel?", a, s->reader->errstr);
			return -1;
		}
		if (v == NULL)
			return 1;
		r = v;
		s->due--;
		if (s->auth) {
			s->auth = 0;
			if (r->type == REDIS_REPLY_ERROR &&
			    (s->authwhy = strdup(r->str)) == NULL)
				s->authwhy = strdup("out of memory");
			freeReplyObject(r);
			continue;
		}
		if (s->named) {
			s->replicas = rl_sentinel_replicas(r);
			freeReplyObject(r);
			continue;
		}
		rc = answer(c, s, r, a);
		freeReplyObject(r);
		if (rc < 0)
			return rc;
		s->named = 1;
	}
	return s->named ? 0 : -1;
}

/* Write the question, read the answer: 1 for more, 0 answered, -1
 * failed (noted). */
static int
talk(struct rl_conn *c, struct sentinel *s, const char *a)
{
	char buf[4096];
	ssize_t n;

	while (s->outoff < s->outlen) {
		n = send(c->fd, s->out + s->outoff, s->outlen - s->outoff,
		    MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			c->want = POLLOUT;
			return 1;
		}
		if (n <= 0) {
			note(c, s, RK_UNREACHABLE, "sentinel %s: %s", a,
			    strerror(errno));
			return -1;
		}
		s->outoff += (size_t)n;
	}
	c->want = POLLIN;
	for (;;) {
		n = read(c->fd, buf, sizeof(buf));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return replies(c, s, a);
		if (n <= 0) {
			note(c, s, RK_UNREACHABLE, "sentinel %s: %s", a, n == 0 ?
			    "closed the connection" : strerror(errno));
			return -1;
		}
		if (redisReaderFeed(s->reader, buf, (size_t)n) != REDIS_OK)
			return -1;
	}
}

/* One step of asking sentinel I: 1 for more, 0 answered, -1 failed. */
static int
sentinel_step(struct rl_conn *c, struct sentinel *s)
{
	const struct rl_hostport *h = current(c, s);
	char a[300];
	int rc;

	addr(a, sizeof(a), h->host, h->port);
	if (s->phase == PH_CONNECT) {
		rc = rl_tcp_finish(&s->tcp);
		c->fd = s->tcp.fd;
		if (rc == 1)
			return 1;
		if (rc < 0) {
			note(c, s, RK_UNREACHABLE, "sentinel %s: %s", a,
			    s->tcp.why);
			return -1;
		}
		if (ask(c, s) < 0) {
			note(c, s, RK_ANSWER, "out of memory");
			return -1;
		}
	}
	return talk(c, s, a);
}

static int
master_failed(struct rl_conn *c, struct sentinel *s, const char *why)
{
	char m[300], a[300], url[512];
	const struct rl_hostport *h = current(c, s);

	addr(m, sizeof(m), s->mhost, s->mport);
	addr(a, sizeof(a), h->host, h->port);
	rl_url_format(c->url, url, sizeof(url));
	snprintf(c->why, sizeof(c->why), "cannot connect to %.80s, the "
	    "master of %.120s as sentinel %.60s names it: %.60s", m, url, a,
	    why);
	c->fd = -1;
	return -1;
}

static int
sentinel_finish(struct rl_conn *c)
{
	struct sentinel *s = c->priv;
	int rc;

	if (s->phase == PH_MASTER) {
		rc = rl_tcp_finish(&s->tcp);
		c->fd = s->tcp.fd;
		c->want = 0;
		if (rc < 0)
			return master_failed(c, s, s->tcp.why);
		if (rc == 0) {
			s->phase = PH_DONE;
			c->replicas = s->replicas;
		}
		return rc;
	}
	if ((rc = sentinel_step(c, s)) < 0)
		return next_sentinel(c, s) < 0 ? -1 : 1;
	if (rc == 1)
		return 1;
	forget_question(s);
	s->phase = PH_MASTER;
	c->want = 0;
	if (rl_tcp_start(&s->tcp, s->mhost, s->mport, NULL) < 0)
		return master_failed(c, s, s->tcp.why);
	c->fd = s->tcp.fd;
	return 1;
}

static int
sentinel_open(struct rl_conn *c)
{
	struct sentinel *s;

	if (c->url->nsentinels == 0 || (s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(c->why, sizeof(c->why), "out of memory");
		return -1;
	}
	rl_tcp_init(&s->tcp);
	s->replicas = -1;
	/* Start where the last attempt left off: a sentinel that hung is
	 * not the first one asked again. */
	s->i = c->turn % c->url->nsentinels;
	c->priv = s;
	if (next_sentinel(c, s) < 0) {
		c->t->close(c);
		return -1;
	}
	return 0;
}

static void
sentinel_close(struct rl_conn *c)
{
	struct sentinel *s = c->priv;

	if (s != NULL) {
		/* Given up on while asking: the next connect asks the next
		 * sentinel first. */
		if (s->phase == PH_CONNECT || s->phase == PH_ASK)
			c->turn = (unsigned)(s->i + 1);
		if (c->fd >= 0 && c->fd != s->tcp.fd)
			close(c->fd);
		rl_tcp_clear(&s->tcp);
		forget_question(s);
		free(s);
	} else if (c->fd >= 0)
		close(c->fd);
	c->priv = NULL;
	c->fd = -1;
}

const char *
rl_sentinel_master(const struct rl_conn *c, int *port)
{
	const struct sentinel *s = c->priv;

	if (c->t != &rl_transport_sentinel || s == NULL ||
	    s->phase != PH_DONE)
		return NULL;
	*port = s->mport;
	return s->mhost;
}

const struct rl_transport rl_transport_sentinel = {
	sentinel_open, sentinel_finish, rl_tcp_read, rl_tcp_write,
	sentinel_close, NULL
};
