/* lib.c: acquire+release pairs per second from one process, through lib/
 * (one EVALSHA each), to compare with the server's round-trip ceiling.
 * usage: bench-lib URL PAIRS */
#include <stdio.h>
#include <stdlib.h>

#include "redlock.h"

int
main(int argc, char **argv)
{
	struct rl_url u;
	struct rl_attempt a;
	enum rl_release rel;
	char err[256], owner[RL_OWNER_MAX];
	int64_t holds, t0, t1;
	rl_client *c;
	long i, n;

	if (argc != 3 || rl_url_parse(argv[1], &u, err, sizeof(err)) < 0 ||
	    (n = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: bench-lib URL PAIRS\n");
		return 64;
	}
	if ((c = rl_client_new(&u, 2000, 5000)) == NULL ||
	    rl_connect(c) != RL_OK || rl_owner_new(owner, sizeof(owner)) < 0) {
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
	rl_url_clear(&u);
	return 0;
}
