/* rl_client.c: the client: its masters, one blocking round, errors. */
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_client.h"
#include "rl_decode.h"
#include "rl_quorum.h"
#include "rl_scripts.h"

enum rl_err
rl_seterr(rl_client *c, enum rl_err e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errstr, sizeof(c->errstr), fmt, ap);
	va_end(ap);
	c->refused = 0;
	return e;
}

const char *
rl_errstr(const rl_client *c)
{
	return c->errstr;
}

int
rl_err_refused(const rl_client *c)
{
	return c->refused;
}

const char *
rl_user(const rl_client *c)
{
	return rl_url_user(&c->nodes[0].url);
}

static const struct rl_transport *forced;

void
rl_client_set_transport(const struct rl_transport *t)
{
	forced = t;
}

/* The transport a URL asks for. */
static const struct rl_transport *
transport_for(const struct rl_url *u)
{
	if (forced != NULL)
		return forced;
	if (u->master != NULL)
		return &rl_transport_sentinel;
	if (u->tls)
		return &rl_transport_tls;
	return &rl_transport_tcp;
}

rl_client *
rl_client_new(const struct rl_url *u, int64_t connect_timeout_ms,
    int64_t timeout_ms)
{
	return rl_client_new_multi(u, 1, connect_timeout_ms, timeout_ms);
}

rl_client *
rl_client_new_multi(const struct rl_url *urls, size_t n,
    int64_t connect_timeout_ms, int64_t timeout_ms)
{
	rl_client *c;
	const struct rl_transport *t;
	size_t i;

	if (n == 0 || n > RL_MAX_NODES || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->connect_timeout_ms = connect_timeout_ms;
	c->timeout_ms = timeout_ms;
	c->node_timeout_ms = rl_node_timeout_for(30000);
	c->intr_fd = -1;
	c->connect_until_ms = -1;
	c->waiter_ms = RL_WAITER_TIMEOUT_MS;
	rl_set_history(c, RL_HISTORY_MAX, RL_HISTORY_TTL_MS);
	if ((c->nodes = calloc(n, sizeof(*c->nodes))) == NULL) {
		free(c);
		return NULL;
	}
	c->n = n;
	for (i = 0; i < n; i++) {
		t = transport_for(&urls[i]);
		rl_conn_init(&c->nodes[i].conn, &c->nodes[i].url, t);
		rl_conn_init(&c->nodes[i].sub, &c->nodes[i].url, t);
		if (rl_url_copy(&c->nodes[i].url, &urls[i]) < 0) {
			rl_client_free(c);
			return NULL;
		}
		rl_switch_init(&c->nodes[i].sw, &c->nodes[i].url);
	}
	return c;
}

size_t
rl_nodes(const rl_client *c)
{
	return c->n;
}

void
rl_set_node_timeout(rl_client *c, int64_t ms)
{
	c->node_timeout_ms = ms;
}

void
rl_set_replicas(rl_client *c, int n)
{
	size_t j;

	c->replicas = n;
	for (j = 0; n < 0 && j < c->n; j++)
		if (c->nodes[j].url.master != NULL)
			return;
	if (n < 0)
		c->replicas = 0;
}

int64_t
rl_acks(const rl_client *c, int64_t *acks)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		acks[j] = c->replicas < 0 && !c->nodes[j].recount &&
		    (!c->nodes[j].waits || c->nodes[j].wait_refused) ? 1 :
		    c->nodes[j].acks;
	return c->replicas < 0 ? 1 : c->replicas;
}

enum rl_err
rl_set_waiter_timeout(rl_client *c, int64_t ms)
{
	if (ms > RL_WAITER_TIMEOUT_MAX_MS)
		return rl_seterr(c, RL_EUSAGE, "a waiter timeout of %lldms is "
		    "longer than the most, %lldms", (long long)ms,
		    (long long)RL_WAITER_TIMEOUT_MAX_MS);
	c->waiter_ms = ms > 0 ? ms : RL_WAITER_TIMEOUT_MS;
	return RL_OK;
}

enum rl_err
rl_set_min_hold(rl_client *c, int64_t ms)
{
	if (ms < 0 || ms > RL_MIN_HOLD_MAX_MS)
		return rl_seterr(c, RL_EUSAGE, "a minimum hold of %lldms is "
		    "not from 0 to %lldms", (long long)ms,
		    (long long)RL_MIN_HOLD_MAX_MS);
	c->min_hold_ms = ms;
	return RL_OK;
}

enum rl_err
rl_set_history(rl_client *c, int64_t max, int64_t ttl_ms)
{
	if (max < 0 || max > RL_HISTORY_MAX_MAX || ttl_ms < 0)
		return rl_seterr(c, RL_EUSAGE, "a history of %lld events is not "
		    "from 0 to %lld", (long long)max,
		    (long long)RL_HISTORY_MAX_MAX);
	if (max == 0)
		c->hist_max[0] = '\0';
	else
		snprintf(c->hist_max, sizeof(c->hist_max), "%lld",
		    (long long)max);
	/* Twice: the scripts renew the stream's expiry once per half of
	 * it (rl_log_renews), so that it lasts at least TTL_MS. */
	snprintf(c->hist_ttl, sizeof(c->hist_ttl), "%lld",
	    (long long)(ttl_ms > INT64_MAX / 2 ? INT64_MAX : 2 * ttl_ms));
	return RL_OK;
}

void
rl_set_exit_status(rl_client *c, int status)
{
	if (status < -1)
		snprintf(c->exit_status, sizeof(c->exit_status), "-");
	else if (status < 0)
		c->exit_status[0] = '\0';
	else
		snprintf(c->exit_status, sizeof(c->exit_status), "%d", status);
}

void
rl_set_pubsub(rl_client *c, enum rl_pubsub mode)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		c->nodes[j].conn.pubsub = c->nodes[j].sub.pubsub = mode;
}

void
rl_set_eviction_check(rl_client *c, int on)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		c->nodes[j].conn.ask_info = on;
}

const char *
rl_node_eviction(const rl_client *c, size_t i, char *url, size_t urllen)
{
	if (i >= c->n || c->nodes[i].conn.evicts[0] == '\0')
		return NULL;
	rl_url_format(&c->nodes[i].url, url, urllen);
	return c->nodes[i].conn.evicts;
}

void
rl_set_interrupt_fd(rl_client *c, int fd)
{
	c->intr_fd = fd;
}

void
rl_client_forked(rl_client *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->nodes[i].url.tls) {
			rl_conn_close(&c->nodes[i].conn);
			rl_conn_close(&c->nodes[i].sub);
		}
}

uint32_t
rl_client_away(const rl_client *c)
{
	uint32_t away = 0;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->nodes[i].away)
			away |= (uint32_t)1 << i;
	return away;
}

void
rl_client_set_away(rl_client *c, uint32_t away)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		c->nodes[i].away = (away >> i) & 1;
}

void
rl_client_disconnect(rl_client *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		rl_conn_close(&c->nodes[i].conn);
		rl_conn_close(&c->nodes[i].sub);
		rl_switch_close(&c->nodes[i].sw);
	}
}

size_t
rl_switch_pollfds(rl_client *c, int64_t now, struct pollfd *pfd)
{
	size_t j, np = 0;

	for (j = 0; j < c->n; j++) {
		struct rl_switch *s = &c->nodes[j].sw;

		s->polled = rl_switch_fd(s, now, c->connect_timeout_ms,
		    &pfd[np]) ? (int)np++ : -1;
	}
	return np;
}

int64_t
rl_switch_wake_ms(const rl_client *c)
{
	int64_t wake = -1, w;
	size_t j;

	for (j = 0; j < c->n; j++)
		if ((w = rl_switch_wake(&c->nodes[j].sw)) >= 0 &&
		    (wake < 0 || w < wake))
			wake = w;
	return wake;
}

int
rl_switch_step(rl_client *c, const struct pollfd *pfd, int64_t now)
{
	struct pollfd own[RL_MAX_NODES];
	size_t j;
	int heard = 0;

	if (pfd == NULL) {
		pfd = own;
		if (poll(own, (nfds_t)rl_switch_pollfds(c, now, own), 0) < 0)
			return 0;
	}
	for (j = 0; j < c->n; j++) {
		struct rl_switch *s = &c->nodes[j].sw;

		if (s->polled >= 0)
			heard |= rl_switch_io(s, pfd[s->polled].revents, now);
		s->polled = -1;
	}
	return heard;
}

size_t
rl_switch_follow(rl_client *c, int *sub_closed)
{
	size_t j, n = 0;

	for (j = 0; j < c->n; j++) {
		struct rl_node *nd = &c->nodes[j];

		if (sub_closed != NULL)
			sub_closed[j] = 0;
		if (!nd->sw.heard)
			continue;
		nd->sw.heard = 0;
		/* Ask the sentinel that announced it first. */
		nd->conn.turn = nd->sub.turn = (unsigned)nd->sw.i;
		if (rl_switch_stale(&nd->sw, &nd->conn)) {
			rl_conn_close(&nd->conn);
			n++;
		}
		if (sub_closed != NULL && rl_switch_stale(&nd->sw, &nd->sub)) {
			rl_conn_close(&nd->sub);
			sub_closed[j] = 1;
			n++;
		}
	}
	return n;
}

void
rl_client_free(rl_client *c)
{
	size_t i;

	if (c == NULL)
		return;
	rl_round_end(&c->round);
	for (i = 0; i < c->n; i++) {
		struct rl_node *nd = &c->nodes[i];

		if (nd->reply != NULL)
			freeReplyObject(nd->reply);
		/* A plain close: after a fork, another process may go on
		 * using the same connection (exec's watchdog does). */
		rl_conn_close(&nd->conn);
		rl_conn_close(&nd->sub);
		rl_switch_close(&nd->sw);
		rl_url_clear(&nd->url);
	}
	free(c->nodes);
	free(c);
}

int64_t
rl_waited_ms(const rl_client *c)
{
	const struct rl_call_ctx *x = c->ctx;

	return x != NULL && x->since_ms > 0 ? rl_now_ms() - x->since_ms : 0;
}

int64_t
rl_wait_until(const rl_client *c)
{
	return c->ctx != NULL ? c->ctx->wait_until_ms : -2;
}

int
rl_superseding(const rl_client *c)
{
	return c->ctx != NULL ? c->ctx->supersede : 0;
}

struct rl_round_opts
rl_opts(const rl_client *c, size_t need)
{
	const struct rl_call_ctx *x = c->ctx;
	struct rl_round_opts o = { .need = need };	/* the rest 0 */

	o.connect_ms = c->connect_timeout_ms;
	o.reply_ms = rl_reply_timeout_ms(c->n, c->node_timeout_ms,
	    c->timeout_ms);
	o.enough = rl_quorum(c->n);
	o.straggle_ms = rl_straggle_ms(c->n, c->node_timeout_ms);
	if (x != NULL && x->until_ms >= 0) {
		int64_t left = x->until_ms - rl_now_ms();

		if (left < 1)
			left = 1;
		/* Connecting only: a command sent is worth its answer, or
		 * the last attempt of a wait would read as a lost server. */
		if (o.connect_ms > left) {
			o.connect_ms = left;
			o.connect_wait_ms = x->wait_until_ms >= 0 &&
			    x->wait_until_ms > x->since_ms ?
			    x->wait_until_ms - x->since_ms :
			    c->connect_wait_ms > 0 ? c->connect_wait_ms : 1;
		}
	}
	return o;
}

int
rl_opts_early(const rl_client *c, const struct rl_round_opts *o)
{
	return o->reply_ms < c->timeout_ms;
}

struct rl_round_opts
rl_opts_pub(const rl_client *c)
{
	struct rl_round_opts o = rl_opts(c, 1);

	o.pub = o.learn = 1;
	/* A release or an undo by SHA whose NOSCRIPT came after it was
	 * given up on would not have run there, unknown to the caller: the
	 * lock would stay held on that master (a nested hold: the outer
	 * one's hold, for its whole lease). */
	o.whole = rl_opts_early(c, &o);
	/* It must run wherever it can: a master slow to connect is waited
	 * for as long as --connect-timeout, not the per-master bound (one
	 * the hold never went to is left out: opts hold). */
	o.straggle_ms = 0;
	return o;
}

/* A round of C's was cut short at the call's end_ms: ACTIVE[j], master j
 * was still connecting (1) or due to answer (2); its line says -w ran
 * out. */
static void
cut_why(rl_client *c, const int *active)
{
	char w[32], why[64];
	size_t j;

	rl_duration_format(c->ctx->wait_until_ms - c->ctx->since_ms, w,
	    sizeof(w));
	snprintf(why, sizeof(why), "none within -w %s", w);
	for (j = 0; j < c->n; j++) {
		struct rl_node *nd = &c->nodes[j];

		if (active[j] == 0)
			continue;
		rl_error_io(&nd->url, active[j] == 1 ? "cannot connect to" :
		    "no answer from", why, nd->why, sizeof(nd->why));
		snprintf(nd->conn.why, sizeof(nd->conn.why), "%s", nd->why);
	}
}

/* Poll for the round (PFD, NP entries, room for one more) until WAKE
 * (-1: do not wait), but not past the call's end_ms, and for the
 * interrupt when WATCH: 2 when it came, 1 when end_ms has come, else 0. */
static int
run_poll(rl_client *c, struct pollfd *pfd, size_t np, int64_t wake,
    int watch)
{
	int64_t now = rl_now_ms(), end = c->ctx != NULL ? c->ctx->end_ms : -1;

	if (end >= 0 && wake > end)
		wake = end;
	pfd[np].fd = watch ? c->intr_fd : -1;
	pfd[np].events = POLLIN;
	pfd[np].revents = 0;
	if (wake > now || watch)
		poll(pfd, (nfds_t)np + 1, wake <= now ? 0 : wake - now >
		    INT_MAX ? INT_MAX : (int)(wake - now));
	if (watch && pfd[np].revents != 0) {
		rl_client_interrupted(c);
		return 2;
	}
	return end >= 0 && rl_now_ms() >= end;
}

void
rl_client_run(rl_client *c)
{
	struct rl_round *r = &c->round;
	struct pollfd pfd[RL_MAX_NODES + 1];
	int active[RL_MAX_NODES];
	int64_t now = rl_now_ms();
	int cut = 0, watch;
	size_t j;

	/* Cut short: one step more writes what was sent. */
	while (!rl_round_step(r, now) && !cut) {
		watch = c->intr_fd >= 0 && c->ctx != NULL &&
		    c->ctx->wait_until_ms != -2 && !c->ctx->intr_seen;
		cut = run_poll(c, pfd, rl_round_pollfds(r, pfd),
		    rl_round_wake(r), watch);
		now = rl_now_ms();
	}
	if (r->done || cut == 0)
		return;
	for (j = 0; j < c->n; j++)
		active[j] = c->ctx->intr_seen ? 0 : c->nodes[j].phase ==
		    RL_PH_CONNECT ? 1 : c->nodes[j].phase == RL_PH_SENT ? 2 : 0;
	rl_round_end_keep(r);
	cut_why(c, active);
}

void
rl_client_interrupted(rl_client *c)
{
	struct rl_call_ctx *x = c->ctx;
	int64_t end = rl_now_ms() + RL_INTR_MS;

	if (x == NULL)
		return;
	x->intr_seen = 1;
	if (x->end_ms < 0 || x->end_ms > end)
		x->end_ms = end;
}

int
rl_client_behind_late(const rl_client *c)
{
	size_t j;

	for (j = 0; j < c->n; j++)
		if (!c->nodes[j].away && (c->nodes[j].conn.state !=
		    RL_CONN_READY || c->nodes[j].conn.drop == 0))
			return 0;
	return 1;
}

void
rl_client_way_out(rl_client *c)
{
	struct rl_call_ctx *x = c->ctx;
	int64_t end = rl_now_ms() + RL_LATE_MS;

	if (x != NULL && x->end_ms >= 0 && !x->intr_seen && x->end_ms < end &&
	    !rl_client_behind_late(c))
		x->end_ms = end;
}

int
rl_format_sub(const char *const *ch, size_t n, char *cmd[2], size_t len[2])
{
	static const char *verb[2] = { "SUBSCRIBE", "SSUBSCRIBE" };
	const char *argv[2];
	char *one, *all;
	size_t i, k;
	int m;

	for (i = 0; i < 2; i++) {
		argv[0] = verb[i];
		for (k = 0; k < n; k++) {
			argv[1] = ch[k];
			if ((m = redisFormatCommandArgv(&one, 2, argv, NULL)) < 0)
				return -1;
			if (k == 0) {
				cmd[i] = one;
				len[i] = (size_t)m;
				continue;
			}
			/* redisFreeCommand frees what malloc gave. */
			if ((all = malloc(len[i] + (size_t)m)) == NULL) {
				redisFreeCommand(one);
				return -1;
			}
			memcpy(all, cmd[i], len[i]);
			memcpy(all + len[i], one, (size_t)m);
			redisFreeCommand(cmd[i]);
			redisFreeCommand(one);
			cmd[i] = all;
			len[i] += (size_t)m;
		}
	}
	return 0;
}

enum rl_err
rl_run_open(rl_client *c, const struct rl_round_opts *o, int64_t wait_ms,
    const struct rl_call *call)
{
	struct rl_round_opts def = rl_opts(c, 1);

	rl_round_end(&c->round);
	if (rl_round_script(&c->round, c->nodes, c->n, o ? o : &def,
	    call) < 0 || (c->replicas != 0 && wait_ms > 0 &&
	    rl_round_ack(&c->round, c->replicas, wait_ms) < 0)) {
		rl_round_end(&c->round);
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	}
	rl_client_run(c);
	rl_round_end_keep(&c->round);
	return RL_OK;
}

enum rl_err
rl_run_ack(rl_client *c, const struct rl_round_opts *o, int64_t wait_ms,
    const struct rl_call *call)
{
	enum rl_err e = rl_run_open(c, o, wait_ms, call);

	rl_round_end(&c->round);
	return e;
}

enum rl_err
rl_run(rl_client *c, const struct rl_round_opts *o,
    const struct rl_call *call)
{
	return rl_run_ack(c, o, 0, call);
}

enum rl_err
rl_node_error(rl_client *c, size_t j)
{
	rl_seterr(c, c->nodes[j].err, "%s", c->nodes[j].why);
	c->refused = c->nodes[j].refused;
	return c->nodes[j].err != RL_OK ? c->nodes[j].err : RL_ECONNECT;
}

enum rl_err
rl_no_quorum(rl_client *c, const char *doing)
{
	size_t j, answered = 0, first = c->n, failed = 0;
	enum rl_err e = RL_OK;

	for (j = 0; j < c->n; j++) {
		if (c->nodes[j].reply != NULL) {
			answered++;
			continue;
		}
		if (c->nodes[j].err == RL_OK) {
			answered++;	/* reachable, not asked */
			continue;
		}
		failed++;
		if (first == c->n)
			first = j;
		/* One kind of failure everywhere keeps its kind. */
		e = e == RL_OK || e == c->nodes[j].err ? c->nodes[j].err :
		    RL_ECONNECT;
	}
	if (first == c->n)
		return rl_seterr(c, RL_ECONNECT, "no quorum to %s", doing);
	if (failed == 1 && c->n - answered == 1)
		return rl_node_error(c, first);
	rl_seterr(c, e, "no quorum to %s: %zu of %zu masters answered (need "
	    "%zu); %s", doing, answered, c->n, rl_quorum(c->n),
	    c->nodes[first].why);
	return e;
}

/* Two URLs may name one server (127.0.0.1 and localhost, TCP and its
 * unix socket), which would count twice towards the quorum: refuse a
 * run_id seen twice. A master that does not tell (no answer, INFO refused
 * by an ACL) is not checked; one that failed is left out of the round
 * right after, rather than waited for twice, while a quorum is left. */
static enum rl_err
distinct(rl_client *c)
{
	/* What a lock may run: SCRIPT EXISTS asks behind the check (no
	 * round trip of its own) which ones each server has, so that what
	 * must run goes by SHA there (rl_opts_pub), whole elsewhere. */
	static const struct rl_call runid = { .s = &rl_script_runid };
	struct rl_round_opts o = rl_opts(c, 2);
	const char *a, *b;
	char ua[512], ub[512];
	size_t i, j;

	o.reply_ms = c->connect_timeout_ms;
	rl_round_end(&c->round);
	if (rl_round_script(&c->round, c->nodes, c->n, &o, &runid) < 0 ||
	    rl_round_exists(&c->round, rl_script_shas, RL_SCRIPTS) < 0) {
		rl_round_end(&c->round);
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	}
	rl_round_run(&c->round);
	rl_round_end_keep(&c->round);
	rl_round_end(&c->round);
	for (j = 0; j < c->n; j++) {
		c->nodes[j].skip = c->nodes[j].reply == NULL &&
		    rl_round_answered(&c->round) >= rl_quorum(c->n);
		if ((b = rl_decode_runid(c->nodes[j].reply)) == NULL)
			continue;
		for (i = 0; i < j; i++) {
			a = rl_decode_runid(c->nodes[i].reply);
			if (a == NULL || strcmp(a, b) != 0)
				continue;
			rl_url_format(&c->nodes[i].url, ua, sizeof(ua));
			rl_url_format(&c->nodes[j].url, ub, sizeof(ub));
			return rl_seterr(c, RL_EUSAGE, "%s and %s are the same "
			    "server (run_id %.8s): give each master once, "
			    "or it counts twice towards the quorum", ua, ub, b);
		}
	}
	return RL_OK;
}

void
rl_set_connect_until(rl_client *c, int64_t until_ms)
{
	c->connect_until_ms = until_ms;
	c->connect_wait_ms = until_ms - rl_now_ms();
}

static enum rl_err
connect_all(rl_client *c)
{
	if (rl_quorum_check_distinct(c->n))
		return distinct(c);
	if (rl_run(c, NULL, NULL) != RL_OK)
		return RL_ENOMEM;
	for (size_t j = 0; j < c->n; j++)
		if (c->nodes[j].conn.state == RL_CONN_READY)
			return RL_OK;
	return rl_no_quorum(c, "connect");
}

enum rl_err
rl_connect(rl_client *c)
{
	struct rl_call_ctx own = RL_CALL_CTX_NONE;
	struct rl_call_ctx *x = c->ctx != NULL ? c->ctx : &own;
	enum rl_err e;

	if (c->checked)
		return RL_OK;
	c->checked = 1;
	/* rl_opts cuts the connecting (the handshake too) at until_ms:
	 * the call's, or one of its own outside a call. */
	c->ctx = x;
	x->until_ms = c->connect_until_ms;
	e = connect_all(c);
	x->until_ms = -1;
	if (x == &own)
		c->ctx = NULL;
	return e;
}

const char *
rl_connect_note(rl_client *c)
{
	for (size_t j = 0; j < c->n; j++)
		if (c->nodes[j].conn.nopass) {
			rl_note_nopass(&c->nodes[j].url, c->note,
			    sizeof(c->note));
			return c->note;
		}
	return NULL;
}
