/* rl_int.h: what the files of lib/ share and nobody else sees. */
#ifndef RL_INT_H
#define RL_INT_H

#include <stdarg.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

struct rl_script {
	const char *name;
	const char *sha;
	const char *src;
};

struct rl_client {
	struct rl_url url;
	int64_t connect_timeout_ms;
	int64_t timeout_ms;
	redisContext *ctx;	/* commands and scripts */
	redisContext *sub;	/* pub/sub while waiting, opened on demand */
	char *subchannel;	/* what sub is subscribed to */
	int intr_fd;
	redisReply *last;	/* kept so returned strings stay valid */
	char errstr[256];
};

enum rl_err rl_seterr(rl_client *c, enum rl_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum rl_err rl_open(rl_client *c, redisContext **out);
/* Drop the command connection (after a timeout or an error). */
void rl_disconnect(rl_client *c);
/* Run a script: EVALSHA, and EVAL when the server does not know it.
 * The reply is kept in c->last. */
enum rl_err rl_eval(rl_client *c, const struct rl_script *s, int nkeys,
    const char **keys, int nargs, const char **args, redisReply **out);

#endif
