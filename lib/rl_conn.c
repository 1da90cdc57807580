/* rl_conn.c: a non-blocking connection over a transport. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rl_conn.h"

/* ---- the connection ---- */

void
rl_conn_init(struct rl_conn *c, const struct rl_url *u,
    const struct rl_transport *t)
{
	memset(c, 0, sizeof(*c));
	c->url = u;
	c->t = t;
	c->fd = -1;
}

static int
append(char **buf, size_t *len, const char *s, size_t n)
{
	char *p = realloc(*buf, *len + n);

	if (p == NULL)
		return -1;
	memcpy(p + *len, s, n);
	*buf = p;
	*len += n;
	return 0;
}

/* Format and queue a handshake command. */
static int
handshake(struct rl_conn *c, const char *name, int argc, const char **argv)
{
	char *cmd;
	int n = redisFormatCommandArgv(&cmd, argc, argv, NULL);

	if (n < 0)
		return -1;
	n = append(&c->out, &c->outlen, cmd, (size_t)n);
	redisFreeCommand(cmd);
	if (n == 0)
		c->hs[c->nhs++] = name;
	return n;
}

/* HELLO, last: whether the server shards its channels (a Redis 7 or newer
 * cluster node). Nothing waits for its reply, so it costs no round trip;
 * the replies of the commands sent behind it come after it. */
static int
probe(struct rl_conn *c)
{
	static const char hello[] = "*1\r\n$5\r\nHELLO\r\n";

	if (append(&c->out, &c->outlen, hello, sizeof(hello) - 1) < 0)
		return -1;
	c->probe = 1;
	return 0;
}

/* INFO memory, after HELLO: whether the server may evict a held lock
 * (info_memory). Nothing waits for it either; the first reply that is
 * someone's comes after it. */
static int
ask_info(struct rl_conn *c)
{
	static const char info[] = "*2\r\n$4\r\nINFO\r\n$6\r\nmemory\r\n";

	if (append(&c->out, &c->outlen, info, sizeof(info) - 1) < 0)
		return -1;
	c->info_due = 1;
	return 0;
}

static int
queue_handshake(struct rl_conn *c)
{
	const struct rl_url *u = c->url;
	const char *argv[3];
	char db[16];
	int n = 0;

	if (u->password != NULL) {
		argv[n++] = "AUTH";
		if (u->user != NULL)
			argv[n++] = u->user;
		argv[n++] = u->password;
		if (handshake(c, "AUTH", n, argv) < 0)
			return -1;
	}
	if (u->db != 0) {
		snprintf(db, sizeof(db), "%d", u->db);
		argv[0] = "SELECT";
		argv[1] = db;
		if (handshake(c, "SELECT", 2, argv) < 0)
			return -1;
	}
	/* Through Sentinel: the server named may be a replica by now (a
	 * failover under way); ROLE tells before anything runs there. */
	if (u->master != NULL) {
		argv[0] = "ROLE";
		if (handshake(c, "ROLE", 1, argv) < 0)
			return -1;
	}
	/* Sharded by request: nothing runs before HELLO has said that the
	 * server has sharded channels. Classic: nothing to learn. */
	if (c->pubsub == RL_PUBSUB_SHARDED) {
		argv[0] = "HELLO";
		if (handshake(c, "HELLO", 1, argv) < 0)
			return -1;
	} else if (c->pubsub != RL_PUBSUB_CLASSIC && probe(c) < 0)
		return -1;
	return c->ask_info ? ask_info(c) : 0;
}

int
rl_conn_open(struct rl_conn *c)
{
	rl_conn_close(c);
	c->want = 0;
	c->stage = NULL;
	c->rx = 0;
	c->sharded = c->pubsub == RL_PUBSUB_CLASSIC ? 0 : -1;
	c->replicas = -1;
	c->nopass = 0;
	c->evicts[0] = '\0';
	c->err = RL_OK;
	c->why[0] = '\0';
	if ((c->reader = redisReaderCreate()) == NULL ||
	    queue_handshake(c) < 0) {
		rl_conn_close(c);
		c->err = RL_ENOMEM;
		snprintf(c->why, sizeof(c->why), "out of memory");
		return -1;
	}
	if (c->t->open(c) < 0) {
		rl_conn_close(c);
		c->err = RL_ECONNECT;
		return -1;
	}
	c->state = RL_CONN_CONNECTING;
	return 0;
}

int
rl_conn_send(struct rl_conn *c, const char *cmd, size_t len)
{
	if (c->state != RL_CONN_READY) {
		if (append(&c->held, &c->heldlen, cmd, len) < 0)
			return -1;
		c->heldn++;
		return 0;
	}
	if (append(&c->out, &c->outlen, cmd, len) < 0)
		return -1;
	c->due++;
	return 0;
}

int
rl_conn_fd(const struct rl_conn *c)
{
	return c->fd;
}

short
rl_conn_events(const struct rl_conn *c)
{
	if (c->state == RL_CONN_CLOSED)
		return 0;
	if (c->state == RL_CONN_CONNECTING)
		return c->want != 0 ? c->want : POLLOUT | POLLIN;
	if (c->outoff < c->outlen)
		return POLLOUT | POLLIN;
	return POLLIN;
}

static enum rl_io
fail(struct rl_conn *c, enum rl_err e, const char *what, const char *why)
{
	rl_error_io(c->url, what, why, c->why, sizeof(c->why));
	rl_conn_close(c);
	c->err = e;
	return RL_IO_FAIL;
}

/* Why a read or write failed, in words. */
static const char *
io_why(struct rl_conn *c)
{
	if (c->t->error != NULL)
		return c->t->error(c);
	return strerror(errno);
}

/* Write what the socket takes now. */
static int
flush(struct rl_conn *c)
{
	ssize_t n;

	while (c->outoff < c->outlen) {
		n = c->t->write(c, c->out + c->outoff, c->outlen - c->outoff);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0)
			return -1;
		c->outoff += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->outlen = c->outoff = 0;
	return 0;
}

/* The handshake is over: what was held back goes out. */
static int
ready(struct rl_conn *c)
{
	c->state = RL_CONN_READY;
	if (c->heldlen > 0) {
		if (append(&c->out, &c->outlen, c->held, c->heldlen) < 0)
			return -1;
		c->due += c->heldn;
	}
	free(c->held);
	c->held = NULL;
	c->heldlen = 0;
	c->heldn = 0;
	return 0;
}

static enum rl_io
finish_connect(struct rl_conn *c)
{
	switch (c->t->finish(c)) {
	case 1:
		return RL_IO_WAIT;
	case -1:
		rl_conn_close(c);
		if (c->err == RL_OK)
			c->err = RL_ECONNECT;
		return RL_IO_FAIL;
	}
	c->state = RL_CONN_HANDSHAKE;
	c->stage = NULL;
	if (c->nhs == 0 && ready(c) < 0)
		return fail(c, RL_ENOMEM, "lost connection to", "out of memory");
	return RL_IO_WAIT;
}

/* The connection broke. One that never answered may be a plain client
 * at a TLS port, whose server hangs up on the first bytes. */
static enum rl_io
lost(struct rl_conn *c, const char *why)
{
	char buf[RL_WHY_MAX];

	if (c->rx == 0 && !c->url->tls) {
		snprintf(buf, sizeof(buf), "%s before any answer; if the "
		    "port speaks TLS, use rediss://", why);
		why = buf;
	}
	return fail(c, RL_ECONNECT, "lost connection to", why);
}

/* Read what has come. A full buffer is read again: a transport that
 * decrypts (TLS) may hold bytes the socket no longer shows. */
static enum rl_io
fill(struct rl_conn *c)
{
	char buf[16384];
	ssize_t n;

	do {
		n = c->t->read(c, buf, sizeof(buf));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return RL_IO_WAIT;
		if (n == 0)
			return lost(c, "the server closed the connection");
		if (n < 0)
			return lost(c, io_why(c));
		c->rx += (size_t)n;
		if (redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK)
			return fail(c, RL_ENOMEM, "lost connection to",
			    "out of memory");
	} while ((size_t)n == sizeof(buf));
	return RL_IO_WAIT;
}

/* The server's address, as connected: "127.0.0.1:7001". */
static void
peer(const struct rl_conn *c, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[64], port[16];

	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port,
	    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(buf, len, "the server");
	else
		snprintf(buf, len, strchr(host, ':') ? "[%s]:%s" : "%s:%s",
		    host, port);
}

/* ROLE's reply: whether the server is a master (c->replicas: as many
 * replicas as it has connected, when the sentinels named fewer), else
 * c->why says so. */
static int
is_master(struct rl_conn *c, const redisReply *r)
{
	char who[96];

	if (r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
	    r->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(r->element[0]->str, "master") == 0) {
		if (r->elements > 2 && r->element[2]->type ==
		    REDIS_REPLY_ARRAY && r->element[2]->elements < INT_MAX &&
		    (int)r->element[2]->elements > c->replicas)
			c->replicas = (int)r->element[2]->elements;
		return 1;
	}
	peer(c, who, sizeof(who));
	snprintf(c->why, sizeof(c->why), "%s is a replica, not the master "
	    "of %.100s (a failover in progress?); retry", who, c->url->master);
	return 0;
}

static int hello_handshake(struct rl_conn *, const redisReply *);

/* A handshake reply: an error closes the connection (nothing held back
 * was sent) with the reason and what to do. */
static enum rl_io
handshake_reply(struct rl_conn *c, redisReply *r)
{
	const char *name = c->hs[0];
	int hello = strcmp(name, "HELLO") == 0;

	memmove(c->hs, c->hs + 1, sizeof(c->hs) - sizeof(c->hs[0]));
	c->nhs--;
	if (hello && hello_handshake(c, r) < 0) {
		freeReplyObject(r);
		return RL_IO_FAIL;
	}
	if (strcmp(name, "ROLE") == 0 && r->type != REDIS_REPLY_ERROR &&
	    !is_master(c, r)) {
		freeReplyObject(r);
		rl_conn_close(c);
		c->err = RL_ECONNECT;
		return RL_IO_FAIL;
	}
	/* A server without a password refuses AUTH for that alone: what
	 * the password would have opened is open, so go on, as redis-cli
	 * does, and say so (rl_connect_note). A user that may not ask ROLE
	 * is let through: a replica still refuses its writes (READONLY),
	 * which counts as a lost connection. HELLO's refusals were judged
	 * above. */
	if (r->type == REDIS_REPLY_ERROR && strcmp(name, "AUTH") == 0 &&
	    rl_error_nopass(r->str))
		c->nopass = 1;
	else if (r->type == REDIS_REPLY_ERROR && !hello &&
	    !(strcmp(name, "ROLE") == 0 && strncmp(r->str, "NOPERM", 6) == 0)) {
		c->err = rl_error_reply(c->url, r->str, name, c->why,
		    sizeof(c->why));
		freeReplyObject(r);
		rl_conn_close(c);
		return RL_IO_FAIL;
	}
	freeReplyObject(r);
	if (c->nhs == 0 && (ready(c) < 0 || flush(c) < 0))
		return lost(c, io_why(c));
	return RL_IO_WAIT;
}

/* Field KEY of HELLO's reply (RESP2: names and values in turn), or
 * NULL. */
static const char *
hello_field(const redisReply *r, const char *key)
{
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (i = 0; i + 1 < r->elements; i += 2) {
		const redisReply *k = r->element[i], *v = r->element[i + 1];

		if (k->type == REDIS_REPLY_STRING &&
		    v->type == REDIS_REPLY_STRING && strcmp(k->str, key) == 0)
			return v->str;
	}
	return NULL;
}

/* Whether HELLO's reply R comes from a server of version 7 or newer,
 * the first with sharded pub/sub. */
static int
hello_seven(const redisReply *r)
{
	const char *v = hello_field(r, "version");

	return v != NULL && atoi(v) >= 7;
}

/* HELLO's reply, auto: 1 when the server is a cluster node of version 7
 * or newer, whose channels are sharded. An error (a server older than 6,
 * a user without HELLO) says no. */
static int
hello_sharded(const redisReply *r)
{
	const char *mode = hello_field(r, "mode");

	return mode != NULL && strcmp(mode, "cluster") == 0 && hello_seven(r);
}

/* HELLO's reply in the handshake, sharded by request: the server must
 * have sharded pub/sub (Redis 7 or newer, a cluster or not), or the
 * connection fails before anything held back was sent, saying what to
 * do. A user that may not say HELLO is taken at its word; another
 * refusal (NOAUTH) is said as for any handshake command. */
static int
hello_handshake(struct rl_conn *c, const redisReply *r)
{
	const char *server = hello_field(r, "server");
	const char *version = hello_field(r, "version");
	int unknown = r->type == REDIS_REPLY_ERROR &&
	    strstr(r->str, "unknown command") != NULL;
	char url[512], what[64];

	if (hello_seven(r) || (r->type == REDIS_REPLY_ERROR &&
	    strncmp(r->str, "NOPERM", 6) == 0)) {
		c->sharded = 1;
		return 0;
	}
	if (r->type == REDIS_REPLY_ERROR && !unknown) {
		c->err = rl_error_reply(c->url, r->str, "HELLO", c->why,
		    sizeof(c->why));
		rl_conn_close(c);
		return -1;
	}
	if (version != NULL)
		snprintf(what, sizeof(what), "runs %.16s %.16s",
		    server != NULL ? server : "version", version);
	else
		snprintf(what, sizeof(what), "does not know HELLO (older than "
		    "Redis 6?)");
	rl_url_format(c->url, url, sizeof(url));
	snprintf(c->why, sizeof(c->why), "%.160s %s: it has no sharded "
	    "pub/sub (SPUBLISH, SSUBSCRIBE: Redis 7 and later), which "
	    "--pubsub sharded needs; use --pubsub classic, or auto", url, what);
	rl_conn_close(c);
	c->err = RL_ESERVER;
	return -1;
}

/* The value of field KEY in S, an INFO reply ("key:value" lines), or
 * NULL. */
static const char *
info_field(const char *s, const char *key)
{
	size_t n = strlen(key);

	for (;;) {
		if (strncmp(s, key, n) == 0 && s[n] == ':')
			return s + n + 1;
		if ((s = strchr(s, '\n')) == NULL)
			return NULL;
		s++;
	}
}

/* INFO memory's reply: the policy that may evict a held lock into
 * c->evicts, or "". Any policy but noeviction may (allkeys-* evicts any
 * key, volatile-* a key with an expiry, as every lease is), unless
 * maxmemory is 0: no limit, nothing is ever evicted. A refusal (an ACL
 * without INFO) or a reply without the policy tells nothing. */
static void
info_memory(struct rl_conn *c, const redisReply *r)
{
	const char *policy, *max;
	size_t n;

	c->evicts[0] = '\0';
	if (r->type != REDIS_REPLY_STRING ||
	    (policy = info_field(r->str, "maxmemory_policy")) == NULL)
		return;
	n = strspn(policy, "abcdefghijklmnopqrstuvwxyz0123456789-_");
	if (n == 0 || n >= sizeof(c->evicts) ||
	    (n == 10 && strncmp(policy, "noeviction", n) == 0))
		return;
	/* Written as %lld: "0" is no limit. */
	max = info_field(r->str, "maxmemory");
	if (max != NULL && max[0] == '0' && !isdigit((unsigned char)max[1]))
		return;
	memcpy(c->evicts, policy, n);
	c->evicts[n] = '\0';
}

/* The reply reader gave up: out of memory, or the server speaks
 * something else than RESP (an HTTP server at the port), which no bug of
 * ours can cause. */
static enum rl_io
not_resp(struct rl_conn *c)
{
	if (c->reader->err == REDIS_ERR_OOM)
		return fail(c, RL_ENOMEM, "lost connection to", "out of memory");
	c->err = rl_error_proto(c->url, c->reader->errstr, c->why,
	    sizeof(c->why));
	rl_conn_close(c);
	return RL_IO_FAIL;
}

/* The next reply that is someone's: handshake replies and those given up
 * on are taken here. */
static enum rl_io
take(struct rl_conn *c, redisReply **out)
{
	void *v;

	for (;;) {
		if (redisReaderGetReply(c->reader, &v) != REDIS_OK)
			return not_resp(c);
		if (v == NULL)
			return RL_IO_WAIT;
		if (c->nhs > 0) {
			if (handshake_reply(c, v) == RL_IO_FAIL)
				return RL_IO_FAIL;
			continue;
		}
		if (c->probe) {
			c->probe = 0;
			c->sharded = hello_sharded(v);
			freeReplyObject(v);
			continue;
		}
		if (c->info_due) {
			c->info_due = 0;
			info_memory(c, v);
			freeReplyObject(v);
			continue;
		}
		if (c->due > 0)
			c->due--;
		if (c->drop > 0) {
			c->drop--;
			freeReplyObject(v);
			continue;
		}
		*out = v;
		return RL_IO_REPLY;
	}
}

enum rl_io
rl_conn_io(struct rl_conn *c, short revents, redisReply **out)
{
	*out = NULL;
	if (c->state == RL_CONN_CLOSED)
		return RL_IO_FAIL;
	if (c->state == RL_CONN_CONNECTING) {
		if ((revents & (POLLOUT | POLLIN | POLLERR | POLLHUP)) == 0)
			return RL_IO_WAIT;
		if (finish_connect(c) == RL_IO_FAIL)
			return RL_IO_FAIL;
		if (c->state == RL_CONN_CONNECTING)
			return RL_IO_WAIT;
		revents |= POLLOUT;
	}
	if ((revents & POLLOUT) && c->outoff < c->outlen && flush(c) < 0)
		return lost(c, io_why(c));
	if ((revents & (POLLIN | POLLERR | POLLHUP)) && fill(c) == RL_IO_FAIL)
		return RL_IO_FAIL;
	return take(c, out);
}

void
rl_conn_late(struct rl_conn *c)
{
	if (c->state != RL_CONN_READY) {
		/* What is held back was never written: nothing runs. */
		rl_conn_close(c);
		return;
	}
	c->drop = c->due;
}

void
rl_conn_close(struct rl_conn *c)
{
	if (c->t != NULL && (c->fd >= 0 || c->priv != NULL))
		c->t->close(c);
	c->fd = -1;
	if (c->reader != NULL)
		redisReaderFree(c->reader);
	c->reader = NULL;
	free(c->out);
	free(c->held);
	c->out = c->held = NULL;
	c->outlen = c->outoff = c->heldlen = 0;
	c->heldn = c->nhs = c->due = c->drop = c->probe = c->info_due = 0;
	c->nknown = 0;
	c->state = RL_CONN_CLOSED;
}

int
rl_conn_knows(const struct rl_conn *c, const char *sha)
{
	int i;

	/* By content: each file that includes the scripts has its own
	 * copy of them. */
	for (i = 0; i < c->nknown; i++)
		if (strcmp(c->known[i], sha) == 0)
			return 1;
	return 0;
}

void
rl_conn_learn(struct rl_conn *c, const char *sha)
{
	if (sha == NULL || rl_conn_knows(c, sha))
		return;
	if (c->nknown == RL_CONN_KNOWN) {
		memmove(c->known, c->known + 1, sizeof(c->known[0]) *
		    (RL_CONN_KNOWN - 1));
		c->nknown--;
	}
	c->known[c->nknown++] = sha;
}
