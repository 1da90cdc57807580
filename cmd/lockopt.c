/* lockopt.c: the options and the acquisition that lock and exec share. */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "cmd.h"

#define DEFAULT_TTL_MS 30000
#define DEFAULT_WAITER_TIMEOUT_MS 5000
/* The shortest lease: a plain lock's, and one renewed every ttl/3 (a
 * shorter one leaves no time for a renewal). */
#define TTL_MIN_MS 10
#define RENEW_TTL_MIN_MS 30
/* More replicas than any server would have; WAIT takes an int. */
#define REPLICAS_MAX 1000
/* More permits than any semaphore would need. */
#define LIMIT_MAX 1000000

void
lockopts_init(struct lockopts *o)
{
	memset(o, 0, sizeof(*o));
	o->wait_ms = -1;
	o->ttl_ms = DEFAULT_TTL_MS;
	o->conflict = EXIT_BUSY;
	o->waiter_timeout_ms = DEFAULT_WAITER_TIMEOUT_MS;
	o->replicas = RL_REPLICAS_DEFAULT;
}

static const char *
kind_option(enum rl_lock_kind k)
{
	return k == RL_SHARED ? "--shared" : k == RL_WRITE ? "--write" :
	    k == RL_PERMIT ? "--limit" : "--fair";
}

/* -s, --write, --limit N: one of them. */
static int
kind_parse(const struct cmd *c, struct lockopts *o, int ch, const char *arg)
{
	enum rl_lock_kind k = ch == 's' ? RL_SHARED : ch == OPT_WRITE ?
	    RL_WRITE : RL_PERMIT;
	long v = 0;

	if (o->kind != RL_EXCLUSIVE && o->kind != k) {
		usage_error(c, "%s and %s do not go together: a lock is of one "
		    "kind", kind_option(o->kind), kind_option(k));
		return -1;
	}
	if (k == RL_PERMIT) {
		if (parse_number(arg, 1, LIMIT_MAX, &v) < 0) {
			usage_error(c, "--limit: '%s' is not a number from 1 "
			    "to %d", esc(arg), LIMIT_MAX);
			return -1;
		}
	}
	o->kind = k;
	o->limit = v;
	return 1;
}

static int
owner_parse(const struct cmd *c, struct lockopts *o, const char *arg)
{
	const unsigned char *p;

	if (arg[0] == '\0' || strlen(arg) > OWNER_MAX_LEN) {
		usage_error(c, "--owner: the token must be 1 to %d bytes",
		    OWNER_MAX_LEN);
		return -1;
	}
	/* lock prints it as one line; unlock must be able to echo it. */
	for (p = (const unsigned char *)arg; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f) {
			usage_error(c, "--owner: '%s' has a control character; "
			    "give a token without one", esc(arg));
			return -1;
		}
	o->owner = arg;
	return 1;
}

/* --waiter-timeout: 30ms to RL_WAITER_TIMEOUT_MAX_MS, so that no waiter
 * killed with it keeps its place, nor the room's keys their expiry, for
 * longer than a few hours. */
static int
waiter_timeout_parse(const struct cmd *c, struct lockopts *o,
    const char *arg)
{
	if (parse_duration(c, "--waiter-timeout", arg,
	    &o->waiter_timeout_ms) < 0)
		return -1;
	if (o->waiter_timeout_ms < 30) {
		usage_error(c, "--waiter-timeout must be at least 30ms");
		return -1;
	}
	if (o->waiter_timeout_ms > RL_WAITER_TIMEOUT_MAX_MS) {
		usage_error(c, "--waiter-timeout: '%s' is longer than %lldh, "
		    "the most a waiter's place is kept without a word from "
		    "it; give %lldh or less", esc(arg),
		    RL_WAITER_TIMEOUT_MAX_MS / 3600000,
		    RL_WAITER_TIMEOUT_MAX_MS / 3600000);
		return -1;
	}
	o->waiter_timeout_given = 1;
	return 1;
}

/* --min-hold: a duration as -t takes, 0 (off) to a day: a fleet's runs
 * of one schedule come at least that often. */
static int
min_hold_parse(const struct cmd *c, struct lockopts *o, const char *arg)
{
	if (parse_duration(c, "--min-hold", arg, &o->min_hold_ms) < 0)
		return -1;
	if (o->min_hold_ms > RL_MIN_HOLD_MAX_MS) {
		usage_error(c, "--min-hold: '%s' is longer than a day, which "
		    "no schedule run once per period needs; give 24h or less",
		    esc(arg));
		return -1;
	}
	return 1;
}

/* TEXT as the label, cut to LABEL_MAX bytes, "..." at the end, at a
 * UTF-8 character's start. */
static void
set_label(struct lockopts *o, const char *text)
{
	size_t n = strlen(text);

	if (n > LABEL_MAX) {
		n = LABEL_MAX - 3;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(o->label_buf, text, n);
	if (n < strlen(text))
		memcpy(o->label_buf + n, "...", 4);
	else
		o->label_buf[n] = '\0';
	o->label = o->label_buf;
}

int
lockopts_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	long v;

	switch (ch) {
	case 'w':
		return parse_duration(c, "--wait", arg, &o->wait_ms) < 0 ? -1 : 1;
	case 'n':
		o->wait_ms = 0;
		return 1;
	case 't':
		/* Its floor depends on what renews it: lockopts_check. */
		return parse_duration(c, "--ttl", arg, &o->ttl_ms) < 0 ? -1 : 1;
	case 'E':
		if (parse_number(arg, 0, 255, &v) < 0) {
			usage_error(c, "--conflict-exit-code: '%s' is not a "
			    "number from 0 to 255", esc(arg));
			return -1;
		}
		o->conflict = (int)v;
		return 1;
	case 'O':
		return owner_parse(c, o, arg);
	case OPT_FAIR:
		o->fair = 1;
		return 1;
	case 's':
	case OPT_WRITE:
	case OPT_LIMIT:
		return kind_parse(c, o, ch, arg);
	case OPT_WAITER_TIMEOUT:
		return waiter_timeout_parse(c, o, arg);
	case OPT_REPLICAS:
		if (parse_number(arg, 0, REPLICAS_MAX, &v) < 0) {
			usage_error(c, "--replicas: '%s' is not a number from 0 "
			    "to %d", esc(arg), REPLICAS_MAX);
			return -1;
		}
		o->replicas = (int)v;
		return 1;
	case OPT_MIN_HOLD:
		return min_hold_parse(c, o, arg);
	case OPT_LABEL:
		if (arg[0] == '\0') {
			usage_error(c, "--label is empty: give a text, or leave "
			    "--label out to show the command line");
			return -1;
		}
		set_label(o, arg);
		return 1;
	case OPT_PUBSUB:
		o->pubsub_given = 1;
		return parse_pubsub(c, arg, &o->pubsub) < 0 ? -1 : 1;
	case 'q':
		o->quiet = 1;
		return 1;
	case 'v':
		o->verbose = 1;
		return 1;
	case 'x':
	case 'e':
	case OPT_EXCLUSIVE:
		o->exclusive = 1;
		return 1;
	/* flock(1)'s, with no meaning here: said, not taken as unknown. */
	case OPT_FLOCK_UNLOCK:
		usage_error(c, "--unlock is flock's: release a lock with "
		    "redlock unlock NAME (exec releases NAME when COMMAND "
		    "exits)");
		return -1;
	case OPT_FLOCK_FCNTL:
		usage_error(c, "--fcntl is flock's: redlock's locks are keys "
		    "in Redis, not locks on a file");
		return -1;
	}
	return 0;
}

int
lockopts_check(const struct cmd *c, struct lockopts *o,
    const struct globals *g, const char *renewer)
{
	const char *label = getenv("REDLOCK_LABEL");

	if (!o->pubsub_given && pubsub_default(c, &o->pubsub) < 0)
		return -1;
	/* An empty REDLOCK_LABEL is as good as unset. */
	if (o->label == NULL && label != NULL && label[0] != '\0')
		set_label(o, label);
	/* One check, so that the first refusal states the real floor. */
	if (renewer != NULL && o->ttl_ms < RENEW_TTL_MIN_MS) {
		usage_error(c, "--ttl must be at least %dms for %s, which "
		    "renews the lease every ttl/3", RENEW_TTL_MIN_MS, renewer);
		return -1;
	}
	if (o->ttl_ms < TTL_MIN_MS) {
		usage_error(c, "--ttl must be at least %dms", TTL_MIN_MS);
		return -1;
	}
	if (o->exclusive && o->kind != RL_EXCLUSIVE) {
		usage_error(c, "-x (--exclusive) and %s do not go together: "
		    "-x asks for an exclusive lock, %s for another kind; drop "
		    "one", kind_option(o->kind), kind_option(o->kind));
		return -1;
	}
	if (o->fair && o->kind != RL_EXCLUSIVE) {
		usage_error(c, "--fair and %s do not go together: only "
		    "exclusive locks have a queue; drop --fair",
		    kind_option(o->kind));
		return -1;
	}
	if (o->fair && one_master(c, g, "--fair is", ", or drop --fair") != 0)
		return -1;
	if (o->kind == RL_SHARED && one_master(c, g, "--shared is",
	    ", or drop --shared") != 0)
		return -1;
	if (o->kind == RL_WRITE && one_master(c, g, "--write is",
	    ", or drop --write") != 0)
		return -1;
	if (o->kind == RL_PERMIT && one_master(c, g, "--limit is",
	    ", or drop --limit") != 0)
		return -1;
	return 0;
}

struct rl_lock
lockopts_lock(const struct lockopts *o, const char *name)
{
	return (struct rl_lock){ .name = name, .owner = o->owner,
	    .kind = o->kind, .limit = o->limit };
}

/* What a call asks for, as the refusals below name it. */
static const char *
asked(const struct lockopts *o)
{
	return o->kind == RL_EXCLUSIVE ? (o->fair ? "--fair lock" :
	    "exclusive lock") : o->kind == RL_SHARED ? "shared lock (-s)" :
	    o->kind == RL_WRITE ? "--write lock" : "--limit permit";
}

/* How an exec above holds a name, as the refusals below name it. */
static const char *
held_as(enum rl_lock_kind k)
{
	return k == RL_EXCLUSIVE ? "exclusively" : k == RL_SHARED ?
	    "shared (-s)" : k == RL_WRITE ? "for writing (--write)" :
	    "as a --limit permit";
}

/*
 * NAME is held as HELD by an exec above this call, with the token this
 * call acquires with: nest as the manual's table (NESTED CALLS) says. An
 * exclusive hold (plain, --fair, --write) already keeps everyone else
 * out, so a nested lock of NAME re-enters it in its own layout (the only
 * one NAME has then), except that -s under --write takes a read hold
 * under the write, as Redisson's RReadWriteLock allows. A nested call
 * that would need more than its ancestor holds (an exclusive or write
 * hold inside a shared one) would wait for that ancestor for ever, and a
 * semaphore's permit and a lock never share a name: those are refused
 * before anything is sent. 0, or -1 (reported).
 */
static int
nest(const char *name, struct lockopts *o, enum rl_lock_kind held)
{
	enum rl_lock_kind want = o->kind;

	o->held_kind = held;
	if (want == held || (held == RL_WRITE && want == RL_SHARED))
		return 0;
	if ((held == RL_EXCLUSIVE || held == RL_WRITE) &&
	    want != RL_PERMIT) {
		event(o, "%s is held %s by an exec above: this %s re-enters "
		    "that hold", esc(name), held_as(held), asked(o));
		o->kind = held;
		o->fair = 0;
		return 0;
	}
	if (held == RL_SHARED && want != RL_PERMIT)
		msg("%s is held shared (-s) by an exec above this one, and a "
		    "nested %s would wait for it for ever: take %s with "
		    "--write (or exclusively) in the outer call, or run this "
		    "one outside it", esc(name), asked(o), esc(name));
	else if (held == RL_PERMIT)
		msg("%s is a semaphore that an exec above this one holds a "
		    "permit of: a nested %s cannot take it (a name is a lock "
		    "or a semaphore, not both); give --limit as the outer "
		    "call does, or use another name", esc(name), asked(o));
	else
		msg("%s is held %s by an exec above this one: a nested "
		    "--limit permit cannot take it (a name is a lock or a "
		    "semaphore, not both); drop --limit, or use another name",
		    esc(name), held_as(held));
	return -1;
}

int
lockopts_finish(const char *name, struct lockopts *o)
{
	/* One settled owner per process: lock and exec acquire once. */
	static char held[OWNER_MAX_LEN + 1];
	int r, kind = HELD_UNKNOWN;

	o->held_kind = o->kind;
	/* Read even with --owner: a malformed REDLOCK_HELD is refused
	 * before anything is acquired, and exec passes it on. */
	if ((r = held_owner(name, held, sizeof(held), &kind)) < 0)
		return -1;
	/* Re-enter what an exec above this one holds. REDLOCK_OWNER is not
	 * read: inherited by every child, it would make siblings share
	 * every name. */
	if (o->owner == NULL && r > 0)
		o->owner = held;
	/* That hold itself (--owner may name it too), of a known kind. */
	if (o->owner != NULL && r > 0 && kind != HELD_UNKNOWN &&
	    strcmp(o->owner, held) == 0)
		return nest(name, o, (enum rl_lock_kind)kind);
	if (o->owner != NULL)
		return 0;
	if (rl_owner_new(o->owner_buf, sizeof(o->owner_buf)) < 0) {
		msg("cannot make an owner token: getrandom: %s",
		    strerror(errno));
		return -1;
	}
	o->owner = o->owner_buf;
	return 0;
}

void
say_finished(int64_t until_ms, char *buf, size_t len)
{
	char when[40];

	format_time(until_ms, when, sizeof(when));
	snprintf(buf, len, "finished, held until %s (--min-hold)", when);
}

/* "redlock: 2026-11-27T15:00:00.123456Z " into HEAD, now. */
static void
stamp(char *head, size_t len)
{
	struct timeval tv;
	char when[40];

	/* Microseconds: handoffs between processes take less than one. */
	gettimeofday(&tv, NULL);
	format_time((int64_t)tv.tv_sec * 1000, when, sizeof(when));
	when[strlen(when) - 5] = '\0';		/* drop ".000Z" */
	snprintf(head, len, "redlock: %s.%06ldZ ", when, (long)tv.tv_usec);
}

/* A line on stderr with the time, as -v writes them. */
static void __attribute__((format(printf, 1, 2)))
stamped(const char *fmt, ...)
{
	char head[64];
	va_list ap;

	stamp(head, sizeof(head));
	va_start(ap, fmt);
	vline(head, fmt, ap);
	va_end(ap);
}

void
event(const struct lockopts *o, const char *fmt, ...)
{
	char head[64];
	va_list ap;

	if (!o->verbose)
		return;
	stamp(head, sizeof(head));
	va_start(ap, fmt);
	vline(head, fmt, ap);
	va_end(ap);
}

int
wait_interrupted(const struct lockopts *o, const char *name, int sig)
{
	char waited[32];
	const char *abbrev;

	if (sig == 0)
		sig = SIGINT;
	abbrev = sigabbrev_np(sig);
	rl_duration_format(rl_now_ms() - o->wait_start_ms, waited,
	    sizeof(waited));
	/* Without it a cancelled job leaves no trace in its log. */
	if (o->quiet)
		event(o, "left the wait for %s on signal %d", esc(name), sig);
	else
		msg("gave up on %s after waiting %s: interrupted by %s%s",
		    esc(name), waited, abbrev != NULL ? "SIG" : "signal ",
		    abbrev != NULL ? abbrev : "?");
	return 128 + sig;
}

const char *
self_host(void)
{
	static char host[256];

	if (host[0] == '\0' && gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "unknown");
	return host;
}

const char *
self_user(void)
{
	static char user[64];
	struct passwd *pw;

	if (user[0] != '\0')
		return user;
	if ((pw = getpwuid(geteuid())) != NULL)
		snprintf(user, sizeof(user), "%s", pw->pw_name);
	else
		snprintf(user, sizeof(user), "%ld", (long)geteuid());
	return user;
}

/* What a busy attempt of a permit or a shared lock found, into BUF: 1,
 * or 0 when it is said as for a lock. */
static int
describe_kind(const struct lockopts *o, const struct rl_attempt *a,
    char *buf, size_t len)
{
	char held[32], lease[32], all[48] = "its one permit is taken", fin[96];

	rl_duration_format(a->held_ms, held, sizeof(held));
	rl_duration_format(a->pttl, lease, sizeof(lease));
	if (a->held_until_ms > 0)
		say_finished(a->held_until_ms, fin, sizeof(fin));
	if (o->limit > 1)
		snprintf(all, sizeof(all), "all %ld permits are taken",
		    o->limit);
	if (o->kind == RL_SHARED && a->queued > 0 && a->owner != NULL)
		snprintf(buf, len, "a writer waits for it (owner %s), and new "
		    "shared holders wait behind it", esc(a->owner));
	else if (o->kind == RL_PERMIT && a->host != NULL &&
	    a->held_until_ms > 0)
		snprintf(buf, len, "%s; the first to come back is held by %s "
		    "pid %ld (%s), %s", all, esc(a->host), a->pid, esc(a->cmd),
		    fin);
	else if (o->kind == RL_PERMIT && a->host != NULL)
		snprintf(buf, len, "%s; the first to come back is held by %s "
		    "pid %ld (%s) for %s, lease %s left", all, esc(a->host),
		    a->pid, esc(a->cmd), held, lease);
	else if (o->kind == RL_PERMIT && a->owner != NULL)
		snprintf(buf, len, "%s; the first to come back is %s, lease %s "
		    "left", all, esc(a->owner), lease);
	else
		return 0;
	return 1;
}

/* "held by web1 pid 4242 (pg_dump) for 1m12s, lease 17.9s left" */
static void
describe(const struct lockopts *o, const struct rl_attempt *a, char *buf,
    size_t len)
{
	char held[32], lease[32], fin[96];

	rl_duration_format(a->held_ms, held, sizeof(held));
	rl_duration_format(a->pttl, lease, sizeof(lease));
	if ((a->lost == NULL || a->owner != NULL) &&
	    describe_kind(o, a, buf, len))
		return;
	if (a->owner != NULL && a->held_until_ms > 0) {
		/* "held by web1 pid 4242 (report), finished, held until T
		 * (--min-hold)" */
		say_finished(a->held_until_ms, fin, sizeof(fin));
		if (a->host != NULL)
			snprintf(buf, len, "held by %s pid %ld (%s), %s",
			    esc(a->host), a->pid, esc(a->cmd), fin);
		else
			snprintf(buf, len, "held by owner %s, %s",
			    esc(a->owner), fin);
		return;
	}
	if (a->lost != NULL && a->owner == NULL)
		snprintf(buf, len, "the server was out of reach (%s)",
		    esc(a->lost));
	else if (a->too_slow)
		snprintf(buf, len, "%zu masters granted it, but too slowly: "
		    "nothing was left of the lease after the drift; released "
		    "everywhere (try a longer --ttl)", a->nodes_ok);
	else if (a->host != NULL)
		snprintf(buf, len, "held by %s pid %ld (%s) for %s, lease %s "
		    "left", esc(a->host), a->pid, esc(a->cmd), held, lease);
	else if (a->owner != NULL)
		snprintf(buf, len, "held by owner %s, lease %s left",
		    esc(a->owner), lease);
	else if (a->ahead > 0)
		snprintf(buf, len, "free, but %lld fair waiter%s ahead",
		    (long long)a->ahead, a->ahead == 1 ? " is" : "s are");
	else if (a->queued > 0)
		snprintf(buf, len, "free, but %lld fair waiter%s queued, this "
		    "one among them", (long long)a->queued,
		    a->queued == 1 ? " was" : "s were");
	else
		snprintf(buf, len, "no quorum of masters granted it (%zu "
		    "did); released everywhere", a->nodes_ok);
}

/* Waiting, on standard error that is not a terminal (a CI log): a line
 * when the wait starts, when the holder or the place changes, and at
 * least this often. */
#define PROGRESS_EVERY_MS 60000

struct progress {
	const char *name;
	const struct lockopts *o;
	int line;		/* a terminal: one line redrawn in place */
	int log;		/* not a terminal: lines now and then */
	int drawn;
	int waited;		/* an attempt found NAME busy */
	int head;		/* a fair waiter, first in the queue... */
	char head_of[RL_OWNER_MAX];	/* ...while this owner held NAME */
	int64_t rejoin_sent_ms;	/* the attempt whose rejoin was said */
	int lost;		/* the loss of the server was said */
	int said;		/* a log line was written... */
	int64_t said_ms;	/* ...at this time... */
	char said_of[320];	/* ...about this holder and place */
};

static const char *
ordinal(int64_t n)
{
	static char buf[32];
	const char *sfx = "th";

	if (n % 100 < 11 || n % 100 > 13) {
		if (n % 10 == 1)
			sfx = "st";
		else if (n % 10 == 2)
			sfx = "nd";
		else if (n % 10 == 3)
			sfx = "rd";
	}
	snprintf(buf, sizeof(buf), "%lld%s", (long long)n, sfx);
	return buf;
}

/* Not a terminal: "waiting for NAME (2nd of 3): held by web1 pid 4242
 * (pg_dump) for 1m12s, lease 17.9s left", when it is news. */
static void
log_line(struct progress *p, const struct rl_attempt *a)
{
	char of[sizeof(p->said_of)], who[1024], place[64] = "";
	int64_t now = rl_now_ms();

	snprintf(of, sizeof(of), "%s|%lld|%lld|%d", a->owner ? a->owner : "",
	    (long long)a->position, (long long)a->queued, a->lost != NULL);
	if (p->said && strcmp(of, p->said_of) == 0 &&
	    now - p->said_ms < PROGRESS_EVERY_MS)
		return;
	p->said = 1;
	p->said_ms = now;
	memcpy(p->said_of, of, sizeof(of));
	if (a->position > 0)
		snprintf(place, sizeof(place), " (%s of %lld)",
		    ordinal(a->position), (long long)a->queued);
	if (a->lost != NULL)
		snprintf(who, sizeof(who), "reconnecting (%s)", esc(a->lost));
	else if (a->owner == NULL && a->ahead <= 0 && a->queued <= 0)
		snprintf(who, sizeof(who), "free, handing over");
	else
		describe(p->o, a, who, sizeof(who));
	/* A log, not a terminal: when each line was written matters. */
	stamped("waiting for %s%s: %s", esc(p->name), place, who);
}

/* -v: a fair waiter first in the queue sees NAME change hands to
 * someone else. Nobody fair could have come before it, so a caller
 * without --fair took it: a plain lock takes a free one ahead of the
 * queue, as Redisson's RLock does beside an RFairLock. */
static void
passed_over(struct progress *p, const struct rl_attempt *a)
{
	char who[1024];

	if (!p->o->fair || a->lost != NULL || a->ahead != 0) {
		p->head = 0;
		return;
	}
	if (p->head && a->owner != NULL && strcmp(a->owner, p->head_of) != 0 &&
	    strcmp(a->owner, p->o->owner) != 0) {
		describe(p->o, a, who, sizeof(who));
		if (p->drawn)
			fputs("\r\033[K", stderr);
		p->drawn = 0;
		event(p->o, "passed over for %s, first in its queue: taken by a "
		    "caller without --fair (%s)", esc(p->name), who);
	}
	p->head = 1;
	snprintf(p->head_of, sizeof(p->head_of), "%s",
	    a->owner != NULL ? a->owner : "");
}

/* While waiting: -v events, and the waiting line on a terminal, redrawn
 * in place. */
static int
waiting(void *arg, const struct rl_attempt *a)
{
	struct progress *p = arg;
	char held[32], place[64] = "", line[768];

	p->waited = 1;

	/* Said once per attempt: ticks pass the same attempt again. */
	if (a->rejoined && a->sent_ms != p->rejoin_sent_ms) {
		p->rejoin_sent_ms = a->sent_ms;
		if (p->drawn)
			fputs("\r\033[K", stderr);
		p->drawn = 0;
		event(p->o, "was dropped from the queue of %s (silent past "
		    "--waiter-timeout); queued again at the tail", esc(p->name));
	}
	if ((a->lost != NULL) != p->lost) {
		p->lost = a->lost != NULL;
		if (p->drawn)
			fputs("\r\033[K", stderr);
		p->drawn = 0;
		if (p->lost)
			event(p->o, "lost the server while waiting for %s (%s); "
			    "reconnecting %s", esc(p->name), esc(a->lost),
			    p->o->wait_ms < 0 ? "until it is back (--wait is "
			    "forever)" : "until --wait runs out");
		else
			event(p->o, "reconnected; waiting for %s again",
			    esc(p->name));
	}
	if (p->o->verbose)
		passed_over(p, a);
	if (p->log)
		log_line(p, a);
	if (!p->line)
		return 0;
	if (a->lost != NULL) {
		fprintf(stderr, "\r\033[Kwaiting for %s: reconnecting (%s)",
		    esc(p->name), esc(a->lost));
		fflush(stderr);
		p->drawn = 1;
		return 0;
	}
	if (a->position > 0)
		snprintf(place, sizeof(place), " (%s of %lld)",
		    ordinal(a->position), (long long)a->queued);
	if (describe_kind(p->o, a, line, sizeof(line)))
		fprintf(stderr, "\r\033[Kwaiting for %s: %s", esc(p->name),
		    line);
	else if (a->owner != NULL && a->held_until_ms > 0) {
		/* A finished hold (--min-hold): until when. */
		describe(p->o, a, line, sizeof(line));
		fprintf(stderr, "\r\033[Kwaiting for %s%s: %s", esc(p->name),
		    place, line);
	} else if (a->host != NULL) {
		rl_duration_format(a->held_ms, held, sizeof(held));
		fprintf(stderr, "\r\033[Kwaiting for %s%s: held by %s pid %ld "
		    "(%s) for %s", esc(p->name), place, esc(a->host), a->pid,
		    esc(a->cmd), held);
	} else if (a->owner != NULL) {
		rl_duration_format(a->pttl, held, sizeof(held));
		fprintf(stderr, "\r\033[Kwaiting for %s%s: held by owner %s, "
		    "lease %s left", esc(p->name), place, esc(a->owner), held);
	} else
		fprintf(stderr, "\r\033[Kwaiting for %s%s: free, handing over",
		    esc(p->name), place);
	fflush(stderr);
	p->drawn = 1;
	return 0;
}

/* -v's lines of an acquisition; STARTED: when the wait for it began, or
 * -1 when there was none. */
static void
acquired_events(rl_client *rc, const char *name, const struct lockopts *o,
    const struct rl_attempt *a, int64_t started)
{
	char after[64] = "";

	if (a->nopub != NULL)
		warn_nopub(rc, name, a->nopub, 0);
	if (a->skipped != NULL)
		event(o, "not recorded in the history of %s: %s",
		    esc(name), esc(a->skipped));
	if (started >= 0) {
		memcpy(after, " after ", 8);
		rl_duration_format(rl_now_ms() - started, after + 7,
		    sizeof(after) - 7);
		strcat(after, " of waiting");
	}
	if (a->holds > 1)
		event(o, "re-entered %s%s (holds %lld, fence %lld)",
		    esc(name), after, (long long)a->holds,
		    (long long)a->fence);
	else if (rl_nodes(rc) > 1)
		event(o, "acquired %s%s on %zu masters (fence %lld, "
		    "lease %lldms, validity %lldms)", esc(name), after,
		    a->nodes_ok, (long long)a->fence,
		    (long long)o->ttl_ms, (long long)a->validity_ms);
	else
		event(o, "acquired %s%s (fence %lld, lease %lldms)",
		    esc(name), after, (long long)a->fence,
		    (long long)o->ttl_ms);
}

int
lock_acquire(rl_client *rc, const char *name, struct lockopts *o,
    const struct rl_meta *meta, struct rl_attempt *a)
{
	int64_t start = rl_now_ms();
	struct progress p = { .name = name, .o = o, .rejoin_sent_ms = -1 };
	struct rl_fair fair = { 0 };
	struct rl_lock l = lockopts_lock(o, name);
	char who[1024], waited[32];
	enum rl_err e;
	const char *note = rl_connect_note(rc);

	if (note != NULL)
		event(o, "%s", esc(note));
	rl_set_replicas(rc, o->replicas);
	if ((e = rl_set_waiter_timeout(rc, o->waiter_timeout_ms)) != RL_OK ||
	    (e = rl_set_min_hold(rc, o->min_hold_ms)) != RL_OK)
		return fail(rc, e, name);
	o->wait_start_ms = start;
	p.line = !o->quiet && o->wait_ms != 0 && isatty(STDERR_FILENO);
	p.log = !o->quiet && o->wait_ms != 0 && !p.line;
	fair.waiter_timeout_ms = o->waiter_timeout_ms;
	fair.want_position = p.line || p.log;
	e = rl_acquire(rc, &l, o->ttl_ms, o->wait_ms, meta,
	    o->fair ? &fair : NULL, p.line || p.log || o->verbose ? waiting :
	    NULL, &p,
	    a);
	if (p.drawn)
		fputs("\r\033[K", stderr);
	if (e == RL_EINTR)
		return -1;
	if (e != RL_OK)
		return fail(rc, e, name);
	if (a->acquired) {
		acquired_events(rc, name, o, a, p.waited ? start : -1);
		return 0;
	}
	o->busy = 1;
	if (!o->quiet) {
		describe(o, a, who, sizeof(who));
		rl_duration_format(rl_now_ms() - start, waited, sizeof(waited));
		if (o->wait_ms == 0)
			msg("%s is busy: %s; wait for it with -w DURATION",
			    esc(name), who);
		else
			msg("gave up on %s after waiting %s: %s; wait longer "
			    "with -w", esc(name), waited, who);
	}
	return o->conflict;
}
