/* fuzz_cluster.c: what lib/ reads from a Redis Cluster. Each line of the
 * input goes to rl_redirection (a MOVED or ASK error) and
 * rl_cluster_master (a line of CLUSTER NODES); then the whole input is
 * what the servers answer (fake.h: one chunk per command, HELLO first on
 * each connection) to an acquire, which follows MOVED, ASK and TRYAGAIN,
 * and to a scan (status without NAME), which asks INFO cluster and
 * CLUSTER NODES and then scans every master named over connections of
 * their own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "rl_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One line, NUL-terminated, as both parsers read it. */
static void
parse_line(const char *line, size_t len)
{
	char host[256], *h;
	int port, ask;

	if (rl_redirection(line, &h, &port, &ask) == 0) {
		if (port < 1 || port > 65535 || (ask != 0 && ask != 1) ||
		    strlen(h) >= len)
			abort();
		free(h);
	}
	memset(host, 'x', sizeof(host));
	if (rl_cluster_master(line, len, host, sizeof(host), &port) == 0 &&
	    (port < 1 || port > 65535 || memchr(host, '\0', sizeof(host)) ==
	    NULL || strlen(host) >= len))
		abort();
}

static void
parse_lines(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *p, *nl;

	if (s == NULL)
		return;
	memcpy(s, data, size);
	s[size] = '\0';
	for (p = s; p < s + size; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(s + size - p))) == NULL)
			nl = s + size;
		*nl = '\0';
		parse_line(p, (size_t)(nl - p));
	}
	free(s);
}

/* Each name scanned, read to the end; at most a thousand. */
static int
count(void *arg, const char *name)
{
	size_t *n = arg;

	(void)strlen(name);
	return ++*n >= 1000;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rl_url u = { 0 };
	const struct rl_lock x = { .name = "x", .owner = "o:1" };
	struct rl_attempt a;
	rl_client *c;
	size_t n = 0;

	if (fake_unfit(data, size))
		return 0;
	parse_lines(data, size);
	fake_serve(data, size, 0);
	rl_client_set_transport(&fake);
	u.host = (char *)"127.0.0.1";
	u.port = 7000;
	if ((c = rl_client_new(&u, 100, 60)) != NULL) {
		rl_try_acquire(c, &(struct rl_try){ &x, 1000, NULL, NULL,
		    RL_JOIN_NO }, &a);
		if (a.owner != NULL)
			(void)strlen(a.owner);
		rl_scan(c, count, &n);
		rl_client_free(c);
	}
	return 0;
}
