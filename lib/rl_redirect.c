/* rl_redirect.c: Redis Cluster's MOVED and ASK, followed by rounds and
 * by a waiter's subscriptions alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rl_error.h"
#include "rl_redirect.h"

int
rl_redirection(const char *str, char **host, int *port, int *ask)
{
	const char *addr, *colon;
	char *end;
	long p;

	if (strncmp(str, "MOVED ", 6) == 0)
		*ask = 0;
	else if (strncmp(str, "ASK ", 4) == 0)
		*ask = 1;
	else
		return -1;
	/* The code, the slot, then the address. */
	if ((addr = strchr(str, ' ')) == NULL ||
	    (addr = strchr(addr + 1, ' ')) == NULL ||
	    (colon = strrchr(++addr, ':')) == NULL || colon == addr)
		return -1;
	p = strtol(colon + 1, &end, 10);
	if (*end != '\0' || p < 1 || p > 65535)
		return -1;
	/* An IPv6 address comes bare; an empty host is the node's own. */
	if ((*host = strndup(addr, (size_t)(colon - addr))) == NULL)
		return -1;
	*port = (int)p;
	return 0;
}

static int
same_host(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcasecmp(a, b) == 0;
}

int
rl_hops_back(const struct rl_hops *h, const struct rl_url *at,
    const char *host, int port)
{
	size_t i;

	if (port == at->port && same_host(host, at->host))
		return 0;
	for (i = 0; i < h->n; i++)
		if (port == h->port[i] && same_host(host, h->host[i]))
			return 1;
	return 0;
}

int
rl_hops_add(struct rl_hops *h, const struct rl_url *at)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (at->port == h->port[i] && same_host(at->host, h->host[i]))
			return 0;
	if (h->n == sizeof(h->port) / sizeof(h->port[0]))
		return 0;
	h->host[h->n] = NULL;
	if (at->host != NULL && (h->host[h->n] = strdup(at->host)) == NULL)
		return -1;
	h->port[h->n++] = at->port;
	return 0;
}

void
rl_hops_clear(struct rl_hops *h)
{
	while (h->n > 0)
		free(h->host[--h->n]);
}

void
rl_hops_why(const struct rl_bounce *bo, char *buf, size_t len)
{
	struct rl_url other = *bo->at;
	char a[256], b[256], why[80];

	other.host = bo->host;
	other.port = bo->port;
	other.path = NULL;
	rl_url_format(bo->at, a, sizeof(a));
	rl_url_format(&other, b, sizeof(b));
	rl_clip(bo->str, strlen(bo->str), 60, why, sizeof(why));
	snprintf(buf, len, "%s and %s kept sending %s to each other (%s) "
	    "for %lld ms (see --reply-timeout): each says the other serves "
	    "the slot (a move left half done?); finish the move with redis-cli "
	    "--cluster fix, or CLUSTER SETSLOT <slot> NODE <owner-id> on both",
	    a, b, bo->doing, why, (long long)bo->ms);
}

/* A bounce back to a node F came from: tried on while F's tries last,
 * from the first bounce, as a reply may take (TO's reply_ms); 1 once
 * they are over, with TO's why naming both nodes. */
static int
bounce_over(struct rl_follow *f, const struct rl_url *at, const char *str,
    int64_t now, struct rl_redir *to)
{
	if (f->end == 0)
		f->end = now + to->reply_ms;
	if (now + RL_TRYAGAIN_MS < f->end)
		return 0;
	rl_hops_why(&(const struct rl_bounce){ at, to->host, to->port,
	    to->doing, str, now - (f->end - to->reply_ms) }, to->why,
	    to->whylen);
	return 1;
}

enum rl_follow_step
rl_follow(struct rl_follow *f, const struct rl_url *at, const char *str,
    int64_t now, struct rl_redir *to)
{
	int back;

	if (rl_redirection(str, &to->host, &to->port, &to->ask) < 0)
		return RL_FOLLOW_NOT;
	back = rl_hops_back(&f->hops, at, to->host, to->port);
	if ((to->ask && !to->ask_ok) ||
	    (!back && f->moves >= RL_MAX_REDIRECTS)) {
		free(to->host);
		return RL_FOLLOW_NOT;
	}
	if (back && bounce_over(f, at, str, now, to)) {
		free(to->host);
		return RL_FOLLOW_OVER;
	}
	if (rl_hops_add(&f->hops, at) < 0) {
		free(to->host);
		return RL_FOLLOW_NOMEM;
	}
	f->moves += !back;
	return back ? RL_FOLLOW_BACK : RL_FOLLOW_NEW;
}

void
rl_follow_clear(struct rl_follow *f)
{
	rl_hops_clear(&f->hops);
	f->moves = 0;
	f->end = 0;
}
