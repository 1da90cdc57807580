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

/* One SCAN step on node ND: the reply, ours (the callback runs rounds of
 * its own), or NULL. */
static redisReply *
scan_step(rl_client *c, struct rl_node *nd, const char *cursor)
{
	struct rl_round_opts o = rl_opts(c, 1);
	const char *argv[6] = { "SCAN", cursor, "MATCH",
	    RL_PREFIX_HOLDER ":*", "COUNT", "1000" };
	redisReply *rep;

	o.reply_ms = c->timeout_ms;
	rep = rl_round_once(nd, &o, 6, argv);
	if (rep != NULL && (rep->type != REDIS_REPLY_ARRAY ||
	    rep->elements != 2 || rep->element[0]->type != REDIS_REPLY_STRING ||
	    rep->element[1]->type != REDIS_REPLY_ARRAY)) {
		freeReplyObject(rep);
		snprintf(nd->why, sizeof(nd->why), "unexpected reply to SCAN: "
		    "is this a Redis server?");
		nd->err = RL_EPROTO;
		return NULL;
	}
	return rep;
}

/* Every name on node ND; 1 when done early (stop or error). */
static int
scan_one(rl_client *c, struct rl_node *nd, struct seen *s,
    int (*fn)(void *, const char *), void *arg, enum rl_err *e)
{
	char cursor[24] = "0";
	redisReply *rep;
	int stop;

	do {
		if ((rep = scan_step(c, nd, cursor)) == NULL)
			return -1;
		snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
		stop = names(c, rep->element[1], s, fn, arg, e);
		freeReplyObject(rep);
	} while (!stop && strcmp(cursor, "0") != 0);
	return stop;
}

/* ARGV on ND: its reply if a string, else NULL (a refusal leaves ND's
 * err clear: the caller takes it as "not a cluster"). */
static redisReply *
ask(rl_client *c, struct rl_node *nd, const char *cmd, const char *arg)
{
	const struct rl_round_opts o = rl_opts(c, 1);
	const char *argv[2] = { cmd, arg };
	redisReply *rep = rl_round_once(nd, &o, 2, argv);

	if (rep == NULL && nd->refused) {
		nd->err = RL_OK;
		nd->why[0] = '\0';
		nd->refused = 0;
	}
	if (rep != NULL && rep->type != REDIS_REPLY_STRING) {
		freeReplyObject(rep);
		rep = NULL;
	}
	return rep;
}

/* CLUSTER NODES on ND, or NULL: not a cluster (ND's err is clear), or no
 * answer (it says why). INFO cluster asks first: on a server of its own
 * CLUSTER NODES would be an error reply. */
static redisReply *
cluster_nodes(rl_client *c, struct rl_node *nd)
{
	redisReply *info = ask(c, nd, "INFO", "cluster");
	int cluster = info != NULL &&
	    strstr(info->str, "cluster_enabled:1") != NULL;

	if (info != NULL)
		freeReplyObject(info);
	return cluster ? ask(c, nd, "CLUSTER", "NODES") : NULL;
}

int
rl_cluster_master(const char *line, size_t len, char *host, size_t hostlen,
    int *port)
{
	char buf[1024], *f[9], *save = NULL, *at, *colon, *end;
	int n = 0;
	long p;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (char *w = strtok_r(buf, " ", &save); w != NULL && n < 9;
	    w = strtok_r(NULL, " ", &save))
		f[n++] = w;
	/* id addr flags master ping pong epoch link slot... */
	if (n < 9 || strstr(f[2], "master") == NULL ||
	    strstr(f[2], "fail") != NULL || strstr(f[2], "noaddr") != NULL)
		return -1;
	if ((at = strchr(f[1], '@')) != NULL)
		*at = '\0';
	if ((colon = strrchr(f[1], ':')) == NULL || colon == f[1])
		return -1;
	*colon = '\0';
	p = strtol(colon + 1, &end, 10);
	if (*end != '\0' || p < 1 || p > 65535)
		return -1;
	snprintf(host, hostlen, "%s", f[1]);
	*port = (int)p;
	return 0;
}

/* Redis Cluster: every master that CLUSTER NODES on ND names, scanned
 * over connections of their own. -1: not a cluster. */
static int
scan_cluster(rl_client *c, struct rl_node *nd, struct seen *s,
    int (*fn)(void *, const char *), void *arg, enum rl_err *e)
{
	redisReply *rep = cluster_nodes(c, nd);
	const char *p, *eol;
	char host[256];
	int port, r = 0, scanned = 0;

	if (rep == NULL)
		return -1;
	for (p = rep->str; r <= 0 && *p != '\0'; p = *eol ? eol + 1 : eol) {
		struct rl_node m;

		if ((eol = strchr(p, '\n')) == NULL)
			eol = p + strlen(p);
		if (rl_cluster_master(p, (size_t)(eol - p), host, sizeof(host),
		    &port) < 0)
			continue;
		memset(&m, 0, sizeof(m));
		if (rl_url_copy(&m.url, &nd->url) < 0 ||
		    (free(m.url.host), (m.url.host = strdup(host)) == NULL)) {
			rl_url_clear(&m.url);
			r = 1;
			*e = rl_seterr(c, RL_ENOMEM, "out of memory");
			break;
		}
		m.url.port = port;
		rl_conn_init(&m.conn, &m.url, nd->conn.t);
		rl_conn_init(&m.sub, &m.url, nd->conn.t);
		if ((r = scan_one(c, &m, s, fn, arg, e)) < 0) {
			/* A master out of reach: the others still count. */
			nd->err = m.err;
			snprintf(nd->why, sizeof(nd->why), "%s", m.why);
		} else
			scanned++;
		rl_conn_close(&m.conn);
		rl_url_clear(&m.url);
	}
	freeReplyObject(rep);
	return scanned == 0 && r < 0 ? -1 : r > 0;
}

/* Every name on master J, or on every master of the cluster it is a node
 * of; 1 when done early (stop or error), -1 when it failed. */
static int
scan_node(rl_client *c, size_t j, struct seen *s,
    int (*fn)(void *, const char *), void *arg, enum rl_err *e)
{
	int r = scan_cluster(c, &c->nodes[j], s, fn, arg, e);

	if (r >= 0 || c->nodes[j].err != RL_OK)
		return r;
	return scan_one(c, &c->nodes[j], s, fn, arg, e);
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
