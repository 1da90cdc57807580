/* rl_scan.c: the names of the locks held on every master (SCAN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_client.h"

/* Names already reported, sorted: a lock held on several masters is
 * listed once. */
struct seen {
	char **v;
	size_t n, cap;
};

/* 1 when NAME is new (and now remembered), 0 when seen, -1 no memory. */
static int
remember(struct seen *s, const char *name)
{
	size_t lo = 0, hi = s->n, mid;
	char **v, *copy;
	int d;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if ((d = strcmp(name, s->v[mid])) == 0)
			return 0;
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		if ((v = realloc(s->v, s->cap * sizeof(*v))) == NULL)
			return -1;
		s->v = v;
	}
	if ((copy = strdup(name)) == NULL)
		return -1;
	memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof(*s->v));
	s->v[lo] = copy;
	s->n++;
	return 1;
}

static void
seen_free(struct seen *s)
{
	while (s->n > 0)
		free(s->v[--s->n]);
	free(s->v);
}

/* The names of each holder key in R: "x" and "{x}" share one. 1 when FN
 * asked to stop. */
static int
names(rl_client *c, const redisReply *keys, struct seen *s,
    int (*fn)(void *, const char *), void *arg, enum rl_err *e)
{
	char *nm[2];
	size_t i;
	int j, n, stop = 0;

	for (i = 0; i < keys->elements && !stop; i++) {
		const redisReply *k = keys->element[i];

		if (k->type != REDIS_REPLY_STRING)
			continue;
		if ((n = rl_key_names(RL_PREFIX_HOLDER, k->str, k->len,
		    nm)) < 0) {
			*e = rl_seterr(c, RL_ENOMEM, "out of memory");
			return 1;
		}
		for (j = 0; j < n; j++) {
			int fresh = stop ? 0 : remember(s, nm[j]);

			if (fresh < 0)
				*e = rl_seterr(c, RL_ENOMEM, "out of memory");
			if (fresh < 0 || (fresh > 0 && fn(arg, nm[j]) != 0))
				stop = 1;
			free(nm[j]);
		}
	}
	return stop;
}

/* One SCAN step on master J: the reply, taken out of the node (the
 * callback runs rounds of its own), or NULL. */
static redisReply *
scan_step(rl_client *c, size_t j, const char *cursor)
{
	struct rl_round_opts o = rl_opts(c, 1);
	const char *argv[6] = { "SCAN", cursor, "MATCH",
	    RL_PREFIX_HOLDER ":*", "COUNT", "1000" };
	struct rl_round r;
	redisReply *rep;

	o.reply_ms = c->timeout_ms;
	memset(&r, 0, sizeof(r));
	if (rl_round_command(&r, &c->nodes[j], 1, &o, 6, argv) < 0)
		return NULL;
	rl_round_run(&r);
	rl_round_end(&r);
	rep = c->nodes[j].reply;
	c->nodes[j].reply = NULL;
	if (rep != NULL && (rep->type != REDIS_REPLY_ARRAY ||
	    rep->elements != 2 || rep->element[0]->type != REDIS_REPLY_STRING ||
	    rep->element[1]->type != REDIS_REPLY_ARRAY)) {
		freeReplyObject(rep);
		snprintf(c->nodes[j].why, sizeof(c->nodes[j].why), "unexpected "
		    "reply to SCAN: is this a Redis server?");
		c->nodes[j].err = RL_EPROTO;
		return NULL;
	}
	return rep;
}

/* Every name on master J; 1 when done early (stop or error). */
static int
scan_node(rl_client *c, size_t j, struct seen *s,
    int (*fn)(void *, const char *), void *arg, enum rl_err *e)
{
	char cursor[24] = "0";
	redisReply *rep;
	int stop;

	do {
		if ((rep = scan_step(c, j, cursor)) == NULL)
			return -1;
		snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
		stop = names(c, rep->element[1], s, fn, arg, e);
		freeReplyObject(rep);
	} while (!stop && strcmp(cursor, "0") != 0);
	return stop;
}

enum rl_err
rl_scan(rl_client *c, int (*fn)(void *, const char *), void *arg)
{
	struct seen s = { NULL, 0, 0 };
	enum rl_err e = RL_OK;
	size_t j, failed = 0, first = 0;
	int r = 0;

	for (j = 0; j < c->n && r <= 0; j++) {
		/* A master out of reach is left out; the names come from
		 * the others, and each name's status asks them all. */
		if ((r = scan_node(c, j, &s, fn, arg, &e)) < 0 &&
		    failed++ == 0)
			first = j;
	}
	seen_free(&s);
	if (e == RL_OK && failed == c->n)
		e = rl_node_error(c, first);
	return e;
}
