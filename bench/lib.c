/* lib.c: acquire+release pairs per second from one process, through lib/
 * (one EVALSHA each, on every master at once when there are several), to
 * compare with the server's round-trip ceiling and one master with many.
 * usage: bench-lib PAIRS URL [URL ...]; rediss:// URLs are verified with
 * the CA in $REDLOCK_CACERT. */
#include <stdio.h>
#include <stdlib.h>

#include "redlock.h"

#define MAX_URLS 16

int
main(int argc, char **argv)
{
	struct rl_url u[MAX_URLS];
	struct rl_attempt a;
	enum rl_release rel;
	char err[256], owner[RL_OWNER_MAX];
	int64_t holds, t0, t1;
	rl_client *c;
	long i, n;
	int k, nu;

	nu = argc - 2;
	if (nu < 1 || nu > MAX_URLS || (n = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: bench-lib PAIRS URL [URL ...]\n");
		return 64;
	}
	for (k = 0; k < nu; k++)
		if (rl_url_parse(argv[k + 2], &u[k], err, sizeof(err)) < 0) {
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
	if (c == NULL || rl_connect(c) != RL_OK ||
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
