/* rl_round.c: one command on N >= 1 masters, gathered against deadlines. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rl_round.h"

/* After an ASK, the node's own address again (its connection, to the
 * node asked, is closed): at the end of the round. */
static void
go_home(struct rl_node *nd)
{
	if (nd->home == NULL)
		return;
	rl_conn_close(&nd->conn);
	free(nd->url.host);
	nd->url.host = nd->home;
	nd->url.port = nd->home_port;
	nd->home = NULL;
}

static void
clear_replies(struct rl_node *nodes, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		rl_follow_clear(&nodes[j].fw);
		nodes[j].asking = 0;
		nodes[j].retry_at = 0;
		if (nodes[j].reply != NULL)
			freeReplyObject(nodes[j].reply);
		nodes[j].reply = NULL;
		nodes[j].err = RL_OK;
		nodes[j].why[0] = '\0';
		nodes[j].full = 0;
		nodes[j].refused = 0;
		nodes[j].answered = 0;
		nodes[j].stale = 0;
		nodes[j].waits = nodes[j].wait_refused = 0;
		nodes[j].roles = nodes[j].recount = 0;
		nodes[j].exists = 0;
		nodes[j].sent = 0;
		nodes[j].acks = -1;
	}
}

static void
node_fail(struct rl_node *nd, enum rl_err e, const char *why)
{
	nd->err = e;
	snprintf(nd->why, sizeof(nd->why), "%s", why);
	nd->phase = RL_PH_DONE;
}

/* An idle connection the server has closed meanwhile (a restart, CLIENT
 * KILL, its idle timeout) is closed here too, so that the round opens a
 * new one rather than fail on it once. With no reply due, nothing sent on
 * it can still run. */
static void
drop_if_hung_up(struct rl_conn *c)
{
	struct pollfd p = { rl_conn_fd(c), POLLIN, 0 };
	redisReply *r;

	if (c->state != RL_CONN_READY || c->due > 0 || poll(&p, 1, 0) <= 0)
		return;
	while (rl_conn_io(c, p.revents, &r) == RL_IO_REPLY) {
		freeReplyObject(r);	/* nothing asked: stray */
		p.revents = 0;
	}
}

/* ND may be sent the round's command: connected, and when the script
 * surely publishes, knowing whether its channels are sharded (from an
 * earlier connection too: a deployment does not change its mode). */
static int
ready(const struct rl_round *r, struct rl_node *nd)
{
	if (nd->conn.sharded >= 0) {
		nd->sharded = nd->conn.sharded;
		nd->known = 1;
	}
	return nd->conn.state == RL_CONN_READY &&
	    !(r->o.learn && nd->conn.probe && !nd->known);
}

/* Join the round: connected already, or connecting now. */
static void
node_join(struct rl_round *r, struct rl_node *nd, int64_t now)
{
	/* Connected already, it may still owe HELLO's reply: an answer. */
	nd->deadline = now + (nd->conn.state == RL_CONN_READY ?
	    r->o.reply_ms : r->o.connect_ms);
	if (nd->skip || (r->o.hold && nd->away)) {
		/* It failed just before: not waited for twice. Or the
		 * hold never went there (it could not): its release or
		 * undo would take a count off another hold of the same
		 * owner's. */
		nd->skip = 0;
		nd->phase = RL_PH_OFF;
		nd->err = RL_ECONNECT;
		snprintf(nd->why, sizeof(nd->why), "%s", nd->conn.why);
		return;
	}
	drop_if_hung_up(&nd->conn);
	if (r->o.keep && nd->conn.state != RL_CONN_READY) {
		node_fail(nd, RL_ECONNECT, "the connection was lost");
		return;
	}
	if (nd->conn.state == RL_CONN_CLOSED && rl_conn_open(&nd->conn) < 0) {
		node_fail(nd, nd->conn.err, nd->conn.why);
		return;
	}
	nd->phase = ready(r, nd) ? RL_PH_READY : RL_PH_CONNECT;
}

static int
start(struct rl_round *r, struct rl_node *nodes, size_t n,
    const struct rl_round_opts *o)
{
	int64_t now = rl_now_ms();
	size_t j;

	r->nodes = nodes;
	r->n = n;
	r->o = *o;
	r->sent = r->done = 0;
	r->nsent = 0;
	r->sent_ms = now;
	r->cut_ms = 0;
	clear_replies(nodes, n);
	for (j = 0; j < n; j++)
		node_join(r, &nodes[j], now);
	return 0;
}

/* A round on the side (opts aside) takes the replies of the round before
 * out of the nodes, to put them back at its end (rl_round_end). */
static void
set_aside(struct rl_round *r, struct rl_node *nodes, size_t n,
    const struct rl_round_opts *o)
{
	size_t j;

	r->nodes = nodes;
	r->n = n;
	r->aside = o->aside;
	for (j = 0; j < n && o->aside; j++) {
		r->before[j] = nodes[j].reply;
		nodes[j].reply = NULL;
	}
}

static void
put_back(struct rl_round *r)
{
	size_t j;

	for (j = 0; j < r->n && r->aside; j++) {
		if (r->nodes[j].reply != NULL)
			freeReplyObject(r->nodes[j].reply);
		r->nodes[j].reply = r->before[j];
	}
	r->aside = 0;
}

static int
format(char **out, size_t *len, int argc, const char **argv)
{
	int n = redisFormatCommandArgv(out, argc, argv, NULL);

	if (n < 0) {
		*out = NULL;
		return -1;
	}
	*len = (size_t)n;
	return 0;
}

/* EVALSHA of ARGV (ARGC), and when ARGV ends with the publish command
 * (PUB: the script's publish argument, its last), again with SPUBLISH.
 * The EVAL forms, with the whole script (tens of KB), are made only for a
 * connection that needs one (whole). */
static int
format_script(struct rl_round *r, int argc, const char **argv, int pub)
{
	if (format(&r->cmd, &r->cmdlen, argc, argv) < 0)
		return -1;
	if (!pub)
		return 0;
	argv[argc - 1] = "SPUBLISH";
	return format(&r->scmd, &r->scmdlen, argc, argv);
}

/* CMD, an EVALSHA as format_script made it, as EVAL of the script SRC:
 * its header, then EVAL and SRC where EVALSHA and the SHA were, then the
 * rest as it is. A new string into *OUT and its length, or -1. */
static int
whole_of(const char *cmd, size_t len, const char *src, char **out,
    size_t *outlen)
{
	static const char sha_hdr[] = "$7\r\nEVALSHA\r\n$40\r\n";
	const char *crlf = memchr(cmd, '\n', len);
	size_t head, skip, srclen = strlen(src);
	char mid[48];
	int m;

	if (crlf == NULL)
		return -1;
	head = (size_t)(crlf - cmd) + 1;
	skip = sizeof(sha_hdr) - 1 + 40 + 2;
	if (len < head + skip ||
	    memcmp(cmd + head, sha_hdr, sizeof(sha_hdr) - 1) != 0)
		return -1;
	m = snprintf(mid, sizeof(mid), "$4\r\nEVAL\r\n$%zu\r\n", srclen);
	*outlen = len - skip + (size_t)m + srclen + 2;
	if ((*out = malloc(*outlen)) == NULL)
		return -1;
	memcpy(*out, cmd, head);
	memcpy(*out + head, mid, (size_t)m);
	memcpy(*out + head + m, src, srclen);
	memcpy(*out + head + m + srclen, "\r\n", 2);
	memcpy(*out + head + m + srclen + 2, cmd + head + skip,
	    len - head - skip);
	return 0;
}

int
rl_round_script(struct rl_round *r, struct rl_node *nodes, size_t n,
    const struct rl_round_opts *o, const struct rl_call *call)
{
	const struct rl_script *s = call != NULL ? call->s : NULL;
	const char *argv[48];	/* EVALSHA SHA N, the keys, the arguments */
	char nk[16];
	int argc = 0, i;

	r->cmd = r->full = r->scmd = r->sfull = r->wait = r->exists = NULL;
	r->shas = NULL;
	r->exists_n = 0;
	set_aside(r, nodes, n, o);
	r->sha = s != NULL ? s->sha : NULL;
	r->src = s != NULL ? s->src : NULL;
	r->wait_ms = 0;
	r->wait_seen = 0;
	if (s != NULL) {
		if (4 + call->nkeys + call->nargs >
		    (int)(sizeof(argv) / sizeof(argv[0])))
			return -1;
		snprintf(nk, sizeof(nk), "%d", call->nkeys);
		snprintf(r->doing, sizeof(r->doing), "the %s script", s->name);
		argv[argc++] = "EVALSHA";
		argv[argc++] = s->sha;
		argv[argc++] = nk;
		for (i = 0; i < call->nkeys; i++)
			argv[argc++] = call->keys[i];
		for (i = 0; i < call->nargs; i++)
			argv[argc++] = call->args[i];
		if (format_script(r, argc, argv, o->pub) < 0) {
			rl_round_end(r);
			return -1;
		}
	}
	return start(r, nodes, n, o);
}

int
rl_round_command(struct rl_round *r, struct rl_node *nodes, size_t n,
    const struct rl_round_opts *o, int argc, const char **argv)
{
	r->full = r->scmd = r->sfull = r->wait = r->exists = NULL;
	r->shas = NULL;
	r->exists_n = 0;
	set_aside(r, nodes, n, o);
	r->sha = r->src = NULL;
	r->wait_ms = 0;
	r->wait_seen = 0;
	snprintf(r->doing, sizeof(r->doing), "%s", argv[0]);
	if (format(&r->cmd, &r->cmdlen, argc, argv) < 0)
		return -1;
	return start(r, nodes, n, o);
}

int
rl_round_ack(struct rl_round *r, int replicas, int64_t wait_ms)
{
	char n[16], ms[24];
	const char *argv[3] = { "WAIT", n, ms };

	/* WAIT with a timeout of 0 would block for ever. */
	if (wait_ms < 1)
		wait_ms = 1;
	r->wait_seen = replicas < 0;
	snprintf(n, sizeof(n), "%d", replicas < 0 ? 1 : replicas);
	snprintf(ms, sizeof(ms), "%lld", (long long)wait_ms);
	if (format(&r->wait, &r->waitlen, 3, argv) < 0)
		return -1;
	r->wait_ms = wait_ms;
	return 0;
}

int
rl_round_exists(struct rl_round *r, const char *const *shas, size_t n)
{
	const char *argv[2 + 32];
	size_t i;

	if (n > 32)
		return -1;
	argv[0] = "SCRIPT";
	argv[1] = "EXISTS";
	for (i = 0; i < n; i++)
		argv[2 + i] = shas[i];
	if (format(&r->exists, &r->existslen, (int)(2 + n), argv) < 0)
		return -1;
	r->shas = shas;
	r->exists_n = n;
	return 0;
}

/* The reply to the pipelined SCRIPT EXISTS: the connection learns the
 * scripts its server has. A refusal (an ACL without SCRIPT) teaches
 * nothing. */
static int
exists_reply(struct rl_round *r, struct rl_node *nd, redisReply *rep)
{
	size_t i;

	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == r->exists_n)
		for (i = 0; i < rep->elements; i++)
			if (rep->element[i]->type == REDIS_REPLY_INTEGER &&
			    rep->element[i]->integer == 1)
				rl_conn_learn(&nd->conn, r->shas[i]);
	freeReplyObject(rep);
	nd->phase = RL_PH_DONE;
	return 1;
}

/* Whether the round's WAIT goes behind its command on ND. */
static int
waits_on(const struct rl_round *r, const struct rl_node *nd)
{
	return r->wait != NULL && (!r->wait_seen || nd->conn.replicas > 0);
}

/* In the Sentinel default, a connection that saw no replica when it
 * opened sends ROLE where the WAIT would go: replicas that attached since
 * (the old master of a failover, demoted and synced) are counted, so
 * that from then on it WAITs (node recount). */
static int
roles_on(const struct rl_round *r, const struct rl_node *nd)
{
	return r->wait != NULL && r->wait_seen && nd->conn.replicas == 0;
}

/* The script (CMD or FULL, with SPUBLISH where ND's channels are sharded)
 * and the WAIT behind it, in one write. */
static int
send_pair(struct rl_round *r, struct rl_node *nd, int full)
{
	int s = nd->sharded > 0 && r->scmd != NULL;
	char **whole = s ? &r->sfull : &r->full;
	size_t *wholelen = s ? &r->sfulllen : &r->fulllen;
	const char *cmd = s ? r->scmd : r->cmd;
	size_t len = s ? r->scmdlen : r->cmdlen;

	if (full && *whole == NULL && whole_of(cmd, len, r->src, whole,
	    wholelen) < 0)
		return -1;
	if (full) {
		cmd = *whole;
		len = *wholelen;
	}
	if (rl_conn_send(&nd->conn, cmd, len) < 0)
		return -1;
	nd->sent = 1;
	static const char role[] = "*1\r\n$4\r\nROLE\r\n";

	if (full)
		rl_conn_learn(&nd->conn, r->sha);
	nd->waits = waits_on(r, nd);
	nd->roles = roles_on(r, nd);
	nd->exists = r->exists != NULL;
	if (nd->exists && rl_conn_send(&nd->conn, r->exists, r->existslen) < 0)
		return -1;
	if (nd->roles)
		return rl_conn_send(&nd->conn, role, sizeof(role) - 1);
	return nd->waits ? rl_conn_send(&nd->conn, r->wait, r->waitlen) : 0;
}

static void
send_one(struct rl_round *r, struct rl_node *nd, int64_t now)
{
	/* Behind replies given up on, send the script itself: a late
	 * NOSCRIPT could not be answered with an EVAL in order. So with a
	 * WAIT behind, unless the connection saw the script run: a NOSCRIPT
	 * would leave that WAIT blocking for its whole timeout (no write to
	 * wait for), and then the one behind the EVAL. So for a command
	 * that must run (opts whole), where its reply may be given up on. */
	nd->full = r->src != NULL && (nd->conn.drop > 0 ||
	    ((waits_on(r, nd) || roles_on(r, nd) || r->o.whole) &&
	    !rl_conn_knows(&nd->conn, r->sha)));
	if (send_pair(r, nd, nd->full) < 0) {
		node_fail(nd, RL_ENOMEM, "out of memory");
		return;
	}
	nd->phase = RL_PH_SENT;
	nd->deadline = now + r->o.reply_ms + r->wait_ms;
	r->nsent++;
}

/* Every master connected or failed: send, if enough are connected. */
static void
send_all(struct rl_round *r, int64_t now)
{
	size_t j, up = 0;

	r->sent = 1;
	r->sent_ms = now;
	for (j = 0; j < r->n; j++)
		up += r->nodes[j].phase == RL_PH_READY;
	for (j = 0; j < r->n; j++) {
		struct rl_node *nd = &r->nodes[j];

		if (nd->phase != RL_PH_READY)
			continue;
		if (r->cmd == NULL || up < r->o.need) {
			nd->phase = RL_PH_DONE;
			if (r->cmd != NULL)
				snprintf(nd->why, sizeof(nd->why), "not asked: "
				    "too few masters reachable");
			continue;
		}
		send_one(r, nd, now);
	}
}

/* The reply to the pipelined WAIT: how many replicas acknowledged; a
 * refusal (an ACL, a replica) leaves no count, and says why. */
static int
wait_reply(struct rl_node *nd, redisReply *rep)
{
	if (rep->type == REDIS_REPLY_INTEGER)
		nd->acks = rep->integer;
	else if (rep->type == REDIS_REPLY_ERROR) {
		nd->wait_refused = 1;
		if (nd->why[0] == '\0')
			rl_error_reply(&nd->url, rep->str, "WAIT", nd->why,
			    sizeof(nd->why));
	}
	freeReplyObject(rep);
	nd->phase = RL_PH_DONE;
	return 1;
}

/* The reply to the ROLE that went behind instead of WAIT (roles_on): a
 * master with replicas connected now is recounted. */
static int
role_reply(struct rl_node *nd, redisReply *rep)
{
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 3 &&
	    rep->element[0]->type == REDIS_REPLY_STRING &&
	    strcmp(rep->element[0]->str, "master") == 0 &&
	    rep->element[2]->type == REDIS_REPLY_ARRAY &&
	    rep->element[2]->elements > 0 &&
	    rep->element[2]->elements < INT_MAX) {
		nd->conn.replicas = (int)rep->element[2]->elements;
		nd->recount = 1;
	}
	freeReplyObject(rep);
	nd->phase = RL_PH_DONE;
	return 1;
}

/* The server does not have the script cached: send it, nothing in
 * between (the EVALSHA did not run), and WAIT again behind it. The WAIT
 * already sent belongs to the EVALSHA: its reply is dropped, and it may
 * take its whole timeout, so the deadline grows by that much. */
static int
noscript(struct rl_round *r, struct rl_node *nd, redisReply *rep)
{
	int waited = nd->waits;
	int behind = nd->waits + nd->roles + nd->exists;

	freeReplyObject(rep);
	nd->full = 1;
	if (send_pair(r, nd, 1) < 0) {
		node_fail(nd, RL_ENOMEM, "out of memory");
		return 1;
	}
	nd->stale += behind;
	if (waited)
		nd->deadline += r->wait_ms;
	return 0;
}

/* Send ND's command (again), on a new connection if need be: behind
 * ASKING after an ASK (its reply is not the round's). */
static void
resend(struct rl_round *r, struct rl_node *nd)
{
	static const char asking[] = "*1\r\n$6\r\nASKING\r\n";

	nd->retry_at = 0;
	if (nd->conn.state == RL_CONN_CLOSED && rl_conn_open(&nd->conn) < 0) {
		node_fail(nd, nd->conn.err, nd->conn.why);
		return;
	}
	if (nd->asking && rl_conn_send(&nd->conn, asking,
	    sizeof(asking) - 1) == 0)
		nd->stale++;
	else if (nd->asking) {
		node_fail(nd, RL_ENOMEM, "out of memory");
		return;
	}
	if (send_pair(r, nd, nd->full) < 0)
		node_fail(nd, RL_ENOMEM, "out of memory");
}

void
rl_node_move(struct rl_node *nd, char *host, int port, int ask)
{
	nd->stale = 0;
	rl_conn_close(&nd->conn);
	if (ask && nd->home == NULL) {
		nd->home = nd->url.host;
		nd->home_port = nd->url.port;
	} else
		free(nd->url.host);
	nd->url.host = host;
	nd->url.port = port;
	nd->asking = ask;
	if (!ask)
		rl_conn_close(&nd->sub);
}

/* Redis Cluster sent ND's command elsewhere (it did not run here): to a
 * node new to the round, at once; back to one it went to before (a
 * ping-pong), RL_TRYAGAIN_MS later, while the round's tries last
 * (TRYAGAIN's too); once they are over, ND fails, naming both nodes: the
 * command ran on neither, a refusal that passes (a wait tries again, a
 * renewal counts as failed), as TRYAGAIN. -1 when STR is no redirection,
 * or the round has followed too many. */
static int
redirect(struct rl_round *r, struct rl_node *nd, const char *str,
    int64_t now)
{
	struct rl_redir to = { .doing = r->doing, .reply_ms = r->o.reply_ms,
	    .ask_ok = 1, .why = nd->why, .whylen = sizeof(nd->why) };
	enum rl_follow_step step = rl_follow(&nd->fw, &nd->url, str, now, &to);
	int back = step == RL_FOLLOW_BACK;

	switch (step) {
	case RL_FOLLOW_NOT:
		return -1;
	case RL_FOLLOW_OVER:
		nd->err = RL_ECONNECT;
		nd->refused = nd->answered = 1;
		nd->phase = RL_PH_DONE;
		rl_conn_close(&nd->conn);
		return 0;
	case RL_FOLLOW_NOMEM:
		node_fail(nd, RL_ENOMEM, "out of memory");
		return 0;
	case RL_FOLLOW_NEW:
	case RL_FOLLOW_BACK:
		break;
	}
	rl_node_move(nd, to.host, to.port, to.ask);
	nd->retry_at = back ? now + RL_TRYAGAIN_MS : 0;
	nd->deadline = (back ? nd->retry_at : now) + r->o.connect_ms +
	    r->o.reply_ms + r->wait_ms;
	if (!back)
		resend(r, nd);
	return 0;
}

/* TRYAGAIN: the slot's keys are half migrated, and the command did not
 * run; it is sent again shortly, while the reply's time lasts (the WAIT
 * behind it is dropped), from the node's own address again after an ASK. */
static int
tryagain(struct rl_round *r, struct rl_node *nd, redisReply *rep,
    int64_t now)
{
	if (strncmp(rep->str, "TRYAGAIN", 8) != 0)
		return -1;
	/* An ASK between the tries grants a new deadline: the tries have
	 * one of their own. */
	if (nd->fw.end == 0)
		nd->fw.end = now + r->o.reply_ms;
	if (now + RL_TRYAGAIN_MS >= nd->fw.end ||
	    now + RL_TRYAGAIN_MS >= nd->deadline - r->wait_ms)
		return -1;
	freeReplyObject(rep);
	nd->retry_at = now + RL_TRYAGAIN_MS;
	nd->asking = 0;
	nd->stale += nd->waits + nd->roles + nd->exists;
	/* From the node's own address again: the ASK that follows is not
	 * a ping-pong. */
	if (nd->home != NULL) {
		go_home(nd);
		nd->stale = 0;
		nd->fw.moves = 0;
		rl_hops_clear(&nd->fw.hops);
	}
	return 0;
}

/* A reply for ND: kept, or an error with its reason; with WAIT behind,
 * the round waits for that too. */
static int
node_reply(struct rl_round *r, struct rl_node *nd, redisReply *rep,
    int64_t now)
{
	if (nd->stale > 0) {
		nd->stale--;
		freeReplyObject(rep);
		return 0;
	}
	if (nd->answered && nd->exists)
		return exists_reply(r, nd, rep);
	if (nd->answered)
		return nd->roles ? role_reply(nd, rep) : wait_reply(nd, rep);
	if (rep->type == REDIS_REPLY_ERROR && r->src != NULL && !nd->full &&
	    strncmp(rep->str, "NOSCRIPT", 8) == 0)
		return noscript(r, nd, rep);
	rl_conn_learn(&nd->conn, r->sha);
	if (rep->type == REDIS_REPLY_ERROR && tryagain(r, nd, rep, now) == 0)
		return nd->conn.state == RL_CONN_CLOSED;	/* gone home */
	if (rep->type == REDIS_REPLY_ERROR && redirect(r, nd, rep->str,
	    now) == 0) {
		freeReplyObject(rep);
		return 1;
	}
	nd->answered = 1;
	if (rep->type == REDIS_REPLY_ERROR) {
		nd->err = rl_error_reply(&nd->url, rep->str, r->doing, nd->why,
		    sizeof(nd->why));
		nd->refused = 1;
		freeReplyObject(rep);
		/* READONLY, LOADING...: this server is not the master now;
		 * the next round connects again (and asks the sentinels). */
		if (nd->err == RL_ECONNECT) {
			rl_conn_close(&nd->conn);
			nd->phase = RL_PH_DONE;
			return 1;
		}
	} else
		nd->reply = rep;
	if (nd->waits || nd->roles || nd->exists)
		return 0;
	nd->phase = RL_PH_DONE;
	return 1;
}

static void
node_io(struct rl_round *r, struct rl_node *nd, short revents, int64_t now)
{
	redisReply *rep;
	enum rl_io io;

	for (;;) {
		io = rl_conn_io(&nd->conn, revents, &rep);
		revents = 0;
		if (io == RL_IO_FAIL) {
			node_fail(nd, nd->conn.err, nd->conn.why);
			return;
		}
		if (io == RL_IO_WAIT)
			break;
		if (nd->phase != RL_PH_SENT) {
			freeReplyObject(rep);	/* nothing asked: stray */
			continue;
		}
		if (node_reply(r, nd, rep, now))
			return;
	}
	if (nd->phase == RL_PH_CONNECT && ready(r, nd))
		nd->phase = RL_PH_READY;
}

/* ND's time is over. */
static void
node_late(const struct rl_round *r, struct rl_node *nd)
{
	char why[RL_WHY_MAX], within[320], w[32];

	if (nd->phase == RL_PH_SENT && nd->answered) {
		/* The script answered; only the WAIT behind it did not (or
		 * SCRIPT EXISTS, a hint, which says nothing of it). */
		rl_conn_late(&nd->conn);
		nd->phase = RL_PH_DONE;
		if (nd->why[0] == '\0' && !nd->exists)
			rl_error_io(&nd->url, "no replica count from", "WAIT "
			    "timed out (see --reply-timeout)", nd->why,
			    sizeof(nd->why));
		return;
	}
	if (nd->phase == RL_PH_CONNECT && nd->conn.state != RL_CONN_READY) {
		/* Cut by the wait's end: -w bounded it, as where the client
		 * cuts a round (rl_client.c); or by the per-master bound,
		 * once a quorum was connected (cut_stragglers). */
		if (r->cut_ms > 0 && nd->deadline == r->cut_ms) {
			rl_duration_format(r->o.straggle_ms, w, sizeof(w));
			snprintf(within, sizeof(within), "not within %s of a "
			    "majority (the per-master bound)", w);
		} else if (r->o.connect_wait_ms > 1) {
			rl_duration_format(r->o.connect_wait_ms, w, sizeof(w));
			snprintf(within, sizeof(within), "none within -w %s", w);
		} else
			snprintf(within, sizeof(within), "%s",
			    r->o.connect_wait_ms > 0 ? "none within -w" :
			    nd->conn.stage != NULL ? nd->conn.stage :
			    "timed out (see --connect-timeout)");
		rl_error_io(&nd->url, "cannot connect to", within, why,
		    sizeof(why));
		rl_conn_close(&nd->conn);
	} else {
		/* Its command may run yet: the connection keeps it, and its
		 * reply's place in line. */
		rl_conn_late(&nd->conn);
		rl_error_io(&nd->url, "no answer from", "timed out (see "
		    "--reply-timeout)", why, sizeof(why));
	}
	node_fail(nd, RL_ECONNECT, why);
	nd->conn.err = RL_ECONNECT;
	snprintf(nd->conn.why, sizeof(nd->conn.why), "%s", why);
}

static int
active(const struct rl_node *nd)
{
	return nd->phase == RL_PH_CONNECT || nd->phase == RL_PH_SENT;
}

size_t
rl_round_pollfds(const struct rl_round *r, struct pollfd *pfd)
{
	size_t j, np = 0;

	for (j = 0; j < r->n; j++) {
		const struct rl_node *nd = &r->nodes[j];

		if (!active(nd) || rl_conn_fd(&nd->conn) < 0)
			continue;
		pfd[np].fd = rl_conn_fd(&nd->conn);
		pfd[np].events = rl_conn_events(&nd->conn);
		pfd[np].revents = 0;
		np++;
	}
	return np;
}

int64_t
rl_round_wake(const struct rl_round *r)
{
	int64_t wake = -1;
	size_t j;

	for (j = 0; j < r->n; j++) {
		const struct rl_node *nd = &r->nodes[j];

		if (active(nd) && (wake < 0 || nd->deadline < wake))
			wake = nd->deadline;
		if (active(nd) && nd->retry_at > 0 && nd->retry_at < wake)
			wake = nd->retry_at;
	}
	return r->done ? -1 : wake;
}

/* Once a quorum of masters is connected (opts enough), those still
 * connecting get the per-master bound more (opts straggle_ms), not what
 * is left of --connect-timeout: a master whose packets are dropped
 * costs the round that much, and the rest are asked while their leases
 * are young. */
static void
cut_stragglers(struct rl_round *r, int64_t now)
{
	size_t j, up = 0;

	if (r->sent || r->o.straggle_ms <= 0)
		return;
	for (j = 0; j < r->n && r->cut_ms == 0; j++)
		up += r->nodes[j].phase == RL_PH_READY;
	if (r->cut_ms == 0 && (up == 0 || up < r->o.enough))
		return;
	if (r->cut_ms == 0)
		r->cut_ms = now + r->o.straggle_ms;
	for (j = 0; j < r->n; j++) {
		struct rl_node *nd = &r->nodes[j];

		if (nd->phase == RL_PH_CONNECT && nd->deadline > r->cut_ms)
			nd->deadline = r->cut_ms;
	}
}

int
rl_round_step(struct rl_round *r, int64_t now)
{
	struct pollfd pfd[RL_MAX_NODES];
	size_t j, np = rl_round_pollfds(r, pfd), k = 0, busy = 0;

	if (r->done)
		return 1;
	if (np > 0 && poll(pfd, (nfds_t)np, 0) < 0 && errno != EINTR)
		np = 0;
	for (j = 0; j < r->n; j++) {
		struct rl_node *nd = &r->nodes[j];

		int polled = active(nd) && rl_conn_fd(&nd->conn) >= 0;

		if (active(nd) && nd->retry_at > 0 && now >= nd->retry_at)
			resend(r, nd);
		if (!polled)
			continue;
		node_io(r, nd, pfd[k++].revents, now);
		if (active(nd) && now >= nd->deadline)
			node_late(r, nd);
	}
	cut_stragglers(r, now);
	for (j = 0; j < r->n; j++)
		busy += r->nodes[j].phase == RL_PH_CONNECT;
	if (!r->sent && busy == 0)
		send_all(r, now);
	for (j = 0; j < r->n; j++)
		busy += active(&r->nodes[j]);
	r->done = r->sent && busy == 0;
	return r->done;
}

void
rl_round_run(struct rl_round *r)
{
	struct pollfd pfd[RL_MAX_NODES];
	int64_t now = rl_now_ms(), wake;
	size_t np;

	while (!rl_round_step(r, now)) {
		np = rl_round_pollfds(r, pfd);
		wake = rl_round_wake(r);
		now = rl_now_ms();
		if (wake > now)
			poll(pfd, (nfds_t)np, wake - now > INT_MAX ? INT_MAX :
			    (int)(wake - now));
		now = rl_now_ms();
	}
}

redisReply *
rl_round_once(struct rl_node *nd, const struct rl_round_opts *o, int argc,
    const char **argv)
{
	struct rl_round r;
	redisReply *rep;

	memset(&r, 0, sizeof(r));
	if (rl_round_command(&r, nd, 1, o, argc, argv) < 0)
		return NULL;
	rl_round_run(&r);
	rl_round_end(&r);
	rep = nd->reply;
	nd->reply = NULL;
	return rep;
}

size_t
rl_round_answered(const struct rl_round *r)
{
	size_t j, n = 0;

	for (j = 0; j < r->n; j++)
		n += r->nodes[j].reply != NULL;
	return n;
}

void
rl_round_end(struct rl_round *r)
{
	size_t j;

	for (j = 0; j < r->n && r->nodes != NULL; j++) {
		if (active(&r->nodes[j]))
			node_late(r, &r->nodes[j]);
		go_home(&r->nodes[j]);
		rl_hops_clear(&r->nodes[j].fw.hops);
	}
	if (r->cmd != NULL)
		redisFreeCommand(r->cmd);
	free(r->full);
	if (r->scmd != NULL)
		redisFreeCommand(r->scmd);
	free(r->sfull);
	if (r->wait != NULL)
		redisFreeCommand(r->wait);
	if (r->exists != NULL)
		redisFreeCommand(r->exists);
	r->cmd = r->full = r->scmd = r->sfull = r->wait = r->exists = NULL;
	r->shas = NULL;
	r->exists_n = 0;
	put_back(r);
	r->done = 1;
}

void
rl_round_end_keep(struct rl_round *r)
{
	int aside = r->aside;

	r->aside = 0;
	rl_round_end(r);
	r->aside = aside;
}
