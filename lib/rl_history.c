/* rl_history.c: read a name's history, the stream redlock_log:{NAME}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_client.h"
#include "rl_decode.h"

/* Stream entries R (an array of {id, fields}), oldest first (REVERSE:
 * R is newest first), into *EV and *NEV, with what the scripts left out
 * put back (rl_events_infer): room for twice as many, and after them for
 * their strings. */
static enum rl_err
entries(rl_client *c, const redisReply *r, int reverse, struct rl_event **ev,
    size_t *nev)
{
	size_t i, n, room = 0;
	char *arena;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY)
		return rl_seterr(c, RL_EPROTO, "unexpected reply reading the "
		    "history: is this a Redis server?");
	n = r->elements;
	for (i = 0; i < n; i++)
		room += rl_event_room(r->element[i]);
	if ((*ev = calloc(1, (2 * n + 1) * sizeof(**ev) + room)) == NULL)
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	arena = (char *)(*ev + 2 * n + 1);
	for (i = 0; i < n; i++)
		if (rl_decode_event(r->element[reverse ? n - 1 - i : i],
		    &(*ev)[*nev], &arena) == 0)
			(*nev)++;
	*nev = rl_events_infer(*ev, *nev, 2 * n + 1);
	return RL_OK;
}

/* XREVRANGE's reply R: the last N events, oldest first (R has up to
 * twice as many, for the acquisitions of the releases among them). */
static enum rl_err
last_n(rl_client *c, const redisReply *r, int64_t n, struct rl_event **ev,
    size_t *nev)
{
	enum rl_err e = entries(c, r, 1, ev, nev);

	if (e == RL_OK && *nev > (size_t)n) {
		memmove(*ev, *ev + (*nev - (size_t)n), (size_t)n * sizeof(**ev));
		*nev = (size_t)n;
	}
	return e;
}

/* No master answered: the first refusal, as an error (another type at
 * KEY: RL_EWRONGTYPE). */
static enum rl_err
unanswered(rl_client *c, const char *key)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		if (c->nodes[j].refused &&
		    strstr(c->nodes[j].why, "WRONGTYPE") != NULL)
			return rl_seterr(c, RL_EWRONGTYPE, "key %s holds "
			    "another type than a stream, so no history is "
			    "kept for this name (locking is not affected): "
			    "delete or rename that key", key);
	for (j = 0; j < c->n; j++)
		if (c->nodes[j].err != RL_OK)
			return rl_node_error(c, j);
	return rl_no_quorum(c, "read the history");
}

/* The round's reply of the first master that answered, or NULL. */
static const redisReply *
first_reply(const rl_client *c)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		if (c->nodes[j].reply != NULL)
			return c->nodes[j].reply;
	return NULL;
}

enum rl_err
rl_log_read(rl_client *c, const char *name, int64_t n,
    const struct rl_log_follow *f, struct rl_event **ev, size_t *nev)
{
	const char *after = f != NULL ? f->after : NULL;
	int64_t block_ms = f != NULL ? f->block_ms : 0;
	struct rl_round_opts o = rl_opts(c, 1);
	char count[24], block[24], *key;
	const char *argv[9];
	const redisReply *r;
	enum rl_err e = RL_OK;
	int argc;

	*ev = NULL;
	*nev = 0;
	if (name[0] == '\0')
		return rl_seterr(c, RL_EUSAGE, "the lock name is empty");
	if ((key = rl_key(RL_PREFIX_LOG, name)) == NULL)
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	/* Twice as many as shown: the acquisitions that the releases
	 * among them need. */
	snprintf(count, sizeof(count), "%lld", (long long)(n > 0 ? 2 * n : 1));
	snprintf(block, sizeof(block), "%lld", (long long)block_ms);
	if (after == NULL) {
		argc = 6;
		memcpy(argv, (const char *[]){ "XREVRANGE", key, "+", "-",
		    "COUNT", count }, 6 * sizeof(*argv));
	} else {
		argc = 8;
		memcpy(argv, (const char *[]){ "XREAD", "COUNT", "1000",
		    "BLOCK", block, "STREAMS", key, after }, 8 * sizeof(*argv));
	}
	if (after != NULL && c->timeout_ms > 0)
		o.reply_ms = c->timeout_ms + block_ms;
	rl_round_end(&c->round);
	if (rl_round_command(&c->round, c->nodes, c->n, &o, argc, argv) < 0)
		e = rl_seterr(c, RL_ENOMEM, "out of memory");
	else
		rl_round_run(&c->round);
	rl_round_end(&c->round);
	if (e == RL_OK && (r = first_reply(c)) == NULL)
		e = unanswered(c, key);
	else if (e == RL_OK && after == NULL)
		e = last_n(c, r, n, ev, nev);
	else if (e == RL_OK && r->type == REDIS_REPLY_ARRAY &&
	    r->elements > 0 && r->element[0]->type == REDIS_REPLY_ARRAY &&
	    r->element[0]->elements == 2)
		e = entries(c, r->element[0]->element[1], 0, ev, nev);
	else if (e == RL_OK && r->type != REDIS_REPLY_NIL)
		e = entries(c, NULL, 0, ev, nev);
	free(key);
	return e;
}
