/* test_lease.c: lease arithmetic, and how lib/ reads script replies, with
 * hiredis faked by -Wl,--wrap=redisCommandArgv. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_int.h"

/* The fake server: each call pops the next prepared reply and records
 * the command's first two words. */
static redisReply *replies[8];
static int nreplies, next_reply;
static char sent[8][2][64];
static int nsent;

void *__wrap_redisCommandArgv(redisContext *c, int argc, const char **argv,
    const size_t *argvlen);
int __wrap_redisAppendCommandArgv(redisContext *c, int argc,
    const char **argv, const size_t *argvlen);
int __wrap_redisGetReply(redisContext *c, void **reply);

/* lib/ sends a command with redisAppendCommandArgv and takes its reply
 * with redisGetReply, or does both with redisCommandArgv. */
int
__wrap_redisAppendCommandArgv(redisContext *c, int argc, const char **argv,
    const size_t *argvlen)
{
	(void)c;
	(void)argvlen;
	assert_true(argc >= 2);
	assert_true(nsent < 8);
	snprintf(sent[nsent][0], sizeof(sent[0][0]), "%s", argv[0]);
	snprintf(sent[nsent][1], sizeof(sent[0][1]), "%s", argv[1]);
	nsent++;
	return REDIS_OK;
}

int
__wrap_redisGetReply(redisContext *c, void **reply)
{
	(void)c;
	assert_true(next_reply < nreplies);
	*reply = replies[next_reply++];
	return REDIS_OK;
}

void *
__wrap_redisCommandArgv(redisContext *c, int argc, const char **argv,
    const size_t *argvlen)
{
	void *r;

	__wrap_redisAppendCommandArgv(c, argc, argv, argvlen);
	__wrap_redisGetReply(c, &r);
	return r;
}

static redisReply *
mk(int type)
{
	redisReply *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->type = type;
	return r;
}

static redisReply *
mk_int(long long v)
{
	redisReply *r = mk(REDIS_REPLY_INTEGER);

	r->integer = v;
	return r;
}

static redisReply *
mk_str(int type, const char *s)
{
	redisReply *r = mk(type);

	r->str = strdup(s);
	r->len = strlen(s);
	return r;
}

static redisReply *
mk_arr(int n, ...)
{
	redisReply *r = mk(REDIS_REPLY_ARRAY);
	va_list ap;
	int i;

	r->element = calloc((size_t)n, sizeof(*r->element));
	r->elements = (size_t)n;
	va_start(ap, n);
	for (i = 0; i < n; i++)
		r->element[i] = va_arg(ap, redisReply *);
	va_end(ap);
	return r;
}

static void
serve(int n, ...)
{
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		replies[i] = va_arg(ap, redisReply *);
	va_end(ap);
	nreplies = n;
	next_reply = 0;
	nsent = 0;
}

/* A client that believes it is connected; the fake answers for it. */
static redisContext fake_ctx;

static rl_client *
client(void)
{
	struct rl_url u = { 0 };
	rl_client *c;

	u.host = (char *)"127.0.0.1";
	u.port = 6379;
	c = rl_client_new(&u, 1000, 1000);
	assert_non_null(c);
	c->ctx = &fake_ctx;
	return c;
}

static void
done(rl_client *c)
{
	c->ctx = NULL;	/* not ours to free */
	rl_client_free(c);
}

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
	/* validity = ttl - elapsed - (ttl/100 + 2) */
	assert_int_equal(rl_validity_ms(30000, 40), 30000 - 40 - 302);
	assert_int_equal(rl_validity_ms(300, 295), 0);	/* drift 5 */
	assert_true(rl_validity_ms(300, 296) < 0);
	assert_true(rl_validity_ms(100, 0) > 0);
	/* The node timeout: ttl/100 within 5..50 ms. */
	assert_int_equal(rl_node_timeout_for(30000), 50);
	assert_int_equal(rl_node_timeout_for(2000), 20);
	assert_int_equal(rl_node_timeout_for(100), 5);
	assert_int_equal(rl_node_timeout_for(10), 5);
}

static void
test_keeper_schedule(void **state)
{
	rl_client *c = client();
	rl_keeper *k = rl_keeper_new(c, "x", "o:1", 3000, 100000);

	(void)state;
	assert_non_null(k);
	assert_int_equal(rl_keeper_fd(k), -1);	/* nothing in flight */
	assert_int_equal(rl_keeper_wake_ms(k), 100000 + 1000);
	assert_int_equal(rl_keeper_confirmed_ms(k), 100000);
	assert_int_equal(rl_keeper_deadline_ms(k), 100000 + 3000 - 32);
	assert_int_equal(rl_keeper_renewals(k), 0);
	rl_keeper_free(k);
	done(c);
}

static void
test_noscript_falls_back_to_eval(void **state)
{
	rl_client *c = client();
	int ours = -1;

	(void)state;
	serve(2, mk_str(REDIS_REPLY_ERROR, "NOSCRIPT No matching script."),
	    mk_int(1));
	assert_int_equal(rl_renew(c, "x", "o:1", 3000, &ours), RL_OK);
	assert_int_equal(ours, 1);
	assert_int_equal(nsent, 2);
	assert_string_equal(sent[0][0], "EVALSHA");
	assert_int_equal(strlen(sent[0][1]), 40);
	assert_string_equal(sent[1][0], "EVAL");
	/* The script's text, which opens with the prelude. */
	assert_memory_equal(sent[1][1], "-- prelude:", 11);
	done(c);
}

static void
test_one_evalsha_when_cached(void **state)
{
	rl_client *c = client();
	int ours = -1;

	(void)state;
	serve(1, mk_int(0));
	assert_int_equal(rl_renew(c, "x", "o:1", 3000, &ours), RL_OK);
	assert_int_equal(ours, 0);
	assert_int_equal(nsent, 1);
	assert_string_equal(sent[0][0], "EVALSHA");
	done(c);
}

static void
test_acquire_replies(void **state)
{
	rl_client *c = client();
	struct rl_attempt a;

	(void)state;
	serve(1, mk_arr(3, mk_int(1), mk_int(1795321426684683LL), mk_int(2)));
	assert_int_equal(rl_try_acquire(c, "x", "o:1", 3000, NULL, NULL, RL_JOIN_NO, &a), RL_OK);
	assert_true(a.acquired);
	assert_int_equal(a.fence, 1795321426684683LL);
	assert_int_equal(a.holds, 2);

	serve(1, mk_arr(8, mk_int(0), mk_int(2500),
	    mk_str(REDIS_REPLY_STRING, "other:7"),
	    mk_str(REDIS_REPLY_STRING, "web1"), mk_int(4242),
	    mk_str(REDIS_REPLY_STRING, "root"),
	    mk_str(REDIS_REPLY_STRING, "pg_dump"), mk_int(72000)));
	assert_int_equal(rl_try_acquire(c, "x", "o:1", 3000, NULL, NULL, RL_JOIN_NO, &a), RL_OK);
	assert_false(a.acquired);
	assert_int_equal(a.pttl, 2500);
	assert_string_equal(a.owner, "other:7");
	assert_string_equal(a.host, "web1");
	assert_int_equal(a.pid, 4242);
	assert_string_equal(a.cmd, "pg_dump");
	assert_int_equal(a.held_ms, 72000);

	/* A Redisson holder: no metadata, nil fields. */
	serve(1, mk_arr(8, mk_int(0), mk_int(900),
	    mk_str(REDIS_REPLY_STRING, "uuid:57"), mk(REDIS_REPLY_NIL),
	    mk(REDIS_REPLY_NIL), mk(REDIS_REPLY_NIL), mk(REDIS_REPLY_NIL),
	    mk(REDIS_REPLY_NIL)));
	assert_int_equal(rl_try_acquire(c, "x", "o:1", 3000, NULL, NULL, RL_JOIN_NO, &a), RL_OK);
	assert_null(a.host);
	assert_int_equal(a.held_ms, -1);

	serve(1, mk_arr(3, mk_int(-1), mk_str(REDIS_REPLY_STRING, "x"),
	    mk_str(REDIS_REPLY_STRING, "string")));
	assert_int_equal(rl_try_acquire(c, "x", "o:1", 3000, NULL, NULL, RL_JOIN_NO, &a),
	    RL_EWRONGTYPE);
	assert_string_equal(a.badkey, "x");
	assert_string_equal(a.badtype, "string");
	assert_string_equal(rl_errstr(c), "key x holds a string");

	serve(1, mk_int(3));
	assert_int_equal(rl_try_acquire(c, "x", "o:1", 3000, NULL, NULL, RL_JOIN_NO, &a),
	    RL_EPROTO);

	/* Fences past 2^53 come as exact decimal strings; a fourth element
	 * names a channel this user may not publish on. */
	serve(1, mk_arr(4, mk_int(1),
	    mk_str(REDIS_REPLY_STRING, "9223372036854775807"), mk_int(1),
	    mk_str(REDIS_REPLY_STRING, "redisson_lock__channel:{x}")));
	assert_int_equal(rl_try_acquire(c, "x", "o:1", 3000, NULL, NULL, RL_JOIN_NO, &a), RL_OK);
	assert_int_equal(a.fence, INT64_MAX);
	assert_string_equal(a.nopub, "redisson_lock__channel:{x}");
	serve(1, mk_arr(3, mk_int(1), mk_str(REDIS_REPLY_STRING, "12x"),
	    mk_int(1)));
	assert_int_equal(rl_try_acquire(c, "x", "o:1", 3000, NULL, NULL, RL_JOIN_NO, &a), RL_OK);
	assert_int_equal(a.fence, 0);
	assert_null(a.nopub);
	done(c);
}

static void
test_release_replies(void **state)
{
	rl_client *c = client();
	struct rl_attempt a;
	enum rl_release rel;
	int64_t holds;

	(void)state;
	serve(1, mk_arr(1, mk_int(2)));
	assert_int_equal(rl_release(c, "x", "o", &rel, &holds, &a), RL_OK);
	assert_int_equal(rel, RL_RELEASED);
	serve(1, mk_arr(2, mk_int(1), mk_int(2)));
	assert_int_equal(rl_release(c, "x", "o", &rel, &holds, &a), RL_OK);
	assert_int_equal(rel, RL_DECREMENTED);
	assert_int_equal(holds, 2);
	serve(1, mk_arr(2, mk_int(0), mk_int(1)));
	assert_int_equal(rl_release(c, "x", "o", &rel, &holds, &a), RL_OK);
	assert_int_equal(rel, RL_NOT_OWNER);
	assert_int_equal(holds, 1);
	done(c);
}

static void
test_server_errors(void **state)
{
	static const struct {
		const char *reply;
		enum rl_err want;
		const char *says;
	} cases[] = {
		{ "NOAUTH Authentication required.", RL_EAUTH,
		  "requires authentication" },
		{ "ERR Protocol error: unauthenticated multibulk length",
		  RL_EAUTH, "requires authentication" },
		{ "WRONGPASS invalid username-password pair", RL_EAUTH,
		  "refused" },
		{ "NOPERM this user has no permissions", RL_EAUTH, "grant" },
		{ "READONLY You can't write against a read only replica.",
		  RL_ECONNECT, "read-only replica" },
		{ "LOADING Redis is loading the dataset in memory",
		  RL_ECONNECT, "try again" },
		{ "ERR something else", RL_EPROTO, "ERR something else" },
		{ "ERR increment or decrement would overflow", RL_EPROTO,
		  "overflow" },
		{ "OOM command not allowed when used memory > 'maxmemory'. "
		  "script: 61636018f4e6b5817b89791bbed242f93fa089e3, on "
		  "@user_script:1.", RL_ESERVER,
		  "(OOM command not allowed when used memory > 'maxmemory'): "
		  "the server is out of memory" },
		{ "CLUSTERDOWN Hash slot not served", RL_ESERVER,
		  "the cluster is down" },
		{ "CROSSSLOT Keys in request don't hash to the same slot",
		  RL_ESERVER, "non-empty {tag}" },
		{ "MOVED 3999 127.0.0.1:6381", RL_ESERVER,
		  "give the URL of the node" },
		{ "MISCONF Redis is configured to save RDB snapshots",
		  RL_ESERVER, "cannot save to disk" },
		{ "NOREPLICAS Not enough good replicas to write.", RL_ESERVER,
		  "min-replicas-to-write" },
		{ "ERR unknown command 'EVALSHA', with args beginning with: "
		  "'c726' '6' 'x'", RL_ESERVER, "(ERR unknown command "
		  "'EVALSHA'): the command is renamed or disabled" },
		{ "ERR max number of clients reached", RL_ESERVER,
		  "maxclients" },
		{ "ERR The user executing the script can't run this command or "
		  "subcommand script: 6163, on @user_script:1.", RL_EAUTH,
		  "for user default (ERR The user executing the script can't "
		  "run this command or subcommand): grant it" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rl_client *c = client();
		int ours;

		serve(1, mk_str(REDIS_REPLY_ERROR, cases[i].reply));
		assert_int_equal(rl_renew(c, "x", "o", 3000, &ours),
		    cases[i].want);
		assert_non_null(strstr(rl_errstr(c), cases[i].says));
		done(c);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_arithmetic),
		cmocka_unit_test(test_quorum_and_validity),
		cmocka_unit_test(test_keeper_schedule),
		cmocka_unit_test(test_noscript_falls_back_to_eval),
		cmocka_unit_test(test_one_evalsha_when_cached),
		cmocka_unit_test(test_acquire_replies),
		cmocka_unit_test(test_release_replies),
		cmocka_unit_test(test_server_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
