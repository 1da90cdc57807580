/* test_round.c: rounds and connections over a fake transport, where each
 * master is the far end of a socketpair that the test reads and answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "rl_round.h"
#include "rl_scripts.h"

/* ---- the fake servers, one per port ---- */

#define NSRV 3
#define MAXCMD 32
#define MAXARG 40

struct cmd {
	int argc;
	char *argv[MAXARG];
};

struct srv {
	int port;
	int fd;			/* the server's end of the socketpair; -1 */
	int refuse;		/* open fails */
	int stall;		/* connecting never finishes */
	int reset;		/* connecting fails once under way */
	int opens;
	char in[1 << 16];	/* bytes received, not parsed yet */
	size_t inlen;
	int eof;		/* the client closed its end */
	int cluster;		/* HELLO says a Redis 7 cluster node */
	int mute;		/* HELLO is not answered (for now) */
	const char *version;	/* HELLO's version; NULL: 7.0.0 */
	size_t conncmds;	/* commands on this connection (HELLO not
				 * counted) */
	size_t said;		/* replies sent on it (HELLO's not counted) */
	size_t hello[4];	/* HELLOs due: how many commands came
				 * before each */
	size_t nhellodue;
	struct cmd cmds[MAXCMD];	/* commands received, in order */
	int nhello;		/* HELLOs received (not in cmds) */
	size_t ncmds;
};

static struct srv srvs[NSRV];

static struct srv *
srv_of(int port)
{
	size_t i;

	for (i = 0; i < NSRV; i++)
		if (srvs[i].port == port)
			return &srvs[i];
	return NULL;
}

static int
fake_open(struct rl_conn *c)
{
	struct srv *s = srv_of(c->url->port);
	int sv[2];

	if (s == NULL || s->refuse) {
		rl_error_io(c->url, "cannot connect to", "Connection refused",
		    c->why, sizeof(c->why));
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) < 0) {
		rl_error_io(c->url, "cannot connect to", strerror(errno),
		    c->why, sizeof(c->why));
		return -1;
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = sv[1];
	s->inlen = 0;
	s->eof = 0;
	s->conncmds = s->said = s->nhellodue = 0;
	s->opens++;
	c->fd = sv[0];
	return 0;
}

static int
fake_finish(struct rl_conn *c)
{
	struct srv *s = srv_of(c->url->port);

	if (s != NULL && s->reset) {
		rl_error_io(c->url, "cannot connect to", "Connection reset by "
		    "peer", c->why, sizeof(c->why));
		return -1;
	}
	return s != NULL && s->stall ? 1 : 0;
}

static ssize_t
fake_read(struct rl_conn *c, void *buf, size_t len)
{
	return read(c->fd, buf, len);
}

static ssize_t
fake_write(struct rl_conn *c, const void *buf, size_t len)
{
	return send(c->fd, buf, len, MSG_NOSIGNAL);
}

static void
fake_close(struct rl_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static const struct rl_transport fake = {
	fake_open, fake_finish, fake_read, fake_write, fake_close, NULL
};

/* A decimal number ended by CRLF at P (below END): -2 when incomplete. */
static long
resp_num(const char **p, const char *end)
{
	const char *q = memchr(*p, '\r', (size_t)(end - *p));
	long v;

	if (q == NULL || q + 1 >= end)
		return -2;
	assert_int_equal(q[1], '\n');
	v = strtol(*p, NULL, 10);
	*p = q + 2;
	return v;
}

/* One whole command (a RESP array of bulk strings) at the start of IN,
 * into CMD: its length, or 0 when not all of it has come. */
static size_t
resp_cmd(const char *in, size_t len, struct cmd *cmd)
{
	const char *p = in, *end = in + len;
	long argc, n, i;

	if (len == 0)
		return 0;
	assert_int_equal(*p, '*');
	p++;
	if ((argc = resp_num(&p, end)) == -2)
		return 0;
	assert_true(argc > 0 && argc <= MAXARG);
	memset(cmd, 0, sizeof(*cmd));
	for (i = 0; i < argc; i++) {
		if (p >= end)
			goto partial;
		assert_int_equal(*p, '$');
		p++;
		if ((n = resp_num(&p, end)) == -2 || end - p < n + 2)
			goto partial;
		assert_true(n >= 0);
		cmd->argv[i] = strndup(p, (size_t)n);
		assert_non_null(cmd->argv[i]);
		cmd->argc++;
		p += n + 2;
	}
	return (size_t)(p - in);
partial:
	for (i = 0; i < cmd->argc; i++)
		free(cmd->argv[i]);
	cmd->argc = 0;
	return 0;
}

/* HELLO's reply, as RESP2 gives it: names and values in turn. */
static void
srv_hello(struct srv *s)
{
	const char *v = s->version != NULL ? s->version : "7.0.0";
	char buf[256];
	int len;

	len = snprintf(buf, sizeof(buf), "*6\r\n$6\r\nserver\r\n$5\r\nredis"
	    "\r\n$7\r\nversion\r\n$%zu\r\n%s\r\n$4\r\nmode\r\n$%zu\r\n"
	    "%s\r\n", strlen(v), v, strlen(s->cluster ? "cluster" :
	    "standalone"), s->cluster ? "cluster" : "standalone");
	assert_int_equal(send(s->fd, buf, (size_t)len, MSG_NOSIGNAL),
	    (ssize_t)len);
}

/* Answer the HELLOs whose turn it is: those after the commands answered
 * so far. */
static void
srv_hellos(struct srv *s)
{
	while (!s->mute && s->nhellodue > 0 && s->hello[0] <= s->said) {
		if (s->hello[0] == s->said)
			srv_hello(s);
		memmove(s->hello, s->hello + 1, --s->nhellodue *
		    sizeof(s->hello[0]));
	}
}

/* Read what the client wrote to S and parse the whole commands. HELLO,
 * the probe of every connection, is not kept: it is answered in its turn
 * (srv_hellos). */
static void
srv_pump(struct srv *s)
{
	ssize_t n;
	size_t used;

	while (s->fd >= 0 && !s->eof) {
		assert_true(s->inlen < sizeof(s->in));
		n = read(s->fd, s->in + s->inlen, sizeof(s->in) - s->inlen);
		if (n < 0 && errno == ECONNRESET)
			n = 0;
		if (n < 0) {
			assert_true(errno == EAGAIN || errno == EINTR);
			break;
		}
		if (n == 0)
			s->eof = 1;
		s->inlen += (size_t)n;
	}
	while (s->ncmds < MAXCMD &&
	    (used = resp_cmd(s->in, s->inlen, &s->cmds[s->ncmds])) > 0) {
		memmove(s->in, s->in + used, s->inlen - used);
		s->inlen -= used;
		if (strcmp(s->cmds[s->ncmds].argv[0], "HELLO") != 0) {
			s->ncmds++;
			s->conncmds++;
			continue;
		}
		free(s->cmds[s->ncmds].argv[0]);
		assert_true(s->nhellodue < 4);
		s->hello[s->nhellodue++] = s->conncmds;
		s->nhello++;
	}
	if (s->fd >= 0 && !s->eof)
		srv_hellos(s);
}

static void
pump_all(void)
{
	size_t i;

	for (i = 0; i < NSRV; i++)
		srv_pump(&srvs[i]);
}

/* The length of the RESP reply at P. */
static size_t
resp_len(const char *p)
{
	const char *eol = strstr(p, "\r\n");
	size_t n = (size_t)(eol - p) + 2;
	long i, k;

	assert_non_null(eol);
	k = strtol(p + 1, NULL, 10);
	if (*p == '$' && k >= 0)
		return n + (size_t)k + 2;
	for (i = 0; *p == '*' && i < k; i++)
		n += resp_len(p + n);
	return n;
}

/* The server at S answers with RESP bytes, one reply or more; a HELLO's
 * reply goes in its turn between them. */
static void
srv_say(struct srv *s, const char *resp)
{
	size_t len;

	assert_true(s->fd >= 0);
	srv_pump(s);
	while (*resp != '\0') {
		srv_hellos(s);
		len = resp_len(resp);
		assert_int_equal(send(s->fd, resp, len, MSG_NOSIGNAL),
		    (ssize_t)len);
		resp += len;
		s->said++;
	}
	srv_hellos(s);
}

/* Command I that S received has these words (NULL-terminated). */
static void
assert_cmd(const struct srv *s, size_t i, ...)
{
	const char *w;
	va_list ap;
	int k = 0;

	assert_true(i < s->ncmds);
	va_start(ap, i);
	while ((w = va_arg(ap, const char *)) != NULL) {
		assert_true(k < s->cmds[i].argc);
		assert_string_equal(s->cmds[i].argv[k], w);
		k++;
	}
	va_end(ap);
	assert_int_equal(s->cmds[i].argc, k);
}

/* ---- masters and rounds ---- */

#define PORT0 6391

static struct rl_node nodes[NSRV];
static struct rl_round rd;	/* ended in teardown, also after a failure */

static void
masters(size_t n, const char *const *urls)
{
	char err[256];
	size_t i;

	for (i = 0; i < n; i++) {
		assert_int_equal(rl_url_parse(urls[i], &nodes[i].url, err,
		    sizeof(err)), 0);
		rl_conn_init(&nodes[i].conn, &nodes[i].url, &fake);
		rl_conn_init(&nodes[i].sub, &nodes[i].url, &fake);
	}
}

static void
plain_masters(size_t n)
{
	static const char *const urls[NSRV] = {
		"redis://127.0.0.1:6391", "redis://127.0.0.1:6392",
		"redis://127.0.0.1:6393"
	};

	masters(n, urls);
}

static int
setup(void **state)
{
	size_t i;

	(void)state;
	memset(srvs, 0, sizeof(srvs));
	memset(nodes, 0, sizeof(nodes));
	memset(&rd, 0, sizeof(rd));
	for (i = 0; i < NSRV; i++) {
		srvs[i].port = PORT0 + (int)i;
		srvs[i].fd = -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	size_t i, j;
	int k;

	(void)state;
	rl_round_end(&rd);
	for (i = 0; i < NSRV; i++) {
		if (nodes[i].reply != NULL)
			freeReplyObject(nodes[i].reply);
		rl_conn_close(&nodes[i].conn);
		rl_conn_close(&nodes[i].sub);
		rl_url_clear(&nodes[i].url);
		if (srvs[i].fd >= 0)
			close(srvs[i].fd);
		for (j = 0; j < srvs[i].ncmds; j++)
			for (k = 0; k < srvs[i].cmds[j].argc; k++)
				free(srvs[i].cmds[j].argv[k]);
	}
	memset(nodes, 0, sizeof(nodes));

	return 0;
}

static const char *renew_keys[] = { "x", "redlock_holder:{x}" };
static const char *renew_args[] = { "30000", "o:1" };

/* Round options: NEED masters, 2 s to connect, REPLY_MS to answer, the
 * rest off. */
static struct rl_round_opts
opts_of(size_t need, int64_t reply_ms)
{
	struct rl_round_opts o;

	memset(&o, 0, sizeof(o));
	o.need = need;
	o.connect_ms = 2000;
	o.reply_ms = reply_ms;
	return o;
}

/* A call of script S with the NKEYS KEYS and NARGS ARGS given, as a
 * round takes it (held until the next). */
static const struct rl_call *
call_of(const struct rl_script *s, int nkeys, const char **keys, int nargs,
    const char **args)
{
	static struct rl_call call;

	memset(&call, 0, sizeof(call));
	call.s = s;
	call.nkeys = nkeys;
	call.nargs = nargs;
	memcpy(call.keys, keys, (size_t)nkeys * sizeof(*keys));
	memcpy(call.args, args, (size_t)nargs * sizeof(*args));
	return &call;
}

/* A round of the renew script above on the first N masters, as O says. */
static int
renew_with(struct rl_round *r, size_t n, const struct rl_round_opts *o)
{
	return rl_round_script(r, nodes, n, o,
	    call_of(&rl_script_renew, 2, renew_keys, 2, renew_args));
}

static int
renew_round(struct rl_round *r, size_t n, size_t need, int64_t reply_ms)
{
	struct rl_round_opts o = opts_of(need, reply_ms);

	return renew_with(r, n, &o);
}

/* The EVALSHA and the EVAL of the renew script above. */
static void
assert_evalsha(const struct srv *s, size_t i)
{
	assert_cmd(s, i, "EVALSHA", rl_script_renew.sha, "2", "x",
	    "redlock_holder:{x}", "30000", "o:1", NULL);
}

static void
assert_eval(const struct srv *s, size_t i)
{
	assert_cmd(s, i, "EVAL", rl_script_renew.src, "2", "x",
	    "redlock_holder:{x}", "30000", "o:1", NULL);
}

/* Step R, the servers reading in between, until S has received WANT
 * commands (or the round is over); bounded. */
static void
step_until(struct rl_round *r, struct srv *s, size_t want)
{
	struct pollfd pfd[RL_MAX_NODES];
	int64_t end = rl_now_ms() + 2000;

	for (;;) {
		rl_round_step(r, rl_now_ms());
		pump_all();
		if (s->ncmds >= want || r->done)
			break;
		assert_true(rl_now_ms() < end);
		poll(pfd, rl_round_pollfds(r, pfd), 1);
	}
	assert_int_equal(s->ncmds, want);
}

/* S answers RESP to its command WANT (1 first), once that has come. */
static void
answer(struct rl_round *r, struct srv *s, size_t want, const char *resp)
{
	step_until(r, s, want);
	srv_say(s, resp);
}

/* Step R a few times, with a little room for I/O in between: for what
 * must not happen. */
static void
step_some(struct rl_round *r)
{
	struct pollfd pfd[RL_MAX_NODES];
	int i;

	for (i = 0; i < 20 && !r->done; i++) {
		rl_round_step(r, rl_now_ms());
		poll(pfd, rl_round_pollfds(r, pfd), 1);
	}
	pump_all();
}

static void
test_one_master_sends_one_evalsha(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 1, ":1\r\n");
	rl_round_run(r);
	assert_true(r->done);
	assert_int_equal(r->nsent, 1);
	assert_int_equal(rl_round_answered(r), 1);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->type, REDIS_REPLY_INTEGER);
	assert_int_equal(nodes[0].reply->integer, 1);
	assert_int_equal(nodes[0].full, 0);
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 1);
	assert_evalsha(&srvs[0], 0);
	assert_int_equal(srvs[0].inlen, 0);
	assert_int_equal(nodes[0].conn.state, RL_CONN_READY);
}

static void
test_noscript_falls_back_to_one_eval(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], 1);
	assert_evalsha(&srvs[0], 0);
	srv_say(&srvs[0], "-NOSCRIPT No matching script. Please use EVAL.\r\n");
	step_until(r, &srvs[0], 2);
	assert_eval(&srvs[0], 1);
	assert_false(r->done);
	srv_say(&srvs[0], ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 1);
	assert_int_equal(nodes[0].full, 1);
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 2);
	assert_int_equal(srvs[0].inlen, 0);
}

/* A command that must run (opts whole): the script goes whole where the
 * connection has not run it, for a NOSCRIPT given up on would leave it
 * not run; by its SHA once it has. */
static void
test_whole_script_until_the_connection_ran_it(void **state)
{
	struct rl_round *r = &rd;
	struct rl_round_opts o;

	(void)state;
	plain_masters(2);
	o = opts_of(1, 2000);
	o.whole = 1;
	assert_int_equal(renew_with(r, 2, &o), 0);
	answer(r, &srvs[0], 1, ":1\r\n");
	answer(r, &srvs[1], 1, ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].full, 1);
	assert_int_equal(nodes[1].full, 1);
	rl_round_end(r);
	assert_eval(&srvs[0], 0);
	assert_eval(&srvs[1], 0);
	/* Again on the same connections: they ran it. */
	assert_int_equal(renew_with(r, 2, &o), 0);
	answer(r, &srvs[0], 2, ":1\r\n");
	answer(r, &srvs[1], 2, ":1\r\n");
	rl_round_run(r);
	rl_round_end(r);
	assert_evalsha(&srvs[0], 1);
	assert_evalsha(&srvs[1], 1);
}

/* SCRIPT EXISTS behind the command: the connection learns the scripts
 * its server has; behind an EVALSHA refused with NOSCRIPT, its reply is
 * dropped and it goes again behind the EVAL. */
static void
test_script_exists_behind_teaches_the_connection(void **state)
{
	const char *const shas[] = {
		rl_script_release.sha, rl_script_leave.sha
	};
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	assert_int_equal(rl_round_exists(r, shas, 2), 0);
	step_until(r, &srvs[0], 2);
	assert_evalsha(&srvs[0], 0);
	assert_cmd(&srvs[0], 1, "SCRIPT", "EXISTS", shas[0], shas[1], NULL);
	srv_say(&srvs[0], "-NOSCRIPT No matching script. Please use EVAL.\r\n"
	    "*2\r\n:1\r\n:1\r\n");
	step_until(r, &srvs[0], 4);
	assert_eval(&srvs[0], 2);
	assert_cmd(&srvs[0], 3, "SCRIPT", "EXISTS", shas[0], shas[1], NULL);
	/* The stale reply taught nothing. */
	assert_false(rl_conn_knows(&nodes[0].conn, shas[0]));
	assert_false(r->done);
	srv_say(&srvs[0], ":1\r\n*2\r\n:0\r\n:1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_int_equal(nodes[0].reply->integer, 1);
	assert_false(rl_conn_knows(&nodes[0].conn, shas[0]));
	assert_true(rl_conn_knows(&nodes[0].conn, shas[1]));
	assert_true(rl_conn_knows(&nodes[0].conn, rl_script_renew.sha));
	rl_round_end(r);
}

/* A NOSCRIPT to the EVAL itself is an error, not a third try. */
static void
test_noscript_to_eval_is_an_error(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], 1);
	srv_say(&srvs[0], "-NOSCRIPT No matching script.\r\n");
	step_until(r, &srvs[0], 2);
	srv_say(&srvs[0], "-NOSCRIPT No matching script.\r\n");
	rl_round_run(r);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_EPROTO);
	assert_non_null(strstr(nodes[0].why, "the renew script failed on "
	    "redis://127.0.0.1:6391: NOSCRIPT"));
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 2);
}

static void
test_three_masters_gather_replies_per_node(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(3);
	srvs[1].refuse = 1;
	assert_int_equal(renew_round(r, 3, 2, 2000), 0);
	/* The refusal is known at once. */
	assert_int_equal(nodes[1].phase, RL_PH_DONE);
	answer(r, &srvs[0], 1, ":1\r\n");
	answer(r, &srvs[2], 1, ":0\r\n");
	rl_round_run(r);
	assert_int_equal(r->nsent, 2);
	assert_int_equal(rl_round_answered(r), 2);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 1);
	assert_non_null(nodes[2].reply);
	assert_int_equal(nodes[2].reply->integer, 0);
	assert_null(nodes[1].reply);
	assert_int_equal(nodes[1].err, RL_ECONNECT);
	assert_non_null(strstr(nodes[1].why,
	    "cannot connect to redis://127.0.0.1:6392"));
	assert_non_null(strstr(nodes[1].why, "Connection refused"));
	rl_round_end(r);
	pump_all();
	assert_int_equal(srvs[0].ncmds, 1);
	assert_evalsha(&srvs[0], 0);
	assert_int_equal(srvs[1].opens, 0);
	assert_int_equal(srvs[2].ncmds, 1);
	assert_evalsha(&srvs[2], 0);
}

/* Too few reachable, nothing changes: the others are not asked. */
static void
test_too_few_reachable_sends_nothing(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(3);
	srvs[1].refuse = 1;
	assert_int_equal(renew_round(r, 3, 3, 2000), 0);
	rl_round_run(r);
	assert_true(r->done);
	assert_int_equal(r->nsent, 0);
	assert_int_equal(rl_round_answered(r), 0);
	assert_int_equal(nodes[1].err, RL_ECONNECT);
	assert_non_null(strstr(nodes[1].why, "redis://127.0.0.1:6392"));
	assert_null(nodes[0].reply);
	assert_null(nodes[2].reply);
	assert_non_null(strstr(nodes[0].why, "too few masters reachable"));
	assert_non_null(strstr(nodes[2].why, "too few masters reachable"));
	step_some(r);
	rl_round_end(r);
	pump_all();
	assert_int_equal(srvs[0].opens, 1);
	assert_int_equal(srvs[0].ncmds, 0);
	assert_int_equal(srvs[0].inlen, 0);
	assert_int_equal(srvs[2].opens, 1);
	assert_int_equal(srvs[2].ncmds, 0);
	assert_int_equal(srvs[2].inlen, 0);
}

/* A connect that fails once under way (finish) is that master's error;
 * the others are asked. */
static void
test_connect_failing_under_way(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(3);
	srvs[0].reset = 1;
	assert_int_equal(renew_round(r, 3, 2, 2000), 0);
	assert_int_equal(nodes[0].phase, RL_PH_CONNECT);
	answer(r, &srvs[1], 1, ":1\r\n");
	answer(r, &srvs[2], 1, ":1\r\n");
	rl_round_run(r);
	assert_int_equal(r->nsent, 2);
	assert_int_equal(rl_round_answered(r), 2);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_ECONNECT);
	assert_non_null(strstr(nodes[0].why, "cannot connect to "
	    "redis://127.0.0.1:6391: Connection reset by peer"));
	assert_int_equal(nodes[0].conn.state, RL_CONN_CLOSED);
	assert_int_equal(rl_conn_fd(&nodes[0].conn), -1);
	rl_round_end(r);
	pump_all();
	assert_int_equal(srvs[0].ncmds, 0);
	assert_true(srvs[0].eof);
}

/* A master slow to connect is given up on after connect_ms; the rest
 * wait for it, then are asked. */
static void
test_connect_timeout_then_the_rest_are_asked(void **state)
{
	struct rl_round_opts o = { .need = 2, .connect_ms = 30,
	    .reply_ms = 2000 };
	struct rl_round *r = &rd;
	int64_t t0 = rl_now_ms();

	(void)state;
	plain_masters(3);
	srvs[2].stall = 1;
	assert_int_equal(rl_round_script(r, nodes, 3, &o,
	    call_of(&rl_script_renew, 2, renew_keys, 2, renew_args)), 0);
	answer(r, &srvs[0], 1, ":1\r\n");
	answer(r, &srvs[1], 1, ":1\r\n");
	rl_round_run(r);
	assert_true(rl_now_ms() - t0 >= 30);
	assert_int_equal(rl_round_answered(r), 2);
	assert_int_equal(nodes[2].err, RL_ECONNECT);
	assert_non_null(strstr(nodes[2].why, "cannot connect to "
	    "redis://127.0.0.1:6393: timed out"));
	assert_int_equal(nodes[2].conn.state, RL_CONN_CLOSED);
	rl_round_end(r);
	pump_all();
	assert_int_equal(srvs[0].ncmds, 1);
	assert_int_equal(srvs[1].ncmds, 1);
	assert_int_equal(srvs[2].ncmds, 0);
}

/* Once a quorum is connected (opts enough), a master still connecting
 * gets the per-master bound (opts straggle_ms) more, not the rest of
 * connect_ms: a master whose packets are dropped costs a round that. */
static void
test_straggler_gets_the_per_master_bound(void **state)
{
	struct rl_round_opts o = { .need = 1, .connect_ms = 5000,
	    .reply_ms = 2000, .enough = 2, .straggle_ms = 20 };
	struct rl_round *r = &rd;
	int64_t t0 = rl_now_ms(), took;

	(void)state;
	plain_masters(3);
	srvs[2].stall = 1;
	assert_int_equal(rl_round_script(r, nodes, 3, &o,
	    call_of(&rl_script_renew, 2, renew_keys, 2, renew_args)), 0);
	answer(r, &srvs[0], 1, ":1\r\n");
	answer(r, &srvs[1], 1, ":1\r\n");
	rl_round_run(r);
	took = rl_now_ms() - t0;
	assert_true(took >= 20);
	assert_true(took < 2500);	/* not connect_ms (5 s) */
	assert_int_equal(rl_round_answered(r), 2);
	assert_int_equal(nodes[2].err, RL_ECONNECT);
	assert_non_null(strstr(nodes[2].why, "cannot connect to "
	    "redis://127.0.0.1:6393: not within 20ms of a majority"));
	assert_int_equal(nodes[2].conn.state, RL_CONN_CLOSED);
	rl_round_end(r);
	pump_all();
	assert_int_equal(srvs[2].ncmds, 0);
}

/* Short of a quorum connected, nobody is cut: the round waits connect_ms
 * for the masters it needs. */
static void
test_no_cut_before_a_quorum_connects(void **state)
{
	struct rl_round_opts o = { .need = 1, .connect_ms = 300,
	    .reply_ms = 2000, .enough = 2, .straggle_ms = 20 };
	struct rl_round *r = &rd;
	int64_t t0 = rl_now_ms();

	(void)state;
	plain_masters(3);
	srvs[1].stall = 1;
	srvs[2].stall = 1;
	assert_int_equal(rl_round_script(r, nodes, 3, &o,
	    call_of(&rl_script_renew, 2, renew_keys, 2, renew_args)), 0);
	rl_round_run(r);
	assert_true(rl_now_ms() - t0 >= 300);
	assert_int_equal(r->cut_ms, 0);
	assert_non_null(strstr(nodes[1].why, "cannot connect to "
	    "redis://127.0.0.1:6392: timed out"));
	rl_round_end(r);
	pump_all();
}

/* AUTH and SELECT go first; the script waits for their replies. */
static void
test_handshake_goes_first(void **state)
{
	static const char *const urls[] = {
		"redis://:s3cret@127.0.0.1:6391/3"
	};
	struct rl_round *r = &rd;

	(void)state;
	masters(1, urls);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], 2);
	assert_cmd(&srvs[0], 0, "AUTH", "s3cret", NULL);
	assert_cmd(&srvs[0], 1, "SELECT", "3", NULL);
	step_some(r);
	assert_int_equal(srvs[0].ncmds, 2);
	assert_int_equal(srvs[0].inlen, 0);
	assert_int_equal(nodes[0].conn.state, RL_CONN_HANDSHAKE);
	assert_int_equal(nodes[0].phase, RL_PH_CONNECT);
	srv_say(&srvs[0], "+OK\r\n+OK\r\n");
	step_until(r, &srvs[0], 3);
	assert_evalsha(&srvs[0], 2);
	srv_say(&srvs[0], ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 1);
	rl_round_end(r);
}

static void
test_handshake_names_the_acl_user(void **state)
{
	static const char *const urls[] = {
		"redis://alice:s3cret@127.0.0.1:6391"
	};
	struct rl_round *r = &rd;

	(void)state;
	masters(1, urls);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], 1);
	assert_cmd(&srvs[0], 0, "AUTH", "alice", "s3cret", NULL);
	step_some(r);
	assert_int_equal(srvs[0].ncmds, 1);
	srv_say(&srvs[0], "+OK\r\n");
	step_until(r, &srvs[0], 2);
	assert_evalsha(&srvs[0], 1);
	srv_say(&srvs[0], ":0\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 0);
	rl_round_end(r);
}

static void
test_wrong_password_stops_the_round(void **state)
{
	static const char *const urls[] = {
		"redis://:s3cret@127.0.0.1:6391/3"
	};
	struct rl_round *r = &rd;

	(void)state;
	masters(1, urls);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], 2);
	srv_say(&srvs[0], "-WRONGPASS invalid username-password pair or "
	    "user is disabled.\r\n");
	rl_round_run(r);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_EAUTH);
	assert_non_null(strstr(nodes[0].why,
	    "authentication to redis://127.0.0.1:6391/3"));
	assert_null(strstr(nodes[0].why, "s3cret"));
	assert_int_equal(nodes[0].conn.state, RL_CONN_CLOSED);
	assert_int_equal(r->nsent, 0);
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 2);
	assert_int_equal(srvs[0].inlen, 0);
	assert_true(srvs[0].eof);
}

static void
test_select_refused_is_an_auth_error(void **state)
{
	static const char *const urls[] = { "redis://127.0.0.1:6391/99" };
	struct rl_round *r = &rd;

	(void)state;
	masters(1, urls);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], 1);
	assert_cmd(&srvs[0], 0, "SELECT", "99", NULL);
	srv_say(&srvs[0], "-ERR DB index is out of range\r\n");
	rl_round_run(r);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_EAUTH);
	assert_non_null(strstr(nodes[0].why, "refused SELECT"));
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 1);
}

/* A master that does not answer in time is given up on, but its
 * connection is kept with the reply's place in line: the next round
 * sends the script itself behind it and gets its own reply, not the
 * late one. */
static void
test_timeout_keeps_commands_in_order(void **state)
{
	struct rl_round *r = &rd;
	int64_t t0;

	(void)state;
	plain_masters(1);
	t0 = rl_now_ms();
	assert_int_equal(renew_round(r, 1, 1, 30), 0);
	rl_round_run(r);
	assert_true(rl_now_ms() - t0 >= 30);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_ECONNECT);
	assert_non_null(strstr(nodes[0].why, "no answer"));
	assert_non_null(strstr(nodes[0].why, "redis://127.0.0.1:6391"));
	assert_int_equal(nodes[0].conn.state, RL_CONN_READY);
	assert_int_equal(nodes[0].conn.drop, 1);
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 1);
	assert_evalsha(&srvs[0], 0);

	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], 2);
	assert_eval(&srvs[0], 1);
	srv_say(&srvs[0], ":0\r\n:1\r\n");	/* the late one, then ours */
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 1);
	assert_int_equal(nodes[0].conn.drop, 0);
	assert_int_equal(nodes[0].conn.due, 0);
	assert_int_equal(srvs[0].opens, 1);
	rl_round_end(r);
}

static void
test_oom_reply_is_a_server_error(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 1, "-OOM command not allowed when used memory > "
	    "'maxmemory'.\r\n");
	rl_round_run(r);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_ESERVER);
	assert_non_null(strstr(nodes[0].why, "out of memory"));
	assert_non_null(strstr(nodes[0].why, "redis://127.0.0.1:6391"));
	assert_non_null(strstr(nodes[0].why, "the renew script"));
	assert_int_equal(rl_round_answered(r), 0);
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 1);
}

/* Error replies to a script, each as an enum and a line with its fix. */
static void
test_server_error_replies(void **state)
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
		  RL_ECONNECT, "is a read-only replica: give the master's "
		  "URL, or a redis+sentinel:// URL" },
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
		{ "CLUSTERDOWN Hash slot not served", RL_ECONNECT,
		  "the cluster is down" },
		{ "CROSSSLOT Keys in request don't hash to the same slot",
		  RL_EUSAGE, "non-empty {tag}" },
		{ "MOVED 3999 no-port", RL_ESERVER,
		  "kept sending the command on" },
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
		{ "ERR ACL failure in script: User u has no permissions to run "
		  "the 'hdel' command (HDEL) script: 6163, on @user_script:1.",
		  RL_EAUTH, "for user default (ERR ACL failure in script: User "
		  "u has no permissions to run the 'hdel' command (HDEL)): "
		  "grant it" },
	};
	char resp[512];
	struct rl_round *r = &rd;
	size_t i;
	int opens = 1;

	(void)state;
	plain_masters(1);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(renew_round(r, 1, 1, 2000), 0);
		snprintf(resp, sizeof(resp), "-%s\r\n", cases[i].reply);
		answer(r, &srvs[0], i + 1, resp);
		rl_round_run(r);
		assert_null(nodes[0].reply);
		assert_int_equal(nodes[0].err, cases[i].want);
		if (strstr(nodes[0].why, cases[i].says) == NULL)
			fail_msg("%s: \"%s\" does not say \"%s\"",
			    cases[i].reply, nodes[0].why, cases[i].says);
		rl_round_end(r);
		/* An error reply is in step: the connection goes on, but
		 * for a server that is not the master now (READONLY,
		 * LOADING), which the next round connects to again. */
		assert_int_equal(nodes[0].conn.state,
		    cases[i].want == RL_ECONNECT ? RL_CONN_CLOSED :
		    RL_CONN_READY);
		opens += cases[i].want == RL_ECONNECT;
	}
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].opens, opens);
	assert_int_equal(srvs[0].ncmds, sizeof(cases) / sizeof(cases[0]));
}

static void
test_command_round_sends_it_as_is(void **state)
{
	static const char *argv[] = { "PING" };
	struct rl_round_opts o = { .need = 1, .connect_ms = 2000,
	    .reply_ms = 2000 };
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(2);
	assert_int_equal(rl_round_command(r, nodes, 2, &o, 1, argv), 0);
	answer(r, &srvs[0], 1, "+PONG\r\n");
	answer(r, &srvs[1], 1, "-ERR unknown command 'PING'\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->type, REDIS_REPLY_STATUS);
	assert_string_equal(nodes[0].reply->str, "PONG");
	assert_null(nodes[1].reply);
	assert_int_equal(nodes[1].err, RL_ESERVER);
	assert_non_null(strstr(nodes[1].why, "refused PING"));
	rl_round_end(r);
	pump_all();
	assert_int_equal(srvs[0].ncmds, 1);
	assert_cmd(&srvs[0], 0, "PING", NULL);
	assert_int_equal(srvs[1].ncmds, 1);
	assert_cmd(&srvs[1], 0, "PING", NULL);
}

/* rl_round_step does what is ready and returns, in every phase: one
 * master connecting, another waiting for it, then both asked and
 * silent. */
static void
test_step_never_blocks(void **state)
{
	struct rl_round_opts o = { .need = 1, .connect_ms = 10000,
	    .reply_ms = 10000 };
	struct rl_round *r = &rd;
	int64_t t0, now;
	int i;

	(void)state;
	plain_masters(2);
	srvs[1].stall = 1;
	assert_int_equal(rl_round_script(r, nodes, 2, &o,
	    call_of(&rl_script_renew, 2, renew_keys, 2, renew_args)), 0);
	for (i = 0; i < 40; i++) {
		if (i == 20)
			srvs[1].stall = 0;
		t0 = rl_now_ms();
		assert_int_equal(rl_round_step(r, t0), 0);
		now = rl_now_ms();
		assert_true(now - t0 < 50);
		assert_true(rl_round_wake(r) > now);
		if (i < 20) {
			assert_int_equal(nodes[1].phase, RL_PH_CONNECT);
			assert_int_equal(nodes[0].phase, RL_PH_READY);
		}
		usleep(1000);
	}
	pump_all();
	assert_int_equal(nodes[0].phase, RL_PH_SENT);
	assert_int_equal(nodes[1].phase, RL_PH_SENT);
	assert_int_equal(srvs[0].ncmds, 1);
	assert_int_equal(srvs[1].ncmds, 1);
	rl_round_end(r);
	assert_int_equal(rl_round_wake(r), -1);
	assert_int_equal(nodes[0].err, RL_ECONNECT);
	assert_int_equal(nodes[0].conn.drop, 1);
}

/* ---- the connection alone ---- */

/* Drive C until a reply comes; bounded. */
static redisReply *
conn_reply(struct rl_conn *c)
{
	int64_t end = rl_now_ms() + 2000;
	struct pollfd p;
	redisReply *rep;
	enum rl_io io;

	for (;;) {
		p.fd = rl_conn_fd(c);
		p.events = rl_conn_events(c);
		p.revents = 0;
		assert_true(poll(&p, 1, 10) >= 0);
		io = rl_conn_io(c, p.revents, &rep);
		assert_int_not_equal(io, RL_IO_FAIL);
		if (io == RL_IO_REPLY)
			return rep;
		assert_true(rl_now_ms() < end);
	}
}

/* Drive C until S has received WANT commands; bounded. */
static void
conn_until(struct rl_conn *c, struct srv *s, size_t want)
{
	int64_t end = rl_now_ms() + 2000;
	struct pollfd p;
	redisReply *rep;

	while (srv_pump(s), s->ncmds < want) {
		assert_true(rl_now_ms() < end);
		p.fd = rl_conn_fd(c);
		p.events = rl_conn_events(c);
		p.revents = 0;
		assert_true(poll(&p, 1, 10) >= 0);
		assert_int_equal(rl_conn_io(c, p.revents, &rep), RL_IO_WAIT);
	}
	assert_int_equal(s->ncmds, want);
}

/* What is sent before the handshake ends is held back until it has. */
static void
test_conn_holds_commands_until_handshake(void **state)
{
	static const char *const urls[] = { "redis://:s3cret@127.0.0.1:6391" };
	static const char *argv[] = { "PING" };
	struct rl_conn *c = &nodes[0].conn;
	redisReply *rep;
	char *cmd;
	int len;

	(void)state;
	masters(1, urls);
	assert_int_equal(rl_conn_open(c), 0);
	assert_int_equal(c->state, RL_CONN_CONNECTING);
	assert_true(rl_conn_events(c) & POLLOUT);
	len = redisFormatCommandArgv(&cmd, 1, argv, NULL);
	assert_true(len > 0);
	assert_int_equal(rl_conn_send(c, cmd, (size_t)len), 0);
	redisFreeCommand(cmd);
	conn_until(c, &srvs[0], 1);
	assert_cmd(&srvs[0], 0, "AUTH", "s3cret", NULL);
	assert_int_equal(c->state, RL_CONN_HANDSHAKE);
	assert_int_equal(c->heldn, 1);
	srv_say(&srvs[0], "+OK\r\n");
	conn_until(c, &srvs[0], 2);
	assert_cmd(&srvs[0], 1, "PING", NULL);
	assert_int_equal(c->state, RL_CONN_READY);
	assert_int_equal(c->due, 1);
	srv_say(&srvs[0], "+PONG\r\n");
	rep = conn_reply(c);
	assert_int_equal(rep->type, REDIS_REPLY_STATUS);
	assert_string_equal(rep->str, "PONG");
	freeReplyObject(rep);
	assert_int_equal(c->due, 0);
}

/* Given up on before the handshake ended: closed, nothing held back is
 * ever written. */
static void
test_conn_late_before_ready_closes(void **state)
{
	static const char *const urls[] = { "redis://:s3cret@127.0.0.1:6391" };
	static const char *argv[] = { "PING" };
	struct rl_conn *c = &nodes[0].conn;
	char *cmd;
	int len;

	(void)state;
	masters(1, urls);
	assert_int_equal(rl_conn_open(c), 0);
	len = redisFormatCommandArgv(&cmd, 1, argv, NULL);
	assert_int_equal(rl_conn_send(c, cmd, (size_t)len), 0);
	redisFreeCommand(cmd);
	conn_until(c, &srvs[0], 1);
	rl_conn_late(c);
	assert_int_equal(c->state, RL_CONN_CLOSED);
	assert_int_equal(rl_conn_fd(c), -1);
	assert_int_equal(rl_conn_events(c), 0);
	srv_pump(&srvs[0]);
	assert_true(srvs[0].eof);
	assert_int_equal(srvs[0].ncmds, 1);
	assert_int_equal(srvs[0].inlen, 0);
}

/* A server that closes the connection: RL_IO_FAIL with why. */
static void
test_conn_closed_by_server(void **state)
{
	struct rl_conn *c = &nodes[0].conn;
	redisReply *rep;
	int64_t end;
	enum rl_io io;
	struct pollfd p;

	(void)state;
	plain_masters(1);
	assert_int_equal(rl_conn_open(c), 0);
	close(srvs[0].fd);
	srvs[0].fd = -1;
	end = rl_now_ms() + 2000;
	do {
		assert_true(rl_now_ms() < end);
		p.fd = rl_conn_fd(c);
		p.events = rl_conn_events(c);
		p.revents = 0;
		assert_true(poll(&p, 1, 10) >= 0);
		io = rl_conn_io(c, p.revents, &rep);
	} while (io == RL_IO_WAIT);
	assert_int_equal(io, RL_IO_FAIL);
	assert_int_equal(c->err, RL_ECONNECT);
	assert_non_null(strstr(c->why, "lost connection to "
	    "redis://127.0.0.1:6391"));
	assert_int_equal(c->state, RL_CONN_CLOSED);
}

/* A server that closed an idle connection between rounds: the next round
 * opens a new one instead of failing on the old. */
static void
test_idle_connection_closed_by_server_is_reopened(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 1, ":1\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	rl_round_end(r);
	assert_int_equal(nodes[0].conn.state, RL_CONN_READY);
	close(srvs[0].fd);	/* the server hangs up meanwhile */
	srvs[0].fd = -1;
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 2, ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(srvs[0].opens, 2);
	rl_round_end(r);
}

/* Redis Cluster's MOVED: the command goes again to the node named, which
 * stays the master's address from then on. */
static void
test_moved_is_followed(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 1, "-MOVED 3999 127.0.0.1:6392\r\n");
	answer(r, &srvs[1], 1, ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_evalsha(&srvs[1], 0);
	assert_int_equal(nodes[0].url.port, 6392);
	rl_round_end(r);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[1], 2, ":1\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 1);
	assert_int_equal(srvs[0].opens, 1);
}

/* ASK (a slot being migrated): the command goes there once, behind
 * ASKING, whose reply is not the round's; the next round starts at the
 * master's own address again. */
static void
test_ask_is_followed_once_behind_asking(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 1, "-ASK 3999 127.0.0.1:6393\r\n");
	step_until(r, &srvs[2], 2);
	assert_cmd(&srvs[2], 0, "ASKING", NULL);
	assert_evalsha(&srvs[2], 1);
	srv_say(&srvs[2], "+OK\r\n:7\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 7);
	rl_round_end(r);
	assert_int_equal(nodes[0].url.port, 6391);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 2, ":1\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	rl_round_end(r);
}

/* A cluster that keeps sending the command on: given up after
 * RL_MAX_REDIRECTS, with a line to act on. */
static void
test_redirects_are_bounded(void **state)
{
	struct rl_round *r = &rd;
	size_t i;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	for (i = 0; i <= RL_MAX_REDIRECTS; i++)
		answer(r, &srvs[0], i + 1, "-MOVED 1 127.0.0.1:6391\r\n");
	rl_round_run(r);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_ESERVER);
	assert_non_null(strstr(nodes[0].why, "kept sending the command on"));
	assert_int_equal(srvs[0].opens, RL_MAX_REDIRECTS + 1);
	rl_round_end(r);
}

/* A slot changing owner, the old owner told first: it sends the command
 * to the new one, which sends it back until it learns that it owns the
 * slot. Each time back, the command is sent again RL_TRYAGAIN_MS later,
 * more often than RL_MAX_REDIRECTS, and the reply that finally comes is
 * the round's; the master's address is where it came from. */
static void
test_moved_back_and_forth_is_sent_again_later(void **state)
{
	struct rl_round *r = &rd;
	int64_t t0;
	size_t i;

	(void)state;
	plain_masters(1);
	t0 = rl_now_ms();
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	for (i = 1; i <= 4; i++) {
		answer(r, &srvs[0], i, "-MOVED 1 127.0.0.1:6392\r\n");
		answer(r, &srvs[1], i, "-MOVED 1 127.0.0.1:6391\r\n");
	}
	answer(r, &srvs[0], 5, ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 1);
	/* The first MOVED is followed at once, the 7 back after a pause. */
	assert_true(rl_now_ms() - t0 >= 7 * RL_TRYAGAIN_MS - 5);
	assert_evalsha(&srvs[0], 4);
	assert_evalsha(&srvs[1], 3);
	assert_int_equal(srvs[0].opens, 5);
	assert_int_equal(srvs[1].opens, 4);
	assert_int_equal(nodes[0].url.port, 6391);
	rl_round_end(r);
}

/* The same, where the slot's migration began in the wrong order too: the
 * old owner ASKs the new one, which sends the command back with MOVED;
 * each ASK back to it goes behind ASKING again. */
static void
test_ask_back_and_forth_goes_behind_asking_again(void **state)
{
	struct rl_round *r = &rd;
	size_t i;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	for (i = 1; i <= 3; i++) {
		answer(r, &srvs[0], i, "-ASK 1 127.0.0.1:6393\r\n");
		step_until(r, &srvs[2], 2 * i);
		assert_cmd(&srvs[2], 2 * i - 2, "ASKING", NULL);
		assert_evalsha(&srvs[2], 2 * i - 1);
		srv_say(&srvs[2], "+OK\r\n-MOVED 1 127.0.0.1:6391\r\n");
	}
	answer(r, &srvs[0], 4, "-ASK 1 127.0.0.1:6393\r\n");
	step_until(r, &srvs[2], 8);
	assert_cmd(&srvs[2], 6, "ASKING", NULL);
	srv_say(&srvs[2], "+OK\r\n:7\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 7);
	rl_round_end(r);
	assert_int_equal(nodes[0].url.port, 6391);
}

/* Until R is done, each of the first two servers answers each command
 * with MOVED to the other; bounded. */
static void
ping_pong(struct rl_round *r)
{
	static const char *const moved[2] = { "-MOVED 1 127.0.0.1:6392\r\n",
	    "-MOVED 1 127.0.0.1:6391\r\n" };
	struct pollfd pfd[RL_MAX_NODES];
	int64_t end = rl_now_ms() + 5000;
	size_t said[2] = { 0, 0 }, i;

	while (!r->done) {
		assert_true(rl_now_ms() < end);
		rl_round_step(r, rl_now_ms());
		pump_all();
		for (i = 0; i < 2; i++)
			if (srvs[i].ncmds > said[i]) {
				srv_say(&srvs[i], moved[i]);
				said[i]++;
			}
		poll(pfd, rl_round_pollfds(r, pfd), 1);
	}
}

/* Two nodes that never agree: the round gives up once a reply's time
 * (--reply-timeout) has gone by, not before, with a line that names both and
 * what to do; a refusal that passes (the command ran on neither). */
static void
test_moved_back_and_forth_ends_by_the_reply_time(void **state)
{
	struct rl_round *r = &rd;
	int64_t t0, took;

	(void)state;
	plain_masters(1);
	t0 = rl_now_ms();
	assert_int_equal(renew_round(r, 1, 1, 400), 0);
	ping_pong(r);
	took = rl_now_ms() - t0;
	assert_true(took >= 400 - RL_TRYAGAIN_MS);
	assert_true(took < 2000);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_ECONNECT);
	assert_int_equal(nodes[0].refused, 1);
	assert_non_null(strstr(nodes[0].why, "redis://127.0.0.1:6391"));
	assert_non_null(strstr(nodes[0].why, "redis://127.0.0.1:6392"));
	assert_non_null(strstr(nodes[0].why, "kept sending the renew script "
	    "to each other (MOVED 1 127.0.0.1:639"));
	assert_non_null(strstr(nodes[0].why, "redis-cli --cluster fix"));
	/* One try every RL_TRYAGAIN_MS at most. */
	assert_true(srvs[0].opens + srvs[1].opens <= 400 / RL_TRYAGAIN_MS + 2);
	rl_round_end(r);
}

/* The follower as a waiter's subscription uses it (rl_sub.c): no ASK,
 * a ping-pong tried again for a reply's time from its first bounce, then
 * failed with a line naming both nodes. */
static void
test_follow_of_a_subscription(void **state)
{
	struct rl_url a = { .host = (char *)"127.0.0.1", .port = 6391 };
	struct rl_url b = { .host = (char *)"127.0.0.1", .port = 6392 };
	struct rl_follow f = { 0 };
	char why[RL_WHY_MAX] = "";
	struct rl_redir to = { .doing = "SSUBSCRIBE to x", .reply_ms = 200,
	    .why = why, .whylen = sizeof(why) };

	(void)state;
	assert_int_equal(rl_follow(&f, &a, "ASK 1 127.0.0.1:6392", 1000, &to),
	    RL_FOLLOW_NOT);
	assert_int_equal(rl_follow(&f, &a, "ERR no", 1000, &to),
	    RL_FOLLOW_NOT);
	assert_int_equal(rl_follow(&f, &a, "MOVED 1 127.0.0.1:6392", 1000,
	    &to), RL_FOLLOW_NEW);
	assert_string_equal(to.host, "127.0.0.1");
	assert_int_equal(to.port, 6392);
	free(to.host);
	/* Back where it came from: again, until 200 ms from then. */
	assert_int_equal(rl_follow(&f, &b, "MOVED 1 127.0.0.1:6391", 1000,
	    &to), RL_FOLLOW_BACK);
	free(to.host);
	assert_int_equal(rl_follow(&f, &a, "MOVED 1 127.0.0.1:6392", 1100,
	    &to), RL_FOLLOW_BACK);
	free(to.host);
	assert_int_equal(rl_follow(&f, &b, "MOVED 1 127.0.0.1:6391", 1160,
	    &to), RL_FOLLOW_OVER);
	assert_string_equal(why, "redis://127.0.0.1:6392 and "
	    "redis://127.0.0.1:6391 kept sending SSUBSCRIBE to x to each other "
	    "(MOVED 1 127.0.0.1:6391) for 160 ms (see --reply-timeout): each "
	    "says the other serves the slot (a move left half done?); finish "
	    "the move with redis-cli --cluster fix, or CLUSTER SETSLOT <slot> "
	    "NODE <owner-id> on both");
	assert_int_equal(f.moves, 1);
	rl_follow_clear(&f);
	assert_int_equal(f.hops.n, 0);
	assert_int_equal(f.moves, 0);
	assert_int_equal(f.end, 0);
}

/* A round's follower takes ASK, and at most RL_MAX_REDIRECTS moves to
 * nodes new to it. */
static void
test_follow_bounds_new_nodes(void **state)
{
	struct rl_url at = { .host = (char *)"127.0.0.1" };
	struct rl_follow f = { 0 };
	char why[RL_WHY_MAX], moved[64];
	struct rl_redir to = { .doing = "the acquire script", .reply_ms = 200,
	    .ask_ok = 1, .why = why, .whylen = sizeof(why) };
	int i;

	(void)state;
	for (i = 0; i < RL_MAX_REDIRECTS; i++) {
		at.port = 7000 + i;
		snprintf(moved, sizeof(moved), "%s 1 127.0.0.1:%d",
		    i == 0 ? "ASK" : "MOVED", 7001 + i);
		assert_int_equal(rl_follow(&f, &at, moved, 1000, &to),
		    RL_FOLLOW_NEW);
		assert_int_equal(to.ask, i == 0);
		free(to.host);
	}
	at.port = 7000 + i;
	assert_int_equal(rl_follow(&f, &at, "MOVED 1 127.0.0.1:7100", 1000,
	    &to), RL_FOLLOW_NOT);
	rl_follow_clear(&f);
}

/* A transport that takes all the socket has and hands it out in pieces,
 * as TLS does with the records it decrypts. */
static char held[1 << 17];
static size_t nheld;

static ssize_t
hoard_read(struct rl_conn *c, void *buf, size_t len)
{
	ssize_t n;

	while (nheld < sizeof(held) &&
	    (n = read(c->fd, held + nheld, sizeof(held) - nheld)) > 0)
		nheld += (size_t)n;
	if (nheld == 0) {
		errno = EAGAIN;
		return -1;
	}
	if (len > nheld)
		len = nheld;
	memcpy(buf, held, len);
	memmove(held, held + len, nheld - len);
	nheld -= len;
	return (ssize_t)len;
}

static const struct rl_transport hoard = {
	fake_open, fake_finish, hoard_read, fake_write, fake_close, NULL
};

/* A reply bigger than one read, all of it held by the transport and none
 * left on the socket: it is read whole, without waiting for a poll event
 * that will not come. */
static void
test_conn_reads_what_the_transport_holds(void **state)
{
	struct rl_conn *c = &nodes[0].conn;
	static char big[50000];
	redisReply *rep = NULL;
	int64_t end;
	enum rl_io io;
	struct pollfd p;
	size_t n = 40000;

	(void)state;
	plain_masters(1);
	rl_conn_init(c, &nodes[0].url, &hoard);
	nheld = 0;
	assert_int_equal(rl_conn_open(c), 0);
	c->probe = 0;	/* the reply below is not in answer to anything */
	snprintf(big, sizeof(big), "$%zu\r\n", n);
	memset(big + strlen(big), 'x', n);
	memcpy(big + strlen(big), "\r\n", 3);
	srv_say(&srvs[0], big);
	end = rl_now_ms() + 1000;
	do {
		assert_true(rl_now_ms() < end);
		p.fd = rl_conn_fd(c);
		p.events = rl_conn_events(c);
		p.revents = 0;
		assert_true(poll(&p, 1, 10) >= 0);
		io = rl_conn_io(c, p.revents, &rep);
	} while (io == RL_IO_WAIT);
	assert_int_equal(io, RL_IO_REPLY);
	assert_int_equal(rep->type, REDIS_REPLY_STRING);
	assert_int_equal(rep->len, n);
	freeReplyObject(rep);
	rl_conn_close(c);
}

/* --replicas: WAIT goes in the same write as the EVALSHA, and the round
 * waits for both replies. */
static void
test_wait_pipelined_behind_the_script(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	assert_int_equal(rl_round_ack(r, 2, 500), 0);
	step_until(r, &srvs[0], 2);
	/* A new connection sends the script whole: a NOSCRIPT would leave
	 * the WAIT behind it blocking for nothing. */
	assert_eval(&srvs[0], 0);
	assert_cmd(&srvs[0], 1, "WAIT", "2", "500", NULL);
	srv_say(&srvs[0], ":1\r\n");
	step_some(r);
	assert_false(r->done);		/* the WAIT's count is due too */
	srv_say(&srvs[0], ":2\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_int_equal(nodes[0].reply->integer, 1);
	assert_int_equal(nodes[0].acks, 2);
	assert_int_equal(nodes[0].conn.due, 0);
	rl_round_end(r);
	/* Once it ran there, EVALSHA. */
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	assert_int_equal(rl_round_ack(r, 2, 500), 0);
	step_until(r, &srvs[0], 4);
	assert_evalsha(&srvs[0], 2);
	assert_cmd(&srvs[0], 3, "WAIT", "2", "500", NULL);
	srv_say(&srvs[0], ":1\r\n:2\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].acks, 2);
	rl_round_end(r);
	srv_pump(&srvs[0]);
	assert_int_equal(srvs[0].ncmds, 4);
}

/* NOSCRIPT: EVAL and WAIT again; the count of the WAIT that followed the
 * refused EVALSHA is not taken for the script's. */
static void
test_noscript_drops_the_wait_of_the_refused_evalsha(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	/* The script ran on this connection once; then the server lost it
	 * (SCRIPT FLUSH). */
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	assert_int_equal(rl_round_ack(r, 1, 300), 0);
	answer(r, &srvs[0], 2, ":1\r\n:1\r\n");
	rl_round_run(r);
	rl_round_end(r);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	assert_int_equal(rl_round_ack(r, 1, 300), 0);
	step_until(r, &srvs[0], 4);
	assert_evalsha(&srvs[0], 2);
	srv_say(&srvs[0], "-NOSCRIPT No matching script.\r\n:1\r\n");
	step_until(r, &srvs[0], 6);
	assert_eval(&srvs[0], 4);
	assert_cmd(&srvs[0], 5, "WAIT", "1", "300", NULL);
	assert_false(r->done);
	srv_say(&srvs[0], ":1\r\n");
	step_some(r);
	assert_false(r->done);
	srv_say(&srvs[0], ":0\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].full, 1);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 1);
	assert_int_equal(nodes[0].acks, 0);
	assert_int_equal(nodes[0].conn.due, 0);
}

/* A refused script: the WAIT behind it is still read in this round, so
 * the next round's reply is its own. */
static void
test_refused_script_still_reads_its_wait(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	assert_int_equal(rl_round_ack(r, 1, 300), 0);
	step_until(r, &srvs[0], 2);
	srv_say(&srvs[0], "-OOM command not allowed\r\n");
	step_some(r);
	assert_false(r->done);
	srv_say(&srvs[0], ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].refused, 1);
	assert_int_equal(nodes[0].err, RL_ESERVER);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].conn.due, 0);
	assert_int_equal(nodes[0].conn.drop, 0);
	rl_round_end(r);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 3, ":0\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].reply->integer, 0);
	assert_int_equal(nodes[0].acks, -1);
}

/* WAIT refused (an ACL): no count, and the reason; the script's reply
 * stays. */
static void
test_wait_refused_leaves_no_count(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	assert_int_equal(rl_round_ack(r, 1, 300), 0);
	answer(r, &srvs[0], 2, ":1\r\n-NOPERM this user has no permissions "
	    "to run the 'wait' command\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].acks, -1);
	assert_non_null(strstr(nodes[0].why, "NOPERM"));
}

/* The WAIT never answers: the master is given up on after the reply
 * timeout plus the WAIT's, and the script's reply is kept. */
static void
test_wait_late_keeps_the_script_reply(void **state)
{
	struct rl_round *r = &rd;
	int64_t t0;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 50), 0);
	assert_int_equal(rl_round_ack(r, 1, 100), 0);
	answer(r, &srvs[0], 2, ":1\r\n");
	t0 = rl_now_ms();
	rl_round_run(r);
	assert_true(rl_now_ms() - t0 >= 50);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].acks, -1);
	assert_non_null(strstr(nodes[0].why, "WAIT timed out"));
	assert_int_equal(nodes[0].conn.drop, 1);
}

/* A lone WAIT must follow its write on the same connection: with keep,
 * a master whose connection is gone is not reconnected. */
static void
test_keep_does_not_reconnect(void **state)
{
	struct rl_round *r = &rd;
	struct rl_round_opts o = { .need = 1, .connect_ms = 2000,
	    .reply_ms = 2000, .keep = 1 };
	const char *argv[3] = { "WAIT", "1", "100" };

	(void)state;
	plain_masters(1);
	assert_int_equal(rl_round_command(r, nodes, 1, &o, 3, argv), 0);
	rl_round_run(r);
	assert_int_equal(srvs[0].opens, 0);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_ECONNECT);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* A release (it publishes) to two masters, the second one a Redis 7
 * cluster node; sent whole (EVAL) with WHOLE. Both answer. */
static void
release_round_sharded(struct rl_round *r, int whole)
{
	static const char *keys[] = { "x", "c", "redlock_holder:{x}",
	    "q", "t", "w" };
	static const char *args[] = { "o:1", "0", "PUBLISH" };
	struct rl_round_opts o;

	plain_masters(2);
	srvs[1].cluster = 1;
	o = opts_of(1, 2000);
	o.pub = o.learn = 1;
	o.whole = whole;
	assert_int_equal(rl_round_script(r, nodes, 2, &o,
	    call_of(&rl_script_release, 6, keys, 3, args)), 0);
	answer(r, &srvs[0], 1, ":1\r\n");
	answer(r, &srvs[1], 1, ":1\r\n");
	rl_round_run(r);
}

/* A script that takes the publish command gets SPUBLISH on a master whose
 * HELLO said Redis 7 cluster, and PUBLISH on one that did not. */
static void
test_publish_command_follows_each_master(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	release_round_sharded(r, 0);
	assert_int_equal(srvs[0].nhello, 1);
	assert_int_equal(srvs[1].nhello, 1);
	assert_int_equal(srvs[0].cmds[0].argc, 3 + 6 + 3);
	assert_string_equal(srvs[0].cmds[0].argv[11], "PUBLISH");
	assert_string_equal(srvs[1].cmds[0].argv[11], "SPUBLISH");
	assert_int_equal(nodes[1].sharded, 1);
	assert_int_equal(nodes[0].sharded, 0);
	rl_round_end(r);
}

/* Sent whole (EVAL), a script with the publish command keeps SPUBLISH on
 * a sharded master and PUBLISH on the other, its arguments as they were. */
static void
test_whole_script_keeps_each_publish_command(void **state)
{
	struct rl_round *r = &rd;
	size_t i;

	(void)state;
	release_round_sharded(r, 1);
	rl_round_end(r);
	for (i = 0; i < 2; i++) {
		assert_int_equal(srvs[i].cmds[0].argc, 3 + 6 + 3);
		assert_string_equal(srvs[i].cmds[0].argv[0], "EVAL");
		assert_string_equal(srvs[i].cmds[0].argv[1],
		    rl_script_release.src);
		assert_string_equal(srvs[i].cmds[0].argv[2], "6");
		assert_string_equal(srvs[i].cmds[0].argv[3], "x");
		assert_string_equal(srvs[i].cmds[0].argv[9], "o:1");
	}
	assert_string_equal(srvs[0].cmds[0].argv[11], "PUBLISH");
	assert_string_equal(srvs[1].cmds[0].argv[11], "SPUBLISH");
}

/* A round that gives back the last acquisition's hold (opts hold) leaves
 * out a master that acquisition never went to: there a count of the same
 * owner's is another hold's. A round without it goes there. */
static void
test_hold_leaves_out_a_master_never_sent_to(void **state)
{
	struct rl_round *r = &rd;
	struct rl_round_opts o;
	size_t j;

	(void)state;
	plain_masters(3);
	srvs[2].refuse = 1;
	assert_int_equal(renew_round(r, 3, 2, 2000), 0);
	answer(r, &srvs[0], 1, ":1\r\n");
	answer(r, &srvs[1], 1, ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].sent, 1);
	assert_int_equal(nodes[1].sent, 1);
	assert_int_equal(nodes[2].sent, 0);
	rl_round_end(r);
	for (j = 0; j < 3; j++)
		nodes[j].away = !nodes[j].sent;
	srvs[2].refuse = 0;
	o = opts_of(1, 2000);
	o.hold = 1;
	assert_int_equal(renew_with(r, 3, &o), 0);
	answer(r, &srvs[0], 2, ":1\r\n");
	answer(r, &srvs[1], 2, ":1\r\n");
	rl_round_run(r);
	/* Unreachable, as at the acquisition. */
	assert_null(nodes[2].reply);
	assert_int_equal(nodes[2].err, RL_ECONNECT);
	assert_non_null(strstr(nodes[2].why, "Connection refused"));
	assert_int_equal(nodes[2].sent, 0);
	rl_round_end(r);
	pump_all();
	assert_int_equal(srvs[2].opens, 0);
	assert_int_equal(srvs[2].ncmds, 0);
	/* Without opts hold, it goes there. */
	assert_int_equal(renew_round(r, 3, 2, 2000), 0);
	answer(r, &srvs[0], 3, ":1\r\n");
	answer(r, &srvs[1], 3, ":1\r\n");
	answer(r, &srvs[2], 1, ":1\r\n");
	rl_round_run(r);
	rl_round_end(r);
	assert_evalsha(&srvs[2], 0);
}

/* An acquisition does not wait for HELLO: the script follows it in the
 * same write, and its reply is the round's. */
static void
test_hello_costs_no_round_trip(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	srvs[0].mute = 1;
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], 1);
	assert_int_equal(srvs[0].nhello, 1);
	assert_evalsha(&srvs[0], 0);
	srvs[0].mute = 0;
	srv_say(&srvs[0], ":1\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 1);
	rl_round_end(r);
}

/* A round on a connection that asks INFO memory, whose answer is INFO
 * (the lines of a bulk reply, or a whole RESP reply when it starts with
 * "-" or ":"): the script went out in the same write, INFO not answered yet,
 * and its reply is the round's. What the connection made of INFO's;
 * then the connection is closed, so the next round opens a new one. */
static const char *
evicts_after(struct rl_round *r, const char *info)
{
	static char bulk[512];
	size_t n = srvs[0].ncmds;

	if (info[0] == '-' || info[0] == ':')
		snprintf(bulk, sizeof(bulk), "%s", info);
	else
		snprintf(bulk, sizeof(bulk), "$%zu\r\n%s\r\n", strlen(info),
		    info);
	nodes[0].conn.ask_info = 1;
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_until(r, &srvs[0], n + 2);
	assert_cmd(&srvs[0], n, "INFO", "memory", NULL);
	assert_evalsha(&srvs[0], n + 1);
	assert_int_equal(nodes[0].conn.info_due, 1);
	srv_say(&srvs[0], bulk);
	srv_say(&srvs[0], ":1\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->integer, 1);
	rl_round_end(r);
	rl_conn_close(&nodes[0].conn);
	return nodes[0].conn.evicts;
}

/* Eviction: INFO memory costs no round trip, and says a policy that may
 * evict a lock (any but noeviction, unless maxmemory is 0); a refusal
 * (an ACL without INFO), or a reply without the policy, says none. A
 * connection that does not ask sends no INFO. */
static void
test_info_memory_costs_no_round_trip(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	assert_string_equal(evicts_after(r, "# Memory\r\nused_memory:868000\r\n"
	    "maxmemory:52428800\r\nmaxmemory_human:50.00M\r\n"
	    "maxmemory_policy:allkeys-lru\r\nallocator_frag_ratio:1.0\r\n"),
	    "allkeys-lru");
	assert_string_equal(evicts_after(r, "-NOPERM this user has no "
	    "permissions to run the 'info' command\r\n"), "");
	assert_string_equal(evicts_after(r, "maxmemory_policy:volatile-ttl\r\n"
	    "maxmemory:1\r\n"), "volatile-ttl");
	assert_string_equal(evicts_after(r, "maxmemory:0\r\n"
	    "maxmemory_policy:allkeys-lru\r\n"), "");
	assert_string_equal(evicts_after(r, "maxmemory:100\r\n"
	    "maxmemory_policy:noeviction\r\n"), "");
	/* maxmemory not said: the policy may apply. */
	assert_string_equal(evicts_after(r, "maxmemory_policy:allkeys-random"),
	    "allkeys-random");
	assert_string_equal(evicts_after(r, "maxmemory:100\r\n"
	    "maxmemory_policy:\r\n"), "");
	assert_string_equal(evicts_after(r, "maxmemory_policy_x:allkeys-lru\r\n"
	    "maxmemory:100\r\n"), "");
	assert_string_equal(evicts_after(r, ":5\r\n"), "");
	nodes[0].conn.ask_info = 0;
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], srvs[0].ncmds + 1, ":1\r\n");
	rl_round_run(r);
	assert_evalsha(&srvs[0], srvs[0].ncmds - 1);
	assert_non_null(nodes[0].reply);
}

/* With learn, nothing is sent before HELLO has answered: a release must
 * know which command wakes the waiters. */
static void
test_learn_waits_for_hello(void **state)
{
	static const char *keys[] = { "x", "c", "redlock_holder:{x}",
	    "q", "t", "w" };
	static const char *args[] = { "0", "PUBLISH" };
	struct rl_round *r = &rd;
	struct rl_round_opts o;

	(void)state;
	plain_masters(1);
	srvs[0].cluster = 1;
	srvs[0].mute = 1;
	o = opts_of(1, 2000);
	o.pub = o.learn = 1;
	assert_int_equal(rl_round_script(r, nodes, 1, &o,
	    call_of(&rl_script_force, 6, keys, 2, args)), 0);
	step_some(r);
	assert_int_equal(srvs[0].nhello, 1);
	assert_int_equal(srvs[0].ncmds, 0);
	srvs[0].mute = 0;
	srv_hellos(&srvs[0]);
	answer(r, &srvs[0], 1, ":1\r\n");
	rl_round_run(r);
	assert_string_equal(srvs[0].cmds[0].argv[10], "SPUBLISH");
	assert_non_null(nodes[0].reply);
	rl_round_end(r);
	/* Known from then on: a new connection does not wait again. */
	rl_conn_close(&nodes[0].conn);
	srvs[0].mute = 1;
	assert_int_equal(rl_round_script(r, nodes, 1, &o,
	    call_of(&rl_script_force, 6, keys, 2, args)), 0);
	step_until(r, &srvs[0], 2);
	assert_int_equal(srvs[0].opens, 2);
	assert_string_equal(srvs[0].cmds[1].argv[10], "SPUBLISH");
	rl_round_end(r);
}

/* --pubsub sharded: HELLO is part of the handshake, and nothing is sent
 * before it has said Redis 7 or newer, a cluster or not; then SPUBLISH.
 * --pubsub classic: no HELLO, and PUBLISH on a cluster too. */
static void
test_pubsub_sharded_and_classic_by_request(void **state)
{
	static const char *keys[] = { "x", "c", "redlock_holder:{x}",
	    "q", "t", "w" };
	static const char *args[] = { "o:1", "0", "PUBLISH" };
	struct rl_round *r = &rd;
	struct rl_round_opts o;

	(void)state;
	plain_masters(2);
	srvs[0].mute = 1;
	srvs[1].cluster = 1;
	nodes[0].conn.pubsub = RL_PUBSUB_SHARDED;
	nodes[1].conn.pubsub = RL_PUBSUB_CLASSIC;
	o = opts_of(1, 2000);
	o.pub = o.learn = 1;
	assert_int_equal(rl_round_script(r, nodes, 2, &o,
	    call_of(&rl_script_release, 6, keys, 3, args)), 0);
	/* The round waits for every master: none is sent anything yet. */
	step_some(r);
	assert_int_equal(srvs[0].nhello, 1);
	assert_int_equal(srvs[0].ncmds, 0);
	assert_int_equal(srvs[1].ncmds, 0);
	srvs[0].mute = 0;
	srv_hellos(&srvs[0]);
	answer(r, &srvs[0], 1, ":1\r\n");
	answer(r, &srvs[1], 1, ":1\r\n");
	rl_round_run(r);
	assert_string_equal(srvs[0].cmds[0].argv[11], "SPUBLISH");
	assert_string_equal(srvs[1].cmds[0].argv[11], "PUBLISH");
	assert_int_equal(srvs[1].nhello, 0);
	assert_int_equal(nodes[0].sharded, 1);
	assert_int_equal(nodes[1].sharded, 0);
	rl_round_end(r);
}

/* --pubsub sharded on a server older than Redis 7: the connection fails
 * at HELLO, saying what to do, and the command is never sent. */
static void
test_pubsub_sharded_refuses_an_older_server(void **state)
{
	struct rl_round *r = &rd;

	(void)state;
	plain_masters(1);
	srvs[0].version = "6.2.14";
	nodes[0].conn.pubsub = RL_PUBSUB_SHARDED;
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	step_some(r);
	rl_round_run(r);
	assert_int_equal(srvs[0].nhello, 1);
	assert_int_equal(srvs[0].ncmds, 0);
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_ESERVER);
	assert_string_equal(nodes[0].why, "redis://127.0.0.1:6391 runs redis "
	    "6.2.14: it has no sharded pub/sub (SPUBLISH, SSUBSCRIBE: Redis 7 "
	    "and later), which --pubsub sharded needs; use --pubsub classic, "
	    "or auto");
	rl_round_end(r);
}

/* TRYAGAIN (the slot's keys half migrated): the command is sent again a
 * little later on the same connection, and its reply is the round's. */
static void
test_tryagain_sends_again_later(void **state)
{
	struct rl_round *r = &rd;
	int64_t t0;

	(void)state;
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 1, "-TRYAGAIN Multiple keys request during "
	    "rehashing of slot\r\n");
	t0 = rl_now_ms();
	step_until(r, &srvs[0], 2);
	assert_true(rl_now_ms() - t0 >= RL_TRYAGAIN_MS - 5);
	assert_evalsha(&srvs[0], 1);
	srv_say(&srvs[0], ":1\r\n");
	rl_round_run(r);
	assert_int_equal(nodes[0].err, RL_OK);
	assert_non_null(nodes[0].reply);
	assert_int_equal(srvs[0].opens, 1);
	rl_round_end(r);
}

/* A round of one master answered :7 and ended: the reply a side round
 * must put back. */
static redisReply *
reply_before(struct rl_round *r)
{
	plain_masters(1);
	assert_int_equal(renew_round(r, 1, 1, 2000), 0);
	answer(r, &srvs[0], 1, ":7\r\n");
	rl_round_run(r);
	rl_round_end(r);
	return nodes[0].reply;
}

/* A round on the side (opts aside) leaves the replies of the round before
 * in place once it ends, its own freed: strings handed to callers point
 * into them. */
static void
test_aside_round_puts_the_replies_before_back(void **state)
{
	static const char *argv[] = { "PING" };
	struct rl_round_opts o = { .need = 1, .connect_ms = 2000,
	    .reply_ms = 2000 };
	struct rl_round *r = &rd;
	redisReply *before;

	(void)state;
	before = reply_before(r);
	assert_non_null(before);
	o.aside = 1;
	assert_int_equal(rl_round_command(r, nodes, 1, &o, 1, argv), 0);
	assert_null(nodes[0].reply);
	answer(r, &srvs[0], 2, "+PONG\r\n");
	rl_round_run(r);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->type, REDIS_REPLY_STATUS);
	rl_round_end(r);
	assert_ptr_equal(nodes[0].reply, before);
	assert_int_equal(nodes[0].reply->integer, 7);
	/* Ended twice, put back once. */
	rl_round_end(r);
	assert_ptr_equal(nodes[0].reply, before);
	/* Not aside: the round before's replies go. */
	o.aside = 0;
	assert_int_equal(rl_round_command(r, nodes, 1, &o, 1, argv), 0);
	assert_null(nodes[0].reply);
	answer(r, &srvs[0], 3, "+PONG\r\n");
	rl_round_run(r);
	rl_round_end(r);
	assert_int_equal(nodes[0].reply->type, REDIS_REPLY_STATUS);
}

/* rl_round_end_keep: a round on the side is over (its command freed),
 * its own replies still in the nodes to be read, until rl_round_end puts
 * those of the round before back; a round not aside simply ends. */
static void
test_aside_round_kept_until_read(void **state)
{
	static const char *argv[] = { "PING" };
	struct rl_round_opts o = { .need = 1, .connect_ms = 2000,
	    .reply_ms = 2000 };
	struct rl_round *r = &rd;
	redisReply *before;

	(void)state;
	before = reply_before(r);
	o.aside = 1;
	assert_int_equal(rl_round_command(r, nodes, 1, &o, 1, argv), 0);
	answer(r, &srvs[0], 2, "+PONG\r\n");
	rl_round_run(r);
	rl_round_end_keep(r);
	assert_null(r->cmd);
	assert_non_null(nodes[0].reply);
	assert_int_equal(nodes[0].reply->type, REDIS_REPLY_STATUS);
	rl_round_end(r);
	assert_ptr_equal(nodes[0].reply, before);
	assert_int_equal(nodes[0].reply->integer, 7);
	o.aside = 0;
	assert_int_equal(rl_round_command(r, nodes, 1, &o, 1, argv), 0);
	answer(r, &srvs[0], 3, "+PONG\r\n");
	rl_round_run(r);
	rl_round_end_keep(r);
	before = nodes[0].reply;
	assert_int_equal(before->type, REDIS_REPLY_STATUS);
	rl_round_end(r);
	assert_ptr_equal(nodes[0].reply, before);
}

/* rl_round_once: the reply is the caller's, not the node's; a master out
 * of reach says why. */
static void
test_round_once_hands_the_reply_over(void **state)
{
	static const char *argv[] = { "PING" };
	struct rl_round_opts o = { .need = 1, .connect_ms = 2000,
	    .reply_ms = 2000 };

	(void)state;
	plain_masters(1);
	srvs[0].refuse = 1;
	assert_null(rl_round_once(&nodes[0], &o, 1, argv));
	assert_null(nodes[0].reply);
	assert_int_equal(nodes[0].err, RL_ECONNECT);
	assert_true(nodes[0].why[0] != '\0');
}

/* The one place a master's address changes: after a MOVED for good, its
 * subscription with it; after an ASK for the round, behind ASKING. */
static void
test_node_move_after_moved_and_ask(void **state)
{
	struct rl_node *nd = &nodes[0];
	char *h;

	(void)state;
	plain_masters(1);
	assert_int_equal(rl_conn_open(&nd->conn), 0);
	assert_int_equal(rl_conn_open(&nd->sub), 0);
	assert_non_null(h = strdup("127.0.0.1"));
	rl_node_move(nd, h, 6392, 1);
	assert_int_equal(nd->conn.state, RL_CONN_CLOSED);
	assert_true(nd->sub.state != RL_CONN_CLOSED);
	assert_int_equal(nd->url.port, 6392);
	assert_int_equal(nd->home_port, 6391);
	assert_non_null(nd->home);
	assert_int_equal(nd->asking, 1);
	assert_non_null(h = strdup("127.0.0.1"));
	rl_node_move(nd, h, 6393, 0);
	assert_int_equal(nd->sub.state, RL_CONN_CLOSED);
	assert_int_equal(nd->url.port, 6393);
	assert_int_equal(nd->asking, 0);
	/* The round's end takes it home. */
	rl_round_end(&rd);
	assert_non_null(nd->home);
	rd.nodes = nodes;
	rd.n = 1;
	rl_round_end(&rd);
	assert_null(nd->home);
	assert_int_equal(nd->url.port, 6391);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_one_master_sends_one_evalsha),
		T(test_noscript_falls_back_to_one_eval),
		T(test_whole_script_until_the_connection_ran_it),
		T(test_script_exists_behind_teaches_the_connection),
		T(test_noscript_to_eval_is_an_error),
		T(test_three_masters_gather_replies_per_node),
		T(test_too_few_reachable_sends_nothing),
		T(test_connect_failing_under_way),
		T(test_connect_timeout_then_the_rest_are_asked),
		T(test_straggler_gets_the_per_master_bound),
		T(test_no_cut_before_a_quorum_connects),
	T(test_straggler_gets_the_per_master_bound),
	T(test_no_cut_before_a_quorum_connects),
		T(test_handshake_goes_first),
		T(test_handshake_names_the_acl_user),
		T(test_wrong_password_stops_the_round),
		T(test_select_refused_is_an_auth_error),
		T(test_timeout_keeps_commands_in_order),
		T(test_oom_reply_is_a_server_error),
		T(test_server_error_replies),
		T(test_command_round_sends_it_as_is),
		T(test_step_never_blocks),
		T(test_conn_holds_commands_until_handshake),
		T(test_conn_late_before_ready_closes),
		T(test_conn_closed_by_server),
		T(test_idle_connection_closed_by_server_is_reopened),
		T(test_conn_reads_what_the_transport_holds),
		T(test_moved_is_followed),
		T(test_ask_is_followed_once_behind_asking),
		T(test_redirects_are_bounded),
		T(test_moved_back_and_forth_is_sent_again_later),
		T(test_ask_back_and_forth_goes_behind_asking_again),
		T(test_moved_back_and_forth_ends_by_the_reply_time),
		T(test_follow_of_a_subscription),
		T(test_follow_bounds_new_nodes),
		T(test_wait_pipelined_behind_the_script),
		T(test_noscript_drops_the_wait_of_the_refused_evalsha),
		T(test_refused_script_still_reads_its_wait),
		T(test_wait_refused_leaves_no_count),
		T(test_wait_late_keeps_the_script_reply),
		T(test_keep_does_not_reconnect),
		T(test_publish_command_follows_each_master),
		T(test_hello_costs_no_round_trip),
		T(test_info_memory_costs_no_round_trip),
		T(test_learn_waits_for_hello),
		T(test_pubsub_sharded_and_classic_by_request),
		T(test_pubsub_sharded_refuses_an_older_server),
		T(test_tryagain_sends_again_later),
		T(test_aside_round_puts_the_replies_before_back),
		T(test_aside_round_kept_until_read),
		T(test_round_once_hands_the_reply_over),
		T(test_node_move_after_moved_and_ask),
		T(test_whole_script_keeps_each_publish_command),
		T(test_hold_leaves_out_a_master_never_sent_to),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
