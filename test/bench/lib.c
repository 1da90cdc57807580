/* lib.c: acquire+release pairs per second from one process, through lib/
 * (one EVALSHA each, on every master at once when there are several), to
 * compare with the server's round-trip ceiling and one master with many,
 * and one kind of lock with another.
 * usage: bench-lib [--shared | --write | --limit N] PAIRS URL [URL ...];
 * rediss:// URLs are verified with the CA in $REDLOCK_CACERT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

#define MAX_URLS 16

/* kind_arg: the kind that ARGV[*I] names, stepping *I past it and its
 * number; RL_EXCLUSIVE when it names none. -1 for a bad --limit. */
static int
kind_arg(int argc, char **argv, int *i, long *limit)
{
	char *end;

	if (*i < argc && strcmp(argv[*i], "--shared") == 0)
		return (*i)++, RL_SHARED;
	if (*i < argc && strcmp(argv[*i], "--write") == 0)
		return (*i)++, RL_WRITE;
	if (*i + 1 < argc && strcmp(argv[*i], "--limit") == 0) {
		*limit = strtol(argv[*i + 1], &end, 10);
		*i += 2;
		return *end == '\0' && *limit >= 1 ? RL_PERMIT : -1;
	}
	return RL_EXCLUSIVE;
}

int
main(int argc, char **argv)
{
	struct rl_url u[MAX_URLS];
	struct rl_attempt a;
	enum rl_release rel;
	char err[256], owner[RL_OWNER_MAX];
	int64_t holds, t0, t1;
	rl_client *c;
	long i, n = 0, limit = 1;
	int k, nu, first = 1, kind;

	kind = kind_arg(argc, argv, &first, &limit);
	nu = argc - first - 1;
	if (kind < 0 || nu < 1 || nu > MAX_URLS ||
	    (n = strtol(argv[first], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: bench-lib [--shared | --write | "
		    "--limit N] PAIRS URL [URL ...]\n");
		return 64;
	}
	for (k = 0; k < nu; k++)
		if (rl_url_parse(argv[first + 1 + k], &u[k], err,
		    sizeof(err)) < 0) {
			fprintf(stderr, "bench-lib: %s\n", err);
			return 64;
		}
	if (getenv("REDLOCK_CACERT") != NULL && rl_tls_setup(
	    &(struct rl_tls_opts){ .cacert = getenv("REDLOCK_CACERT") }, err,
	    sizeof(err)) != 0) {
		fprintf(stderr, "bench-lib: %s\n", err);
		return 64;
	}
	c = nu == 1 ? rl_client_new(&u[0], 2000, 5000) :
	    rl_client_new_multi(u, (size_t)nu, 2000, 5000);
	if (c == NULL || rl_set_kind(c, (enum rl_lock_kind)kind, limit) !=
	    RL_OK || rl_connect(c) != RL_OK ||
	    rl_owner_new(owner, sizeof(owner)) < 0) {
		fprintf(stderr, "bench-lib: cannot connect\n");
		return 69;
	}
	t0 = rl_now_ms();
	for (i = 0; i < n; i++) {
		if (rl_try_acquire(c, "bench-lib", owner, 30000, NULL, NULL,
		    RL_JOIN_NO, &a) != RL_OK || !a.acquired ||
		    rl_release(c, "bench-lib", owner, &rel, &holds, &a) !=
		    RL_OK || rel != RL_RELEASED) {
			fprintf(stderr, "bench-lib: %s\n", rl_errstr(c));
			return 70;
		}
	}
	t1 = rl_now_ms();
	printf("%.0f\n", (double)n * 1000 / (double)(t1 > t0 ? t1 - t0 : 1));
	rl_client_free(c);
	for (k = 0; k < nu; k++)
		rl_url_clear(&u[k]);
	return 0;
}
