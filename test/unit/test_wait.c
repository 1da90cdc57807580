/* test_wait.c: acquisitions that wait (rl_acquire, rl_acquire_any) and
 * releases (rl_release), against fake servers that answer the scripts
 * as Redis would (fake_redis.h): a wake-up pushed by a release, the room
 * and the fair queue, the ends of a wait (-w, the callback, a signal), a
 * connection lost while waiting, MOVED (a subscription sent back and
 * forth, an attempt moved), a pool, and a release that reaches too few
 * masters, and a server that hangs up at each attempt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rl_client.h"
#include "rl_scripts.h"
#include "fake_redis.h"

/* The servers' ports, as URLs. */
static const char *const urls[] = {
	"redis://127.0.0.1:7101", "redis://127.0.0.1:7102",
	"redis://127.0.0.1:7103",
};

#define LEASE_MS 60000	/* a busy lease: the polled retry is this far */

/* ---- the library's calls, each in one place ---- */

static const struct rl_meta meta = {
	.host = "here", .pid = 1, .user = "me", .cmd = "true",
};

/* A client of the first N fake servers (several: Redlock), whose room
 * heartbeat is 60 s (the listener's is 20 s): a retry sooner than that
 * was pushed. */
static rl_client *
client(size_t n, int64_t reply_ms)
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
	c = rl_client_new_multi(u, n, 1000, reply_ms);
	rl_client_set_transport(NULL);
	for (i = 0; i < n; i++)
		rl_url_clear(&u[i]);
	assert_non_null(c);
	assert_int_equal(rl_set_waiter_timeout(c, 60000), RL_OK);
	assert_int_equal(rl_connect(c), RL_OK);
	return c;
}

static rl_wait_cb wait_cb;	/* the test's, or NULL */
static void *wait_arg;

/* rl_acquire of lock NAME by OWNER (exclusive, not fair), waiting up to
 * WAIT_MS, the test's callback seeing its attempts. */
static enum rl_err
acquire(rl_client *c, const char *name, const char *owner, int64_t wait_ms,
    struct rl_attempt *a)
{
	const struct rl_lock l = { .name = name, .owner = owner };

	return rl_acquire(c, &(const struct rl_request){ .l = &l,
	    .ttl_ms = 30000, .wait_ms = wait_ms, .meta = &meta,
	    .cb = wait_cb, .cbarg = wait_arg }, a);
}

/* The same, a fair waiter whose heartbeat is 20 s. */
static enum rl_err
acquire_fair(rl_client *c, const char *name, const char *owner,
    int64_t wait_ms, struct rl_attempt *a)
{
	const struct rl_lock l = { .name = name, .owner = owner };
	const struct rl_fair fair = { .waiter_timeout_ms = 60000 };

	return rl_acquire(c, &(const struct rl_request){ .l = &l,
	    .ttl_ms = 30000, .wait_ms = wait_ms, .meta = &meta, .fair = &fair,
	    .cb = wait_cb, .cbarg = wait_arg }, a);
}

/* rl_acquire_any of the N names on N clients, all by OWNER. */
static enum rl_err
acquire_any(rl_client *const *c, const char *const *names, size_t n,
    const char *owner, int64_t wait_ms, struct rl_attempt *a, size_t *which)
{
	struct rl_lock l[4];
	size_t i;

	assert_true(n <= 4);
	for (i = 0; i < n; i++)
		l[i] = (struct rl_lock){ .name = names[i], .owner = owner };
	return rl_acquire_any(c, &(const struct rl_request){ .l = l, .n = n,
	    .ttl_ms = 30000, .wait_ms = wait_ms, .meta = &meta,
	    .cb = wait_cb, .cbarg = wait_arg }, a, which);
}

static enum rl_err
release(rl_client *c, const char *name, const char *owner,
    enum rl_release *r, struct rl_attempt *a)
{
	const struct rl_lock l = { .name = name, .owner = owner };
	int64_t holds;

	return rl_release(c, &l, r, &holds, a);
}

/* Where master I of C is now (MOVED changes it). */
static int
master_port(const rl_client *c, size_t i)
{
	return c->nodes[i].url.port;
}

static int
setup(void **state)
{
	(void)state;
	wait_cb = NULL;
	wait_arg = NULL;
	fake_setup("test_wait");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	fake_teardown();
	return 0;
}

/* ---- busy, then woken by a push ---- */

/* The hook of a server whose holder ("other") gives "x" back right after
 * the waiter's second attempt: the release's messages are pushed. */
static int
release_after_second(struct fake_srv *s, struct fake_conn *fc,
    struct fake_cmd *cmd)
{
	fake_answer(s, fc, cmd);
	if (cmd->ran && cmd->script == &rl_script_acquire &&
	    fake_runs(s, &rl_script_acquire, "x") == 2)
		fake_release_by(s, "x", "other");
	return 1;
}

/* Busy, then pushed: the first attempt finds "x" held for a minute; the
 * waiter joins the room (its listener), subscribes to its own channel
 * and the name's, and tries once more as its subscription comes (a
 * release may have gone unheard). The release that follows pushes to
 * both channels, and the third attempt takes "x" at once: no retry but
 * those, no poll (the lease's end is a minute away, the room's heartbeat
 * 20 s, -w 5 s). The first EVALSHA is NOSCRIPT on a server that never ran
 * the script: EVAL once, EVALSHA after. */
static void
test_busy_then_pushed_wakeup(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	const struct fake_cmd *cmd;
	struct rl_attempt a;
	rl_client *c = client(1, 2000);
	int64_t t0, took;

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	s->hook = release_after_second;
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 5000, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_true(a.acquired);
	assert_int_equal(a.fence, 2);
	assert_null(a.lost);
	assert_true(took < 2000);
	/* Three attempts: busy, busy at the subscription, taken on the
	 * push; two messages pushed, the own channel's and the name's. */
	assert_int_equal(fake_runs(s, &rl_script_acquire, "x"), 3);
	assert_int_equal(s->pushes, 2);
	assert_int_equal(fake_sent(s, "SUBSCRIBE"), 3);
	/* Joined the room at first, in it after, out once it has "x"; it
	 * never had to leave it. */
	assert_string_equal(FAKE_ARG(fake_nth_run(s, &rl_script_acquire, 0),
	    RL_ACQUIRE_ARG_FLAGS), "j");
	assert_string_equal(FAKE_ARG(fake_nth_run(s, &rl_script_acquire, 2),
	    RL_ACQUIRE_ARG_FLAGS), "jw");
	assert_int_equal(fake_lock(s, "x")->nroom, 0);
	assert_string_equal(fake_lock(s, "x")->owner, "me");
	assert_int_equal(fake_runs(s, &rl_script_room_leave, NULL), 0);
	/* NOSCRIPT once, then the script by its SHA. */
	cmd = fake_nth_run(s, &rl_script_acquire, 0);
	assert_string_equal(cmd->argv[0], "EVAL");
	assert_int_equal(fake_sent(s, "EVAL"), 1);
	assert_string_equal(fake_nth_run(s, &rl_script_acquire, 2)->argv[0],
	    "EVALSHA");
	assert_int_equal(fake_sent(s, "EVALSHA"), 3);
	rl_client_free(c);
}

/* The same without the release: the wait runs out at -w, not acquired,
 * having left the room on its way out; no attempt was made in between
 * (a wait is not a poll) but the last chance at the deadline. */
static void
test_busy_until_the_wait_runs_out(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct rl_attempt a;
	rl_client *c = client(1, 2000);
	int64_t t0, took;

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 600, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_false(a.acquired);
	assert_string_equal(a.owner, "other");
	assert_true(took >= 590 && took < 600 + 5 * RL_LATE_MS);
	assert_int_equal(fake_runs(s, &rl_script_acquire, "x"), 3);
	assert_true(fake_nth_run(s, &rl_script_acquire, 2)->at - t0 >= 590);
	assert_int_equal(fake_runs(s, &rl_script_room_leave, NULL), 1);
	assert_int_equal(fake_lock(s, "x")->nroom, 0);
	assert_string_equal(fake_lock(s, "x")->owner, "other");
	rl_client_free(c);
}

/* Without -w: one attempt, busy, its holder described; nothing joined,
 * nothing subscribed. */
static void
test_busy_without_waiting(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct rl_attempt a;
	rl_client *c = client(1, 2000);

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	assert_int_equal(acquire(c, "x", "me", 0, &a), RL_OK);
	assert_false(a.acquired);
	assert_string_equal(a.owner, "other");
	assert_string_equal(a.host, "box");
	assert_int_equal(a.pid, 4242);
	assert_int_equal(a.pttl, LEASE_MS);
	assert_int_equal(fake_runs(s, &rl_script_acquire, "x"), 1);
	assert_string_equal(FAKE_ARG(fake_nth_run(s, &rl_script_acquire, 0),
	    RL_ACQUIRE_ARG_FLAGS), "");
	assert_int_equal(fake_sent(s, "SUBSCRIBE"), 0);
	assert_int_equal(fake_lock(s, "x")->nroom, 0);
	rl_client_free(c);
}

static int
stop_at_second(void *arg, const struct rl_attempt *a)
{
	int *calls = arg;

	assert_false(a->acquired);
	return ++*calls == 2;
}

/* The caller's callback ends the wait (a non-zero return): busy, out of
 * the room, at once. */
static void
test_callback_ends_the_wait(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct rl_attempt a;
	rl_client *c = client(1, 2000);
	int64_t t0, took;
	int calls = 0;

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	wait_cb = stop_at_second;
	wait_arg = &calls;
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 5000, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_false(a.acquired);
	assert_int_equal(calls, 2);
	assert_true(took < 2000);
	assert_int_equal(fake_runs(s, &rl_script_room_leave, NULL), 1);
	assert_int_equal(fake_lock(s, "x")->nroom, 0);
	rl_client_free(c);
}

static int intr_pipe[2];

/* A signal comes (the self-pipe is written) right after the second
 * attempt. */
static int
interrupt_at_second(struct fake_srv *s, struct fake_conn *fc,
    struct fake_cmd *cmd)
{
	fake_answer(s, fc, cmd);
	if (cmd->ran && cmd->script == &rl_script_acquire &&
	    fake_runs(s, &rl_script_acquire, "x") == 2)
		assert_int_equal(write(intr_pipe[1], "x", 1), 1);
	return 1;
}

/* The interrupt descriptor ends a wait: RL_EINTR, and the way out (the
 * room left) within RL_INTR_MS, whatever -w and the lease say. */
static void
test_interrupt_ends_the_wait(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct rl_attempt a;
	rl_client *c = client(1, 2000);
	int64_t t0, took;

	(void)state;
	assert_int_equal(pipe(intr_pipe), 0);
	rl_set_interrupt_fd(c, intr_pipe[0]);
	fake_hold(s, "x", "other", LEASE_MS);
	s->hook = interrupt_at_second;
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 5000, &a), RL_EINTR);
	took = rl_now_ms() - t0;
	assert_false(a.acquired);
	assert_true(took < 1000);
	assert_int_equal(fake_runs(s, &rl_script_acquire, "x"), 2);
	assert_int_equal(fake_runs(s, &rl_script_room_leave, NULL), 1);
	assert_int_equal(fake_lock(s, "x")->nroom, 0);
	rl_client_free(c);
	close(intr_pipe[0]);
	close(intr_pipe[1]);
}

/* A fair waiter: it joins the queue ("j", mode "fair"), alone there it
 * is the head (ahead 0), subscribed to its own channel and the name's;
 * the release wakes the head on its own channel (and the name's): the
 * third attempt takes "x", the waiter out of the queue, and nothing left
 * to leave. Its heartbeat (20 s) and the lease (a minute) are far. */
static void
test_fair_waiter_woken_at_the_head(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct rl_attempt a;
	rl_client *c = client(1, 2000);
	int64_t t0, took;

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	s->hook = release_after_second;
	t0 = rl_now_ms();
	assert_int_equal(acquire_fair(c, "x", "me", 5000, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_true(a.acquired);
	assert_true(took < 2000);
	assert_int_equal(fake_runs(s, &rl_script_acquire, "x"), 3);
	assert_string_equal(FAKE_ARG(fake_nth_run(s, &rl_script_acquire, 0),
	    RL_ACQUIRE_ARG_MODE), "fair");
	assert_string_equal(FAKE_ARG(fake_nth_run(s, &rl_script_acquire, 0),
	    RL_ACQUIRE_ARG_FLAGS), "j");
	/* Queued before, as every heartbeat is. */
	assert_string_equal(FAKE_ARG(fake_nth_run(s, &rl_script_acquire, 2),
	    RL_ACQUIRE_ARG_FLAGS), "jwr");
	/* The head listens to the name's channel as well. */
	assert_int_equal(fake_sent(s, "SUBSCRIBE"), 3);
	assert_int_equal(s->pushes, 2);
	assert_int_equal(fake_lock(s, "x")->nqueue, 0);
	assert_int_equal(fake_lock(s, "x")->nroom, 0);
	assert_int_equal(fake_runs(s, &rl_script_leave, NULL), 0);
	rl_client_free(c);
}

/* A fair waiter second in the queue, whose wait runs out: it never
 * listened to the name's channel (only the head does), and it leaves
 * the queue on its way out, saying where it was (A->ahead). */
static void
test_fair_waiter_leaves_the_queue(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct fake_lock *l;
	struct rl_attempt a;
	rl_client *c = client(1, 2000);

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	l = fake_lock(s, "x");
	snprintf(l->queue[l->nqueue++], sizeof(l->queue[0]), "first");
	assert_int_equal(acquire_fair(c, "x", "me", 300, &a), RL_OK);
	assert_false(a.acquired);
	assert_int_equal(a.ahead, 1);
	assert_int_equal(fake_sent(s, "SUBSCRIBE"), 1);
	assert_int_equal(fake_runs(s, &rl_script_leave, "x"), 1);
	assert_int_equal(l->nqueue, 1);
	assert_string_equal(l->queue[0], "first");
	rl_client_free(c);
}

/* ---- a lost connection ---- */

/* The hook of a server that goes down at the waiter's second attempt
 * (once): it hangs up on every connection without answering, and
 * refuses new ones. */
static int
down_at_second(struct fake_srv *s, struct fake_conn *fc,
    struct fake_cmd *cmd)
{
	(void)fc;
	if (cmd->script == &rl_script_acquire && fake_knows(s,
	    rl_script_acquire.sha) && s->arg == NULL) {
		s->arg = s;
		fake_drop(s);
		s->refuse = 1;
		return 1;
	}
	return 0;
}

struct outage {
	struct fake_srv *s;
	int lost;		/* callbacks that saw the server out of reach */
	char why[RL_WHY_MAX];	/* what the first said */
	int back;		/* bring it back at the third, "x" freed
				 * meanwhile */
};

/* The waiter's callback: when it has been told three times that the
 * server is out of reach, the server comes back (its holder gave "x"
 * back while it was down: nobody was subscribed to hear it). */
static int
see_outage(void *arg, const struct rl_attempt *a)
{
	struct outage *o = arg;

	if (a->lost == NULL)
		return 0;
	if (o->lost++ == 0)
		snprintf(o->why, sizeof(o->why), "%s", a->lost);
	if (o->back && o->lost == 3) {
		o->s->refuse = 0;
		fake_lock(o->s, "x")->owner[0] = '\0';
	}
	return 0;
}

/* A lost connection mid-wait is not the end of it: the waiter says the
 * server is out of reach (A->lost, as the callback sees it), connects
 * again with backoff, subscribes again, and the attempt that follows the
 * subscription regained finds "x" freed while it was away (its release
 * unheard): acquired, with nothing lost any more. */
static void
test_lost_connection_mid_wait_reconnects(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct outage o = { .s = s, .back = 1 };
	struct rl_attempt a;
	rl_client *c = client(1, 2000);
	int64_t t0, took;
	int opens;

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	s->hook = down_at_second;
	wait_cb = see_outage;
	wait_arg = &o;
	opens = s->opens;
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 5000, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_true(a.acquired);
	assert_null(a.lost);
	assert_true(took < 3000);
	assert_true(o.lost >= 3);
	assert_non_null(strstr(o.why, "redis://127.0.0.1:7101"));
	/* Both connections made again: commands and the subscription. */
	assert_true(s->opens >= opens + 2);
	assert_int_equal(fake_sent(s, "SUBSCRIBE"), 6);
	/* Busy; cut off (it did not run); taken. */
	assert_int_equal(fake_runs(s, &rl_script_acquire, "x"), 2);
	assert_int_equal(fake_sent(s, "EVALSHA") + fake_sent(s, "EVAL"), 4);
	assert_string_equal(fake_lock(s, "x")->owner, "me");
	rl_client_free(c);
}

/* A server that stays down: the wait goes on reconnecting with backoff
 * (a few tries, not a spin) until -w, and ends not acquired, A->lost
 * saying why, the connection refused. */
static void
test_lost_connection_until_the_wait_runs_out(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct outage o = { .s = s };
	struct rl_attempt a;
	rl_client *c = client(1, 2000);
	int64_t t0, took;

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	s->hook = down_at_second;
	wait_cb = see_outage;
	wait_arg = &o;
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 1500, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_false(a.acquired);
	assert_non_null(a.lost);
	assert_non_null(strstr(a.lost, "Connection refused"));
	assert_true(took >= 1490 && took < 1500 + 5 * RL_LATE_MS);
	assert_true(o.lost >= 3);
	/* The callback is ticked while the wait reconnects, with backoff:
	 * 50 ms doubling to 1 s, half again at random. */
	assert_true(o.lost < 40);
	assert_int_equal(fake_runs(s, &rl_script_acquire, "x"), 1);
	rl_client_free(c);
}

/* ---- MOVED back and forth ---- */

/* Two cluster nodes each saying the other serves the slot of "x"'s
 * channels, for BOUNCES subscriptions of the second's (-1: for ever);
 * then the second takes it. */
struct pingpong {
	int bounces;
	int moved[2];		/* subscriptions each sent away */
	int took;		/* subscriptions the second confirmed */
};

static struct pingpong pp;

static int
ssubscribe_moved(struct fake_srv *s, struct fake_conn *fc,
    struct fake_cmd *cmd)
{
	int second = s == &fake_srvs[1];

	if (strcmp(cmd->argv[0], "SSUBSCRIBE") != 0)
		return 0;
	/* One answer for each connection's subscriptions. */
	if (fc->mark == 0) {
		fc->mark = !second || pp.bounces < 0 ||
		    pp.moved[1] < pp.bounces ? 1 : 2;
		if (fc->mark == 1)
			pp.moved[second]++;
		else
			pp.took++;
	}
	if (fc->mark == 2)
		return 0;
	fake_sayf(fc, "-MOVED 1234 127.0.0.1:%d\r\n", second ? 7101 : 7102);
	return 1;
}

/* On the second node: "x" is given back after the first attempt there. */
static int
first_of_moved_node(struct fake_srv *s, struct fake_conn *fc,
    struct fake_cmd *cmd)
{
	fake_answer(s, fc, cmd);
	if (cmd->ran && cmd->script == &rl_script_acquire &&
	    fake_runs(s, &rl_script_acquire, "x") == 1)
		fake_release_by(s, "x", "other");
	return 1;
}

static int
second_node(struct fake_srv *s, struct fake_conn *fc, struct fake_cmd *cmd)
{
	if (ssubscribe_moved(s, fc, cmd))
		return 1;
	return first_of_moved_node(s, fc, cmd);
}

/* MOVED back and forth while a slot changes owner: the subscription on
 * the first node is sent to the second, which sends it back three times
 * (a ping-pong: followed again RL_TRYAGAIN_MS later each time, not at
 * once, and not given up on within --reply-timeout), then takes it. The
 * master's address is the second node's from then on: the attempt that
 * follows the subscription goes there, and the release pushed there
 * (SPUBLISH, sharded) wakes the waiter. */
static void
test_moved_back_and_forth_then_settled(void **state)
{
	struct fake_srv *a0 = &fake_srvs[0], *b = &fake_srvs[1];
	struct rl_attempt a;
	rl_client *c;
	int64_t t0, took;

	(void)state;
	memset(&pp, 0, sizeof(pp));
	pp.bounces = 3;
	a0->cluster = b->cluster = 1;
	fake_hold(a0, "x", "other", LEASE_MS);
	fake_hold(b, "x", "other", LEASE_MS);
	a0->hook = ssubscribe_moved;
	b->hook = second_node;
	c = client(1, 2000);
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 5000, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_true(a.acquired);
	assert_int_equal(master_port(c, 0), 7102);
	/* A to B, B back to A three times, A on to B each time, and B
	 * confirms the fourth. */
	assert_int_equal(pp.moved[0], 4);
	assert_int_equal(pp.moved[1], 3);
	assert_int_equal(pp.took, 1);
	assert_int_equal(fake_sent(a0, "SUBSCRIBE"), 0);
	/* The ping-pong's six subscriptions after the first are paced. */
	assert_true(took >= 6 * RL_TRYAGAIN_MS - 10);
	assert_true(took < 2000);
	/* Busy on the first node, then busy and taken on the second. */
	assert_int_equal(fake_runs(a0, &rl_script_acquire, "x"), 1);
	assert_int_equal(fake_runs(b, &rl_script_acquire, "x"), 2);
	assert_int_equal(b->pushes, 2);
	assert_string_equal(fake_lock(b, "x")->owner, "me");
	rl_client_free(c);
}

struct moves_seen {
	int pingpong;		/* callbacks told of the ping-pong */
	char why[RL_WHY_MAX];
};

static int
see_pingpong(void *arg, const struct rl_attempt *a)
{
	struct moves_seen *m = arg;

	if (a->lost != NULL && strstr(a->lost, "kept sending") != NULL &&
	    m->pingpong++ == 0)
		snprintf(m->why, sizeof(m->why), "%s", a->lost);
	return 0;
}

/* A ping-pong that never ends: followed for --reply-timeout (400 ms),
 * then the subscription fails naming both nodes, and is made again after
 * a backoff; the wait ends at -w, not acquired. The subscriptions are
 * paced (RL_TRYAGAIN_MS apart), not a spin. */
static void
test_moved_back_and_forth_for_ever(void **state)
{
	struct fake_srv *a0 = &fake_srvs[0], *b = &fake_srvs[1];
	struct moves_seen m = { 0 };
	struct rl_attempt a;
	rl_client *c;
	int64_t t0, took;

	(void)state;
	memset(&pp, 0, sizeof(pp));
	pp.bounces = -1;
	a0->cluster = b->cluster = 1;
	fake_hold(a0, "x", "other", LEASE_MS);
	fake_hold(b, "x", "other", LEASE_MS);
	a0->hook = b->hook = ssubscribe_moved;
	wait_cb = see_pingpong;
	wait_arg = &m;
	c = client(1, 400);
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 1500, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_false(a.acquired);
	assert_true(took >= 1490 && took < 1500 + 5 * RL_LATE_MS);
	assert_true(m.pingpong >= 1);
	assert_non_null(strstr(m.why, "redis://127.0.0.1:7101 and "
	    "redis://127.0.0.1:7102 kept sending SSUBSCRIBE"));
	assert_true(pp.moved[0] + pp.moved[1] >= 8);
	/* Each move but the first of a ping-pong waits RL_TRYAGAIN_MS, and
	 * a ping-pong lasts 400 ms. */
	assert_true(pp.moved[0] + pp.moved[1] <= 1500 / RL_TRYAGAIN_MS +
	    1500 / 400 + 2);
	assert_int_equal(pp.took, 0);
	rl_client_free(c);
}

/* The first node answers the waiter's second attempt with MOVED: the
 * slot of "x" is the second node's now. */
static int
attempt_moved(struct fake_srv *s, struct fake_conn *fc, struct fake_cmd *cmd)
{
	if (cmd->script != &rl_script_acquire || !fake_knows(s,
	    rl_script_acquire.sha) || fake_runs(s, &rl_script_acquire,
	    "x") == 0)
		return 0;
	fake_sayf(fc, "-MOVED 1234 127.0.0.1:7102\r\n");
	return 1;
}

/* An attempt answered MOVED while waiting: the attempt is made again on
 * the node named, the subscription follows it there (made again on the
 * second node), and a release pushed there wakes the waiter. */
static void
test_attempt_moved_takes_the_subscription_along(void **state)
{
	struct fake_srv *a0 = &fake_srvs[0], *b = &fake_srvs[1];
	struct rl_attempt a;
	rl_client *c;
	int64_t t0, took;

	(void)state;
	a0->cluster = b->cluster = 1;
	fake_hold(a0, "x", "other", LEASE_MS);
	fake_hold(b, "x", "other", LEASE_MS);
	a0->hook = attempt_moved;
	b->hook = release_after_second;
	c = client(1, 2000);
	t0 = rl_now_ms();
	assert_int_equal(acquire(c, "x", "me", 5000, &a), RL_OK);
	took = rl_now_ms() - t0;
	assert_true(a.acquired);
	assert_true(took < 2000);
	assert_int_equal(master_port(c, 0), 7102);
	/* One attempt ran on the first node, one was sent away; three on
	 * the second: busy, busy at its subscription, taken. */
	assert_int_equal(fake_runs(a0, &rl_script_acquire, "x"), 1);
	assert_int_equal(fake_sent(a0, "EVALSHA") + fake_sent(a0, "EVAL"), 3);
	assert_int_equal(fake_sent(a0, "SSUBSCRIBE"), 3);
	assert_int_equal(fake_runs(b, &rl_script_acquire, "x"), 3);
	assert_int_equal(fake_sent(b, "SSUBSCRIBE"), 3);
	assert_int_equal(b->pushes, 2);
	assert_string_equal(fake_lock(b, "x")->owner, "me");
	rl_client_free(c);
}

/* ---- a pool ---- */

static int
release_b_after_second(struct fake_srv *s, struct fake_conn *fc,
    struct fake_cmd *cmd)
{
	fake_answer(s, fc, cmd);
	if (cmd->ran && cmd->script == &rl_script_acquire &&
	    fake_runs(s, &rl_script_acquire, "b") == 2)
		fake_release_by(s, "b", "other");
	return 1;
}

/* rl_acquire_any of "a" and "b", both held: both wait at once, in one
 * poll; the release of "b" wakes its wait only, which takes it (*WHICH
 * 1), and the wait on "a" leaves its room on the way out, not woken,
 * not tried again. */
static void
test_pool_takes_the_name_released(void **state)
{
	static const char *const names[] = { "a", "b" };
	struct fake_srv *s = &fake_srvs[0];
	struct rl_attempt a[2];
	rl_client *c[2] = { client(1, 2000), client(1, 2000) };
	size_t which = 9;
	int64_t t0, took;

	(void)state;
	fake_hold(s, "a", "other", LEASE_MS);
	fake_hold(s, "b", "other", LEASE_MS);
	s->hook = release_b_after_second;
	t0 = rl_now_ms();
	assert_int_equal(acquire_any(c, names, 2, "me", 5000, a, &which),
	    RL_OK);
	took = rl_now_ms() - t0;
	assert_int_equal(which, 1);
	assert_true(a[1].acquired);
	assert_false(a[0].acquired);
	assert_true(took < 2000);
	assert_int_equal(fake_runs(s, &rl_script_acquire, "a"), 2);
	assert_int_equal(fake_runs(s, &rl_script_acquire, "b"), 3);
	assert_int_equal(fake_runs(s, &rl_script_room_leave,
	    "redlock_room:{a}"), 1);
	assert_int_equal(fake_runs(s, &rl_script_room_leave,
	    "redlock_room:{b}"), 0);
	assert_int_equal(fake_lock(s, "a")->nroom, 0);
	assert_string_equal(fake_lock(s, "b")->owner, "me");
	rl_client_free(c[0]);
	rl_client_free(c[1]);
}

/* ---- releases on several masters ---- */

/* Acquired on the three masters: a control, and the state the release
 * tests start from. */
static rl_client *
held_on_three(void)
{
	rl_client *c = client(3, 2000);
	struct rl_attempt a;
	size_t i;

	assert_int_equal(acquire(c, "x", "me", 0, &a), RL_OK);
	assert_true(a.acquired);
	assert_int_equal(a.nodes_ok, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(fake_lock(&fake_srvs[i], "x")->owner, "me");
	return c;
}

/* Three masters answer the release: released and confirmed. */
static void
test_release_confirmed_by_a_quorum(void **state)
{
	rl_client *c = held_on_three();
	enum rl_release r;
	struct rl_attempt a;
	size_t i;

	(void)state;
	assert_int_equal(release(c, "x", "me", &r, &a), RL_OK);
	assert_int_equal(r, RL_RELEASED);
	assert_int_equal(a.nodes_ok, 3);
	assert_true(a.confirmed);
	for (i = 0; i < 3; i++)
		assert_int_equal(fake_runs(&fake_srvs[i], &rl_script_release,
		    "x"), 1);
	rl_client_free(c);
}

/* A quorum lost at release: two of three masters went down after the
 * acquisition. The one left gives the hold back (released), but no
 * quorum confirms it: A->confirmed says so (the others' leases run out
 * on their own). */
static void
test_release_quorum_lost(void **state)
{
	rl_client *c = held_on_three();
	enum rl_release r;
	struct rl_attempt a;
	size_t i;

	(void)state;
	for (i = 1; i < 3; i++) {
		fake_drop(&fake_srvs[i]);
		fake_srvs[i].refuse = 1;
	}
	assert_int_equal(release(c, "x", "me", &r, &a), RL_OK);
	assert_int_equal(r, RL_RELEASED);
	assert_int_equal(a.nodes_ok, 1);
	assert_false(a.confirmed);
	assert_string_equal(fake_lock(&fake_srvs[0], "x")->owner, "");
	rl_client_free(c);
}

/* The same quorum lost another way: one master down, and on another the
 * lease ran out (the script finds no hold of the owner's): one released,
 * not confirmed. */
static void
test_release_quorum_lost_to_an_expired_lease(void **state)
{
	rl_client *c = held_on_three();
	enum rl_release r;
	struct rl_attempt a;

	(void)state;
	fake_lock(&fake_srvs[1], "x")->owner[0] = '\0';
	fake_drop(&fake_srvs[2]);
	fake_srvs[2].refuse = 1;
	assert_int_equal(release(c, "x", "me", &r, &a), RL_OK);
	assert_int_equal(r, RL_RELEASED);
	assert_int_equal(a.nodes_ok, 1);
	assert_false(a.confirmed);
	assert_int_equal(fake_runs(&fake_srvs[1], &rl_script_release, "x"), 1);
	rl_client_free(c);
}

/* No master answers the release: RL_ECONNECT, saying how many did. */
static void
test_release_no_master_answers(void **state)
{
	rl_client *c = held_on_three();
	enum rl_release r;
	struct rl_attempt a;
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		fake_drop(&fake_srvs[i]);
		fake_srvs[i].refuse = 1;
	}
	assert_int_equal(release(c, "x", "me", &r, &a), RL_ECONNECT);
	assert_int_equal(a.nodes_ok, 0);
	assert_false(a.confirmed);
	assert_non_null(strstr(rl_errstr(c), "no quorum to release: 0 of 3 "
	    "masters answered (need 2)"));
	rl_client_free(c);
}

/* ---- a server that hangs up at each attempt ---- */

/* A server that takes connections and subscriptions, and hangs up at
 * every attempt after the first. */
static int
down_at_each_attempt(struct fake_srv *s, struct fake_conn *fc,
    struct fake_cmd *cmd)
{
	(void)fc;
	if (cmd->script != &rl_script_acquire ||
	    strcmp(cmd->argv[0], "EVALSHA") != 0 ||
	    !fake_knows(s, rl_script_acquire.sha))
		return 0;
	fake_drop(s);
	return 1;
}

/* redlock.h says attempts and subscriptions that fail with RL_ECONNECT
 * are retried with backoff. Against a server that hangs up at each
 * attempt but takes the subscription again, the lost subscription was
 * made again at once each time (as a first loss), the subscription
 * regained was followed by an attempt at once, which hung up again, and
 * so on: some 10,000 commands and 3,000 connections in a 1 s wait. Only
 * the first loss since an attempt was answered is retried at once. */
static void
test_flapping_server_is_retried_with_backoff(void **state)
{
	struct fake_srv *s = &fake_srvs[0];
	struct rl_attempt a;
	rl_client *c = client(1, 2000);

	(void)state;
	fake_hold(s, "x", "other", LEASE_MS);
	s->hook = down_at_each_attempt;
	/* 4 commands (HELLO, SUBSCRIBE three times) a subscription, 2 an
	 * attempt (HELLO, EVALSHA): six of each and some to spare. */
	assert_int_equal(acquire(c, "x", "me", 1000, &a), RL_OK);
	assert_false(a.acquired);
	rl_client_free(c);
	print_message("%zu commands, %d connections in a 1 s wait\n",
	    s->ncmds, s->opens);
	assert_true(s->ncmds <= 100);
	assert_true(s->opens <= 40);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_busy_then_pushed_wakeup),
		T(test_busy_until_the_wait_runs_out),
		T(test_busy_without_waiting),
		T(test_callback_ends_the_wait),
		T(test_interrupt_ends_the_wait),
		T(test_fair_waiter_woken_at_the_head),
		T(test_fair_waiter_leaves_the_queue),
		T(test_lost_connection_mid_wait_reconnects),
		T(test_lost_connection_until_the_wait_runs_out),
		T(test_moved_back_and_forth_then_settled),
		T(test_moved_back_and_forth_for_ever),
		T(test_attempt_moved_takes_the_subscription_along),
		T(test_pool_takes_the_name_released),
		T(test_release_confirmed_by_a_quorum),
		T(test_release_quorum_lost),
		T(test_release_quorum_lost_to_an_expired_lease),
		T(test_release_no_master_answers),
		T(test_flapping_server_is_retried_with_backoff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
