/* fake.h: a fake transport for the fuzz harnesses; no connection ever
 * leaves the process. Each connection opened is a socketpair whose server
 * side answers each command the client writes with the next chunk of the
 * input (chunks are separated by FAKE_SEP, whatever connection they go
 * to), and hangs up once the input is used up. With fake_at_once, the
 * first connection is told the whole input at once instead (and hangs
 * up), the others nothing. */
#ifndef FAKE_H
#define FAKE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rl_conn.h"

#define FAKE_SEP "\n===\n"
#define FAKE_MAX_CONNS 16

static const uint8_t *fake_in;	/* the chunks not served yet */
static size_t fake_len;
static int fake_conns;		/* opened for this input */
static int fake_at_once;

/* A connection's server side, and the commands it was sent. */
struct fake_peer {
	int fd;
	redisReader *cmds;
};

/* The next chunk: its length, *P its start; the input moves past it. */
static size_t
fake_chunk(const uint8_t **p)
{
	const uint8_t *s = fake_in;
	size_t n, seplen = sizeof(FAKE_SEP) - 1;

	for (n = 0; n + seplen <= fake_len; n++)
		if (memcmp(s + n, FAKE_SEP, seplen) == 0)
			break;
	*p = s;
	if (n + seplen <= fake_len) {
		fake_in += n + seplen;
		fake_len -= n + seplen;
		return n;
	}
	n = fake_len;
	fake_in += n;
	fake_len = 0;
	return n;
}

/* Say the next chunk (all of the input, at once), and hang up when none
 * is left. */
static void
fake_say(struct fake_peer *p)
{
	const uint8_t *s = fake_in;
	size_t n = fake_len;

	if (!fake_at_once)
		n = fake_chunk(&s);
	else
		fake_len = 0;
	if (n > 0 && write(p->fd, s, n) != (ssize_t)n)
		abort();	/* the input is smaller than the buffer */
	if (fake_len == 0)
		shutdown(p->fd, SHUT_WR);
}

static int
fake_open(struct rl_conn *c)
{
	struct fake_peer *p;
	int sv[2];

	if (fake_conns == FAKE_MAX_CONNS || (p = calloc(1, sizeof(*p))) ==
	    NULL)
		return -1;
	if ((p->cmds = redisReaderCreate()) == NULL ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) < 0) {
		if (p->cmds != NULL)
			redisReaderFree(p->cmds);
		free(p);
		return -1;
	}
	fake_conns++;
	p->fd = sv[1];
	c->fd = sv[0];
	c->priv = p;
	if (fake_at_once)
		fake_say(p);
	return 0;
}

static int
fake_finish(struct rl_conn *c)
{
	(void)c;
	return 0;
}

static ssize_t
fake_read(struct rl_conn *c, void *buf, size_t len)
{
	return read(c->fd, buf, len);
}

/* Each command written is answered; what the client writes is taken
 * whole. */
static ssize_t
fake_write(struct rl_conn *c, const void *buf, size_t len)
{
	struct fake_peer *p = c->priv;
	void *cmd;

	if (fake_at_once)
		return (ssize_t)len;
	if (redisReaderFeed(p->cmds, buf, len) != REDIS_OK)
		abort();
	while (redisReaderGetReply(p->cmds, &cmd) == REDIS_OK &&
	    cmd != NULL) {
		freeReplyObject(cmd);
		fake_say(p);
	}
	return (ssize_t)len;
}

static void
fake_close(struct rl_conn *c)
{
	struct fake_peer *p = c->priv;

	if (c->fd >= 0)
		close(c->fd);
	if (p != NULL) {
		close(p->fd);
		redisReaderFree(p->cmds);
		free(p);
	}
	c->priv = NULL;
	c->fd = -1;
}

static const struct rl_transport fake = {
	fake_open, fake_finish, fake_read, fake_write, fake_close, NULL
};

/* Serve DATA (SIZE bytes) to the connections opened from now on. */
static void
fake_serve(const uint8_t *data, size_t size, int at_once)
{
	fake_in = data;
	fake_len = size;
	fake_conns = 0;
	fake_at_once = at_once;
}

/* hiredis 0.14 allocates an aggregate's element array from its header
 * before the elements arrive, with no limit: a server announcing billions
 * of elements exhausts memory. The server is trusted not to; inputs that
 * announce more than a million are not redlock's to survive. More than a
 * socket buffer holds would block the fake server. */
static int
fake_unfit(const uint8_t *data, size_t size)
{
	size_t i, digits;

	if (size > 65536)
		return 1;
	for (i = 0; i < size; i++) {
		if (data[i] != '*' && data[i] != '$')
			continue;
		for (digits = 0; i + 1 + digits < size &&
		    data[i + 1 + digits] >= '0' && data[i + 1 + digits] <= '9';
		    digits++)
			;
		if (digits > 6)
			return 1;
	}
	return 0;
}

#endif
