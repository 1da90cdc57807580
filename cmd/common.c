/* common.c: what the commands share above the configuration: the NAME
 * operand, the clients they open, library errors as exit statuses and
 * messages, and --pubsub. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

int
one_name(const struct cmd *c, const struct parse *p, const char **name)
{
	if (p->nops == 0)
		return usage_error(c, "missing NAME");
	if (p->nops > 1)
		return usage_error(c, "one NAME only, got '%s' too",
		    esc(p->argv[2]));
	if (p->argv[1][0] == '\0')
		return usage_error(c, "NAME is empty");
	if ((*name = name_key(p->argv[1])) == NULL) {
		msg("out of memory");
		return EXIT_SOFTWARE;
	}
	return 0;
}

/* Set by client_open: the URL is RL_DEFAULT_URL because neither -u nor
 * REDLOCK_URL named one, which an operator may not know. */
static int default_url;

/* A server out of reach: ERR's line, where the default URL (when it was
 * not chosen) says so and how to choose another. */
static void
unreachable(const char *err)
{
	const char *s = esc(err), *p = strstr(s, RL_DEFAULT_URL);
	int n;

	if (!default_url || p == NULL) {
		msg("%s; check --url and that the server is up", s);
		return;
	}
	n = (int)(p - s + strlen(RL_DEFAULT_URL));
	msg("%.*s (the default: set REDLOCK_URL or give -u URL)%s; check "
	    "that the server is up", n, s, s + n);
}

int
fail(rl_client *c, enum rl_err e, const char *name)
{
	switch (e) {
	case RL_OK:
		return 0;
	case RL_EWRONGTYPE:
		msg("%s is not a lock: %s; nothing was changed, choose another "
		    "name", esc(name), esc(rl_errstr(c)));
		return EXIT_WRONGTYPE;
	case RL_EKIND:
		msg("%s; nothing was changed", esc(rl_errstr(c)));
		return EXIT_WRONGTYPE;
	case RL_ECONNECT:
		if (rl_err_refused(c))
			msg("%s", esc(rl_errstr(c)));
		else
			unreachable(rl_errstr(c));
		return EXIT_UNAVAILABLE;
	case RL_EAUTH:
	case RL_ESERVER:
	case RL_EREPLICAS:
		msg("%s", esc(rl_errstr(c)));
		return EXIT_UNAVAILABLE;
	case RL_EUSAGE:
		msg("%s", esc(rl_errstr(c)));
		return EXIT_USAGE;
	case RL_ENOMEM:
		msg("out of memory");
		return EXIT_SOFTWARE;
	case RL_EINTR:
	case RL_EPROTO:
	default:
		msg("%s; please report this", esc(rl_errstr(c)));
		return EXIT_SOFTWARE;
	}
}

void
warn_nopub(rl_client *c, const char *name, const char *channel, int done)
{
	const char *user = rl_user(c);
	char rule[64];
	size_t n = strcspn(channel, ":");

	/* The rule for every channel of this kind, "&PREFIX:*": channels
	 * begin with one of redlock's prefixes, no control characters. */
	if (n >= sizeof(rule) - 4)
		snprintf(rule, sizeof(rule), "%s", RL_ACL_CHANNELS);
	else
		snprintf(rule, sizeof(rule), "&%.*s:*", (int)n, channel);
	if (done)
		msg("warning: %s was released, but its waiters were not woken: "
		    "the server refused PUBLISH on %s to user %s (they wait out "
		    "the lease); grant it with ACL SETUSER %s %s", esc(name),
		    esc(channel), esc(user), esc(user), rule);
	else
		msg("warning: user %s may not PUBLISH on %s, so releasing %s "
		    "will not wake its waiters (they wait out the lease); grant "
		    "it with ACL SETUSER %s %s", esc(user), esc(channel),
		    esc(name), esc(user), rule);
}

rl_client *
client_open(const struct globals *g, int64_t ttl_ms, int *status)
{
	return client_open_pubsub(g, ttl_ms, RL_PUBSUB_AUTO, status);
}

/* The history's bounds from REDLOCK_HISTORY (events kept per name, 0:
 * none) and REDLOCK_HISTORY_TTL (how long an unused name's history
 * stays, 0: for ever); set and empty, each counts as unset. 0, or -1
 * when one is bad (said). */
static int
history_env(rl_client *c)
{
	const char *max = getenv("REDLOCK_HISTORY");
	const char *ttl = getenv("REDLOCK_HISTORY_TTL");
	long n = RL_HISTORY_MAX;
	int64_t ms = RL_HISTORY_TTL_MS;

	if (max != NULL && max[0] != '\0' &&
	    parse_number(max, 0, RL_HISTORY_MAX_MAX, &n) < 0) {
		msg("REDLOCK_HISTORY: '%s' is not a number of events from 0 "
		    "to %d; fix it or unset it", esc(max), RL_HISTORY_MAX_MAX);
		return -1;
	}
	if (ttl != NULL && ttl[0] != '\0' && rl_duration_parse(ttl, &ms) != 0) {
		msg("REDLOCK_HISTORY_TTL: '%s' is not a duration (250ms, 30s, "
		    "5m, 7d, 1d12h; 0: for ever); fix it or unset it",
		    esc(ttl));
		return -1;
	}
	return rl_set_history(c, n, ms) == RL_OK ? 0 : -1;
}

#define WARNED_MAX 64

/* Each server that may evict a held lock, once per process (a pool's
 * clients and several masters may name one server twice). */
void
warn_eviction(rl_client *c)
{
	static char said[WARNED_MAX][256];
	static size_t nsaid;
	const char *policy;
	char url[256];
	size_t i, j;

	for (i = 0; i < rl_nodes(c); i++) {
		if ((policy = rl_node_eviction(c, i, url, sizeof(url))) == NULL)
			continue;
		for (j = 0; j < nsaid && strcmp(said[j], url) != 0; j++)
			;
		if (j < nsaid)
			continue;
		if (nsaid < WARNED_MAX)
			memcpy(said[nsaid++], url, sizeof(url));
		msg("warning: %s has maxmemory-policy %s: it may evict a held "
		    "lock (another holder then runs beside this one); set "
		    "maxmemory-policy noeviction", esc(url), esc(policy));
	}
	/* Said: reconnections (the watchdog's, the keeper's) need not
	 * ask again. */
	rl_set_eviction_check(c, 0);
}

/* A client of G's masters, connected; EVICTIONS: for acquiring (the
 * eviction check); WAIT_MS > 0: the connecting ends within it (-w). */
static rl_client *
open_client(const struct globals *g, int64_t ttl_ms, enum rl_pubsub pubsub,
    int evictions, int64_t wait_ms, int *status)
{
	rl_client *c = rl_client_new_multi(g->url, g->nurl,
	    g->connect_timeout_ms, g->timeout_ms);
	enum rl_err e;
	const char *env = getenv("REDLOCK_URL");

	/* An empty REDLOCK_URL is as good as unset (main.c). */
	default_url = !g->url_given && (env == NULL || env[0] == '\0');

	if (c == NULL) {
		msg("out of memory");
		*status = EXIT_SOFTWARE;
		return NULL;
	}
	if (history_env(c) < 0) {
		rl_client_free(c);
		*status = EXIT_USAGE;
		return NULL;
	}
	rl_set_node_timeout(c, g->timeout_given ? g->timeout_ms :
	    rl_node_timeout_for(ttl_ms));
	rl_set_pubsub(c, pubsub);
	rl_set_eviction_check(c, evictions);
	if (wait_ms > 0)
		rl_set_connect_until(c, rl_now_ms() + wait_ms);
	if ((e = rl_connect(c)) != RL_OK) {
		*status = fail(c, e, "");
		rl_client_free(c);
		return NULL;
	}
	return c;
}

rl_client *
client_open_pubsub(const struct globals *g, int64_t ttl_ms,
    enum rl_pubsub pubsub, int *status)
{
	return open_client(g, ttl_ms, pubsub, 0, -1, status);
}

rl_client *
client_open_acquire(const struct globals *g, int64_t ttl_ms,
    enum rl_pubsub pubsub, int64_t wait_ms, int *status)
{
	return open_client(g, ttl_ms, pubsub, 1, wait_ms, status);
}

static const char *const pubsub_names[] = {
	[RL_PUBSUB_AUTO] = "auto",
	[RL_PUBSUB_SHARDED] = "sharded",
	[RL_PUBSUB_CLASSIC] = "classic"
};

/* S as a pub/sub mode: 0, or -1 when it names none. */
static int
pubsub_lookup(const char *s, enum rl_pubsub *mode)
{
	size_t i;

	for (i = 0; i < sizeof(pubsub_names) / sizeof(pubsub_names[0]); i++)
		if (strcmp(s, pubsub_names[i]) == 0) {
			*mode = (enum rl_pubsub)i;
			return 0;
		}
	return -1;
}

int
parse_pubsub(const struct cmd *c, const char *arg, enum rl_pubsub *mode)
{
	if (pubsub_lookup(arg, mode) == 0)
		return 0;
	usage_error(c, "--pubsub: '%s' is not auto, sharded or classic",
	    esc(arg));
	return -1;
}

int
pubsub_default(const struct cmd *c, enum rl_pubsub *mode)
{
	const char *env = getenv(PUBSUB_VAR), *v;
	int r;

	*mode = RL_PUBSUB_AUTO;
	/* Set and empty, it counts as unset; then the file's. */
	if ((env == NULL || env[0] == '\0') && (v = config_last("pubsub",
	    &msg_where)) != NULL) {
		r = parse_pubsub(c, v, mode);
		msg_where = NULL;
		return r;
	}
	if (env == NULL || env[0] == '\0' || pubsub_lookup(env, mode) == 0)
		return 0;
	usage_error(c, "%s: '%s' is not auto, sharded or classic; fix it, "
	    "or give --pubsub", PUBSUB_VAR, esc(env));
	return -1;
}

const char *
pubsub_name(enum rl_pubsub mode)
{
	return pubsub_names[mode];
}

int
one_master(const struct cmd *c, const struct globals *g, const char *what,
    const char *fix)
{
	if (g->nurl <= 1)
		return 0;
	return usage_error(c, "%s not available with several masters "
	    "(Redlock): give one URL%s", what, fix);
}
