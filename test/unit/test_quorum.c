/* test_quorum.c: lease and quorum arithmetic, the script reply decoders
 * and how N masters' replies add up; no I/O. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_kind.h"
#include "rl_quorum.h"
#include "rl_round.h"
#include "rl_sentinel.h"

/* The votes of N masters as rl_combine_acquire takes them (V, PER), and
 * as rl_combine_release and rl_combine_force do (V, HOLDS, NOPUB): one
 * at a time, each until the next. */
static const struct rl_votes *
votes(size_t n, const enum rl_verdict *v, const struct rl_attempt *per)
{
	static struct rl_votes vs;

	vs = (struct rl_votes){ .n = n, .v = v, .per = per };
	return &vs;
}

static const struct rl_votes *
rvotes(size_t n, const enum rl_verdict *v, const int64_t *holds,
    const char *const *nopub)
{
	static struct rl_votes vs;

	vs = (struct rl_votes){ .n = n, .v = v, .holds = holds,
	    .nopub = nopub };
	return &vs;
}

/* ---- replies, as hiredis reads them ---- */

/* Replies made by a test, freed in teardown. */
static redisReply *made[64];
static size_t nmade;

/* A reply from SPEC, RESP in short: tokens split by '|', "*N" an array
 * of the N that follow, ":N" an integer, "$text" a bulk string, "+text"
 * a status, "-text" an error, "nil" a nil. */
static redisReply *
R(const char *spec)
{
	char resp[4096], tok[512];
	const char *p = spec, *bar;
	size_t len = 0, n;
	redisReader *rd = redisReaderCreate();
	void *rep = NULL;

	assert_non_null(rd);
	while (*p != '\0') {
		bar = strchr(p, '|');
		n = bar != NULL ? (size_t)(bar - p) : strlen(p);
		assert_true(n > 0 && n < sizeof(tok));
		memcpy(tok, p, n);
		tok[n] = '\0';
		if (strcmp(tok, "nil") == 0)
			len += (size_t)snprintf(resp + len, sizeof(resp) - len,
			    "$-1\r\n");
		else if (tok[0] == '$')
			len += (size_t)snprintf(resp + len, sizeof(resp) - len,
			    "$%zu\r\n%s\r\n", n - 1, tok + 1);
		else {
			assert_non_null(strchr("*:+-", tok[0]));
			len += (size_t)snprintf(resp + len, sizeof(resp) - len,
			    "%s\r\n", tok);
		}
		assert_true(len < sizeof(resp));
		p += n + (bar != NULL);
	}
	assert_int_equal(redisReaderFeed(rd, resp, len), REDIS_OK);
	assert_int_equal(redisReaderGetReply(rd, &rep), REDIS_OK);
	assert_non_null(rep);
	assert_int_equal(rd->pos, rd->len);	/* all of SPEC, no more */
	redisReaderFree(rd);
	assert_true(nmade < sizeof(made) / sizeof(made[0]));
	made[nmade++] = rep;
	return rep;
}

static int
setup(void **state)
{
	(void)state;
	nmade = 0;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	while (nmade > 0)
		freeReplyObject(made[--nmade]);
	return 0;
}

/* ---- arithmetic ---- */

static void
test_lease_arithmetic(void **state)
{
	(void)state;
	assert_int_equal(rl_renew_period_ms(30000), 10000);
	assert_int_equal(rl_renew_period_ms(1000), 333);
	assert_int_equal(rl_renew_period_ms(2), 1);
	assert_int_equal(rl_drift_ms(30000), 302);
	assert_int_equal(rl_drift_ms(1000), 12);
	assert_int_equal(rl_drift_ms(10), 2);
	/* Trusted until send + ttl - drift. */
	assert_int_equal(rl_lease_deadline_ms(5000, 30000), 5000 + 30000 - 302);
	assert_int_equal(rl_lease_deadline_ms(0, 2000), 2000 - 22);
}

static void
test_quorum_and_validity(void **state)
{
	(void)state;
	assert_int_equal(rl_quorum(1), 1);
	assert_int_equal(rl_quorum(2), 2);
	assert_int_equal(rl_quorum(3), 2);
	assert_int_equal(rl_quorum(4), 3);
	assert_int_equal(rl_quorum(5), 3);
	assert_int_equal(rl_quorum(16), 9);
	assert_int_equal(rl_quorum_spare(1), 0);
	assert_int_equal(rl_quorum_spare(2), 0);
	assert_int_equal(rl_quorum_spare(3), 1);
	assert_int_equal(rl_quorum_spare(4), 1);
	assert_int_equal(rl_quorum_spare(5), 2);
	assert_false(rl_quorum_check_distinct(1));
	assert_true(rl_quorum_check_distinct(2));
	assert_true(rl_quorum_check_distinct(5));
	/* validity = ttl - elapsed - (ttl/100 + 2) */
	assert_int_equal(rl_validity_ms(30000, 40), 30000 - 40 - 302);
	assert_int_equal(rl_validity_ms(300, 295), 0);	/* drift 5 */
	assert_true(rl_validity_ms(300, 296) < 0);
	assert_true(rl_validity_ms(100, 0) > 0);
}

/* The node timeout: ttl/100 within 5..50 ms. */
static void
test_node_timeout_clamps(void **state)
{
	(void)state;
	assert_int_equal(rl_node_timeout_for(30000), 50);
	assert_int_equal(rl_node_timeout_for(5000), 50);
	assert_int_equal(rl_node_timeout_for(4999), 49);
	assert_int_equal(rl_node_timeout_for(2000), 20);
	assert_int_equal(rl_node_timeout_for(599), 5);
	assert_int_equal(rl_node_timeout_for(100), 5);
	assert_int_equal(rl_node_timeout_for(10), 5);
	assert_int_equal(rl_node_timeout_for(0), 5);
	assert_int_equal(rl_node_timeout_for(RL_DURATION_MAX), 50);
}

/* One master may take the whole --reply-timeout; several the node timeout. */
static void
test_reply_timeout(void **state)
{
	(void)state;
	/* Connecting too, once a quorum is connected: one master has no
	 * others to be late against. */
	assert_int_equal(rl_straggle_ms(1, 50), 0);
	assert_int_equal(rl_straggle_ms(5, 30), 30);
	assert_int_equal(rl_reply_timeout_ms(1, 50, 5000), 5000);
	assert_int_equal(rl_reply_timeout_ms(2, 50, 5000), 50);
	assert_int_equal(rl_reply_timeout_ms(3, 20, 5000), 20);
	assert_int_equal(rl_reply_timeout_ms(16, 5, 100), 5);
}

/* ---- decoders ---- */

static void
test_elem_int_and_str(void **state)
{
	const redisReply *r;

	(void)state;
	r = R("*9|:42|$9007199254740993|$9223372036854775807|"
	    "$9223372036854775808|$12x|nil|+OK|$-5|*1|:1");
	assert_int_equal(rl_elem_int(r, 0, -7), 42);
	/* Fences past 2^53 come as decimal strings, read exactly. */
	assert_true(rl_elem_int(r, 1, -7) == 9007199254740993LL);
	assert_true(rl_elem_int(r, 2, -7) == INT64_MAX);
	/* Out of range, junk, nil, a status, a sign: the default. */
	assert_int_equal(rl_elem_int(r, 3, -7), -7);
	assert_int_equal(rl_elem_int(r, 4, -7), -7);
	assert_int_equal(rl_elem_int(r, 5, -7), -7);
	assert_int_equal(rl_elem_int(r, 6, -7), -7);
	assert_int_equal(rl_elem_int(r, 7, -7), -7);
	assert_int_equal(rl_elem_int(r, 8, -7), -7);	/* an array */
	assert_int_equal(rl_elem_int(r, 9, -7), -7);	/* past the end */
	assert_string_equal(rl_elem_str(r, 1), "9007199254740993");
	assert_null(rl_elem_str(r, 0));		/* an integer */
	assert_null(rl_elem_str(r, 5));		/* nil */
	assert_string_equal(rl_elem_str(r, 6), "OK");
	assert_null(rl_elem_str(r, 8));
	assert_null(rl_elem_str(r, 9));
	/* Not an array at all. */
	r = R(":5");
	assert_int_equal(rl_elem_int(r, 0, -7), -7);
	assert_null(rl_elem_str(r, 0));
	assert_int_equal(rl_elem_int(NULL, 0, -7), -7);
	assert_null(rl_elem_str(NULL, 0));
}

static void
test_verdicts(void **state)
{
	(void)state;
	assert_int_equal(rl_verdict(NULL), RL_V_NONE);
	assert_int_equal(rl_verdict(R("*3|:-1|$x|$string")), RL_V_WRONGTYPE);
	assert_int_equal(rl_verdict(R("*2|:0|:1")), RL_V_NO);
	assert_int_equal(rl_verdict(R("*1|:1")), RL_V_YES);
	assert_int_equal(rl_verdict(R("*1|:2")), RL_V_RELEASED);
	/* Garbage. */
	assert_int_equal(rl_verdict(R(":1")), RL_V_BAD);
	assert_int_equal(rl_verdict(R("$1")), RL_V_BAD);
	assert_int_equal(rl_verdict(R("nil")), RL_V_BAD);
	assert_int_equal(rl_verdict(R("*0")), RL_V_BAD);
	assert_int_equal(rl_verdict(R("*1|$1")), RL_V_BAD);
	assert_int_equal(rl_verdict(R("*1|nil")), RL_V_BAD);
	assert_int_equal(rl_verdict(R("*1|:3")), RL_V_BAD);
	assert_int_equal(rl_verdict(R("*1|:-2")), RL_V_BAD);
	assert_int_equal(rl_verdict(R("*1|*1|:1")), RL_V_BAD);
}

static void
test_decode_acquire_granted(void **state)
{
	struct rl_attempt a;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*4|:1|$9007199254740993|:2|nil"),
	    &a), RL_V_YES);
	assert_true(a.fence == 9007199254740993LL);
	assert_int_equal(a.holds, 2);
	assert_null(a.nopub);
	/* A fourth element names a channel this user may not publish on. */
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*4|:1|$9223372036854775807|:1|"
	    "$redisson_lock__channel:{x}"), &a), RL_V_YES);
	assert_true(a.fence == INT64_MAX);
	assert_string_equal(a.nopub, "redisson_lock__channel:{x}");
	/* A fence that is not a number reads as 0; no holds as one. */
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*2|:1|$12x"), &a), RL_V_YES);
	assert_int_equal(a.fence, 0);
	assert_int_equal(a.holds, 1);
	assert_null(a.nopub);
}

static void
test_decode_acquire_busy(void **state)
{
	struct rl_attempt a;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*13|:0|:2500|$other:7|$web1|"
	    ":4242|$root|$pg_dump|:72000|:3|:4|nil|:1|:2"), &a), RL_V_NO);
	assert_int_equal(a.pttl, 2500);
	assert_string_equal(a.owner, "other:7");
	assert_string_equal(a.host, "web1");
	assert_int_equal(a.pid, 4242);
	assert_string_equal(a.cmd, "pg_dump");
	assert_int_equal(a.held_ms, 72000);
	assert_int_equal(a.position, 3);
	assert_int_equal(a.queued, 4);
	assert_int_equal(a.head_wait_ms, -1);
	assert_int_equal(a.rejoined, 1);
	assert_int_equal(a.ahead, 2);
	assert_false(a.listen);
	/* A plain waiter that is the room's listener. */
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*14|:0|:2500|$other:7|$web1|"
	    ":4242|$root|$pg_dump|:72000|nil|nil|nil|nil|nil|:1"), &a), RL_V_NO);
	assert_true(a.listen);
	assert_int_equal(a.pttl, 2500);
	assert_false(a.announced);
	/* An exclusive waiter of a name in read mode that announced itself. */
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*15|:0|:2500|$r:7|$web1|"
	    ":4242|$root|$pg_dump|:72000|nil|nil|nil|nil|nil|nil|:1"), &a),
	    RL_V_NO);
	assert_false(a.listen);
	assert_true(a.announced);
	/* A Redisson holder: no metadata, nil fields, no queue. */
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*8|:0|:900|$uuid:57|nil|nil|nil|"
	    "nil|nil"), &a), RL_V_NO);
	assert_int_equal(a.pttl, 900);
	assert_string_equal(a.owner, "uuid:57");
	assert_null(a.host);
	assert_int_equal(a.pid, 0);
	assert_null(a.cmd);
	assert_int_equal(a.held_ms, -1);
	assert_int_equal(a.position, 0);
	assert_int_equal(a.queued, 0);
	assert_int_equal(a.head_wait_ms, -1);
	assert_int_equal(a.rejoined, 0);
	assert_int_equal(a.ahead, -1);
	/* Free, but a fair queue is ahead: no lease, the head's wait. */
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*13|:0|nil|nil|nil|nil|nil|nil|"
	    "nil|:2|:2|:1500|:0|:1"), &a), RL_V_NO);
	assert_int_equal(a.pttl, -1);
	assert_null(a.owner);
	assert_int_equal(a.position, 2);
	assert_int_equal(a.head_wait_ms, 1500);
	assert_int_equal(a.rejoined, 0);
	assert_int_equal(a.ahead, 1);
}

static void
test_decode_acquire_wrongtype_and_garbage(void **state)
{
	struct rl_attempt a;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*3|:-1|$x|$string"), &a),
	    RL_V_WRONGTYPE);
	assert_string_equal(a.badkey, "x");
	assert_string_equal(a.badtype, "string");
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*1|:-1"), &a), RL_V_WRONGTYPE);
	assert_null(a.badkey);
	assert_null(a.badtype);
	assert_int_equal(rl_decode_acquire(NULL, &a), RL_V_NONE);
	/* An integer where an array is expected, and other strangers. */
	assert_int_equal(rl_decode_acquire(R(":1"), &a), RL_V_BAD);
	assert_int_equal(rl_decode_acquire(R(":3"), &a), RL_V_BAD);
	assert_int_equal(rl_decode_acquire(R("*1|:2"), &a), RL_V_BAD);
	assert_int_equal(rl_decode_acquire(R("*2|$1|:5"), &a), RL_V_BAD);
	assert_int_equal(rl_decode_acquire(R("nil"), &a), RL_V_BAD);
	assert_int_equal(rl_decode_acquire(R("+OK"), &a), RL_V_BAD);
}

static void
test_decode_release(void **state)
{
	const char *nopub = "unset";
	int64_t holds = -9;

	(void)state;
	assert_int_equal(rl_decode_release(R("*2|:2|nil"), &holds, &nopub),
	    RL_V_RELEASED);
	assert_int_equal(holds, 0);
	assert_null(nopub);
	assert_int_equal(rl_decode_release(R("*2|:2|$redisson_lock__channel:"
	    "{x}"), &holds, &nopub), RL_V_RELEASED);
	assert_string_equal(nopub, "redisson_lock__channel:{x}");
	assert_int_equal(rl_decode_release(R("*2|:1|:2"), &holds, &nopub),
	    RL_V_YES);
	assert_int_equal(holds, 2);
	assert_null(nopub);
	assert_int_equal(rl_decode_release(R("*2|:0|:1"), &holds, &nopub),
	    RL_V_NO);
	assert_int_equal(holds, 1);	/* someone else holds it */
	assert_int_equal(rl_decode_release(R("*2|:0|:0"), &holds, &nopub),
	    RL_V_NO);
	assert_int_equal(holds, 0);	/* free */
	assert_int_equal(rl_decode_release(R("*3|:-1|$x|$list"), &holds,
	    &nopub), RL_V_WRONGTYPE);
	assert_int_equal(rl_decode_release(NULL, &holds, &nopub), RL_V_NONE);
	assert_int_equal(rl_decode_release(R(":1"), &holds, &nopub),
	    RL_V_BAD);
	assert_int_equal(holds, 0);
	assert_null(nopub);
}

/* --min-hold: a finished hold's end in busy, release and status replies,
 * and across masters the one of the master whose holder is named. */
static void
test_decode_min_hold(void **state)
{
	enum rl_verdict v[2] = { RL_V_NO, RL_V_NO };
	struct rl_attempt a, per[2];
	struct rl_status st;
	struct rl_reader r;
	const char *nopub = "unset";
	int64_t holds;
	size_t who = 0;
	int undo;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_decode_acquire(R("*16|:0|:4000|$o:7|$web1|:42|"
	    "$root|$job|:1000|nil|nil|nil|nil|nil|nil|nil|:1700000005000"), &a),
	    RL_V_NO);
	assert_int_equal(a.held_until_ms, 1700000005000);
	assert_int_equal(a.pttl, 4000);
	memset(&a, 0, sizeof(a));	/* not finished: nil, or no element */
	assert_int_equal(rl_decode_acquire(R("*16|:0|:4000|$o:7|nil|nil|nil|"
	    "nil|nil|nil|nil|nil|nil|nil|nil|nil|nil"), &a), RL_V_NO);
	assert_int_equal(a.held_until_ms, 0);
	/* A release that left the hold, finished; one that gave it back. */
	assert_int_equal(rl_decode_release(R("*3|:2|nil|:1700000005000"),
	    &holds, &nopub), RL_V_RELEASED);
	assert_null(nopub);
	assert_int_equal(rl_decode_release_until(R("*3|:2|nil|:1700000005000")),
	    1700000005000);
	assert_int_equal(rl_decode_release_until(R("*2|:2|nil")), 0);
	assert_int_equal(rl_decode_release_until(R("*2|:1|:2")), 0);
	assert_int_equal(rl_decode_release_until(NULL), 0);
	/* status: the holder's, and a reader's. */
	assert_int_equal(rl_decode_status(R("*16|:1|:0|:4000|$o:1|:1|$web1|:42|"
	    "$root|$job|:1700000000000|:7|:1000|nil|*0|nil|:1700000005000"),
	    &st), RL_V_YES);
	assert_int_equal(st.held_until_ms, 1700000005000);
	assert_int_equal(rl_decode_status(R("*16|:1|:0|:29000|nil|:1|nil|nil|"
	    "nil|nil|nil|nil|nil|$read|*1|*10|$a:1|:1|:4000|$h|:42|$u|$c|"
	    ":1700000000000|:9|:1700000004000|nil|nil"), &st), RL_V_YES);
	assert_int_equal(st.held_until_ms, 0);
	assert_int_equal(rl_status_reader(&st, 0, &r), 0);
	assert_int_equal(r.held_until_ms, 1700000004000);
	/* Busy on two masters: the end that the master with the longest
	 * lease names. */
	memset(per, 0, sizeof(per));
	per[0].pttl = 3000;
	per[0].held_until_ms = 1700000003000;
	per[0].owner = "o:7";
	per[0].host = "web1";
	per[1].pttl = 3100;
	per[1].held_until_ms = 1700000003100;
	per[1].owner = "o:7";
	per[1].host = "web1";
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(2, v, per), 30000, 40,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_int_equal(a.held_until_ms, 1700000003100);
}

static void
test_decode_force(void **state)
{
	const char *nopub = "unset";

	(void)state;
	assert_int_equal(rl_decode_force(R("*2|:1|nil"), &nopub), RL_V_YES);
	assert_null(nopub);
	assert_int_equal(rl_decode_force(R("*2|:1|$redisson_lock__channel:"
	    "{x}"), &nopub), RL_V_YES);
	assert_string_equal(nopub, "redisson_lock__channel:{x}");
	assert_int_equal(rl_decode_force(R("*1|:0"), &nopub), RL_V_NO);
	assert_null(nopub);
	assert_int_equal(rl_decode_force(R("*3|:-1|$x|$zset"), &nopub),
	    RL_V_WRONGTYPE);
	assert_int_equal(rl_decode_force(NULL, &nopub), RL_V_NONE);
	/* 2 is release's; force never says it. */
	assert_int_equal(rl_decode_force(R("*1|:2"), &nopub), RL_V_BAD);
	assert_int_equal(rl_decode_force(R(":1"), &nopub), RL_V_BAD);
}

static void
test_decode_renew(void **state)
{
	(void)state;
	assert_int_equal(rl_decode_renew(R(":1")), RL_V_YES);
	assert_int_equal(rl_decode_renew(R(":0")), RL_V_NO);
	/* Not renewed: another owner holds the name. */
	assert_int_equal(rl_decode_renew(R(":2")), RL_V_NO);
	assert_int_equal(rl_decode_renew_taken(R(":2")), 1);
	assert_int_equal(rl_decode_renew_taken(R(":0")), 0);
	assert_int_equal(rl_decode_renew_taken(R(":1")), 0);
	assert_int_equal(rl_decode_renew_taken(NULL), 0);
	assert_int_equal(rl_decode_renew_taken(R("*1|:2")), 0);
	assert_int_equal(rl_decode_renew(NULL), RL_V_NONE);
	/* An array where an integer is expected. */
	assert_int_equal(rl_decode_renew(R("*1|:1")), RL_V_BAD);
	assert_int_equal(rl_decode_renew(R("$1")), RL_V_BAD);
	assert_int_equal(rl_decode_renew(R("nil")), RL_V_BAD);
}

static void
test_decode_status(void **state)
{
	struct rl_status st;

	(void)state;
	assert_int_equal(rl_decode_status(R("*12|:1|:3|:2500|$o:1|:2|$web1|"
	    ":4242|$root|$pg_dump|:1700000000000|$9007199254740993|:72000"),
	    &st), RL_V_YES);
	assert_true(st.held);
	assert_int_equal(st.waiting, 3);
	assert_int_equal(st.pttl, 2500);
	assert_string_equal(st.owner, "o:1");
	assert_int_equal(st.holds, 2);
	assert_string_equal(st.host, "web1");
	assert_int_equal(st.pid, 4242);
	assert_string_equal(st.user, "root");
	assert_string_equal(st.cmd, "pg_dump");
	assert_true(st.since_ms == 1700000000000LL);
	assert_true(st.fence == 9007199254740993LL);
	assert_int_equal(st.held_ms, 72000);
	/* A Redisson holder: nil fields read as unknown. */
	assert_int_equal(rl_decode_status(R("*12|:1|:0|:900|$uuid:57|:1|nil|"
	    "nil|nil|nil|nil|nil|nil"), &st), RL_V_YES);
	assert_true(st.held);
	assert_string_equal(st.owner, "uuid:57");
	assert_null(st.host);
	assert_int_equal(st.pid, 0);
	assert_null(st.user);
	assert_int_equal(st.since_ms, -1);
	assert_int_equal(st.fence, -1);
	assert_int_equal(st.held_ms, -1);
	/* Free. */
	assert_int_equal(rl_decode_status(R("*2|:0|:4"), &st), RL_V_NO);
	assert_false(st.held);
	assert_int_equal(st.waiting, 4);
	assert_int_equal(st.pttl, -1);
	assert_null(st.owner);
	assert_int_equal(st.fence, -1);
	assert_int_equal(rl_decode_status(R("*3|:-1|$redlock_holder:{x}|"
	    "$string"), &st), RL_V_WRONGTYPE);
	assert_false(st.held);
	assert_string_equal(st.badkey, "redlock_holder:{x}");
	assert_string_equal(st.badtype, "string");
	assert_int_equal(rl_decode_status(NULL, &st), RL_V_NONE);
	assert_int_equal(rl_decode_status(R(":1"), &st), RL_V_BAD);
	assert_false(st.held);
	assert_int_equal(rl_decode_status(R("*1|:2"), &st), RL_V_BAD);
	assert_false(st.held);
}

static void
test_decode_status_rwlock(void **state)
{
	struct rl_status st;
	struct rl_reader r;

	(void)state;
	/* Read mode: no writer, all read holds, readers by owner. */
	assert_int_equal(rl_decode_status(R("*14|:1|:0|:29000|nil|:3|nil|nil|"
	    "nil|nil|nil|nil|nil|$read|*2|*9|$a:1|:2|:28000|$h|:42|$u|$c|"
	    ":1700000000000|$9007199254740993|*3|$b:2|:1|nil"),
	    &st), RL_V_YES);
	assert_true(st.held);
	assert_int_equal(st.kind, RL_KIND_RWLOCK);
	assert_string_equal(st.mode, "read");
	assert_null(st.owner);
	assert_int_equal(st.holds, 3);
	assert_int_equal(st.pttl, 29000);
	assert_int_equal(st.readers, 2);
	assert_int_equal(rl_status_reader(&st, 0, &r), 0);
	assert_string_equal(r.owner, "a:1");
	assert_int_equal(r.holds, 2);
	assert_int_equal(r.pttl, 28000);
	assert_string_equal(r.host, "h");	/* a redlock reader's metadata */
	assert_int_equal(r.pid, 42);
	assert_string_equal(r.user, "u");
	assert_string_equal(r.cmd, "c");
	assert_int_equal(r.since_ms, 1700000000000);
	assert_int_equal(r.fence, 9007199254740993);
	assert_int_equal(rl_status_reader(&st, 1, &r), 0);
	assert_string_equal(r.owner, "b:2");
	assert_int_equal(r.pttl, -1);	/* no lease key left */
	assert_null(r.host);		/* a Redisson reader: none */
	assert_int_equal(r.pid, 0);
	assert_int_equal(r.since_ms, -1);
	assert_int_equal(r.fence, -1);
	assert_int_equal(rl_status_reader(&st, 2, &r), -1);
	assert_int_equal(rl_status_reader(&st, 9, &r), -1);
	/* Write mode: the writer is the owner; no readers. */
	assert_int_equal(rl_decode_status(R("*14|:1|:0|:900|$w:7|:2|nil|nil|"
	    "nil|nil|nil|nil|nil|$write|*0"), &st), RL_V_YES);
	assert_int_equal(st.kind, RL_KIND_RWLOCK);
	assert_string_equal(st.owner, "w:7");
	assert_int_equal(st.holds, 2);
	assert_int_equal(st.readers, 0);
	assert_int_equal(rl_status_reader(&st, 0, &r), -1);
	/* An exclusive lock: no mode, no readers to ask for. */
	assert_int_equal(rl_decode_status(R("*14|:1|:0|:900|$o:1|:1|nil|nil|"
	    "nil|nil|nil|nil|nil|nil|*0"), &st), RL_V_YES);
	assert_int_equal(st.kind, RL_KIND_LOCK);
	assert_null(st.mode);
	/* A mode it does not know, readers that are not arrays: no kind. */
	assert_int_equal(rl_decode_status(R("*14|:1|:0|:900|$o:1|:1|nil|nil|"
	    "nil|nil|nil|nil|nil|$other|:5"), &st), RL_V_YES);
	assert_int_equal(st.kind, RL_KIND_LOCK);
	assert_int_equal(rl_decode_status(R("*14|:1|:0|:900|nil|:1|nil|nil|"
	    "nil|nil|nil|nil|nil|$read|:5"), &st), RL_V_YES);
	assert_int_equal(st.kind, RL_KIND_RWLOCK);
	assert_int_equal(st.readers, 0);
	assert_int_equal(rl_decode_status(R("*14|:1|:0|:900|nil|:1|nil|nil|"
	    "nil|nil|nil|nil|nil|$read|*1|$a:1"), &st), RL_V_YES);
	assert_int_equal(st.readers, 1);
	assert_int_equal(rl_status_reader(&st, 0, &r), -1);
}

static void
test_decode_status_semaphores(void **state)
{
	struct rl_status st;
	struct rl_permit p;

	(void)state;
	assert_int_equal(rl_decode_status(R("*7|:-1|$s|$string|$semaphore|"
	    ":3|:0|*0"), &st), RL_V_WRONGTYPE);
	assert_false(st.held);
	assert_int_equal(st.kind, RL_KIND_SEMAPHORE);
	assert_string_equal(st.badkey, "s");
	assert_string_equal(st.badtype, "string");
	assert_int_equal(st.free, 3);
	assert_int_equal(rl_status_permit(&st, 0, &p), -1);
	assert_int_equal(rl_decode_status(R("*7|:-1|$p|$string|$expirable|"
	    ":-1|:5|*2|*3|$8c1e|:1700000060000|:-2500|*3|$0102|nil|nil"),
	    &st), RL_V_WRONGTYPE);
	assert_int_equal(st.kind, RL_KIND_EXPIRABLE);
	assert_int_equal(st.free, -1);
	assert_int_equal(st.taken, 5);
	assert_int_equal(st.permits, 2);
	assert_int_equal(rl_status_permit(&st, 0, &p), 0);
	assert_string_equal(p.id, "8c1e");
	assert_true(p.expires_ms == 1700000060000LL);
	assert_int_equal(p.left_ms, -2500);
	assert_int_equal(rl_status_permit(&st, 1, &p), 0);
	assert_string_equal(p.id, "0102");
	assert_int_equal(p.expires_ms, -1);
	assert_int_equal(rl_status_permit(&st, 2, &p), -1);
	/* Another kind, or none: only the key and its type. */
	assert_int_equal(rl_decode_status(R("*7|:-1|$s|$string|$latch|:3|:0|"
	    "*0"), &st), RL_V_WRONGTYPE);
	assert_int_equal(st.kind, RL_KIND_LOCK);
	assert_int_equal(rl_status_permit(&st, 0, &p), -1);
	assert_int_equal(rl_decode_status(R("*5|:-1|$s|$string|$expirable|"
	    ":3"), &st), RL_V_WRONGTYPE);
	assert_int_equal(st.kind, RL_KIND_EXPIRABLE);
	assert_int_equal(st.permits, 0);
}

static void
test_decode_leave(void **state)
{
	int64_t pos = -9;

	(void)state;
	assert_int_equal(rl_decode_leave(R("*3|:1|:3|nil"), &pos), RL_V_YES);
	assert_int_equal(pos, 3);
	assert_int_equal(rl_decode_leave(R("*2|:0|:0"), &pos), RL_V_YES);
	assert_int_equal(pos, 0);
	assert_int_equal(rl_decode_leave(NULL, &pos), RL_V_NONE);
	assert_int_equal(rl_decode_leave(R(":1"), &pos), RL_V_BAD);
	assert_int_equal(pos, 0);
	assert_int_equal(rl_decode_leave(R("*1|:1"), &pos), RL_V_BAD);
}

static void
test_decode_queue(void **state)
{
	struct rl_queue q;
	enum rl_verdict v;

	(void)state;
	/* {now_ms, holder, unordered, rw, guests, waiters...} */
	assert_int_equal(rl_decode_queue(R("*7|:1700000000000|"
	    "*7|$o:1|:2500|$web1|:4242|$root|$pg_dump|:72000|:3|*0|"
	    "*2|*9|$g:1|:14000|$web3|:99|$bob|$backup|:50|nil|:-1|"
	    "*2|$g:2|:4000|"
	    "*7|$w:1|:9000|$web2|:7|$alice|$make|:300|"
	    "*7|$w:2|nil|nil|nil|nil|nil|nil"), &q, &v), 0);
	assert_int_equal(v, RL_V_YES);
	assert_true(q.held);
	assert_string_equal(q.holder.owner, "o:1");
	assert_int_equal(q.holder.ms, 2500);
	assert_string_equal(q.holder.host, "web1");
	assert_int_equal(q.holder.pid, 4242);
	assert_string_equal(q.holder.user, "root");
	assert_string_equal(q.holder.cmd, "pg_dump");
	assert_int_equal(q.holder.age_ms, 72000);
	assert_int_equal(q.unordered, 3);
	assert_null(q.mode);
	assert_int_equal(q.n, 2);
	assert_string_equal(q.waiters[0].owner, "w:1");
	assert_int_equal(q.waiters[0].ms, 9000);
	assert_string_equal(q.waiters[0].user, "alice");
	assert_int_equal(q.waiters[0].age_ms, 300);
	assert_string_equal(q.waiters[1].owner, "w:2");
	assert_true(q.waiters[1].ms == INT64_MIN);	/* no deadline */
	assert_null(q.waiters[1].host);
	assert_int_equal(q.waiters[1].age_ms, -1);
	/* The waiters without --fair: what each recorded, or its token. */
	assert_int_equal(q.nguests, 2);
	assert_string_equal(q.guests[0].owner, "g:1");
	assert_int_equal(q.guests[0].ms, 14000);
	assert_string_equal(q.guests[0].host, "web3");
	assert_int_equal(q.guests[0].pid, 99);
	assert_string_equal(q.guests[0].cmd, "backup");
	assert_int_equal(q.guests[0].age_ms, 50);
	assert_int_equal(q.guests[0].gives_up_ms, -1);
	assert_string_equal(q.guests[1].owner, "g:2");
	assert_null(q.guests[1].host);
	assert_true(q.guests[1].gives_up_ms == INT64_MIN);
	rl_queue_clear(&q);
	/* A read-write lock: its mode, readers, waiters and first writer. */
	assert_int_equal(rl_decode_queue(R("*5|:1700000000000|"
	    "*7|$r:1|:2500|nil|nil|nil|nil|nil|:0|"
	    "*5|$read|:2|:3|$w:9|:4100|*0"), &q, &v), 0);
	assert_int_equal(v, RL_V_YES);
	assert_string_equal(q.mode, "read");
	assert_int_equal(q.readers, 2);
	assert_int_equal(q.rw_waiting, 3);
	assert_string_equal(q.writer, "w:9");
	assert_int_equal(q.writer_ms, 4100);
	assert_int_equal(q.n, 0);
	assert_int_equal(q.nguests, 0);
	/* Free, nobody waiting; and without the count (no room): 0. */
	assert_int_equal(rl_decode_queue(R("*3|:1700000000000|*0|:0"), &q, &v),
	    0);
	assert_int_equal(v, RL_V_YES);
	assert_false(q.held);
	assert_int_equal(q.n, 0);
	assert_int_equal(q.unordered, 0);
	assert_null(q.waiters);
	assert_int_equal(rl_decode_queue(R("*2|:1700000000000|*0"), &q, &v), 0);
	assert_int_equal(v, RL_V_YES);
	assert_int_equal(q.n, 0);
	assert_int_equal(q.unordered, 0);
	assert_int_equal(rl_decode_queue(R("*3|:-1|$redisson_lock_queue:{x}|"
	    "$hash"), &q, &v), 0);
	assert_int_equal(v, RL_V_WRONGTYPE);
	assert_string_equal(q.badkey, "redisson_lock_queue:{x}");
	assert_string_equal(q.badtype, "hash");
	assert_int_equal(q.n, 0);
	assert_int_equal(rl_decode_queue(NULL, &q, &v), 0);
	assert_int_equal(v, RL_V_NONE);
	/* Garbage: no holder array. */
	assert_int_equal(rl_decode_queue(R(":1"), &q, &v), 0);
	assert_int_equal(v, RL_V_BAD);
	assert_int_equal(rl_decode_queue(R("*2|:1700000000000|$o:1"), &q, &v),
	    0);
	assert_int_equal(v, RL_V_BAD);
	assert_int_equal(q.n, 0);
	assert_null(q.waiters);
}

static void
test_decode_runid(void **state)
{
	(void)state;
	assert_string_equal(rl_decode_runid(
	    R("$6b7e3c6f4a5d1e2f3a4b5c6d7e8f9a0b1c2d3e4f")),
	    "6b7e3c6f4a5d1e2f3a4b5c6d7e8f9a0b1c2d3e4f");
	assert_null(rl_decode_runid(R("nil")));	/* INFO refused */
	assert_null(rl_decode_runid(R(":0")));
	assert_null(rl_decode_runid(NULL));
}

/* ---- N masters' replies added up ---- */

#define ELAPSED_MS 40	/* elapsed since the attempt was sent */

/* Decode acquire replies (NULL: that master did not answer). */
static void
acquire_replies(size_t n, const char *const *specs, enum rl_verdict *v,
    struct rl_attempt *per)
{
	size_t j;

	memset(per, 0, n * sizeof(*per));
	for (j = 0; j < n; j++)
		v[j] = rl_decode_acquire(specs[j] != NULL ? R(specs[j]) : NULL,
		    &per[j]);
}

static void
test_combine_acquire_one_master(void **state)
{
	static const char *const yes[] = { "*3|:1|$17|:1" };
	static const char *const busy[] = {
		"*8|:0|:2500|$other:7|$web1|:4242|$root|$pg_dump|:72000"
	};
	static const char *const none[] = { NULL };
	struct rl_attempt per[1], a;
	enum rl_verdict v[1];
	size_t who = 99;
	int undo = -1;

	(void)state;
	acquire_replies(1, yes, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(1, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_true(a.acquired);
	assert_int_equal(a.fence, 17);
	assert_int_equal(a.holds, 1);
	assert_int_equal(a.nodes_ok, 1);
	assert_int_equal(a.validity_ms, 30000 - ELAPSED_MS - 302);
	assert_false(a.too_slow);
	assert_int_equal(undo, 0);

	acquire_replies(1, busy, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(1, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_int_equal(a.nodes_ok, 0);
	assert_int_equal(a.pttl, 2500);
	assert_string_equal(a.owner, "other:7");
	assert_string_equal(a.host, "web1");
	assert_int_equal(a.held_ms, 72000);
	assert_int_equal(undo, 0);

	/* No reply: the script may have run; release to be sure. */
	acquire_replies(1, none, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(1, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_NO_QUORUM);
	assert_false(a.acquired);
	assert_false(a.too_slow);
	assert_int_equal(undo, 1);

	/* Refused (OOM, NOPERM): an answer that nothing ran; no undo, which
	 * would release a hold the caller had before (re-entry). */
	v[0] = RL_V_REFUSED;
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(1, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_NO_QUORUM);
	assert_false(a.acquired);
	assert_int_equal(undo, 0);
}

/* The busy reply with BY_OWNER "" (a --supersede waiter whose record a
 * master lost) and the one of a call with nothing to re-enter. */
#define LAPSED "*17|:0|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|" \
	"nil|nil|nil|$"
#define GONE "*21|:0|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|" \
	"nil|nil|nil|nil|nil|nil|:1"

static void
test_combine_acquire_lapsed_gone(void **state)
{
	/* One master lost the record: it may only have missed the call
	 * that made it. Acquired on the others. */
	static const char *const one_lapsed[] = {
		"*3|:1|$11|:1", LAPSED, "*3|:1|$12|:1",
	};
	/* Two of three lost it: superseded, by nobody known. */
	static const char *const two_lapsed[] = {
		LAPSED, "*3|:1|$12|:1", LAPSED,
	};
	/* A mark on one master and a lost record on another: the mark
	 * names who superseded it. */
	static const char *const mark_and_lapsed[] = {
		LAPSED, "*20|:0|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|"
		    "nil|nil|nil|nil|$new:9|$ci7|:811|$deploy", "*3|:1|$12|:1",
	};
	/* Nothing to re-enter on two masters: not acquired, gone. */
	static const char *const two_gone[] = {
		GONE, "*3|:1|$12|:2", GONE,
	};
	struct rl_attempt per[3], a;
	enum rl_verdict v[3];
	size_t who = 99;
	int undo = -1;

	(void)state;
	acquire_replies(3, one_lapsed, v, per);
	assert_true(per[1].lapsed);
	assert_true(per[1].superseded);
	assert_null(per[1].by_owner);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_true(a.acquired);
	assert_false(a.superseded);

	acquire_replies(3, two_lapsed, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_true(a.superseded);
	assert_true(a.lapsed);
	assert_null(a.by_owner);
	assert_int_equal(undo, 1);

	acquire_replies(3, mark_and_lapsed, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_true(a.superseded);
	assert_false(a.lapsed);
	assert_string_equal(a.by_owner, "new:9");

	acquire_replies(3, two_gone, v, per);
	assert_true(per[0].gone);
	assert_false(per[1].gone);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_true(a.gone);
	assert_int_equal(undo, 1);
}

static void
test_combine_acquire_three_masters(void **state)
{
	static const char *const two_yes[] = {
		"*3|:1|$9007199254740993|:1",
		"*8|:0|:2500|$other:7|$web1|nil|nil|nil|nil",
		"*3|:1|$9007199254740995|:1",
	};
	/* The busy master's holder has no holder record of redlock's: a
	 * Java service's lock on that master alone. */
	static const char *const two_yes_foreign[] = {
		"*3|:1|$9007199254740993|:1",
		"*8|:0|:2500|$java:7|nil|nil|nil|nil|nil",
		"*3|:1|$9007199254740995|:1",
	};
	/* The middle master superseded the caller (--supersede): the busy
	 * reply's last four fields name the newer waiter. */
	static const char *const two_yes_superseded[] = {
		"*3|:1|$9007199254740993|:1",
		"*20|:0|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|nil|"
		    "nil|$new:9|$ci7|:811|$deploy",
		"*3|:1|$9007199254740995|:1",
	};
	static const char *const one_yes[] = { NULL, "*3|:1|$5|:1", NULL };
	static const char *const all_busy[] = {
		"*8|:0|:1000|$other:7|$web1|nil|nil|nil|nil",
		"*8|:0|:2500|$other:7|$web2|nil|nil|nil|nil",
		NULL,
	};
	struct rl_attempt per[3], a;
	enum rl_verdict v[3];
	size_t who = 99;
	int undo = -1;

	(void)state;
	/* Two grants and one busy: acquired, with the highest fence. */
	acquire_replies(3, two_yes, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_true(a.acquired);
	assert_true(a.fence == 9007199254740995LL);
	assert_int_equal(a.nodes_ok, 2);
	assert_int_equal(undo, 0);

	/* Two grants beside a Java client's hold on the third: busy, as on
	 * one master; the grants are undone, and the holder reported. */
	acquire_replies(3, two_yes_foreign, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_false(a.too_slow);
	assert_int_equal(a.nodes_ok, 2);
	assert_int_equal(a.pttl, 2500);
	assert_string_equal(a.owner, "java:7");
	assert_null(a.host);
	assert_int_equal(undo, 1);

	/* Two grants, but superseded on the third: not acquired, the
	 * grants undone, the newer waiter named. */
	acquire_replies(3, two_yes_superseded, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_false(a.too_slow);
	assert_true(a.superseded);
	assert_string_equal(a.by_owner, "new:9");
	assert_string_equal(a.by_host, "ci7");
	assert_int_equal(a.by_pid, 811);
	assert_string_equal(a.by_cmd, "deploy");
	assert_int_equal(undo, 1);

	/* One grant, two silent: no quorum, and the grant is undone. */
	acquire_replies(3, one_yes, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_NO_QUORUM);
	assert_false(a.acquired);
	assert_int_equal(a.nodes_ok, 1);
	assert_int_equal(undo, 1);

	/* Busy on a quorum, one silent: not acquired, the holder with the
	 * longest lease reported; the silent one may have granted it. */
	acquire_replies(3, all_busy, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_int_equal(a.pttl, 2500);
	assert_string_equal(a.host, "web2");
	assert_int_equal(undo, 1);
	assert_false(a.listen);

	/* The room's listener on one master listens on all of them. */
	static const char *const one_listens[] = {
		"*8|:0|:1000|$other:7|$web1|nil|nil|nil|nil",
		"*14|:0|:2500|$other:7|$web2|nil|nil|nil|nil|nil|nil|nil|nil|nil|:1",
		"*3|:1|$5|:1",
	};
	acquire_replies(3, one_listens, v, per);
	memset(&a, 0, sizeof(a));
	a.listen = 1;	/* what the last attempt said is not kept */
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_true(a.listen);
	acquire_replies(3, all_busy, v, per);
	a.listen = 1;
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.listen);

	/* So is an announcement to readers on any master. */
	static const char *const one_announced[] = {
		"*8|:0|:1000|$other:7|$web1|nil|nil|nil|nil",
		"*15|:0|:2500|$r:7|$web2|nil|nil|nil|nil|nil|nil|nil|nil|nil|"
		    "nil|:1",
		"*3|:1|$5|:1",
	};
	acquire_replies(3, one_announced, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_false(a.listen);
	assert_true(a.announced);
	acquire_replies(3, all_busy, v, per);
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.announced);
}

/* A quorum granted it, but the time it took left no validity. */
static void
test_combine_acquire_too_slow(void **state)
{
	static const char *const yes[] = {
		"*3|:1|$1|:1", "*3|:1|$2|:1", "*3|:1|$3|:1",
	};
	struct rl_attempt per[3], a;
	enum rl_verdict v[3];
	size_t who = 99;
	int undo = -1;

	(void)state;
	acquire_replies(3, yes, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 300, 400,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_true(a.too_slow);
	assert_int_equal(a.nodes_ok, 3);
	assert_true(a.validity_ms <= 0);
	assert_int_equal(undo, 1);
	/* At the edge: validity 0 is too slow, 1 ms is enough. */
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 300, 295,
	    &a, &undo, &who), RL_OUT_OK);
	assert_false(a.acquired);
	assert_true(a.too_slow);
	assert_int_equal(a.validity_ms, 0);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 300, 294,
	    &a, &undo, &who), RL_OUT_OK);
	assert_true(a.acquired);
	assert_false(a.too_slow);
	assert_int_equal(a.validity_ms, 1);
	assert_int_equal(a.fence, 3);
	assert_int_equal(undo, 0);
}

/* A key of another type on any master is the answer, whatever the
 * others said; grants made elsewhere are undone. */
static void
test_combine_acquire_wrongtype(void **state)
{
	static const char *const mixed[] = {
		"*3|:1|$1|:1", "*3|:1|$2|:1",
		"*3|:-1|$redlock_holder:{x}|$list",
	};
	static const char *const bad[] = { "*3|:1|$1|:1", ":7", "*3|:1|$3|:1" };
	struct rl_attempt per[3], a;
	enum rl_verdict v[3];
	size_t who = 99;
	int undo = -1;

	(void)state;
	acquire_replies(3, mixed, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_WRONGTYPE);
	assert_int_equal(who, 2);
	assert_false(a.acquired);
	assert_string_equal(a.badkey, "redlock_holder:{x}");
	assert_string_equal(a.badtype, "list");
	assert_int_equal(undo, 1);
	/* A reply that is not the script's: which master said it. */
	acquire_replies(3, bad, v, per);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_BAD);
	assert_int_equal(who, 1);
	assert_false(a.acquired);
	assert_int_equal(undo, 1);
}

static void
test_combine_release(void **state)
{
	enum rl_verdict v[3];
	int64_t holds[3];
	const char *nopub[3];
	enum rl_release rel;
	int64_t left;
	const char *np;
	size_t who = 99;

	(void)state;
	/* Decremented beats released beats not-owner. */
	v[0] = RL_V_RELEASED; holds[0] = 0; nopub[0] = "ch";
	v[1] = RL_V_YES; holds[1] = 2; nopub[1] = NULL;
	v[2] = RL_V_NO; holds[2] = 0; nopub[2] = NULL;
	assert_int_equal(rl_combine_release(rvotes(3, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_OK);
	assert_int_equal(rel, RL_DECREMENTED);
	assert_int_equal(left, 2);

	v[1] = RL_V_NO; holds[1] = 0;
	assert_int_equal(rl_combine_release(rvotes(3, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_OK);
	assert_int_equal(rel, RL_RELEASED);
	assert_string_equal(np, "ch");

	/* Not the owner anywhere: held by another on one of them. */
	v[0] = RL_V_NO; holds[0] = 0;
	v[1] = RL_V_NO; holds[1] = 1;
	v[2] = RL_V_NONE;
	assert_int_equal(rl_combine_release(rvotes(3, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_OK);
	assert_int_equal(rel, RL_NOT_OWNER);
	assert_int_equal(left, 1);
	assert_null(np);
	holds[1] = 0;
	assert_int_equal(rl_combine_release(rvotes(3, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_OK);
	assert_int_equal(rel, RL_NOT_OWNER);
	assert_int_equal(left, 0);

	/* None answered. */
	v[0] = v[1] = v[2] = RL_V_NONE;
	assert_int_equal(rl_combine_release(rvotes(3, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_NO_QUORUM);
	assert_int_equal(rl_combine_release(rvotes(1, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_NO_QUORUM);

	/* A key of another type anywhere; strangers only when alone. */
	v[0] = RL_V_RELEASED; v[1] = RL_V_WRONGTYPE; v[2] = RL_V_NONE;
	assert_int_equal(rl_combine_release(rvotes(3, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_WRONGTYPE);
	assert_int_equal(who, 1);
	v[1] = RL_V_BAD;
	assert_int_equal(rl_combine_release(rvotes(3, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_OK);
	assert_int_equal(rel, RL_RELEASED);
	v[0] = RL_V_NONE;
	assert_int_equal(rl_combine_release(rvotes(3, v, holds, nopub), &rel,
	    &left, &np, &who), RL_OUT_BAD);
	assert_int_equal(who, 1);
}

static void
test_combine_force(void **state)
{
	enum rl_verdict v[3] = { RL_V_NO, RL_V_YES, RL_V_NONE };
	const char *nopub[3] = { NULL, "ch", NULL };
	const char *np;
	size_t who = 99;
	int deleted = -1;

	(void)state;
	assert_int_equal(rl_combine_force(rvotes(3, v, NULL, nopub), &deleted,
	    &np, &who), RL_OUT_OK);
	assert_true(deleted);
	assert_string_equal(np, "ch");
	v[1] = RL_V_NO;
	assert_int_equal(rl_combine_force(rvotes(3, v, NULL, nopub), &deleted,
	    &np, &who), RL_OUT_OK);
	assert_false(deleted);
	assert_null(np);
	v[0] = v[1] = RL_V_NONE;
	assert_int_equal(rl_combine_force(rvotes(3, v, NULL, nopub), &deleted,
	    &np, &who), RL_OUT_NO_QUORUM);
	v[2] = RL_V_WRONGTYPE;
	assert_int_equal(rl_combine_force(rvotes(3, v, NULL, nopub), &deleted,
	    &np, &who), RL_OUT_WRONGTYPE);
	assert_int_equal(who, 2);
}

static void
test_combine_renew(void **state)
{
	enum rl_verdict v[3];
	size_t yes = 99;
	int ours = -1;

	(void)state;
	/* 2 of 3 renewed: ours. */
	v[0] = RL_V_YES; v[1] = RL_V_NONE; v[2] = RL_V_YES;
	assert_int_equal(rl_combine_renew(v, 3, &ours, &yes), RL_OUT_OK);
	assert_int_equal(ours, 1);
	assert_int_equal(yes, 2);
	/* 2 of 3 say gone: a quorum can never be had again. */
	v[0] = RL_V_NO; v[1] = RL_V_YES; v[2] = RL_V_NO;
	assert_int_equal(rl_combine_renew(v, 3, &ours, &yes), RL_OUT_OK);
	assert_int_equal(ours, 0);
	assert_int_equal(yes, 1);
	/* 1 yes, 2 silent: not known yet. */
	v[0] = RL_V_YES; v[1] = RL_V_NONE; v[2] = RL_V_NONE;
	assert_int_equal(rl_combine_renew(v, 3, &ours, &yes), RL_OUT_NO_QUORUM);
	assert_int_equal(ours, 0);
	assert_int_equal(yes, 1);
	/* 1 yes, 1 no, 1 silent: the silent one decides; not known. */
	v[1] = RL_V_NO;
	assert_int_equal(rl_combine_renew(v, 3, &ours, &yes), RL_OUT_NO_QUORUM);
	/* Strangers count for neither. */
	v[0] = RL_V_BAD; v[1] = RL_V_BAD; v[2] = RL_V_YES;
	assert_int_equal(rl_combine_renew(v, 3, &ours, &yes), RL_OUT_NO_QUORUM);
	/* One master. */
	v[0] = RL_V_YES;
	assert_int_equal(rl_combine_renew(v, 1, &ours, &yes), RL_OUT_OK);
	assert_int_equal(ours, 1);
	v[0] = RL_V_NO;
	assert_int_equal(rl_combine_renew(v, 1, &ours, &yes), RL_OUT_OK);
	assert_int_equal(ours, 0);
	v[0] = RL_V_NONE;
	assert_int_equal(rl_combine_renew(v, 1, &ours, &yes), RL_OUT_NO_QUORUM);
}

static void
test_combine_renew_taken(void **state)
{
	int taken[3] = { 0, 0, 0 };

	(void)state;
	/* Gone everywhere: expired or removed, not taken. */
	assert_int_equal(rl_combine_renew_taken(taken, 3), 0);
	/* Another owner on one master of three: taken. */
	taken[2] = 1;
	assert_int_equal(rl_combine_renew_taken(taken, 3), 1);
	taken[2] = 0;
	taken[0] = 1;
	assert_int_equal(rl_combine_renew_taken(taken, 1), 1);
}

/* Decode status replies (NULL: that master did not answer). */
static void
status_replies(size_t n, const char *const *specs, enum rl_verdict *v,
    struct rl_status *per)
{
	size_t j;

	for (j = 0; j < n; j++)
		v[j] = rl_decode_status(specs[j] != NULL ? R(specs[j]) : NULL,
		    &per[j]);
}

/* A history entry: fields by name, in any order; numbers where known. */
static void
test_decode_event(void **state)
{
	struct rl_event ev;
	char buf[256], *arena = buf;

	(void)state;
	assert_int_equal(rl_decode_event(R("*2|$1795782429706-3|*10|$event|"
	    "$released|$owner|$o:1|$hold_ms|$251000|$exit|$0|$fence|$17"), &ev,
	    &arena), 0);
	assert_string_equal(ev.id, "1795782429706-3");
	assert_true(ev.time_ms == 1795782429706LL);
	assert_string_equal(ev.event, "released");
	assert_string_equal(ev.owner, "o:1");
	assert_string_equal(ev.fence, "17");
	assert_string_equal(ev.host, "");
	assert_true(ev.hold_ms == 251000);
	assert_int_equal(ev.exit_status, 0);
	assert_true(ev.wait_ms == -1);
	assert_true(ev.until_ms == -1);
	assert_int_equal(ev.pid, 0);
	/* Unknown fields are skipped; an empty exit is unknown. */
	assert_int_equal(rl_decode_event(R("*2|$1-0|*6|$new|$x|$exit|$|"
	    "$by_pid|$811"), &ev, &arena), 0);
	assert_int_equal(ev.exit_status, -1);
	assert_int_equal(ev.by_pid, 811);
	assert_int_equal(rl_decode_event(R("*1|$1-0"), &ev, &arena), -1);
	/* As the scripts write it: one field "e", pairs separated by byte
	 * 31 (NUL bytes too), copied out of the reply. */
	{
		static const char v[] = "owner\037o:2\037pid\037811\037cmd"
		    "\037\037event\037released\037held_until\03799\0fence"
		    "\0007";
		redisReply *r = R("*2|$5-0|*2|$e|$x");
		char *start;

		r->element[1]->element[1]->str = realloc(
		    r->element[1]->element[1]->str, sizeof(v));
		assert_non_null(r->element[1]->element[1]->str);
		memcpy(r->element[1]->element[1]->str, v, sizeof(v));
		r->element[1]->element[1]->len = sizeof(v) - 1;
		assert_true(rl_event_room(r) == sizeof(v));
		arena = start = buf;
		assert_int_equal(rl_decode_event(r, &ev, &arena), 0);
		assert_true(arena == start + sizeof(v));
		assert_string_equal(ev.event, "released");
		assert_string_equal(ev.owner, "o:2");
		assert_int_equal(ev.pid, 811);
		assert_string_equal(ev.cmd, "");
		assert_string_equal(ev.fence, "7");
		assert_true(ev.until_ms == 99);
		/* The reply is left as it was. */
		assert_int_equal(r->element[1]->element[1]->str[5], 037);
	}
	assert_int_equal(rl_decode_event(NULL, &ev, &arena), -1);
}

/* The caller's part of an entry: pairs and "event", each followed by
 * byte 31; a byte 31 in a value is made '?'. */
static void
test_history_entry(void **state)
{
	char *s;

	(void)state;
	s = rl_history_entry((const char *[]){ "owner", "o:1", "cmd",
	    "a\037b", "user", NULL }, 6);
	assert_non_null(s);
	assert_string_equal(s, "owner\037o:1\037cmd\037a?b\037user\037"
	    "\037event\037");
	free(s);
}

/* A release gets its holder, token and hold time from the acquisition
 * before it; an acquisition never ended becomes an "expired" event
 * before the next. */
static void
test_events_infer(void **state)
{
	struct rl_event ev[7];
	char buf[256], *arena = buf;

	(void)state;
	memset(ev, 0, sizeof(ev));
	assert_int_equal(rl_decode_event(R("*2|$1-0|*8|$event|$acquired|"
	    "$owner|$a|$host|$web2|$pid|$811"), &ev[0], &arena), 0);
	assert_int_equal(rl_decode_event(R("*2|$2-0|*6|$event|$acquired|"
	    "$owner|$b|$fence|$12"), &ev[1], &arena), 0);
	assert_int_equal(rl_decode_event(R("*2|$3000-0|*6|$event|$released|"
	    "$owner|$b|$exit|$3"), &ev[2], &arena), 0);
	assert_int_equal(rl_events_infer(ev, 3, 7), 4);
	assert_string_equal(ev[0].event, "acquired");
	assert_string_equal(ev[1].event, "expired");
	assert_string_equal(ev[1].owner, "a");
	assert_string_equal(ev[1].host, "web2");
	assert_int_equal(ev[1].pid, 811);
	assert_true(ev[1].time_ms == 2);
	assert_string_equal(ev[1].id, "");
	assert_string_equal(ev[2].event, "acquired");
	assert_string_equal(ev[3].event, "released");
	assert_int_equal(ev[3].exit_status, 3);
	assert_string_equal(ev[3].fence, "12");
	assert_true(ev[3].hold_ms == 2998);
	/* No room: nothing inserted. */
	assert_int_equal(rl_events_infer(ev, 2, 2), 2);
}

/* Event I of EV: EVENT by OWNER at time T (ms), of KIND ("" for a plain
 * lock's), with token FENCE ("" for none). */
static void
ev_set(struct rl_event *ev, int t, const char *event, const char *owner,
    const char *kind, const char *fence)
{
	char spec[256], buf[8], *arena = buf;

	snprintf(spec, sizeof(spec), "*2|$%d-0|*8|$event|$%s|$owner|$%s|"
	    "$kind|$%s|$fence|$%s", t, event, owner, kind, fence);
	assert_int_equal(rl_decode_event(R(spec), ev, &arena), 0);
}

/* The event names of EV (N of them), joined by spaces, into BUF. */
static const char *
ev_names(const struct rl_event *ev, size_t n, char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < n && at < len; i++)
		at += snprintf(buf + at, len - at, "%s%s:%s", i ? " " : "",
		    ev[i].event, ev[i].owner);
	return buf;
}

/* Shared kinds: readers and permits overlap, so that one acquisition
 * after another proves no expiry; an exclusive one (plain or write)
 * after another owner's hold does, and so does any after another
 * owner's exclusive hold, or the same owner's fresh hold of a kind. */
static void
test_events_infer_kinds(void **state)
{
	struct rl_event ev[12];
	char names[512];

	(void)state;
	/* Two readers, then a writer after both were released. */
	ev_set(&ev[0], 1, "acquired", "a", "read", "1");
	ev_set(&ev[1], 2, "acquired", "b", "read", "2");
	ev_set(&ev[2], 5, "released", "b", "read", "");
	ev_set(&ev[3], 9, "released", "a", "read", "");
	ev_set(&ev[4], 10, "acquired", "w", "write", "3");
	assert_int_equal(rl_events_infer(ev, 5, 12), 5);
	assert_string_equal(ev_names(ev, 5, names, sizeof(names)),
	    "acquired:a acquired:b released:b released:a acquired:w");
	assert_string_equal(ev[2].fence, "2");
	assert_string_equal(ev[3].fence, "1");
	assert_true(ev[3].hold_ms == 8);
	/* A writer after two readers never released: both expired, in
	 * the order they were taken, with their kind. */
	ev_set(&ev[0], 1, "acquired", "a", "read", "1");
	ev_set(&ev[1], 2, "acquired", "b", "read", "2");
	ev_set(&ev[2], 10, "acquired", "w", "write", "3");
	assert_int_equal(rl_events_infer(ev, 3, 12), 5);
	assert_string_equal(ev_names(ev, 5, names, sizeof(names)),
	    "acquired:a acquired:b expired:a expired:b acquired:w");
	assert_string_equal(ev[2].kind, "read");
	assert_string_equal(ev[3].fence, "2");
	assert_true(ev[3].time_ms == 10);
	/* Permits overlap; a plain lock's acquisition (no kind) after
	 * them proves that they ended; one released is not expired. */
	ev_set(&ev[0], 1, "acquired", "a", "permit", "1");
	ev_set(&ev[1], 2, "acquired", "b", "permit", "2");
	ev_set(&ev[2], 3, "acquired", "c", "permit", "3");
	ev_set(&ev[3], 4, "released", "b", "permit", "");
	ev_set(&ev[4], 9, "acquired", "d", "", "4");
	assert_int_equal(rl_events_infer(ev, 5, 12), 7);
	assert_string_equal(ev_names(ev, 7, names, sizeof(names)),
	    "acquired:a acquired:b acquired:c released:b expired:a "
	    "expired:c acquired:d");
	/* A reader after another owner's write: the write had ended; a
	 * writer's own read beside its write proves nothing. */
	ev_set(&ev[0], 1, "acquired", "w", "write", "1");
	ev_set(&ev[1], 2, "acquired", "w", "read", "2");
	ev_set(&ev[2], 3, "acquired", "r", "read", "3");
	assert_int_equal(rl_events_infer(ev, 3, 12), 4);
	assert_string_equal(ev_names(ev, 4, names, sizeof(names)),
	    "acquired:w acquired:w expired:w acquired:r");
	assert_string_equal(ev[2].kind, "write");
	assert_string_equal(ev[2].fence, "1");
	/* The same owner's fresh read after its read (re-entries are not
	 * recorded), and a write after its read (no upgrade): expired. */
	ev_set(&ev[0], 1, "acquired", "a", "read", "1");
	ev_set(&ev[1], 2, "acquired", "a", "read", "2");
	ev_set(&ev[2], 3, "acquired", "a", "write", "3");
	assert_int_equal(rl_events_infer(ev, 3, 12), 5);
	assert_string_equal(ev_names(ev, 5, names, sizeof(names)),
	    "acquired:a expired:a acquired:a expired:a acquired:a");
	assert_string_equal(ev[1].fence, "1");
	assert_string_equal(ev[3].fence, "2");
	/* A release finds its acquisition by owner and kind: the writer's
	 * read release its read, its write release its write. */
	ev_set(&ev[0], 1, "acquired", "w", "write", "1");
	ev_set(&ev[1], 2, "acquired", "w", "read", "2");
	ev_set(&ev[2], 3, "released", "w", "read", "");
	ev_set(&ev[3], 4, "released", "w", "write", "");
	ev_set(&ev[4], 5, "acquired", "x", "write", "3");
	assert_int_equal(rl_events_infer(ev, 5, 12), 5);
	assert_string_equal(ev[2].fence, "2");
	assert_string_equal(ev[3].fence, "1");
	assert_true(ev[3].hold_ms == 3);
	/* Room for one expiry only: the first, and the rest dropped. */
	ev_set(&ev[0], 1, "acquired", "a", "read", "1");
	ev_set(&ev[1], 2, "acquired", "b", "read", "2");
	ev_set(&ev[2], 3, "acquired", "w", "write", "3");
	assert_int_equal(rl_events_infer(ev, 3, 4), 4);
	assert_string_equal(ev_names(ev, 4, names, sizeof(names)),
	    "acquired:a acquired:b expired:a acquired:w");
}

static void
test_combine_status(void **state)
{
	static const char *const agreed[] = {
		"*12|:1|:0|:2000|$o:1|:1|$web1|:1|$u|$c|:5|$9|:100",
		"*2|:0|:0",
		"*12|:1|:0|:2500|$o:1|:1|$web1|:1|$u|$c|:5|$9|:100",
	};
	static const char *const split[] = {
		"*12|:1|:0|:2000|$o:1|:1|nil|nil|nil|nil|nil|nil|nil",
		"*12|:1|:0|:2500|$o:2|:1|nil|nil|nil|nil|nil|nil|nil",
		NULL,
	};
	static const char *const none[] = { NULL, NULL, NULL };
	static const char *const wrong[] = {
		"*2|:0|:0", "*3|:-1|$x|$string", NULL,
	};
	static const char *const one_free[] = { "*2|:0|:2" };
	static const char *const readers[] = {
		"*14|:1|:0|:900|nil|:1|nil|nil|nil|nil|nil|nil|nil|$read|"
		    "*1|*3|$a:1|:1|:800",
		"*2|:0|:0",
		"*14|:1|:0|:950|nil|:1|nil|nil|nil|nil|nil|nil|nil|$read|"
		    "*1|*3|$a:1|:1|:850",
	};
	static const char *const semaphore[] = {
		"*2|:0|:0", NULL, "*7|:-1|$s|$string|$semaphore|:4|:0|*0",
	};
	struct rl_status per[3], st;
	enum rl_verdict v[3];
	size_t who = 99;

	(void)state;
	status_replies(3, agreed, v, per);
	assert_int_equal(rl_combine_status(v, per, 3, &st, &who), RL_OUT_OK);
	assert_true(st.held);
	assert_string_equal(st.owner, "o:1");
	assert_int_equal(st.held_on, 2);
	assert_int_equal(st.answered, 3);
	assert_true(who == 0 || who == 2);
	assert_int_equal(st.fence, 9);

	/* Split owners: held on one each, by nobody on a quorum. */
	status_replies(3, split, v, per);
	assert_int_equal(rl_combine_status(v, per, 3, &st, &who), RL_OUT_OK);
	assert_false(st.held);
	assert_int_equal(st.held_on, 1);
	assert_int_equal(st.answered, 2);

	status_replies(3, none, v, per);
	assert_int_equal(rl_combine_status(v, per, 3, &st, &who),
	    RL_OUT_NO_QUORUM);

	status_replies(3, wrong, v, per);
	assert_int_equal(rl_combine_status(v, per, 3, &st, &who),
	    RL_OUT_WRONGTYPE);
	assert_int_equal(who, 1);
	assert_string_equal(st.badkey, "x");
	assert_string_equal(st.badtype, "string");

	/* A read-write lock in read mode: the same readers agree. */
	status_replies(3, readers, v, per);
	assert_int_equal(rl_combine_status(v, per, 3, &st, &who), RL_OUT_OK);
	assert_true(st.held);
	assert_int_equal(st.held_on, 2);
	assert_int_equal(st.kind, RL_KIND_RWLOCK);
	assert_null(st.owner);
	assert_int_equal(st.readers, 1);

	/* A semaphore on one master: its permits come along. */
	status_replies(3, semaphore, v, per);
	assert_int_equal(rl_combine_status(v, per, 3, &st, &who),
	    RL_OUT_WRONGTYPE);
	assert_int_equal(who, 2);
	assert_int_equal(st.kind, RL_KIND_SEMAPHORE);
	assert_int_equal(st.free, 4);

	/* One master, free. */
	status_replies(1, one_free, v, per);
	assert_int_equal(rl_combine_status(v, per, 1, &st, &who), RL_OUT_OK);
	assert_false(st.held);
	assert_int_equal(st.held_on, 0);
	assert_int_equal(st.answered, 1);
	assert_int_equal(st.waiting, 2);
	assert_int_equal(who, 0);
}

/* --replicas: a master short of acknowledgements does not count. */
static void
test_acks_one_master(void **state)
{
	static const char *const yes[] = { "*3|:1|$17|:1" };
	static const int64_t short_acks[] = { 1 }, enough[] = { 2 },
	    none[] = { -1 };
	struct rl_attempt per[1], a;
	enum rl_verdict v[1];
	struct rl_acks k;
	size_t who = 99;
	int undo = -1;
	char msg[512];

	(void)state;
	acquire_replies(1, yes, v, per);
	rl_quorum_acks(v, enough, 1, 2, &k);
	assert_int_equal(v[0], RL_V_YES);
	assert_int_equal(k.unacked, 0);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(1, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_true(a.acquired);

	acquire_replies(1, yes, v, per);
	rl_quorum_acks(v, short_acks, 1, 2, &k);
	assert_int_equal(v[0], RL_V_UNACKED);
	assert_int_equal(k.granted, 1);
	assert_int_equal(k.unacked, 1);
	assert_int_equal(k.fewest, 1);
	assert_int_equal(k.first, 0);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(1, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_UNACKED);
	assert_false(a.acquired);
	assert_int_equal(undo, 1);
	k.wait_ms = 5000;
	k.why = "";
	rl_quorum_acks_why(msg, sizeof(msg), "acquired", "x", &k, 1);
	assert_string_equal(msg, "acquired x but only 1 of 2 replicas "
	    "acknowledged it within 5.0s; released it. Check the replicas (INFO "
	    "replication) or lower --replicas");

	/* No count at all (WAIT refused or late) is none acknowledged. */
	acquire_replies(1, yes, v, per);
	rl_quorum_acks(v, none, 1, 1, &k);
	assert_int_equal(v[0], RL_V_UNACKED);
	assert_int_equal(k.fewest, 0);
}

static void
test_acks_three_masters(void **state)
{
	static const char *const replies[] = {
		"*3|:1|$17|:1", "*3|:1|$18|:1",
		"*8|:0|:2500|$other:7|$web1|:4242|$root|$pg_dump|:72000"
	};
	static const int64_t one_short[] = { 2, 0, 2 }, two_ok[] = { 2, 2, 0 };
	struct rl_attempt per[3], a;
	enum rl_verdict v[3];
	enum rl_verdict rv[3] = { RL_V_YES, RL_V_YES, RL_V_YES };
	struct rl_acks k;
	size_t who = 99, yes;
	int undo = -1, ours = -1;
	char msg[512];

	(void)state;
	/* Two granted, both acknowledged: a quorum (the busy one's acks
	 * do not matter). */
	acquire_replies(3, replies, v, per);
	rl_quorum_acks(v, two_ok, 3, 2, &k);
	assert_int_equal(k.unacked, 0);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_OK);
	assert_true(a.acquired);

	/* Two granted, one short: no quorum, for want of replicas. */
	acquire_replies(3, replies, v, per);
	rl_quorum_acks(v, one_short, 3, 2, &k);
	assert_int_equal(k.granted, 2);
	assert_int_equal(k.unacked, 1);
	assert_int_equal(k.first, 1);
	memset(&a, 0, sizeof(a));
	assert_int_equal(rl_combine_acquire(votes(3, v, per), 30000, ELAPSED_MS,
	    &a, &undo, &who), RL_OUT_UNACKED);
	assert_false(a.acquired);
	assert_int_equal(undo, 1);
	k.wait_ms = 50;
	k.why = "";
	rl_quorum_acks_why(msg, sizeof(msg), "acquired", "x", &k, 1);
	assert_string_equal(msg, "acquired x on 2 of 3 masters, but on 1 of "
	    "them fewer than 2 replicas acknowledged it within 50ms (the "
	    "fewest: 0 of 2), leaving no quorum (need 2); released it "
	    "everywhere. Check the replicas (INFO replication) or lower "
	    "--replicas");

	/* Renewal: three renewed, two short: no quorum, not lost. */
	rl_quorum_acks(rv, (const int64_t[]){ 2, 1, 0 }, 3, 2, &k);
	assert_int_equal(rl_combine_renew(rv, 3, &ours, &yes),
	    RL_OUT_NO_QUORUM);
	assert_int_equal(ours, 0);
	assert_int_equal(yes, 1);
}

/* SENTINEL REPLICAS: the replicas the sentinel reaches and does not hold
 * down, whatever their link, role or master. */
static void
test_sentinel_replicas(void **state)
{
	(void)state;
	assert_int_equal(rl_sentinel_replicas(R("*0")), 0);
	assert_int_equal(rl_sentinel_replicas(R("*2|"
	    "*4|$name|$127.0.0.1:6380|$flags|$slave|"
	    "*6|$ip|$127.0.0.1|$flags|$slave|$port|$6381")), 2);
	/* Down, subjectively or objectively, or out of reach: not
	 * counted. */
	assert_int_equal(rl_sentinel_replicas(R("*4|"
	    "*2|$flags|$s_down,slave|*2|$flags|$slave,o_down|"
	    "*2|$flags|$slave,disconnected|*2|$flags|$slave")), 1);
	/* No flags, an odd field, not a list: nothing to count. */
	assert_int_equal(rl_sentinel_replicas(R("*3|*1|$flags|"
	    "*2|$name|$x|$slave")), 0);
	assert_int_equal(rl_sentinel_replicas(R("*1|*2|:1|$slave")), 0);
	/* A replica cut off from its master (link err), one a failover
	 * has promoted before the sentinels name it (role master), and a
	 * failover's old master not demoted yet (master-host "?"): each
	 * counted, so that a master one of them may replace is WAITed
	 * on. */
	assert_int_equal(rl_sentinel_replicas(R("*3|"
	    "*6|$flags|$slave|$master-link-status|$err|$master-host|$h|"
	    "*8|$master-link-status|$ok|$flags|$slave,promoted|"
	    "$role-reported|$master|$master-host|$h|"
	    "*6|$flags|$slave|$role-reported|$master|$master-host|$?")), 3);
	assert_int_equal(rl_sentinel_replicas(R("-ERR unknown subcommand")),
	    -1);
	assert_int_equal(rl_sentinel_replicas(R("nil")), -1);
}

/* Each kind's table: its calls, queue, room, masters and heartbeat. */
static void
test_kind_tables(void **state)
{
	static const char *const history[] = { NULL, "read", "write",
	    "permit" };
	enum rl_lock_kind k;

	(void)state;
	for (k = RL_EXCLUSIVE; k <= RL_PERMIT; k++) {
		const struct rl_kind_ops *o = rl_kind_ops(k);

		assert_int_equal(o->kind, k);
		assert_non_null(o->release);
		assert_non_null(o->renew);
		assert_non_null(o->force);
		assert_non_null(o->leave);
		assert_non_null(o->channel);
		assert_non_null(o->acquire);
		assert_int_equal(o->redlock, k == RL_EXCLUSIVE);
		assert_int_equal(o->limited, k == RL_PERMIT);
		assert_int_equal(o->several == NULL, k == RL_EXCLUSIVE);
		assert_int_equal(o->queue, k == RL_EXCLUSIVE);
		assert_int_equal(o->room, k == RL_EXCLUSIVE || k == RL_PERMIT);
		assert_int_equal(o->renew_max_ms, k == RL_SHARED ||
		    k == RL_PERMIT ? RL_SHARED_RENEW_MAX_MS : 0);
		if (history[k] == NULL)
			assert_null(o->history);
		else
			assert_string_equal(o->history, history[k]);
	}
	assert_string_equal(rl_kind_ops(RL_SHARED)->mode, "read");
	assert_string_equal(rl_kind_ops(RL_WRITE)->mode, "write");
}

/* The hold's kind, not the client, chooses the script: a read hold is
 * given back by the read-write lock's release, in read mode. */
static void
test_kind_calls(void **state)
{
	static const char *const release[] = { "release", "rw_release",
	    "rw_release", "permit_release" };
	static const char *const renew[] = { "renew", "rw_renew", "rw_renew",
	    "permit_renew" };
	struct rl_url u[3] = { { .host = (char *)"127.0.0.1", .port = 1 },
	    { .host = (char *)"127.0.0.1", .port = 2 },
	    { .host = (char *)"127.0.0.1", .port = 3 } };
	struct rl_lock l = { .name = "n", .owner = "o:1" };
	rl_client *c = rl_client_new(&u[0], 100, 100), *three;
	struct rl_call call;

	(void)state;
	assert_non_null(c);
	for (l.kind = RL_EXCLUSIVE; l.kind <= RL_PERMIT; l.kind++) {
		assert_int_equal(rl_kind_ops(l.kind)->release(c, &l, &call),
		    RL_OK);
		assert_string_equal(call.s->name, release[l.kind]);
		if (l.kind == RL_SHARED || l.kind == RL_WRITE)
			assert_string_equal(call.args[1],
			    rl_kind_ops(l.kind)->mode);
		rl_call_free(&call);
		assert_int_equal(rl_kind_ops(l.kind)->renew(c, &l, 1000,
		    &call), RL_OK);
		assert_string_equal(call.s->name, renew[l.kind]);
		rl_call_free(&call);
	}
	/* Several masters take plain locks only; a permit needs a limit. */
	three = rl_client_new_multi(u, 3, 100, 100);
	assert_non_null(three);
	l.kind = RL_EXCLUSIVE;
	assert_non_null(rl_kind_check(three, &l, 1));
	l.kind = RL_SHARED;
	assert_null(rl_kind_check(three, &l, 0));
	assert_string_equal(rl_errstr(three), "shared locks are not "
	    "available across several masters");
	assert_non_null(rl_kind_check(c, &l, 1));
	l.kind = RL_PERMIT;
	l.limit = 0;
	assert_null(rl_kind_check(c, &l, 1));
	assert_non_null(rl_kind_check(c, &l, 0));
	rl_client_free(three);
	rl_client_free(c);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_lease_arithmetic),
		T(test_sentinel_replicas),
		T(test_quorum_and_validity),
		T(test_acks_one_master),
		T(test_acks_three_masters),
		T(test_node_timeout_clamps),
		T(test_reply_timeout),
		T(test_elem_int_and_str),
		T(test_verdicts),
		T(test_decode_acquire_granted),
		T(test_decode_acquire_busy),
		T(test_decode_acquire_wrongtype_and_garbage),
		T(test_decode_release),
		T(test_decode_min_hold),
		T(test_decode_force),
		T(test_decode_renew),
		T(test_decode_status),
		T(test_decode_status_rwlock),
		T(test_decode_status_semaphores),
		T(test_decode_leave),
		T(test_decode_queue),
		T(test_decode_runid),
		T(test_combine_acquire_one_master),
		T(test_combine_acquire_three_masters),
		T(test_combine_acquire_lapsed_gone),
		T(test_combine_acquire_too_slow),
		T(test_combine_acquire_wrongtype),
		T(test_combine_release),
		T(test_combine_force),
		T(test_combine_renew),
		T(test_combine_renew_taken),
		T(test_combine_status),
		T(test_decode_event),
		T(test_events_infer),
		T(test_events_infer_kinds),
		T(test_history_entry),
		T(test_kind_tables),
		T(test_kind_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
