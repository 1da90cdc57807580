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

#define RL_MAX_NODES 16

/* One master of a Redlock set: a non-blocking connection driven by
 * rl_exchange(), and a pub/sub connection while waiting. The connection
 * is kept while commands sent on it may still run: a master that did not
 * answer in time owes replies, which the next exchange reads and drops
 * before its own, so the server runs every command in the order sent
 * (a new connection could overtake the old one). */
struct rl_node {
	struct rl_url url;
	redisContext *ctx;
	int connecting;		/* connect(2) still in progress */
	int expect;		/* AUTH/SELECT replies still to come */
	int owed;		/* then replies to earlier exchanges' commands,
				 * which timed out: read and dropped */
	int sent_full;		/* EVAL sent after NOSCRIPT */
	int waiting;		/* a reply is due */
	int skip;		/* failed the run_id check: not retried by
				 * the exchange right after it */
	int64_t deadline;
	redisReply *reply;	/* the script's reply, or NULL (err) */
	char err[160];
};

struct rl_client {
	struct rl_url url;	/* one server; nodes[0]'s with several */
	size_t n;		/* masters: 1, or several for Redlock */
	struct rl_node *nodes;	/* n > 1 */
	int checked;		/* n > 1: no server given twice (run_id) */
	int64_t node_timeout_ms;
	int64_t connect_timeout_ms;
	int64_t timeout_ms;
	redisContext *ctx;	/* commands and scripts */
	int owed;		/* replies on ctx to commands that timed out:
				 * read and dropped before the next one's */
	redisContext *subs[RL_MAX_NODES];	/* pub/sub while waiting */
	size_t subnode[RL_MAX_NODES];	/* the master of each (index) */
	size_t nsubs;
	int intr_fd;
	redisReply *last;	/* kept so returned strings stay valid */
	char errstr[640];
};

enum rl_err rl_seterr(rl_client *c, enum rl_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum rl_err rl_open(rl_client *c, redisContext **out);
enum rl_err rl_open_url(rl_client *c, const struct rl_url *u,
    int64_t connect_ms, int64_t timeout_ms, redisContext **out);
enum rl_err rl_ctx_error(rl_client *c, const struct rl_url *u,
    redisContext *ctx, const char *what);
enum rl_err rl_reply_error(rl_client *c, const struct rl_url *u,
    const redisReply *r, const char *doing);
/* Start a non-blocking connect to U, close-on-exec, with AUTH and SELECT
 * queued behind it: the context, and in *EXPECT how many replies those
 * owe; NULL with the reason in WHY. */
redisContext *rl_open_nonblock(const struct rl_url *u, int *expect,
    char *why, size_t whylen);
/* SUBSCRIBE to CHANNEL failed on CTX; R is the reply, NULL when the
 * connection failed. */
enum rl_err rl_subscribe_error(rl_client *c, const struct rl_url *u,
    redisContext *ctx, const redisReply *r, const char *channel);
/* Drop the command connection (after a timeout or an error). */
void rl_disconnect(rl_client *c);
/* Run a script: EVALSHA, and EVAL when the server does not know it.
 * The reply is kept in c->last. */
enum rl_err rl_eval(rl_client *c, const struct rl_script *s, int nkeys,
    const char **keys, int nargs, const char **args, redisReply **out);

/* Reading script replies (rl_lock.c): element I of an array reply, or
 * DEF / NULL when it is missing, nil or of another type. */
int64_t rl_elem_int(const redisReply *r, size_t i, int64_t def);
const char *rl_elem_str(const redisReply *r, size_t i);
/* {-1, key, type}: RL_EWRONGTYPE with the key and type in *KEY, *TYPE. */
enum rl_err rl_wrongtype(rl_client *c, const redisReply *r, const char **key,
    const char **type);
/* The holder part of acquire's {0, pttl, owner, host, pid, user, cmd,
 * held_ms, ...} reply into A. */
void rl_attempt_holder(const redisReply *r, struct rl_attempt *a);
/* The status script's reply into ST. */
void rl_status_read(const redisReply *r, struct rl_status *st);

/* rl_multi.c: Redlock across several masters. */
void rl_multi_free(rl_client *c);
/* Run one script on every master at once; NEED: how many must be
 * connected for anything to be sent. Replies land in nodes[i].reply
 * (NULL on failure, with nodes[i].err). Returns how many were sent to. */
size_t rl_exchange(rl_client *c, const struct rl_script *s, int nkeys,
    const char **keys, int nargs, const char **args, size_t need);
enum rl_err rl_multi_try_acquire(rl_client *c, const char **keys, int nkeys,
    const char **args, int nargs, int64_t ttl_ms, struct rl_attempt *a);
enum rl_err rl_multi_release(rl_client *c, const char **keys,
    const char **args, enum rl_release *rel, int64_t *holds,
    struct rl_attempt *a);
enum rl_err rl_multi_force(rl_client *c, const char **keys, const char **args,
    int *deleted, struct rl_attempt *a);
enum rl_err rl_multi_renew(rl_client *c, const char **keys,
    const char **args, int *ours);
enum rl_err rl_multi_status(rl_client *c, const char **keys,
    struct rl_status *st);
/* Subscribe to CHANNEL on every master that has no subscription yet;
 * masters that cannot be reached are left out (c->nsubs tells how many
 * listen). Only a refusal that waiting cannot cure is an error. */
enum rl_err rl_multi_subscribe(rl_client *c, const char *channel);
/* Connect to every master and refuse one server behind two URLs (by its
 * run_id): RL_EUSAGE naming both. Masters that do not tell are let be. */
enum rl_err rl_multi_distinct(rl_client *c);

#endif
