/* fuzz_sentinel.c: what lib/ reads from Sentinel and at the handshake.
 * The first byte picks the handshake (bit 0: AUTH, 1: with a user, 2:
 * SELECT, 3: ROLE, as through redis+sentinel://, 4: INFO memory after
 * HELLO, as exec and lock ask); the rest is RESP.
 * Every reply in it goes to rl_sentinel_addr (the answer to SENTINEL
 * GET-MASTER-ADDR-BY-NAME) and rl_sentinel_replicas (SENTINEL REPLICAS);
 * then it is what the server of one connection
 * says at once (fake.h) to a client that shakes hands (AUTH, SELECT,
 * ROLE, then HELLO, whose reply says whether channels are sharded, and
 * INFO memory, whose reply says whether the server may evict a lock) and
 * runs a command. */
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "rl_sentinel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
sentinel_answers(const uint8_t *data, size_t size)
{
	redisReader *rd = redisReaderCreate();
	char host[256];
	void *v;
	int i, port;

	if (rd == NULL)
		return;
	if (redisReaderFeed(rd, (const char *)data, size) != REDIS_OK) {
		redisReaderFree(rd);
		return;
	}
	for (i = 0; i < 64 && redisReaderGetReply(rd, &v) == REDIS_OK &&
	    v != NULL; i++) {
		memset(host, 'x', sizeof(host));
		if (rl_sentinel_addr(v, host, sizeof(host), &port) ==
		    RL_SS_ADDR && (port < 1 || port > 65535 ||
		    memchr(host, '\0', sizeof(host)) == NULL))
			abort();
		if (rl_sentinel_replicas(v) < -1)
			abort();
		freeReplyObject(v);
	}
	redisReaderFree(rd);
}

/* One connection through its handshake and a PING, until it ends. */
static void
handshake(unsigned flags, const uint8_t *data, size_t size)
{
	static const char ping[] = "*1\r\n$4\r\nPING\r\n";
	struct rl_url u = { 0 };
	struct rl_conn c;
	redisReply *r;
	enum rl_io io = RL_IO_WAIT;
	int i;

	u.host = (char *)"127.0.0.1";
	u.port = 6379;
	u.password = flags & 1 ? (char *)"secret" : NULL;
	u.user = flags & 2 ? (char *)"user" : NULL;
	u.db = flags & 4 ? 2 : 0;
	u.master = flags & 8 ? (char *)"mymaster" : NULL;
	fake_serve(data, size, 1);
	rl_conn_init(&c, &u, &fake);
	c.ask_info = flags & 16 ? 1 : 0;
	if (rl_conn_open(&c) == 0 && rl_conn_send(&c, ping,
	    sizeof(ping) - 1) == 0) {
		/* The whole input is in the socket already, then its end:
		 * every step takes a reply (at most one per 3 bytes) or
		 * reads to the end and fails. */
		for (i = 0; i < 30000 && io != RL_IO_FAIL; i++) {
			io = rl_conn_io(&c, POLLIN | POLLOUT, &r);
			if (io == RL_IO_REPLY)
				freeReplyObject(r);
		}
		if (io != RL_IO_FAIL)
			abort();	/* the end of the input went unseen */
	}
	if (c.sharded < -1 || c.sharded > 1)
		abort();
	/* A policy's name, or "": never what else the server said. */
	if (memchr(c.evicts, '\0', sizeof(c.evicts)) == NULL ||
	    strspn(c.evicts, "abcdefghijklmnopqrstuvwxyz0123456789-_") !=
	    strlen(c.evicts) || strcmp(c.evicts, "noeviction") == 0 ||
	    (!c.ask_info && c.evicts[0] != '\0'))
		abort();
	rl_conn_close(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || fake_unfit(data + 1, size - 1))
		return 0;
	sentinel_answers(data + 1, size - 1);
	handshake(data[0], data + 1, size - 1);
	return 0;
}
