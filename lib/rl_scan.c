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

/* The passes of a scan, each a SCAN of its own over the keys. */
enum pass { PASS_HOLDER, PASS_PERMITS, PASS_HASH, PASSES };

/* The keys of the passes: the holder records of redlock's holds, the
 * taken permits of a semaphore (Redisson's "{NAME}:timeout", redlock's
 * --limit too), and every hash (a lock of Redisson's has no record of
 * ours). What each name is, status asks. */
static const char *const pass_args[PASSES][2] = {
	[PASS_HOLDER] = { "MATCH", RL_PREFIX_HOLDER ":*" },
	[PASS_PERMITS] = { "MATCH", "*:timeout" },
	[PASS_HASH] = { "TYPE", "hash" },
};

/* "{NAME}:timeout" (no brace in NAME) or "NAME:timeout" (NAME with
 * one): the semaphore's names into NM, as rl_key_names does. */
static int
permit_names(const char *key, size_t len, char *nm[2])
{
	static const char sfx[] = ":timeout";
	const size_t sl = sizeof(sfx) - 1;
	int n = 0;

	if (len <= sl || memcmp(key + len - sl, sfx, sl) != 0)
		return 0;
	len -= sl;
	if (len >= 3 && key[0] == '{' && key[len - 1] == '}' &&
	    memchr(key + 1, '{', len - 2) == NULL &&
	    (nm[n] = strndup(key + 1, len - 2)) != NULL)
		n++;
	if (memchr(key, '{', len) != NULL &&
	    (nm[n] = strndup(key, len)) != NULL)
		n++;
	return n;
}

/* A hash that is one of redlock's own keys of a name (the hashes of
 * the layout: its holder records, fair waiters, --supersede waiters and
 * plain waiters) is not a NAME. */
static int
ours(const char *key, size_t len)
{
	static const char *const pfx[] = { RL_PREFIX_HOLDER ":",
	    RL_PREFIX_WAITER ":", "redlock_supersede:", "redlock_guest:" };
	size_t i;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (len > strlen(pfx[i]) &&
		    memcmp(key, pfx[i], strlen(pfx[i])) == 0)
			return 1;
	return 0;
}

/* The names KEYS of pass P stand for ("x" and "{x}" share a holder
 * key, and a permit set), remembered in S (sorted, once each). -1: no
 * memory. */
static int
names(rl_client *c, enum pass p, const redisReply *keys, struct seen *s)
{
	char *nm[2];
	size_t i;
	int j, n, r = 0;

	for (i = 0; i < keys->elements && r >= 0; i++) {
		const redisReply *k = keys->element[i];

		if (k->type != REDIS_REPLY_STRING)
			continue;
		if (p == PASS_HOLDER)
			n = rl_key_names(RL_PREFIX_HOLDER, k->str, k->len, nm);
		else if (p == PASS_PERMITS)
			n = permit_names(k->str, k->len, nm);
		else if (k->len == 0 || memchr(k->str, '\0', k->len) != NULL ||
		    ours(k->str, k->len))
			n = 0;
		else
			n = (nm[0] = strndup(k->str, k->len)) != NULL ? 1 : -1;
		if (n < 0)
			r = -1;
		for (j = 0; j < n; j++) {
			if (r >= 0 && remember(s, nm[j]) < 0)
				r = -1;
			free(nm[j]);
		}
	}
	if (r < 0)
		rl_seterr(c, RL_ENOMEM, "out of memory");
	return r;
}

/* One SCAN step of pass P on node ND: the reply, or NULL (a refusal of
 * the pass: refused set, ND's err clear). */
static redisReply *
scan_step(rl_client *c, struct rl_node *nd, enum pass p, const char *cursor)
{
	struct rl_round_opts o = rl_opts(c, 1);
	const char *argv[6] = { "SCAN", cursor, pass_args[p][0],
	    pass_args[p][1], "COUNT", "1000" };
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

/* Every name on node ND, into S: 0, or -1 when it failed (ND says why,
 * or no memory). A server that refuses a pass (SCAN's TYPE before Redis
 * 6) is left without it. */
static int
scan_one(rl_client *c, struct rl_node *nd, struct seen *s, enum rl_err *e)
{
	char cursor[24];
	redisReply *rep;
	enum pass p;
	int r = 0;

	for (p = 0; p < PASSES && r == 0; p++) {
		snprintf(cursor, sizeof(cursor), "0");
		do {
			if ((rep = scan_step(c, nd, p, cursor)) == NULL) {
				if (p > PASS_HOLDER && nd->refused) {
					nd->err = RL_OK;
					nd->why[0] = '\0';
					nd->refused = 0;
					break;
				}
				return -1;
			}
			snprintf(cursor, sizeof(cursor), "%s",
			    rep->element[0]->str);
			if (names(c, p, rep->element[1], s) < 0) {
				*e = RL_ENOMEM;
				r = -1;
			}
			freeReplyObject(rep);
		} while (r == 0 && strcmp(cursor, "0") != 0);
	}
	return r;
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
 * over connections of their own, into S. -1: not a cluster, or none of
 * its masters answered; 1: out of memory. */
static int
scan_cluster(rl_client *c, struct rl_node *nd, struct seen *s, enum rl_err *e)
{
	redisReply *rep = cluster_nodes(c, nd);
	const char *p, *eol;
	char host[256];
	int port, scanned = 0;

	if (rep == NULL)
		return -1;
	for (p = rep->str; *e == RL_OK && *p != '\0';
	    p = *eol ? eol + 1 : eol) {
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
			*e = rl_seterr(c, RL_ENOMEM, "out of memory");
			break;
		}
		m.url.port = port;
		rl_conn_init(&m.conn, &m.url, nd->conn.t);
		rl_conn_init(&m.sub, &m.url, nd->conn.t);
		if (scan_one(c, &m, s, e) < 0 && *e == RL_OK) {
			/* A master out of reach: the others still count. */
			nd->err = m.err;
			snprintf(nd->why, sizeof(nd->why), "%s", m.why);
		} else
			scanned++;
		rl_conn_close(&m.conn);
		rl_url_clear(&m.url);
	}
	freeReplyObject(rep);
	if (*e != RL_OK)
		return 1;
	return scanned == 0 ? -1 : 0;
}

/* Every name on master J, or on every master of the cluster it is a node
 * of, into S; -1 when it failed. */
static int
scan_node(rl_client *c, size_t j, struct seen *s, enum rl_err *e)
{
	int r = scan_cluster(c, &c->nodes[j], s, e);

	if (r >= 0 || c->nodes[j].err != RL_OK)
		return r;
	return scan_one(c, &c->nodes[j], s, e);
}

enum rl_err
rl_scan(rl_client *c, int (*fn)(void *, const char *), void *arg)
{
	struct seen s = { NULL, 0, 0 };
	enum rl_err e = RL_OK;
	size_t j, failed = 0, first = 0;

	for (j = 0; j < c->n && e == RL_OK; j++) {
		/* A master out of reach is left out; the names come from
		 * the others, and each name's status asks them all. */
		if (scan_node(c, j, &s, &e) < 0 && e == RL_OK &&
		    failed++ == 0)
			first = j;
	}
	if (e == RL_OK && failed == c->n)
		e = rl_node_error(c, first);
	/* In order of name, once the masters are all read. */
	for (j = 0; e == RL_OK && j < s.n; j++)
		if (fn(arg, s.v[j]) != 0)
			break;
	seen_free(&s);
	return e;
}
