/* lib.c: acquire+release pairs per second from one process, through lib/
 * (one EVALSHA each, on every master at once when there are several), to
 * compare with the server's round-trip ceiling and one master with many,
 * and one kind of lock with another.
 * usage: bench-lib [--shared | --write | --limit N | --fair | --renew]
 *     PAIRS URL [URL ...]
 * --fair: the fair lock's acquire (nobody queued) and release. --renew:
 * one acquisition, then PAIRS renewals (the watchdog's script), then one
 * release; prints renewals per second. Every acquisition records holder
 * metadata as exec does (host, pid, user, command), and history as
 * redlock does, unless REDLOCK_HISTORY is 0. rediss:// URLs are
 * verified with the CA in $REDLOCK_CACERT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"

#define MAX_URLS 16

enum mode { M_PAIRS, M_FAIR, M_RENEW };

/* kind_arg: the kind that ARGV[*I] names, stepping *I past it and its
 * number; RL_EXCLUSIVE when it names none (*MODE: fair or renewals of
 * the exclusive lock). -1 for a bad --limit. */
static int
kind_arg(int argc, char **argv, int *i, long *limit, enum mode *mode)
{
	char *end;

	*mode = M_PAIRS;
	if (*i < argc && strcmp(argv[*i], "--shared") == 0)
		return (*i)++, RL_SHARED;
	if (*i < argc && strcmp(argv[*i], "--write") == 0)
		return (*i)++, RL_WRITE;
	if (*i < argc && strcmp(argv[*i], "--fair") == 0)
		return (*i)++, *mode = M_FAIR, RL_EXCLUSIVE;
	if (*i < argc && strcmp(argv[*i], "--renew") == 0)
		return (*i)++, *mode = M_RENEW, RL_EXCLUSIVE;
	if (*i + 1 < argc && strcmp(argv[*i], "--limit") == 0) {
		*limit = strtol(argv[*i + 1], &end, 10);
		*i += 2;
		return *end == '\0' && *limit >= 1 ? RL_PERMIT : -1;
	}
	return RL_EXCLUSIVE;
}

static rl_client *
connect_to(struct rl_url *u, int nu)
{
	char err[256];
	rl_client *c;

	if (getenv("REDLOCK_CACERT") != NULL && rl_tls_setup(
	    &(struct rl_tls_opts){ .cacert = getenv("REDLOCK_CACERT") }, err,
	    sizeof(err)) != 0) {
		fprintf(stderr, "bench-lib: %s\n", err);
		return NULL;
	}
	c = nu == 1 ? rl_client_new(&u[0], 2000, 5000) :
	    rl_client_new_multi(u, (size_t)nu, 2000, 5000);
	if (c != NULL && getenv("REDLOCK_HISTORY") != NULL)
		rl_set_history(c, atol(getenv("REDLOCK_HISTORY")),
		    RL_HISTORY_TTL_MS);
	if (c == NULL || rl_connect(c) != RL_OK) {
		fprintf(stderr, "bench-lib: cannot connect%s%s\n",
		    c ? ": " : "", c ? rl_errstr(c) : "");
		return NULL;
	}
	return c;
}

/* N operations of MODE on KIND's hold (its owner made here): 0, or -1 with
 * the error printed. */
static int
run(rl_client *c, const struct rl_lock *kind, enum mode mode, long n,
    const struct rl_meta *meta)
{
	struct rl_fair fair = { .waiter_timeout_ms = 5000 };
	struct rl_attempt a;
	enum rl_release rel;
	char owner[RL_OWNER_MAX];
	struct rl_lock l;
	int64_t holds;
	long i;
	int ours = 1;

	if (rl_owner_new(owner, sizeof(owner)) < 0)
		return -1;
	l = *kind;
	l.owner = owner;
	for (i = 0; i < n; i++) {
		if ((mode != M_RENEW || i == 0) && (rl_try_acquire(c,
		    &(const struct rl_try){ &l, 30000, meta, mode == M_FAIR ?
		    &fair : NULL, RL_JOIN_NO }, &a) != RL_OK || !a.acquired))
			goto fail;
		if (mode == M_RENEW && (rl_renew(c, &l, 30000, &ours) !=
		    RL_OK || !ours))
			goto fail;
		if ((mode != M_RENEW || i == n - 1) && (rl_release(c, &l, &rel,
		    &holds, &a) != RL_OK || rel != RL_RELEASED))
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "bench-lib: %s\n", rl_errstr(c));
	return -1;
}

int
main(int argc, char **argv)
{
	struct rl_url u[MAX_URLS];
	struct rl_meta meta = { .cmd = "bench-lib" };
	struct rl_lock hold = { .name = "bench-lib" };
	char err[256], host[256] = "";
	int64_t t0, t1;
	rl_client *c;
	long n = 0, limit = 1;
	int k, nu, first = 1, kind;
	enum mode mode;

	kind = kind_arg(argc, argv, &first, &limit, &mode);
	nu = argc - first - 1;
	if (kind < 0 || nu < 1 || nu > MAX_URLS ||
	    (n = strtol(argv[first], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: bench-lib [--shared | --write | "
		    "--limit N | --fair | --renew] PAIRS URL [URL ...]\n");
		return 64;
	}
	for (k = 0; k < nu; k++)
		if (rl_url_parse(argv[first + 1 + k], &u[k], err,
		    sizeof(err)) < 0) {
			fprintf(stderr, "bench-lib: %s\n", err);
			return 64;
		}
	gethostname(host, sizeof(host) - 1);
	meta.host = host;
	meta.pid = (long)getpid();
	meta.user = getenv("USER") ? getenv("USER") : "";
	if ((c = connect_to(u, nu)) == NULL)
		return 69;
	hold.kind = (enum rl_lock_kind)kind;
	hold.limit = limit;
	t0 = rl_now_ms();
	if (run(c, &hold, mode, n, &meta) < 0)
		return 70;
	t1 = rl_now_ms();
	printf("%.0f\n", (double)n * 1000 / (double)(t1 > t0 ? t1 - t0 : 1));
	rl_client_free(c);
	for (k = 0; k < nu; k++)
		rl_url_clear(&u[k]);
	return 0;
}
