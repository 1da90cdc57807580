/* lockopt.c: the options that lock and exec share. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	return 0;
}

static int
owner_parse(const struct cmd *c, struct lockopts *o, int ch, const char *arg)
{
	const unsigned char *p;

	(void)ch;
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
	return 0;
}

/* --waiter-timeout: 30ms to RL_WAITER_TIMEOUT_MAX_MS, so that no waiter
 * killed with it keeps its place, nor the room's keys their expiry, for
 * longer than a few hours. */
static int
waiter_timeout_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	(void)ch;
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
	return 0;
}

/* --min-hold: a duration as -t takes, 0 (off) to a day: a fleet's runs
 * of one schedule come at least that often. */
static int
min_hold_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	(void)ch;
	if (parse_duration(c, "--min-hold", arg, &o->min_hold_ms) < 0)
		return -1;
	if (o->min_hold_ms > RL_MIN_HOLD_MAX_MS) {
		usage_error(c, "--min-hold: '%s' is longer than a day, which "
		    "no schedule run once per period needs; give 24h or less",
		    esc(arg));
		return -1;
	}
	return 0;
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

/* The handlers of lock_opts: 1, or -1 after a usage error. */
static int
wait_parse(const struct cmd *c, struct lockopts *o, int ch, const char *arg)
{
	return parse_duration(c, ch == OPT_TIMEOUT ? "--timeout" : "--wait",
	    arg, &o->wait_ms) < 0 ? -1 : 0;
}

static int
no_wait(const struct cmd *c, struct lockopts *o, int ch, const char *arg)
{
	(void)c, (void)ch, (void)arg;
	o->wait_ms = 0;
	return 0;
}

static int
ttl_parse(const struct cmd *c, struct lockopts *o, int ch, const char *arg)
{
	(void)ch;
	/* Its floor depends on what renews it: lockopts_check. */
	return parse_duration(c, "--ttl", arg, &o->ttl_ms) < 0 ? -1 : 0;
}

static int
conflict_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	long v;

	(void)ch;
	if (parse_number(arg, 0, 255, &v) < 0) {
		usage_error(c, "--conflict-exit-code: '%s' is not a number "
		    "from 0 to 255", esc(arg));
		return -1;
	}
	o->conflict = (int)v;
	return 0;
}

static int
fair_set(const struct cmd *c, struct lockopts *o, int ch, const char *arg)
{
	(void)c, (void)ch, (void)arg;
	o->fair = 1;
	return 0;
}

static int
supersede_set(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	(void)c, (void)ch, (void)arg;
	o->supersede = 1;
	return 0;
}

static int
any_set(const struct cmd *c, struct lockopts *o, int ch, const char *arg)
{
	(void)c, (void)ch, (void)arg;
	o->any = 1;
	return 0;
}

static int
replicas_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	long v;

	(void)ch;
	if (parse_number(arg, 0, REPLICAS_MAX, &v) < 0) {
		usage_error(c, "--replicas: '%s' is not a number from 0 to %d",
		    esc(arg), REPLICAS_MAX);
		return -1;
	}
	o->replicas = (int)v;
	return 0;
}

static int
label_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	(void)ch;
	if (arg[0] == '\0') {
		usage_error(c, "--label is empty: give a text, or leave "
		    "--label out to show the command line");
		return -1;
	}
	set_label(o, arg);
	return 0;
}

static int
pubsub_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	(void)ch;
	o->pubsub_given = 1;
	return parse_pubsub(c, arg, &o->pubsub) < 0 ? -1 : 0;
}

static int
quiet_set(const struct cmd *c, struct lockopts *o, int ch, const char *arg)
{
	(void)c, (void)ch, (void)arg;
	o->quiet = 1;
	return 0;
}

static int
verbose_set(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	(void)c, (void)ch, (void)arg;
	o->verbose = 1;
	return 0;
}

static int
exclusive_set(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	(void)c, (void)ch, (void)arg;
	o->exclusive = 1;
	return 0;
}

/* flock(1)'s --unlock and --fcntl, with no meaning here: said, not
 * taken as unknown. */
static int
flock_refused(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg)
{
	(void)o, (void)arg;
	if (ch == OPT_FLOCK_UNLOCK)
		usage_error(c, "--unlock is flock's: release a lock with "
		    "redlock unlock NAME (exec releases NAME when COMMAND "
		    "exits)");
	else
		usage_error(c, "--fcntl is flock's: redlock's locks are keys "
		    "in Redis, not locks on a file");
	return -1;
}

#define LOCKING (CMD_EXEC | CMD_LOCK)

const struct opt lock_opts[] = {
	{ .name = "command", .letter = 'c', .arg = ARG_TEXT,
	  .metavar = "STRING", .cmds = CMD_EXEC,
	  .help = "run STRING with /bin/sh -c as COMMAND, as flock(1)" },
	{ .name = "wait", .letter = 'w', .arg = ARG_DURATION,
	  .parse = wait_parse,
	  .metavar = "DURATION", .cmds = LOCKING,
	  .help = "wait at most DURATION for NAME; also --timeout" },
	{ .name = "timeout", .val = OPT_TIMEOUT, .arg = ARG_DURATION,
	  .parse = wait_parse, .metavar = "DURATION", .cmds = LOCKING },
	{ .name = "no-wait", .letter = 'n', .cmds = LOCKING,
	  .parse = no_wait,
	  .help = "give up at once if NAME is held; also --nb, --nonblock" },
	/* flock(1)'s spellings, typed by habit. */
	{ .name = "nonblock", .val = 'n', .cmds = LOCKING,
	  .parse = no_wait },
	{ .name = "nb", .val = 'n', .cmds = LOCKING,
	  .parse = no_wait },
	{ .name = "exclusive", .letter = 'x', .val = OPT_EXCLUSIVE,
	  .parse = exclusive_set,
	  .cmds = LOCKING, .left = "  -x, -e, --exclusive",
	  .help = "an exclusive lock, the default (as flock(1))" },
	{ .letter = 'e', .cmds = LOCKING,
	  .parse = exclusive_set },
	{ .name = "ttl", .letter = 't', .arg = ARG_DURATION,
	  .parse = ttl_parse,
	  .metavar = "DURATION", .cmds = LOCKING,
	  .help = "lease (default: 30s)" },
	{ .name = "fair", .val = OPT_FAIR, .cmds = LOCKING,
	  .parse = fair_set,
	  .help = "first come, first served: wait in NAME's queue" },
	{ .name = "supersede", .val = OPT_SUPERSEDE, .cmds = LOCKING,
	  .parse = supersede_set,
	  .help = "the newest waiter wins: older ones give up (80)" },
	{ .name = "any", .val = OPT_ANY, .cmds = LOCKING,
	  .parse = any_set,
	  .help = "NAME... is a pool of up to 64: take the first free" },
	{ .name = "shared", .letter = 's', .cmds = LOCKING,
	  .parse = kind_parse,
	  .help = "a shared (read) lock, held beside other readers" },
	{ .name = "write", .val = OPT_WRITE, .cmds = LOCKING,
	  .parse = kind_parse,
	  .help = "the write lock of a read-write lock" },
	{ .name = "limit", .val = OPT_LIMIT, .arg = ARG_N, .metavar = "N",
	  .parse = kind_parse,
	  .cmds = LOCKING,
	  .help = "at most N holders at once: a semaphore of permits" },
	{ .name = "waiter-timeout", .val = OPT_WAITER_TIMEOUT,
	  .parse = waiter_timeout_parse,
	  .arg = ARG_DURATION, .metavar = "DURATION", .cmds = LOCKING,
	  .help = "a silent waiter leaves after this (5s)" },
	{ .name = "replicas", .val = OPT_REPLICAS, .arg = ARG_N,
	  .parse = replicas_parse, .flags = OPT_CONFIG,
	  .metavar = "N", .cmds = LOCKING,
	  .help = "after each write, WAIT until N replicas have it" },
	{ .name = "pubsub", .val = OPT_PUBSUB, .arg = ARG_CHOICE,
	  .parse = pubsub_parse, .flags = OPT_CONFIG, .env = PUBSUB_VAR,
	  .dflt = "auto",
	  .metavar = "MODE", .choices = PUBSUB_CHOICES, .cmds = LOCKING,
	  .help = "how releases wake waiters: auto, sharded, classic" },
	{ .name = "conflict-exit-code", .letter = 'E', .arg = ARG_N,
	  .parse = conflict_parse,
	  .metavar = "N", .cmds = LOCKING,
	  .help = "exit N, not 75, when NAME was not acquired" },
	{ .name = "min-hold", .val = OPT_MIN_HOLD, .arg = ARG_DURATION,
	  .parse = min_hold_parse,
	  .metavar = "DURATION", .cmds = LOCKING,
	  .help = "keep NAME held at least DURATION once acquired" },
	{ .name = "label", .val = OPT_LABEL, .arg = ARG_TEXT,
	  .parse = label_parse,
	  .metavar = "TEXT", .cmds = LOCKING,
	  .help = "show TEXT as what holds NAME ($REDLOCK_LABEL)" },
	{ .name = "owner", .val = OPT_OWNER, .arg = ARG_TEXT,
	  .parse = owner_parse,
	  .metavar = "TOKEN", .cmds = LOCKING,
	  .help = "acquire as TOKEN, re-entering its hold" },
	/* flock(1)'s, with no meaning here: said, not taken as unknown. */
	{ .name = "unlock", .val = OPT_FLOCK_UNLOCK, .cmds = LOCKING,
	  .parse = flock_refused,
	  .flags = OPT_NOCOMPLETE, .left = "      --unlock, --fcntl",
	  .help = "flock(1)'s, refused: release with redlock unlock" },
	{ .name = "fcntl", .val = OPT_FLOCK_FCNTL, .cmds = LOCKING,
	  .parse = flock_refused,
	  .flags = OPT_NOCOMPLETE },
	{ .name = "quiet", .letter = 'q', .cmds = LOCKING,
	  .parse = quiet_set,
	  .help = "no waiting lines, no message when NAME is busy" },
	{ .name = "verbose", .letter = 'v', .cmds = LOCKING,
	  .parse = verbose_set,
	  .help = "timestamped events on standard error" },
	{ .name = "on-lost", .val = OPT_ON_LOST, .arg = ARG_CHOICE,
	  .metavar = "ACTION", .choices = "term|kill|ignore",
	  .cmds = CMD_EXEC,
	  .help = "when the lease is lost: term, kill or ignore" },
	{ .name = "kill-after", .val = OPT_KILL_AFTER, .arg = ARG_DURATION,
	  .metavar = "DURATION", .cmds = CMD_EXEC,
	  .help = "SIGKILL this long after SIGTERM (5s)" },
	{ .name = "max-hold", .val = OPT_MAX_HOLD, .arg = ARG_DURATION,
	  .metavar = "DURATION", .cmds = CMD_EXEC, .refused = CMD_LOCK,
	  .help = "stop COMMAND after holding NAME this long (124)" },
	{ .name = "metrics-file", .val = OPT_METRICS_FILE, .arg = ARG_FILE,
	  .metavar = "FILE", .cmds = CMD_EXEC, .refused = CMD_LOCK,
	  .help = "each run's metrics in node_exporter's format" },
	{ .name = "close", .letter = 'o', .cmds = CMD_EXEC,
	  .help = "flock(1)'s; nothing to do" },
	{ .name = "no-fork", .letter = 'F', .cmds = CMD_EXEC,
	  .flags = OPT_NOCOMPLETE,
	  .help = "flock(1)'s, refused: COMMAND runs in a child" },
	{ .name = "keepalive", .val = OPT_KEEPALIVE, .cmds = CMD_LOCK,
	  .help = "renew from a detached watchdog until unlock" },
	{ .name = "pid", .val = OPT_PID, .arg = ARG_PID, .metavar = "PID",
	  .cmds = CMD_LOCK,
	  .help = "with --keepalive: the process to outlive" },
	{ .name = "extend", .val = OPT_EXTEND, .arg = ARG_DURATION,
	  .metavar = "DURATION", .cmds = CMD_LOCK,
	  .help = "lengthen --owner TOKEN's lease, taking no hold" },
	{ .name = "help", .letter = 'h', .cmds = LOCKING,
	  .help = "show this help" },
	OPT_END
};

enum step
lockopts_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg, int *status)
{
	const struct opt *t;

	for (t = lock_opts; t->name != NULL || t->letter != 0; t++)
		if (t->parse != NULL && (ch == t->letter || ch == t->val))
			return t->parse(c, o, ch, arg) < 0 ?
			    step_exit(status, EXIT_USAGE) : STEP_GO_ON;
	return step_exit(status, usage_error(c, "unknown option"));
}

int
lockopts_check(const struct cmd *c, struct lockopts *o,
    const struct globals *g, const char *renewer)
{
	const char *label = getenv("REDLOCK_LABEL"), *v;

	if (!o->pubsub_given && pubsub_default(c, &o->pubsub) < 0)
		return -1;
	/* No --replicas: the configuration file's. */
	if (o->replicas == RL_REPLICAS_DEFAULT && (v = config_last("replicas",
	    &msg_where)) != NULL && replicas_parse(c, o, OPT_REPLICAS, v) < 0)
		return -1;
	msg_where = NULL;
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
	if (o->any && o->kind != RL_EXCLUSIVE) {
		usage_error(c, "--any and %s do not go together: a pool "
		    "(--any) is of exclusive locks; drop one",
		    kind_option(o->kind));
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
	if (o->supersede && o->any) {
		usage_error(c, "--supersede and --any do not go together: a "
		    "pool's waiters are not superseded; drop one");
		return -1;
	}
	if (o->supersede && o->kind != RL_EXCLUSIVE) {
		usage_error(c, "--supersede and %s do not go together: only "
		    "exclusive locks (--fair or not) have superseding "
		    "waiters; drop one", kind_option(o->kind));
		return -1;
	}
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
	    .kind = o->kind, .limit = o->limit, .reenter = o->reenter };
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
		    "that hold", esc(name_shown(name)), held_as(held), asked(o));
		o->kind = held;
		o->fair = 0;
		return 0;
	}
	if (held == RL_SHARED && want != RL_PERMIT)
		msg("%s is held shared (-s) by an exec above this one, and a "
		    "nested %s would wait for it for ever: take %s with "
		    "--write (or exclusively) in the outer call, or run this "
		    "one outside it", esc(name_shown(name)), asked(o), esc(name_shown(name)));
	else if (held == RL_PERMIT)
		msg("%s is a semaphore that an exec above this one holds a "
		    "permit of: a nested %s cannot take it (a name is a lock "
		    "or a semaphore, not both); give --limit as the outer "
		    "call does, or use another name", esc(name_shown(name)), asked(o));
	else
		msg("%s is held %s by an exec above this one: a nested "
		    "--limit permit cannot take it (a name is a lock or a "
		    "semaphore, not both); drop --limit, or use another name",
		    esc(name_shown(name)), held_as(held));
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
	/* That hold itself (--owner may name it too): it is re-entered or
	 * nothing is taken. Where it is gone (unlock --force, an expired
	 * lease, data the server lost), NAME taken afresh with the exec's
	 * token would be a second holder beside whoever took it meanwhile,
	 * and that exec's watchdog would renew it as its own. */
	o->reenter = o->owner != NULL && r > 0 && strcmp(o->owner, held) == 0;
	if (o->reenter && kind != HELD_UNKNOWN)
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

int
pool_parse(const struct cmd *c, int any, char **w, int n,
    struct pool_names *p)
{
	size_t i, len = 0;
	int k;

	p->n = 0;
	if (n < 1)
		return usage_error(c, any ? "missing NAME... after --any" :
		    "missing NAME");
	if (!any && n > 1)
		return usage_error(c, "one NAME only, got '%s' too (a pool "
		    "of names is --any NAME...)", esc(w[1]));
	for (k = 0; k < n; k++) {
		if (w[k][0] == '\0')
			return usage_error(c, "NAME is empty");
		/* A name given twice is one lock, tried once. */
		for (i = 0; i < p->n && strcmp(name_shown(p->name[i]),
		    w[k]) != 0; i++)
			;
		if (i < p->n)
			continue;
		if (p->n == RL_ANY_MAX)
			return usage_error(c, "--any: more than %d names; give "
			    "%d or fewer", RL_ANY_MAX, RL_ANY_MAX);
		if ((p->name[p->n] = name_key(w[k])) == NULL) {
			msg("out of memory");
			return EXIT_SOFTWARE;
		}
		p->n++;
	}
	p->label[0] = '\0';
	for (i = 0; i < p->n && len < sizeof(p->label) - 1; i++)
		len += (size_t)snprintf(p->label + len, sizeof(p->label) - len,
		    "%s%s", i == 0 ? "" : i + 1 < p->n ? ", " : " or ",
		    esc(name_shown(p->name[i])));
	return 0;
}

int
lockopts_finish_pool(struct pool_names *p, struct lockopts *o)
{
	char buf[OWNER_MAX_LEN + 1];
	size_t i;
	int r;

	for (i = 0; i < p->n && p->n > 1; i++) {
		if ((r = held_owner(p->name[i], buf, sizeof(buf), NULL)) < 0)
			return -1;
		if (r == 0)
			continue;
		/* An exec above holds it: this pool is that name. */
		event(o, "%s, of the pool, is held by an exec above: this "
		    "call re-enters it", esc(p->name[i]));
		p->name[0] = p->name[i];
		p->n = 1;
		snprintf(p->label, sizeof(p->label), "%s", esc(p->name[0]));
	}
	return lockopts_finish(p->name[0], o);
}
