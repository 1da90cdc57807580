/* fake_redis.h: fake Redis servers for the units that block (rl_acquire,
 * rl_release) or poll on their own (rl_keeper), over the fake transport
 * of rl_client_set_transport.
 *
 * Each connection is a socketpair whose server end is served in line:
 * whatever the client writes is parsed (hiredis's reader: commands are
 * RESP arrays) and answered at once, before the write returns, as Redis
 * would answer the scripts of lua/ for the locks the server holds in
 * memory (fake_lock): acquire (plain and fair), release, renew,
 * room_leave, leave, runid; EVALSHA of a script the server has not seen
 * is NOSCRIPT, EVAL teaches it.
 * SUBSCRIBE and SSUBSCRIBE are confirmed, and a release (another client's:
 * fake_release_by) pushes its messages to the connections subscribed, as
 * the script's PUBLISH or SPUBLISH does. A test's hook sees each command
 * first and may answer it instead (MOVED, an error), drop the server's
 * connections (fake_drop) or refuse new ones (refuse).
 *
 * Every command is logged per server (fake_runs, fake_sent; the first
 * FAKE_LOG, and a count of them all), and printed with FAKE_TRACE=1 in
 * the environment. Every wait is bounded: fake_setup arms an alarm that
 * ends the whole program, naming the test file, should a call block
 * past FAKE_LIMIT_S. */
#ifndef FAKE_REDIS_H
#define FAKE_REDIS_H

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "rl_client.h"
#include "rl_scripts.h"

#define FAKE_SRVS 4
#define FAKE_CONNS 16		/* a server's connections open at once */
#define FAKE_LOG 512		/* commands logged per server */
#define FAKE_LOCKS 4
#define FAKE_ROOM 8
#define FAKE_CHANS 4
#define FAKE_PORT0 7101
#define FAKE_LIMIT_S 20
/* The helpers a test may go without. */
#define FAKE_OPTIONAL __attribute__((unused))

struct fake_srv;

/* The server's end of one connection. */
struct fake_conn {
	struct fake_srv *s;
	int used;		/* the client has it open */
	int fd;			/* -1: the server hung up */
	redisReader *rd;
	char *chan[FAKE_CHANS];	/* channels subscribed */
	int sharded[FAKE_CHANS];	/* by SSUBSCRIBE */
	size_t nchan;
	int mark;		/* the test's */
};

/* One command received: its words (an EVAL's script as "<script>"),
 * and the script it runs (NULL: not a script, or not known). */
struct fake_cmd {
	int argc;
	char **argv;
	const struct rl_script *script;
	int ran;		/* the script ran (not NOSCRIPT, not hooked) */
	int64_t at;		/* when it came (rl_now_ms) */
};

/* A lock as the scripts keep it: NAME held by OWNER (holds times) with a
 * lease of PTTL ms, the room of its plain waiters and its fair queue,
 * head first. */
struct fake_lock {
	char name[64];
	char owner[RL_OWNER_MAX + 8];	/* "": free */
	int64_t holds;
	int64_t pttl;
	int64_t fence;
	char room[FAKE_ROOM][RL_OWNER_MAX + 8];
	size_t nroom;
	char listener[RL_OWNER_MAX + 8];
	char queue[FAKE_ROOM][RL_OWNER_MAX + 8];	/* fair waiters */
	size_t nqueue;
};

struct fake_srv {
	int port;
	int refuse;		/* connecting fails */
	int cluster;		/* HELLO says a Redis 7 cluster node: channels
				 * are sharded */
	int opens;		/* connections opened */
	int pushes;		/* messages pushed to subscribers */
	const char *known[32];	/* scripts the server has (their SHA) */
	size_t nknown;
	struct fake_conn conns[FAKE_CONNS];
	struct fake_cmd log[FAKE_LOG];
	size_t nlog;
	struct fake_cmd spare;	/* the last command past a full log */
	size_t ncmds;		/* commands received, logged or not */
	struct fake_lock locks[FAKE_LOCKS];
	size_t nlocks;
	/* The test's: sees command CMD on FC first; 1 when it answered it
	 * (or hung up), 0 for the server's own answer. */
	int (*hook)(struct fake_srv *s, struct fake_conn *fc,
	    struct fake_cmd *cmd);
	void *arg;		/* the test's */
};

static struct fake_srv fake_srvs[FAKE_SRVS];
static char fake_blocked[128];	/* what the alarm says */

static void
fake_alarm(int sig)
{
	(void)sig;
	if (write(2, fake_blocked, strlen(fake_blocked)) < 0)
		_exit(2);
	_exit(1);
}

/* Before each test of the file TEST: the servers at FAKE_PORT0 on,
 * empty, each with no script; the alarm armed. */
static void
fake_setup(const char *test)
{
	size_t i;

	memset(fake_srvs, 0, sizeof(fake_srvs));
	for (i = 0; i < FAKE_SRVS; i++)
		fake_srvs[i].port = FAKE_PORT0 + (int)i;
	snprintf(fake_blocked, sizeof(fake_blocked), "fake_redis: a call "
	    "blocked past %d s in %s\n", FAKE_LIMIT_S, test);
	signal(SIGALRM, fake_alarm);
	alarm(FAKE_LIMIT_S);
}

static void
fake_cmd_free(struct fake_cmd *cmd)
{
	int k;

	for (k = 0; k < cmd->argc; k++)
		free(cmd->argv[k]);
	free(cmd->argv);
	memset(cmd, 0, sizeof(*cmd));
}

static void
fake_conn_free(struct fake_conn *fc)
{
	size_t i;

	if (fc->fd >= 0)
		close(fc->fd);
	if (fc->rd != NULL)
		redisReaderFree(fc->rd);
	for (i = 0; i < fc->nchan; i++)
		free(fc->chan[i]);
	memset(fc, 0, sizeof(*fc));
	fc->fd = -1;
}

/* After each test, once the clients are freed. */
static void
fake_teardown(void)
{
	size_t i, j;

	alarm(0);
	for (i = 0; i < FAKE_SRVS; i++) {
		struct fake_srv *s = &fake_srvs[i];

		for (j = 0; j < FAKE_CONNS; j++)
			if (s->conns[j].used)
				fake_conn_free(&s->conns[j]);
		for (j = 0; j < s->nlog; j++)
			fake_cmd_free(&s->log[j]);
		fake_cmd_free(&s->spare);
	}
	memset(fake_srvs, 0, sizeof(fake_srvs));
}

static struct fake_srv *
fake_srv_of(int port)
{
	size_t i;

	for (i = 0; i < FAKE_SRVS; i++)
		if (fake_srvs[i].port == port)
			return &fake_srvs[i];
	return NULL;
}

/* ---- replies ---- */

static void
fake_say(struct fake_conn *fc, const char *buf, size_t len)
{
	if (fc->fd < 0)
		return;
	assert_int_equal(send(fc->fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

static void
fake_sayf(struct fake_conn *fc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fake_sayf(struct fake_conn *fc, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	fake_say(fc, buf, (size_t)n);
}

static void
fake_bulk(struct fake_conn *fc, const char *s)
{
	if (s == NULL)
		fake_sayf(fc, "$-1\r\n");
	else
		fake_sayf(fc, "$%zu\r\n%s\r\n", strlen(s), s);
}

static void
fake_int(struct fake_conn *fc, long long v)
{
	fake_sayf(fc, ":%lld\r\n", v);
}

/* ---- locks ---- */

/* Lock NAME on S, made (free) when new. */
static struct fake_lock *
fake_lock(struct fake_srv *s, const char *name)
{
	struct fake_lock *l;
	size_t i;

	for (i = 0; i < s->nlocks; i++)
		if (strcmp(s->locks[i].name, name) == 0)
			return &s->locks[i];
	assert_true(s->nlocks < FAKE_LOCKS);
	l = &s->locks[s->nlocks++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	return l;
}

/* NAME from one of its keys, "PREFIX:{NAME}" or NAME itself. */
static struct fake_lock *
fake_lock_of_key(struct fake_srv *s, const char *key)
{
	const char *b = strchr(key, '{'), *e;
	char name[64];

	if (b == NULL)
		return fake_lock(s, key);
	e = strchr(b, '}');
	assert_non_null(e);
	snprintf(name, sizeof(name), "%.*s", (int)(e - b - 1), b + 1);
	return fake_lock(s, name);
}

/* Another client (OWNER) holds NAME on S, PTTL ms of its lease left. */
FAKE_OPTIONAL static void
fake_hold(struct fake_srv *s, const char *name, const char *owner,
    int64_t pttl)
{
	struct fake_lock *l = fake_lock(s, name);

	snprintf(l->owner, sizeof(l->owner), "%s", owner);
	l->holds = 1;
	l->pttl = pttl;
	l->fence++;
}

static int
fake_in_room(const struct fake_lock *l, const char *owner)
{
	size_t i;

	for (i = 0; i < l->nroom; i++)
		if (strcmp(l->room[i], owner) == 0)
			return 1;
	return 0;
}

static void
fake_room_remove(struct fake_lock *l, const char *owner)
{
	size_t i;

	for (i = 0; i < l->nroom; i++)
		if (strcmp(l->room[i], owner) == 0) {
			memmove(l->room[i], l->room[i + 1], (l->nroom - i - 1) *
			    sizeof(l->room[0]));
			l->nroom--;
			break;
		}
	if (strcmp(l->listener, owner) == 0)
		l->listener[0] = '\0';
}

/* Where OWNER is in L's fair queue (0 first), or -1. */
static int
fake_queued(const struct fake_lock *l, const char *owner)
{
	size_t i;

	for (i = 0; i < l->nqueue; i++)
		if (strcmp(l->queue[i], owner) == 0)
			return (int)i;
	return -1;
}

static void
fake_dequeue(struct fake_lock *l, const char *owner)
{
	int i = fake_queued(l, owner);

	if (i < 0)
		return;
	memmove(l->queue[i], l->queue[i + 1], (l->nqueue - (size_t)i - 1) *
	    sizeof(l->queue[0]));
	l->nqueue--;
}

/* ---- pub/sub ---- */

/* PUBLISH (SHARDED: SPUBLISH) MSG on CH: pushed to every connection of S
 * subscribed to it. How many. */
static int
fake_publish(struct fake_srv *s, const char *ch, const char *msg,
    int sharded)
{
	size_t i, j;
	int n = 0;

	for (i = 0; i < FAKE_CONNS; i++) {
		struct fake_conn *fc = &s->conns[i];

		for (j = 0; fc->used && fc->fd >= 0 && j < fc->nchan; j++) {
			if (strcmp(fc->chan[j], ch) != 0 ||
			    fc->sharded[j] != sharded)
				continue;
			fake_sayf(fc, "*3\r\n$%d\r\n%s\r\n$%zu\r\n%s\r\n"
			    "$%zu\r\n%s\r\n", sharded ? 8 : 7, sharded ?
			    "smessage" : "message", strlen(ch), ch,
			    strlen(msg), msg);
			if (getenv("FAKE_TRACE") != NULL)
				fprintf(stderr, "fake %d: conn %d: pushed %s "
				    "on %s\n", s->port, (int)i, msg, ch);
			n++;
		}
	}
	s->pushes += n;
	return n;
}

/* What release.lua publishes when the last hold of L goes: "0" on the
 * lock's channel (the room's listener hears it), on the own channel of
 * the head of the fair queue, and on that of one waiter of the room (the
 * listener only when alone). */
static void
fake_wake(struct fake_srv *s, struct fake_lock *l, int sharded)
{
	char ch[256];
	size_t i;

	snprintf(ch, sizeof(ch), "%s:{%s}", RL_PREFIX_CHANNEL, l->name);
	fake_publish(s, ch, "0", sharded);
	if (l->nqueue > 0) {
		snprintf(ch, sizeof(ch), "%s:{%s}:%s", RL_PREFIX_CHANNEL,
		    l->name, l->queue[0]);
		fake_publish(s, ch, "0", sharded);
	}
	for (i = 0; i < l->nroom; i++)
		if (l->nroom == 1 || strcmp(l->room[i], l->listener) != 0) {
			snprintf(ch, sizeof(ch), "%s:{%s}:%s",
			    RL_PREFIX_CHANNEL, l->name, l->room[i]);
			fake_publish(s, ch, "0", sharded);
			break;
		}
}

/* OWNER, another client, gives back its hold of NAME on S: free, and the
 * waiters woken as release.lua wakes them. */
FAKE_OPTIONAL static void
fake_release_by(struct fake_srv *s, const char *name, const char *owner)
{
	struct fake_lock *l = fake_lock(s, name);

	assert_string_equal(l->owner, owner);
	l->owner[0] = '\0';
	l->holds = 0;
	fake_wake(s, l, s->cluster);
}

/* (S)SUBSCRIBE's confirmations, one a channel. */
static void
fake_subscribe(struct fake_conn *fc, const struct fake_cmd *cmd)
{
	int sharded = strcmp(cmd->argv[0], "SSUBSCRIBE") == 0;
	int i;

	for (i = 1; i < cmd->argc; i++) {
		assert_true(fc->nchan < FAKE_CHANS);
		fc->chan[fc->nchan] = strdup(cmd->argv[i]);
		assert_non_null(fc->chan[fc->nchan]);
		fc->sharded[fc->nchan++] = sharded;
		fake_sayf(fc, "*3\r\n$%d\r\n%s\r\n$%zu\r\n%s\r\n:%zu\r\n",
		    sharded ? 10 : 9, sharded ? "ssubscribe" : "subscribe",
		    strlen(cmd->argv[i]), cmd->argv[i], fc->nchan);
	}
}

/* ---- the scripts, as lua/ answers them ---- */

/* Word I of a script call's keys (K) or arguments (A). */
#define FAKE_KEY(cmd, i) ((cmd)->argv[3 + (i)])
#define FAKE_ARG(cmd, i) ((cmd)->argv[3 + (cmd)->script->nkeys + (i)])

/* A busy acquire.lua's reply for a waiter LISTEN (the room's listener),
 * AHEAD waiters ahead of it in a fair queue of QUEUED (-1: not fair). */
static void
fake_busy(struct fake_conn *fc, const struct fake_lock *l, int listen,
    int ahead, int queued)
{
	if (l->owner[0] == '\0')
		fake_sayf(fc, "*16\r\n:0\r\n$-1\r\n$-1\r\n");
	else {
		fake_sayf(fc, "*16\r\n:0\r\n:%lld\r\n", (long long)l->pttl);
		fake_bulk(fc, l->owner);
	}
	fake_sayf(fc, "$3\r\nbox\r\n:4242\r\n$5\r\nalice\r\n$8\r\nsleep 60"
	    "\r\n:1500\r\n$-1\r\n");
	if (queued < 0)
		fake_sayf(fc, "$-1\r\n$-1\r\n:0\r\n$-1\r\n");
	else
		fake_sayf(fc, ":%d\r\n$-1\r\n:0\r\n:%d\r\n", queued, ahead);
	fake_sayf(fc, listen ? ":1\r\n" : "$-1\r\n");
	fake_sayf(fc, "$-1\r\n$-1\r\n");
}

/* A fair caller (A_mode "fair") joins the queue ("j"), and takes a free
 * lock only at its head. */
static int
fake_fair_turn(struct fake_lock *l, const char *owner, const char *flags)
{
	if (strchr(flags, 'j') != NULL && fake_queued(l, owner) < 0) {
		assert_true(l->nqueue < FAKE_ROOM);
		snprintf(l->queue[l->nqueue++], sizeof(l->queue[0]), "%s",
		    owner);
	}
	return l->nqueue == 0 || fake_queued(l, owner) == 0;
}

/* acquire.lua: {1, fence, holds, nopub} when taken or re-entered, else
 * {0, pttl, owner, host, pid, user, cmd, held_ms, position, queued,
 * head_wait_ms, rejoined, ahead, listen, announced, held_until}; a caller
 * that waits ("j") joins the room, its first waiter the listener ("w"
 * leaves it when it acquires), or with A_mode "fair" the queue. */
static void
fake_acquire(struct fake_srv *s, struct fake_conn *fc,
    const struct fake_cmd *cmd)
{
	struct fake_lock *l = fake_lock(s, FAKE_KEY(cmd, RL_ACQUIRE_KEY_LOCK));
	const char *owner = FAKE_ARG(cmd, RL_ACQUIRE_ARG_OWNER);
	const char *flags = FAKE_ARG(cmd, RL_ACQUIRE_ARG_FLAGS);
	int fair = strcmp(FAKE_ARG(cmd, RL_ACQUIRE_ARG_MODE), "fair") == 0;
	int listen = 0, turn = !fair || fake_fair_turn(l, owner, flags);
	int ahead = fake_queued(l, owner) < 0 ? (int)l->nqueue :
	    fake_queued(l, owner);

	if (fair && l->owner[0] != '\0' && strcmp(l->owner, owner) != 0) {
		fake_busy(fc, l, 0, ahead, (int)l->nqueue);
		return;
	}
	if ((l->owner[0] == '\0' && turn) || strcmp(l->owner, owner) == 0) {
		if (l->owner[0] == '\0') {
			snprintf(l->owner, sizeof(l->owner), "%s", owner);
			l->holds = 0;
			l->fence++;
		}
		l->holds++;
		l->pttl = strtoll(FAKE_ARG(cmd, RL_ACQUIRE_ARG_LEASE), NULL,
		    10);
		fake_room_remove(l, owner);
		fake_dequeue(l, owner);
		fake_sayf(fc, "*4\r\n:1\r\n$%d\r\n%lld\r\n:%lld\r\n$-1\r\n",
		    snprintf(NULL, 0, "%lld", (long long)l->fence),
		    (long long)l->fence, (long long)l->holds);
		return;
	}
	if (strchr(flags, 'j') != NULL &&
	    FAKE_ARG(cmd, RL_ACQUIRE_ARG_MODE)[0] == '\0') {
		if (!fake_in_room(l, owner)) {
			assert_true(l->nroom < FAKE_ROOM);
			snprintf(l->room[l->nroom++], sizeof(l->room[0]), "%s",
			    owner);
		}
		if (l->listener[0] == '\0')
			snprintf(l->listener, sizeof(l->listener), "%s", owner);
		listen = strcmp(l->listener, owner) == 0;
	}
	fake_busy(fc, l, listen, ahead, fair ? (int)l->nqueue : -1);
}

/* release.lua: {2, nopub} when the last hold went (waiters woken, as the
 * script's publish argument says: PUBLISH or SPUBLISH), {1, holds} when
 * some are left, {0, held} when OWNER holds none. */
static void
fake_release(struct fake_srv *s, struct fake_conn *fc,
    const struct fake_cmd *cmd)
{
	struct fake_lock *l = fake_lock(s, FAKE_KEY(cmd, RL_RELEASE_KEY_LOCK));
	const char *owner = FAKE_ARG(cmd, RL_RELEASE_ARG_OWNER);

	if (l->owner[0] == '\0' || strcmp(l->owner, owner) != 0) {
		fake_sayf(fc, "*2\r\n:0\r\n:%d\r\n", l->owner[0] != '\0');
		return;
	}
	if (--l->holds > 0) {
		fake_sayf(fc, "*2\r\n:1\r\n:%lld\r\n", (long long)l->holds);
		return;
	}
	l->owner[0] = '\0';
	if (FAKE_ARG(cmd, RL_RELEASE_ARG_MESSAGE)[0] != '\0')
		fake_wake(s, l, strcmp(FAKE_ARG(cmd, RL_RELEASE_ARG_PUBLISH),
		    "SPUBLISH") == 0);
	fake_sayf(fc, "*2\r\n:2\r\n$-1\r\n");
}

/* renew.lua: 1 renewed, 0 gone, 2 held by another owner. */
static void
fake_renew(struct fake_srv *s, struct fake_conn *fc,
    const struct fake_cmd *cmd)
{
	struct fake_lock *l = fake_lock(s, FAKE_KEY(cmd, RL_RENEW_KEY_LOCK));
	const char *owner = FAKE_ARG(cmd, RL_RENEW_ARG_OWNER);

	if (l->owner[0] == '\0') {
		fake_int(fc, 0);
		return;
	}
	if (strcmp(l->owner, owner) != 0) {
		fake_int(fc, 2);
		return;
	}
	l->pttl = strtoll(FAKE_ARG(cmd, RL_RENEW_ARG_LEASE), NULL, 10);
	fake_int(fc, 1);
}

/* room_leave.lua: the waiter leaves the room; 1 when it was the listener
 * (another waiter is woken to take the role), else 0. */
static void
fake_room_leave(struct fake_srv *s, struct fake_conn *fc,
    const struct fake_cmd *cmd)
{
	struct fake_lock *l = fake_lock_of_key(s,
	    FAKE_KEY(cmd, RL_ROOM_LEAVE_KEY_ROOM));
	const char *waiter = FAKE_ARG(cmd, RL_ROOM_LEAVE_ARG_WAITER);
	int was = strcmp(l->listener, waiter) == 0;

	fake_room_remove(l, waiter);
	fake_int(fc, was);
}

/* leave.lua: {removed, position}: the fair waiter leaves the queue. */
static void
fake_leave(struct fake_srv *s, struct fake_conn *fc,
    const struct fake_cmd *cmd)
{
	struct fake_lock *l = fake_lock(s, FAKE_KEY(cmd, RL_LEAVE_KEY_LOCK));
	int at = fake_queued(l, FAKE_ARG(cmd, RL_LEAVE_ARG_OWNER));

	fake_dequeue(l, FAKE_ARG(cmd, RL_LEAVE_ARG_OWNER));
	fake_sayf(fc, "*2\r\n:%d\r\n:%d\r\n", at >= 0, at + 1);
}

/* runid.lua: the server's run_id, its own. */
static void
fake_runid(struct fake_srv *s, struct fake_conn *fc)
{
	fake_sayf(fc, "$40\r\n%040d\r\n", s->port);
}

static const struct rl_script *const fake_scripts[] = {
	&rl_script_acquire, &rl_script_release, &rl_script_renew,
	&rl_script_room_leave, &rl_script_runid, &rl_script_leave,
	&rl_script_force, &rl_script_status, &rl_script_queue,
};

FAKE_OPTIONAL static int
fake_knows(const struct fake_srv *s, const char *sha)
{
	size_t i;

	for (i = 0; i < s->nknown; i++)
		if (strcmp(s->known[i], sha) == 0)
			return 1;
	return 0;
}

/* Which script CMD (EVAL or EVALSHA) runs; NULL for none of ours. */
static const struct rl_script *
fake_script_of(const struct fake_cmd *cmd, const char *word)
{
	int eval = strcasecmp(cmd->argv[0], "EVAL") == 0;
	size_t i;

	for (i = 0; i < sizeof(fake_scripts) / sizeof(fake_scripts[0]); i++)
		if (strcmp(word, eval ? fake_scripts[i]->src :
		    fake_scripts[i]->sha) == 0)
			return fake_scripts[i];
	return NULL;
}

/* Run the script of CMD (known to S by then). */
static void
fake_run(struct fake_srv *s, struct fake_conn *fc, struct fake_cmd *cmd)
{
	const struct rl_script *sc = cmd->script;

	assert_non_null(sc);
	assert_int_equal(strtol(cmd->argv[2], NULL, 10), sc->nkeys);
	assert_int_equal(cmd->argc, 3 + sc->nkeys + sc->nargs);
	cmd->ran = 1;
	if (sc == &rl_script_acquire)
		fake_acquire(s, fc, cmd);
	else if (sc == &rl_script_release)
		fake_release(s, fc, cmd);
	else if (sc == &rl_script_renew)
		fake_renew(s, fc, cmd);
	else if (sc == &rl_script_room_leave)
		fake_room_leave(s, fc, cmd);
	else if (sc == &rl_script_runid)
		fake_runid(s, fc);
	else if (sc == &rl_script_leave)
		fake_leave(s, fc, cmd);
	else {
		cmd->ran = 0;
		fake_sayf(fc, "-ERR the fake does not run %s\r\n", sc->name);
	}
}

/* SCRIPT EXISTS sha...: 1 for each the server has. */
static void
fake_exists(struct fake_srv *s, struct fake_conn *fc,
    const struct fake_cmd *cmd)
{
	int i;

	fake_sayf(fc, "*%d\r\n", cmd->argc - 2);
	for (i = 2; i < cmd->argc; i++)
		fake_int(fc, fake_knows(s, cmd->argv[i]));
}

/* The server's own answer to CMD. */
static void
fake_answer(struct fake_srv *s, struct fake_conn *fc, struct fake_cmd *cmd)
{
	const char *w = cmd->argv[0];
	const char *mode = s->cluster ? "cluster" : "standalone";

	if (strcmp(w, "HELLO") == 0)
		fake_sayf(fc, "*6\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\n"
		    "version\r\n$5\r\n7.0.0\r\n$4\r\nmode\r\n$%zu\r\n%s\r\n",
		    strlen(mode), mode);
	else if (strcmp(w, "EVALSHA") == 0 && !fake_knows(s, cmd->argv[1]))
		fake_sayf(fc, "-NOSCRIPT No matching script. Please use "
		    "EVAL.\r\n");
	else if (strcmp(w, "EVALSHA") == 0 || strcmp(w, "EVAL") == 0) {
		if (cmd->script != NULL && !fake_knows(s, cmd->script->sha)) {
			assert_true(s->nknown < 32);
			s->known[s->nknown++] = cmd->script->sha;
		}
		fake_run(s, fc, cmd);
	} else if (strcmp(w, "SUBSCRIBE") == 0 || strcmp(w, "SSUBSCRIBE") == 0)
		fake_subscribe(fc, cmd);
	else if (strcmp(w, "SCRIPT") == 0 && cmd->argc > 1 &&
	    strcasecmp(cmd->argv[1], "EXISTS") == 0)
		fake_exists(s, fc, cmd);
	else if (strcmp(w, "WAIT") == 0)
		fake_int(fc, 0);
	else if (strcmp(w, "PING") == 0)
		fake_sayf(fc, "+PONG\r\n");
	else
		fake_sayf(fc, "-ERR unknown command '%s'\r\n", w);
}

/* Log the command R as S received it (past FAKE_LOG commands, only the
 * last is kept, and counted). */
static struct fake_cmd *
fake_log(struct fake_srv *s, const struct fake_conn *fc, const redisReply *r)
{
	struct fake_cmd *cmd = &s->spare;
	size_t i;

	assert_int_equal(r->type, REDIS_REPLY_ARRAY);
	assert_true(r->elements > 0);
	s->ncmds++;
	if (s->nlog < FAKE_LOG)
		cmd = &s->log[s->nlog++];
	fake_cmd_free(cmd);
	cmd->argc = (int)r->elements;
	cmd->at = rl_now_ms();
	cmd->argv = calloc(r->elements, sizeof(*cmd->argv));
	assert_non_null(cmd->argv);
	for (i = 0; i < r->elements; i++) {
		assert_int_equal(r->element[i]->type, REDIS_REPLY_STRING);
		cmd->argv[i] = strdup(r->element[i]->str);
		assert_non_null(cmd->argv[i]);
	}
	if (cmd->argc > 2 && (strcmp(cmd->argv[0], "EVAL") == 0 ||
	    strcmp(cmd->argv[0], "EVALSHA") == 0)) {
		cmd->script = fake_script_of(cmd, cmd->argv[1]);
		if (strcmp(cmd->argv[0], "EVAL") == 0) {
			free(cmd->argv[1]);
			cmd->argv[1] = strdup("<script>");
			assert_non_null(cmd->argv[1]);
		}
	}
	if (getenv("FAKE_TRACE") != NULL)
		fprintf(stderr, "fake %d: %lld ms: conn %d: %s %s %s\n", s->port,
		    (long long)rl_now_ms() % 100000, (int)(fc - s->conns),
		    cmd->argv[0], cmd->script != NULL ? cmd->script->name :
		    cmd->argc > 1 ? cmd->argv[1] : "", cmd->script != NULL &&
		    cmd->argc > 3 ? cmd->argv[3] : "");
	return cmd;
}

/* Read what the client wrote on FC and answer each whole command. */
static void
fake_serve(struct fake_conn *fc)
{
	struct fake_srv *s = fc->s;
	char buf[1 << 16];
	void *r;
	ssize_t n;

	while (fc->fd >= 0 && (n = read(fc->fd, buf, sizeof(buf))) > 0) {
		assert_int_equal(redisReaderFeed(fc->rd, buf, (size_t)n),
		    REDIS_OK);
		while (fc->fd >= 0) {
			struct fake_cmd *cmd;

			assert_int_equal(redisReaderGetReply(fc->rd, &r),
			    REDIS_OK);
			if (r == NULL)
				break;
			cmd = fake_log(s, fc, r);
			freeReplyObject(r);
			if (s->hook == NULL || !s->hook(s, fc, cmd))
				fake_answer(s, fc, cmd);
		}
	}
}

/* The server hangs up on FC (its client reads the end of the stream). */
FAKE_OPTIONAL static void
fake_hangup(struct fake_conn *fc)
{
	if (fc->fd >= 0)
		close(fc->fd);
	fc->fd = -1;
}

/* S hangs up on every connection it has (a crash, a restart). */
FAKE_OPTIONAL static void
fake_drop(struct fake_srv *s)
{
	size_t i;

	for (i = 0; i < FAKE_CONNS; i++)
		if (s->conns[i].used)
			fake_hangup(&s->conns[i]);
}

/* ---- the transport ---- */

static int
fake_t_open(struct rl_conn *c)
{
	struct fake_srv *s = fake_srv_of(c->url->port);
	struct fake_conn *fc = NULL;
	int sv[2];
	size_t i;

	if (s == NULL || s->refuse) {
		rl_error_io(c->url, "cannot connect to", "Connection refused",
		    c->why, sizeof(c->why));
		return -1;
	}
	for (i = 0; i < FAKE_CONNS && fc == NULL; i++)
		if (!s->conns[i].used)
			fc = &s->conns[i];
	assert_non_null(fc);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, sv), 0);
	memset(fc, 0, sizeof(*fc));
	fc->s = s;
	fc->used = 1;
	fc->fd = sv[1];
	fc->rd = redisReaderCreate();
	assert_non_null(fc->rd);
	s->opens++;
	c->fd = sv[0];
	c->priv = fc;
	return 0;
}

static int
fake_t_finish(struct rl_conn *c)
{
	(void)c;
	return 0;
}

static ssize_t
fake_t_read(struct rl_conn *c, void *buf, size_t len)
{
	return read(c->fd, buf, len);
}

/* Written, then answered at once. */
static ssize_t
fake_t_write(struct rl_conn *c, const void *buf, size_t len)
{
	ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);

	if (n > 0 && c->priv != NULL)
		fake_serve(c->priv);
	return n;
}

static void
fake_t_close(struct rl_conn *c)
{
	if (c->priv != NULL)
		fake_conn_free(c->priv);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->priv = NULL;
}

static const struct rl_transport fake_transport = {
	fake_t_open, fake_t_finish, fake_t_read, fake_t_write, fake_t_close,
	NULL
};

/* ---- what the tests read ---- */

/* Runs of script SC on S (on lock NAME when not NULL). */
FAKE_OPTIONAL static int
fake_runs(const struct fake_srv *s, const struct rl_script *sc,
    const char *name)
{
	size_t i;
	int n = 0;

	assert_int_equal(s->ncmds, s->nlog);
	for (i = 0; i < s->nlog; i++)
		n += s->log[i].ran && s->log[i].script == sc && (name == NULL ||
		    strcmp(s->log[i].argv[3], name) == 0);
	return n;
}

/* Commands WORD (SUBSCRIBE...) that S received. */
FAKE_OPTIONAL static int
fake_sent(const struct fake_srv *s, const char *word)
{
	size_t i;
	int n = 0;

	assert_int_equal(s->ncmds, s->nlog);
	for (i = 0; i < s->nlog; i++)
		n += strcmp(s->log[i].argv[0], word) == 0;
	return n;
}

/* The Nth run (0 first) of script SC on S, or NULL. */
FAKE_OPTIONAL static const struct fake_cmd *
fake_nth_run(const struct fake_srv *s, const struct rl_script *sc, int nth)
{
	size_t i;

	for (i = 0; i < s->nlog; i++)
		if (s->log[i].ran && s->log[i].script == sc && nth-- == 0)
			return &s->log[i];
	return NULL;
}

#endif
