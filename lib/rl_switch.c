/* rl_switch.c: listening on a sentinel to +switch-master. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_sentinel.h"
#include "rl_switch.h"

/* After a failure, open again after a delay that doubles up to this. */
#define RL_SWITCH_BACKOFF_MIN_MS 100
#define RL_SWITCH_BACKOFF_MAX_MS 2000

static const char subscribe[] =
    "*2\r\n$9\r\nSUBSCRIBE\r\n$14\r\n+switch-master\r\n";

void
rl_switch_init(struct rl_switch *s, const struct rl_url *u)
{
	memset(s, 0, sizeof(*s));
	s->polled = -1;
	rl_conn_init(&s->conn, &s->url, &rl_transport_tcp);
	if (u->master != NULL && u->nsentinels > 0)
		s->of = u;
}

void
rl_switch_close(struct rl_switch *s)
{
	rl_conn_close(&s->conn);
	s->listening = 0;
}

/* The subscription failed: the next sentinel, after a backoff. */
static void
failed(struct rl_switch *s, int64_t now)
{
	rl_switch_close(s);
	s->i = (s->i + 1) % s->of->nsentinels;
	s->backoff = s->backoff == 0 ? RL_SWITCH_BACKOFF_MIN_MS :
	    s->backoff * 2;
	if (s->backoff > RL_SWITCH_BACKOFF_MAX_MS)
		s->backoff = RL_SWITCH_BACKOFF_MAX_MS;
	s->at = now + s->backoff;
}

static void
open_next(struct rl_switch *s, int64_t now, int64_t connect_ms)
{
	const struct rl_hostport *h = &s->of->sentinels[s->i];

	memset(&s->url, 0, sizeof(s->url));
	s->url.host = h->host;
	s->url.port = h->port;
	s->url.user = s->of->sentinel_user;
	s->url.password = s->of->sentinel_password;
	s->end = now + connect_ms;
	if (rl_conn_open(&s->conn) < 0 ||
	    rl_conn_send(&s->conn, subscribe, sizeof(subscribe) - 1) < 0)
		failed(s, now);
}

int
rl_switch_fd(struct rl_switch *s, int64_t now, int64_t connect_ms,
    struct pollfd *p)
{
	if (s->of == NULL)
		return 0;
	if (s->conn.state == RL_CONN_CLOSED && now >= s->at)
		open_next(s, now, connect_ms);
	if (s->conn.state != RL_CONN_CLOSED && !s->listening && now >= s->end)
		failed(s, now);
	if (s->conn.state == RL_CONN_CLOSED)
		return 0;
	p->fd = rl_conn_fd(&s->conn);
	p->events = rl_conn_events(&s->conn);
	p->revents = 0;
	return 1;
}

int64_t
rl_switch_wake(const struct rl_switch *s)
{
	if (s->of == NULL)
		return -1;
	if (s->conn.state == RL_CONN_CLOSED)
		return s->at;
	return s->listening ? -1 : s->end;
}

/* "mymaster 10.0.0.1 6379 10.0.0.2 6379": the new address, when the
 * master is the node's. */
static int
announced(struct rl_switch *s, const char *msg)
{
	char name[256], host[256];
	int port;

	if (sscanf(msg, "%255s %*s %*d %255s %d", name, host, &port) != 3 ||
	    strcmp(name, s->of->master) != 0)
		return 0;
	memcpy(s->host, host, sizeof(s->host));
	s->port = port;
	s->heard = 1;
	return 1;
}

/* A push: the confirmation, or a message. */
static int
push(struct rl_switch *s, const redisReply *r)
{
	const redisReply *k, *m;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    (k = r->element[0])->type != REDIS_REPLY_STRING)
		return -1;
	if (strcmp(k->str, "subscribe") == 0) {
		s->listening = 1;
		s->backoff = 0;
		return 0;
	}
	m = r->element[2];
	if (strcmp(k->str, "message") != 0 || m->type != REDIS_REPLY_STRING)
		return -1;
	return announced(s, m->str);
}

int
rl_switch_io(struct rl_switch *s, short revents, int64_t now)
{
	redisReply *r;
	enum rl_io io;
	int got = 0, rc;

	if (s->of == NULL || s->conn.state == RL_CONN_CLOSED)
		return 0;
	while ((io = rl_conn_io(&s->conn, revents, &r)) == RL_IO_REPLY) {
		revents = 0;
		rc = push(s, r);
		freeReplyObject(r);
		if (rc < 0) {
			failed(s, now);
			return got;
		}
		got |= rc;
	}
	if (io == RL_IO_FAIL)
		failed(s, now);
	return got;
}

int
rl_switch_stale(const struct rl_switch *s, const struct rl_conn *c)
{
	const char *host;
	int port;

	if (s->of == NULL || c->state == RL_CONN_CLOSED ||
	    (host = rl_sentinel_master(c, &port)) == NULL)
		return 0;
	return strcmp(host, s->host) != 0 || port != s->port;
}
