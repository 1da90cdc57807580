/* test_keeper.c: the lease keeper (rl_keeper) renewing a hold from a poll
 * loop of the test's, and rl_renew, against fake servers that answer
 * renew.lua as Redis would (fake_redis.h): renewals on schedule, a lease
 * found gone or taken, a connection lost and regained, a quorum of
 * masters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>

#include <cmocka.h>

#include "rl_client.h"
#include "rl_scripts.h"
#include "fake_redis.h"

static const char *const urls[] = {
	"redis://127.0.0.1:7101", "redis://127.0.0.1:7102",
	"redis://127.0.0.1:7103",
};

/* A lease of 300 ms: renewed every 100 ms. */
#define TTL_MS 300

/* ---- the library's calls, each in one place ---- */

static rl_client *
client(size_t n)
{
	struct rl_url u[3];
	char err[256];
	rl_client *c;
	size_t i;

	assert_true(n <= 3);
	for (i = 0; i < n; i++)
		assert_int_equal(rl_url_parse(urls[i], &u[i], err,
		    sizeof(err)), 0);
	rl_client_set_transport(&fake_transport);
	c = rl_client_new_multi(u, n, 1000, 2000);
	rl_client_set_transport(NULL);
	for (i = 0; i < n; i++)
		rl_url_clear(&u[i]);
	assert_non_null(c);
	assert_int_equal(rl_connect(c), RL_OK);
	return c;
}

/* A keeper of "x" held by "me" (exclusive) on C, acquired now. */
static rl_keeper *
keeper(rl_client *c)
{
	const struct rl_lock l = { .name = "x", .owner = "me" };
	rl_keeper *k = rl_keeper_new(c, &l, TTL_MS, rl_now_ms());

	assert_non_null(k);
	return k;
}

static enum rl_err
renew(rl_client *c, int *ours)
{
	const struct rl_lock l = { .name = "x", .owner = "me" };

	return rl_renew(c, &l, TTL_MS, ours);
}

/* What a poll loop of the keeper's saw. */
struct run {
	enum rl_keep state;	/* the last step's */
	int steps;
	int errors;		/* steps that failed (to be retried) */
	enum rl_err err;	/* the first of them */
	char why[RL_WHY_MAX];
};

/* The caller's poll loop: poll what the keeper asks, step it, until
 * FOR_MS have passed, the lock is no longer ours, or (STOP > 0) STOP
 * renewals have been confirmed. */
static struct run
keep_until(rl_keeper *k, rl_client *c, int64_t for_ms, int64_t stop)
{
	struct pollfd pfd[RL_KEEPER_MAX_FDS];
	int64_t end = rl_now_ms() + for_ms, now, wake;
	struct run r = { .state = RL_KEEP_OK };
	enum rl_err e;
	size_t n;

	while ((now = rl_now_ms()) < end) {
		n = rl_keeper_pollfds(k, pfd);
		wake = rl_keeper_wake_ms(k);
		if (wake < 0 || wake > end)
			wake = end;
		(void)poll(pfd, n, (int)(wake > now ? wake - now : 0));
		e = rl_keeper_step(k, rl_now_ms(), &r.state);
		r.steps++;
		if (e != RL_OK && r.errors++ == 0) {
			r.err = e;
			snprintf(r.why, sizeof(r.why), "%s", rl_errstr(c));
		}
		if (r.state != RL_KEEP_OK ||
		    (stop > 0 && rl_keeper_renewals(k) >= stop))
			break;
	}
	return r;
}

static struct run
keep(rl_keeper *k, rl_client *c, int64_t for_ms)
{
	return keep_until(k, c, for_ms, 0);
}

static int
setup(void **state)
{
	(void)state;
	fake_setup("test_keeper");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	fake_teardown();
	return 0;
}

/* ---- tests ---- */

/* Renewals on schedule: every third of the lease, each confirmed, the
 * local deadline moving with the last one's send time (ttl less the
 * drift), and every renewal one renew.lua run that set the lease. */
static void
test_renews_every_third_of_the_lease(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	rl_client *c = client(1);
	int64_t t0 = rl_now_ms(), took;
	rl_keeper *k = keeper(c);
	struct run r;

	(void)state;
	fake_hold(s, "x", "me", TTL_MS);
	r = keep_until(k, c, 5000, 3);
	took = rl_now_ms() - t0;
	assert_int_equal(r.state, RL_KEEP_OK);
	assert_int_equal(r.errors, 0);
	assert_int_equal(rl_keeper_renewals(k), 3);
	assert_int_equal(fake_runs(s, &rl_script_renew, "x"), 3);
	/* On schedule: not sooner, and not a renewal more. */
	assert_true(took >= 3 * TTL_MS / 3);
	assert_true(took < 3 * TTL_MS / 3 + 1000);
	assert_true(rl_keeper_confirmed_ms(k) >= t0 + 3 * TTL_MS / 3);
	assert_int_equal(rl_keeper_deadline_ms(k), rl_keeper_confirmed_ms(k) +
	    TTL_MS - rl_drift_ms(TTL_MS));
	assert_int_equal(rl_keeper_tried_ms(k), -1);
	assert_int_equal(fake_lock(s, "x")->pttl, TTL_MS);
	assert_string_equal(FAKE_ARG(fake_nth_run(s, &rl_script_renew, 0),
	    RL_RENEW_ARG_OWNER), "me");
	rl_keeper_free(k);
	rl_client_free(c);
}

/* A renewal that finds the lease gone (it ran out, or was removed):
 * RL_KEEP_GONE at once, not an error to retry, and nothing re-created
 * on the server. */
static void
test_renewal_finds_the_lease_gone(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	rl_client *c = client(1);
	rl_keeper *k = keeper(c);
	struct run r;

	(void)state;
	fake_hold(s, "x", "me", TTL_MS);
	r = keep_until(k, c, 5000, 1);
	assert_int_equal(rl_keeper_renewals(k), 1);
	fake_lock(s, "x")->owner[0] = '\0';
	r = keep(k, c, 1000);
	assert_int_equal(r.state, RL_KEEP_GONE);
	assert_int_equal(r.errors, 0);
	assert_int_equal(rl_keeper_renewals(k), 1);
	assert_int_equal(fake_runs(s, &rl_script_renew, "x"), 2);
	assert_string_equal(fake_lock(s, "x")->owner, "");
	rl_keeper_free(k);
	rl_client_free(c);
}

/* A renewal that finds another owner holding the name: RL_KEEP_TAKEN. */
static void
test_renewal_finds_the_lock_taken(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	rl_client *c = client(1);
	rl_keeper *k = keeper(c);
	struct run r;

	(void)state;
	fake_hold(s, "x", "other", TTL_MS);
	r = keep(k, c, 1000);
	assert_int_equal(r.state, RL_KEEP_TAKEN);
	assert_int_equal(r.errors, 0);
	assert_int_equal(rl_keeper_renewals(k), 0);
	assert_string_equal(fake_lock(s, "x")->owner, "other");
	rl_keeper_free(k);
	rl_client_free(c);
}

static int
drop_renewals(struct fake_srv *s, struct fake_conn *fc, struct fake_cmd *cmd)
{
	(void)fc;
	if (cmd->script != &rl_script_renew || s->arg == NULL)
		return 0;
	fake_drop(s);
	s->refuse = 1;
	return 1;
}

/* A connection lost under a renewal: the step fails (RL_ECONNECT, the
 * lock still ours as far as anyone knows), the renewal is retried soon
 * (a tenth of a period, not a spin) while the lease's deadline stays
 * where the last confirmed renewal put it, and once the server is back
 * the next renewal, on a new connection, is confirmed. */
static void
test_lost_connection_is_retried(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	rl_client *c = client(1);
	rl_keeper *k = keeper(c);
	int64_t deadline;
	struct run r;
	int opens;

	(void)state;
	fake_hold(s, "x", "me", TTL_MS);
	r = keep_until(k, c, 5000, 1);
	assert_int_equal(rl_keeper_renewals(k), 1);
	deadline = rl_keeper_deadline_ms(k);
	s->hook = drop_renewals;
	s->arg = s;
	r = keep(k, c, 150);
	assert_int_equal(r.state, RL_KEEP_OK);
	assert_true(r.errors >= 2);
	assert_true(r.errors <= 150 / 10 + 2);
	assert_int_equal(r.err, RL_ECONNECT);
	assert_non_null(strstr(r.why, "redis://127.0.0.1:7101"));
	assert_int_equal(rl_keeper_renewals(k), 1);
	assert_int_equal(rl_keeper_deadline_ms(k), deadline);
	assert_true(rl_keeper_tried_ms(k) >= 0);
	/* Back. */
	s->refuse = 0;
	s->arg = NULL;
	opens = s->opens;
	r = keep_until(k, c, 5000, 2);
	assert_int_equal(r.state, RL_KEEP_OK);
	assert_int_equal(r.errors, 0);
	assert_int_equal(rl_keeper_renewals(k), 2);
	assert_true(rl_keeper_deadline_ms(k) > deadline);
	assert_int_equal(s->opens, opens + 1);
	rl_keeper_free(k);
	rl_client_free(c);
}

/* Three masters: one whose lease ran out does not stop the renewal
 * while two renew (a quorum): still ours. When a second one finds it
 * gone, no quorum is left: RL_KEEP_GONE. */
static void
test_quorum_of_renewals(void **state)
{
	rl_client *c = client(3);
	rl_keeper *k = keeper(c);
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++)
		fake_hold(&fake_srvs[i], "x", "me", TTL_MS);
	fake_lock(&fake_srvs[2], "x")->owner[0] = '\0';
	r = keep_until(k, c, 5000, 1);
	assert_int_equal(r.state, RL_KEEP_OK);
	assert_int_equal(r.errors, 0);
	assert_int_equal(rl_keeper_renewals(k), 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(fake_runs(&fake_srvs[i], &rl_script_renew,
		    "x"), 1);
	fake_lock(&fake_srvs[1], "x")->owner[0] = '\0';
	r = keep(k, c, 1000);
	assert_int_equal(r.state, RL_KEEP_GONE);
	assert_int_equal(rl_keeper_renewals(k), 1);
	rl_keeper_free(k);
	rl_client_free(c);
}

/* A server slow to answer renewals: each is answered only when the
 * next command comes on its connection, in order, before that one. */
static int
late_renewals(struct fake_srv *s, struct fake_conn *fc, struct fake_cmd *cmd)
{
	if (s->arg == fc) {
		fake_int(fc, 1);
		s->arg = NULL;
	}
	if (cmd->script != &rl_script_renew || !fake_knows(s,
	    rl_script_renew.sha))
		return 0;
	s->arg = fc;
	return 1;
}

/* rl_keeper_settle gives up on a renewal in flight so that the release
 * can go on the same connection: the renewal's late reply, which comes
 * first, is dropped, and the release reads its own (released). */
static void
test_settled_renewal_leaves_the_release_its_reply(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	rl_client *c = client(1);
	rl_keeper *k = keeper(c);
	const struct rl_lock l = { .name = "x", .owner = "me" };
	struct rl_attempt a;
	enum rl_release rel;
	int64_t holds;
	struct run r;

	(void)state;
	fake_hold(s, "x", "me", TTL_MS);
	r = keep_until(k, c, 5000, 1);
	assert_int_equal(rl_keeper_renewals(k), 1);
	s->hook = late_renewals;
	r = keep(k, c, 150);
	assert_int_equal(r.state, RL_KEEP_OK);
	assert_non_null(s->arg);
	assert_true(rl_keeper_tried_ms(k) >= 0);
	rl_keeper_settle(k);
	assert_int_equal(rl_release(c, &l, &rel, &holds, &a), RL_OK);
	assert_int_equal(rel, RL_RELEASED);
	assert_null(s->arg);
	assert_string_equal(fake_lock(s, "x")->owner, "");
	assert_int_equal(fake_runs(s, &rl_script_release, "x"), 1);
	/* Behind a reply given up on, the release goes whole: a late
	 * NOSCRIPT could not be answered in order. */
	assert_string_equal(fake_nth_run(s, &rl_script_release, 0)->argv[0],
	    "EVAL");
	/* One connection all along. */
	assert_int_equal(s->opens, 1);
	rl_keeper_free(k);
	rl_client_free(c);
}

/* rl_renew: one renewal at once, the keeper's verdict: ours while held,
 * not once the lease is gone. */
static void
test_renew_at_once(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	rl_client *c = client(1);
	int ours = -1;

	(void)state;
	fake_hold(s, "x", "me", 10);
	assert_int_equal(renew(c, &ours), RL_OK);
	assert_int_equal(ours, 1);
	assert_int_equal(fake_lock(s, "x")->pttl, TTL_MS);
	fake_lock(s, "x")->owner[0] = '\0';
	assert_int_equal(renew(c, &ours), RL_OK);
	assert_int_equal(ours, 0);
	assert_int_equal(fake_runs(s, &rl_script_renew, "x"), 2);
	rl_client_free(c);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_renews_every_third_of_the_lease),
		T(test_renewal_finds_the_lease_gone),
		T(test_renewal_finds_the_lock_taken),
		T(test_lost_connection_is_retried),
		T(test_quorum_of_renewals),
		T(test_settled_renewal_leaves_the_release_its_reply),
		T(test_renew_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
