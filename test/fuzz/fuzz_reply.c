/* fuzz_reply.c: how lib/ reads script replies. The input is what a server
 * sends (RESP), parsed by hiredis's own reader and handed to the acquire,
 * release, renew, status and queue readers in turn, through wrapped
 * redisAppendCommandArgv and redisGetReply (and redisCommandArgv). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rl_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void *__wrap_redisCommandArgv(redisContext *c, int argc, const char **argv,
    const size_t *argvlen);
int __wrap_redisAppendCommandArgv(redisContext *c, int argc,
    const char **argv, const size_t *argvlen);
int __wrap_redisGetReply(redisContext *c, void **reply);

static redisReader *reader;

/* The next reply in the input, or an error reply once it runs out. */
void *
__wrap_redisCommandArgv(redisContext *c, int argc, const char **argv,
    const size_t *argvlen)
{
	void *r = NULL;

	(void)c;
	(void)argc;
	(void)argv;
	(void)argvlen;
	if (redisReaderGetReply(reader, &r) != REDIS_OK || r == NULL) {
		redisReply *e = calloc(1, sizeof(*e));

		if (e == NULL)
			return NULL;
		e->type = REDIS_REPLY_ERROR;
		e->str = strdup("ERR end of input");
		e->len = e->str ? strlen(e->str) : 0;
		if (e->str == NULL) {
			free(e);
			return NULL;
		}
		r = e;
	}
	return r;
}

int
__wrap_redisAppendCommandArgv(redisContext *c, int argc, const char **argv,
    const size_t *argvlen)
{
	(void)c;
	(void)argc;
	(void)argv;
	(void)argvlen;
	return REDIS_OK;
}

int
__wrap_redisGetReply(redisContext *c, void **reply)
{
	*reply = __wrap_redisCommandArgv(c, 0, NULL, NULL);
	return *reply != NULL ? REDIS_OK : REDIS_ERR;
}

/* hiredis 0.14 allocates an aggregate's element array from its header
 * before the elements arrive, with no limit: a server announcing billions
 * of elements exhausts memory. The server is trusted not to; inputs that
 * announce more than a million are not redlock's to survive. */
static int
huge(const uint8_t *data, size_t size)
{
	size_t i, digits;

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static redisContext fake;
	struct rl_url u = { 0 };
	struct rl_attempt a;
	struct rl_status st;
	struct rl_queue q;
	enum rl_release rel;
	int64_t holds;
	int ours;
	rl_client *c;

	if (huge(data, size))
		return 0;
	reader = redisReaderCreate();
	if (reader == NULL)
		return 0;
	redisReaderFeed(reader, (const char *)data, size);
	u.host = (char *)"127.0.0.1";
	u.port = 6379;
	c = rl_client_new(&u, 100, 100);
	if (c != NULL) {
		c->ctx = &fake;
		rl_try_acquire(c, "x", "o:1", 1000, NULL, NULL, RL_JOIN_NO, &a);
		if (a.owner != NULL)
			(void)strlen(a.owner);
		rl_release(c, "x", "o:1", &rel, &holds, &a);
		rl_renew(c, "x", "o:1", 1000, &ours);
		if (rl_status(c, "x", &st) == RL_OK && st.owner != NULL)
			(void)strlen(st.owner);
		rl_queue(c, "x", &q);
		rl_queue_clear(&q);
		c->ctx = NULL;
		rl_client_free(c);
	}
	redisReaderFree(reader);
	return 0;
}
