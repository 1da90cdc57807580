/* test_bound.c: an acquisition's rounds against a server that accepts the
 * connection and never answers (a fake transport, the far end of a
 * socketpair that nobody reads): cut short at the call's end and at the
 * interrupt, and the way out's bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "rl_client.h"
#include "rl_scripts.h"

/* The server's end of the last connection: never read, never answered. */
static int mute_fd = -1;

static int
mute_open(struct rl_conn *c)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) < 0) {
		rl_error_io(c->url, "cannot connect to", "socketpair",
		    c->why, sizeof(c->why));
		return -1;
	}
	if (mute_fd >= 0)
		close(mute_fd);
	mute_fd = sv[1];
	c->fd = sv[0];
	return 0;
}

static int
mute_finish(struct rl_conn *c)
{
	(void)c;
	return 0;
}

static ssize_t
mute_read(struct rl_conn *c, void *buf, size_t len)
{
	return read(c->fd, buf, len);
}

static ssize_t
mute_write(struct rl_conn *c, const void *buf, size_t len)
{
	return send(c->fd, buf, len, MSG_NOSIGNAL);
}

static void
mute_close(struct rl_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static const struct rl_transport mute = {
	mute_open, mute_finish, mute_read, mute_write, mute_close, NULL
};

/* A client of the mute server with a --reply-timeout of TIMEOUT_MS,
 * connected. */
static rl_client *
client(int64_t timeout_ms)
{
	struct rl_url u = { .host = (char *)"127.0.0.1", .port = 7001 };
	rl_client *c;

	rl_client_set_transport(&mute);
	c = rl_client_new(&u, 1000, timeout_ms);
	rl_client_set_transport(NULL);
	assert_non_null(c);
	assert_int_equal(rl_connect(c), RL_OK);
	assert_int_equal(c->nodes[0].conn.state, RL_CONN_READY);
	return c;
}

static void
done(rl_client *c)
{
	rl_client_free(c);
	if (mute_fd >= 0)
		close(mute_fd);
	mute_fd = -1;
}

/* One script call on C: how long it took, in ms. */
static int64_t
run_once(rl_client *c)
{
	int64_t t0 = rl_now_ms();

	assert_int_equal(rl_run(c, NULL, &(struct rl_call){ .s =
	    &rl_script_runid }), RL_OK);
	return rl_now_ms() - t0;
}

static void
test_cut_at_the_end_of_the_call(void **state)
{
	rl_client *c = client(10000);
	int64_t now = rl_now_ms(), took;

	(void)state;
	/* rl_acquire -w 100ms, with its end 100 ms later. */
	c->wait_since_ms = now;
	c->wait_until_ms = now + 100;
	c->end_ms = now + 200;
	took = run_once(c);
	assert_true(took >= 190);
	assert_true(took < 2000);
	assert_null(c->nodes[0].reply);
	assert_int_equal(c->nodes[0].err, RL_ECONNECT);
	assert_string_equal(c->nodes[0].why, "no answer from "
	    "redis://127.0.0.1:7001: none within -w 100ms");
	/* Given up on in line: the connection is kept, its reply owed. */
	assert_int_equal(c->nodes[0].conn.state, RL_CONN_READY);
	assert_true(c->nodes[0].conn.drop > 0);
	assert_true(rl_client_behind_late(c));
	/* Past the end: what is sent is written, and not waited for. */
	took = run_once(c);
	assert_true(took < 1000);
	assert_true(c->nodes[0].conn.drop >= 2);
	done(c);
}

static void
test_interrupt_cuts_a_round_of_a_wait(void **state)
{
	rl_client *c = client(10000);
	int64_t took, t;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	rl_set_interrupt_fd(c, p[0]);
	c->wait_since_ms = rl_now_ms();
	c->wait_until_ms = -1;	/* waiting for ever */
	took = run_once(c);
	t = rl_now_ms();
	assert_true(took < 2000);
	assert_int_equal(c->nodes[0].err, RL_ECONNECT);
	/* The interrupt is seen, the way out's bound set: rounds after it
	 * end within RL_INTR_MS, the interrupt still readable. */
	assert_int_equal(c->intr_seen, 1);
	assert_true(c->end_ms >= 0 && c->end_ms <= t + RL_INTR_MS);
	took = run_once(c);
	assert_true(took <= RL_INTR_MS + 100);
	close(p[0]);
	close(p[1]);
	done(c);
}

static void
test_interrupt_is_not_watched_outside_a_wait(void **state)
{
	rl_client *c = client(150);
	int64_t took;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	rl_set_interrupt_fd(c, p[0]);
	/* Not in rl_acquire: a release after a signal runs to its
	 * timeout. */
	took = run_once(c);
	assert_true(took >= 140);
	assert_int_equal(c->intr_seen, 0);
	assert_int_equal(c->end_ms, -1);
	assert_string_equal(c->nodes[0].why, "no answer from "
	    "redis://127.0.0.1:7001: timed out (see --reply-timeout)");
	close(p[0]);
	close(p[1]);
	done(c);
}

static void
test_way_out_bound(void **state)
{
	rl_client *c = client(10000);
	int64_t now = rl_now_ms();

	(void)state;
	/* No -w: nothing to bound. */
	rl_client_way_out(c);
	assert_int_equal(c->end_ms, -1);
	/* -w ran out: the way out gets RL_LATE_MS from now. */
	c->end_ms = now - 5;
	rl_client_way_out(c);
	assert_true(c->end_ms >= now + RL_LATE_MS);
	/* A later end is kept. */
	c->end_ms = now + 10 * RL_LATE_MS;
	rl_client_way_out(c);
	assert_int_equal(c->end_ms, now + 10 * RL_LATE_MS);
	/* After a signal: what is left of RL_INTR_MS, no more. */
	c->end_ms = -1;
	rl_client_interrupted(c);
	now = c->end_ms;
	rl_client_way_out(c);
	assert_int_equal(c->end_ms, now);
	c->intr_seen = 0;
	/* Behind a reply given up on, an answer would come no sooner. */
	c->end_ms = rl_now_ms() - 5;
	c->wait_since_ms = rl_now_ms();
	c->wait_until_ms = c->wait_since_ms;
	now = c->end_ms;
	(void)run_once(c);
	assert_true(rl_client_behind_late(c));
	rl_client_way_out(c);
	assert_int_equal(c->end_ms, now);
	done(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_at_the_end_of_the_call),
		cmocka_unit_test(test_interrupt_cuts_a_round_of_a_wait),
		cmocka_unit_test(test_interrupt_is_not_watched_outside_a_wait),
		cmocka_unit_test(test_way_out_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
