/* acquire.c: the acquisition that lock and exec share, and what it shows
 * meanwhile: the waiting lines, their progress, the -v events. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "cmd.h"

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
		event(o, "left the wait for %s on signal %d", esc(name_shown(name)), sig);
	else
		msg("gave up on %s after waiting %s: interrupted by %s%s",
		    esc(name_shown(name)), waited, abbrev != NULL ? "SIG" : "signal ",
		    abbrev != NULL ? abbrev : "?");
	return 128 + sig;
}

/* Who holds what attempt A found, into BUF: as held_by says, " for
 * HELD" unless HELD is NULL. */
static const char *
attempt_holder(const struct rl_attempt *a, const char *held, char *buf,
    size_t len)
{
	const struct holder h = { .owner = a->owner, .host = a->host,
	    .pid = a->pid, .cmd = a->cmd, .held = held };

	return held_by(&h, buf, len);
}

/* What a busy attempt of a permit or a shared lock found, into BUF: 1,
 * or 0 when it is said as for a lock. */
static int
describe_kind(const struct lockopts *o, const struct rl_attempt *a,
    char *buf, size_t len)
{
	char held[32], lease[32], all[48] = "its one permit is taken", fin[96];
	char who[1024];

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
		snprintf(buf, len, "%s; the first to come back is %s, %s", all,
		    attempt_holder(a, NULL, who, sizeof(who)), fin);
	else if (o->kind == RL_PERMIT && a->host != NULL)
		snprintf(buf, len, "%s; the first to come back is %s, lease %s "
		    "left", all, attempt_holder(a, held, who, sizeof(who)),
		    lease);
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
	char held[32], lease[32], fin[96], who[1024];

	rl_duration_format(a->held_ms, held, sizeof(held));
	rl_duration_format(a->pttl, lease, sizeof(lease));
	if ((a->lost == NULL || a->owner != NULL) &&
	    describe_kind(o, a, buf, len))
		return;
	if (a->owner != NULL && a->held_until_ms > 0) {
		/* "held by web1 pid 4242 (report), finished, held until T
		 * (--min-hold)" */
		say_finished(a->held_until_ms, fin, sizeof(fin));
		snprintf(buf, len, "%s, %s", attempt_holder(a, NULL, who,
		    sizeof(who)), fin);
		return;
	}
	if (a->lost != NULL && a->owner == NULL)
		snprintf(buf, len, "the server was out of reach (%s)",
		    esc(a->lost));
	else if (a->too_slow)
		snprintf(buf, len, "%zu masters granted it, but too slowly: "
		    "nothing was left of the lease after the drift; released "
		    "everywhere (try a longer --ttl)", a->nodes_ok);
	else if (a->host != NULL || a->owner != NULL)
		snprintf(buf, len, "%s, lease %s left", attempt_holder(a, held,
		    who, sizeof(who)), lease);
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
/* Open files beside the connections: stdio, the self-pipe, the
 * watchdog's pipes, a sentinel's connection, metrics and the rest. */
#define FILES_SPARE 16

struct progress {
	const char *name;
	const struct pool_names *pool;	/* the names, for a pool's lines */
	const struct rl_attempt *base;	/* the pool's attempts, name by
					 * name */
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
	event(NULL, "waiting for %s%s: %s", esc(p->name), place, who);
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

/* The waiting line on a terminal: redrawn in place (carriage return,
 * clear to the end), cut to one column less than the terminal's width,
 * so that it never wraps onto a second line that the next redraw, or the
 * clearing after the wait, would leave behind. */
static void __attribute__((format(printf, 2, 3)))
draw(struct progress *p, const char *fmt, ...)
{
	char line[2048];
	size_t w = columns(STDERR_FILENO);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fputs("\r\033[K", stderr);
	fwrite(line, 1, fit_columns(line, w > 1 ? w - 1 : 1), stderr);
	fflush(stderr);
	p->drawn = 1;
}

/* While waiting: -v events, and the waiting line on a terminal, redrawn
 * in place. */
static int
waiting(void *arg, const struct rl_attempt *a)
{
	struct progress *p = arg;
	char held[32], place[64] = "", line[768], who[1024];

	p->waited = 1;
	/* A pool's lines are about the name last tried. */
	if (p->pool->n > 1)
		p->name = p->pool->name[a - p->base];

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
		draw(p, "waiting for %s: reconnecting (%s)", esc(p->name),
		    esc(a->lost));
		return 0;
	}
	if (a->position > 0)
		snprintf(place, sizeof(place), " (%s of %lld)",
		    ordinal(a->position), (long long)a->queued);
	if (describe_kind(p->o, a, line, sizeof(line)))
		draw(p, "waiting for %s: %s", esc(p->name), line);
	else if (a->owner != NULL && a->held_until_ms > 0) {
		/* A finished hold (--min-hold): until when. */
		describe(p->o, a, line, sizeof(line));
		draw(p, "waiting for %s%s: %s", esc(p->name), place, line);
	} else if (a->host != NULL) {
		rl_duration_format(a->held_ms, held, sizeof(held));
		draw(p, "waiting for %s%s: %s", esc(p->name), place,
		    attempt_holder(a, held, who, sizeof(who)));
	} else if (a->owner != NULL) {
		rl_duration_format(a->pttl, held, sizeof(held));
		draw(p, "waiting for %s%s: %s, lease %s left", esc(p->name),
		    place, attempt_holder(a, NULL, who, sizeof(who)), held);
	} else
		draw(p, "waiting for %s%s: free, handing over", esc(p->name),
		    place);
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
		event(o, "not recorded in the history of %s: XADD refused: "
		    "%s", esc(name_shown(name)), esc(a->skipped));
	if (started >= 0) {
		memcpy(after, " after ", 8);
		rl_duration_format(rl_now_ms() - started, after + 7,
		    sizeof(after) - 7);
		strcat(after, " of waiting");
	}
	if (a->holds > 1)
		event(o, "re-entered %s%s (holds %lld, fence %lld)",
		    esc(name_shown(name)), after, (long long)a->holds,
		    (long long)a->fence);
	else if (rl_nodes(rc) > 1)
		event(o, "acquired %s%s on %zu masters (fence %lld, "
		    "lease %lldms, validity %lldms)", esc(name_shown(name)), after,
		    a->nodes_ok, (long long)a->fence,
		    (long long)o->ttl_ms, (long long)a->validity_ms);
	else
		event(o, "acquired %s%s (fence %lld, lease %lldms)",
		    esc(name_shown(name)), after, (long long)a->fence,
		    (long long)o->ttl_ms);
}

/* --supersede: a newer waiter (A's by_*) made this one give up after
 * WAITED_MS: "gave up on deploy after waiting 1.2s: superseded by ci7
 * pid 811 (deploy main@a1b2c3)", unless -q (then with -v only). */
static void
superseded(const struct lockopts *o, const char *name,
    const struct rl_attempt *a, int64_t waited_ms)
{
	const struct holder h = { .owner = a->by_owner, .host = a->by_host,
	    .pid = a->by_pid, .cmd = a->by_cmd };
	char waited[32], who[1024];

	rl_duration_format(waited_ms, waited, sizeof(waited));
	if (a->lapsed) {
		/* Stopped past its record's life (3 x --waiter-timeout): a
		 * newer waiter may have come and gone meanwhile. */
		msg("gave up on %s after waiting %s: this --supersede waiter "
		    "was stopped for longer than its place lasts (3 x "
		    "--waiter-timeout), so a newer one may have superseded "
		    "it; run it again if it is still wanted", esc(name_shown(name)),
		    waited);
		return;
	}
	/* "held by X": the one spelling of a caller, reworded. */
	held_by(&h, who, sizeof(who));
	if (o->quiet)
		event(o, "gave up on %s after waiting %s: superseded %s",
		    esc(name_shown(name)), waited, who + sizeof("held ") - 1);
	else
		msg("gave up on %s after waiting %s: superseded %s", esc(name_shown(name)),
		    waited, who + sizeof("held ") - 1);
}

/* A nested call found nothing to re-enter: the hold of the exec above
 * it is gone (exit 79), and NAME was not taken afresh. */
static void
gone(const char *name)
{
	msg("%s is no longer held by the exec above this call (removed by "
	    "unlock --force, expired, or lost by the server): not taken "
	    "afresh, since another holder may have it; that exec loses it "
	    "too", esc(name_shown(name)));
}

/* The clients of pool P set as O says: 0, or -1 with *STATUS. */
static int
pool_setup(rl_client **rc, const struct pool_names *p,
    const struct lockopts *o, int *status)
{
	const char *note = rl_connect_note(rc[0]);
	enum rl_err e;
	size_t i;

	if (note != NULL)
		event(o, "%s", esc(note));
	for (i = 0; i < p->n; i++) {
		rl_set_replicas(rc[i], o->replicas);
		rl_set_supersede(rc[i], o->supersede);
		if ((e = rl_set_waiter_timeout(rc[i], o->waiter_timeout_ms)) !=
		    RL_OK || (e = rl_set_min_hold(rc[i], o->min_hold_ms)) !=
		    RL_OK) {
			*status = fail(rc[i], e, p->name[i]);
			return -1;
		}
	}
	return 0;
}

/* A finished hold (--min-hold) that A found: what to do instead of
 * waiting, into BUF: when that run ended, from the history of NAME (its
 * release that kept it until A's held_until_ms; not said when the
 * history does not tell), and the command that runs the job again now. */
static const char *
finished_way_out(rl_client *rc, const char *name, const struct rl_attempt *a,
    char *buf, size_t len)
{
	struct rl_event *ev = NULL;
	char when[40] = "";
	size_t n = 0, i;

	if (rl_log_read(rc, name, 20, NULL, 0, &ev, &n) != RL_OK)
		n = 0;
	for (i = n; i > 0; i--)
		if (strcmp(ev[i - 1].event, "released") == 0 &&
		    ev[i - 1].until_ms == a->held_until_ms) {
			format_time(ev[i - 1].time_ms, when, sizeof(when));
			break;
		}
	free(ev);
	snprintf(buf, len, ": that run %s%s; to run the job again now: "
	    "redlock unlock --force %s", when[0] ? "ended at " : "has ended",
	    when, esc(name));
	return buf;
}

/* Not acquired: say why, unless -q, of name W of pool P, which A found
 * busy (through RC), after waiting since START. */
static void
say_busy(rl_client *rc, const struct pool_names *p, size_t w,
    const struct lockopts *o, const struct rl_attempt *a, int64_t start)
{
	char who[1024], waited[32], out[1200];

	if (o->quiet)
		return;
	describe(o, a, who, sizeof(who));
	rl_duration_format(rl_now_ms() - start, waited, sizeof(waited));
	if (a->held_until_ms > 0 && p->n == 1 && o->wait_ms == 0)
		msg("%s is busy: %s%s", esc(p->name[w]), who,
		    finished_way_out(rc, p->name[w], a, out, sizeof(out)));
	else if (a->held_until_ms > 0 && p->n == 1)
		msg("gave up on %s after waiting %s: %s%s", esc(p->name[w]),
		    waited, who, finished_way_out(rc, p->name[w], a, out,
		    sizeof(out)));
	else if (p->n > 1 && o->wait_ms == 0)
		msg("%s: all busy (%s: %s); wait for one with -w DURATION",
		    p->label, esc(p->name[w]), who);
	else if (p->n > 1)
		msg("gave up on %s after waiting %s: all busy (%s: %s); wait "
		    "longer with -w", p->label, waited, esc(p->name[w]), who);
	else if (o->wait_ms == 0)
		msg("%s is busy: %s; wait for it with -w DURATION",
		    esc(p->name[w]), who);
	else
		msg("gave up on %s after waiting %s: %s; wait longer "
		    "with -w", esc(p->name[w]), waited, who);
}

enum step
lock_acquire_pool(struct pool_take *t, const struct pool_names *pool,
    struct lockopts *o, const struct rl_meta *meta, int *status)
{
	rl_client **rc = t->rc;
	struct rl_attempt *a = t->a;
	size_t *which = &t->which;
	/* The wait, as -w, counts from the start of the call (connecting
	 * included: rl_acquire_any). */
	int64_t start = o->call_start_ms > 0 ? o->call_start_ms : rl_now_ms();
	struct progress p = { .name = pool->name[0], .pool = pool, .base = a,
	    .o = o, .rejoin_sent_ms = -1 };
	struct rl_fair fair = { 0 };
	struct rl_lock l[RL_ANY_MAX];
	enum rl_err e;
	size_t i;

	*which = 0;
	if (pool_setup(rc, pool, o, status) < 0)
		return STEP_EXIT;
	for (i = 0; i < pool->n; i++)
		l[i] = lockopts_lock(o, pool->name[i]);
	o->wait_start_ms = start;
	p.line = !o->quiet && o->wait_ms != 0 && isatty(STDERR_FILENO);
	p.log = !o->quiet && o->wait_ms != 0 && !p.line;
	fair.waiter_timeout_ms = o->waiter_timeout_ms;
	fair.want_position = p.line || p.log;
	e = rl_acquire_any(rc, l, pool->n, o->ttl_ms, o->wait_ms, meta,
	    o->fair ? &fair : NULL, p.line || p.log || o->verbose ? waiting :
	    NULL, &p, a, which);
	if (p.drawn)
		fputs("\r\033[K", stderr);
	if (e == RL_EINTR)
		return STEP_INTERRUPTED;
	if (e != RL_OK) {
		*status = fail(rc[*which], e, pool->name[*which]);
		return STEP_EXIT;
	}
	if (a[*which].acquired) {
		warn_eviction(rc[*which]);
		acquired_events(rc[*which], pool->name[*which], o, &a[*which],
		    p.waited ? start : -1);
		return STEP_GO_ON;
	}
	if (a[*which].gone) {
		gone(pool->name[*which]);
		*status = EXIT_LOST;
		return STEP_EXIT;
	}
	o->busy = 1;
	/* Superseded: a status of its own, which -E does not change, so
	 * that CI tells "a newer run came" from "busy" or "timed out". */
	if (a[*which].superseded) {
		superseded(o, pool->name[*which], &a[*which],
		    rl_now_ms() - start);
		*status = EXIT_SUPERSEDED;
		return STEP_EXIT;
	}
	say_busy(rc[*which], pool, *which, o, &a[*which], start);
	*status = o->conflict;
	return STEP_EXIT;
}

/* Open files for every client of pool P: a command and a subscriber
 * connection per master and name, beside stdio, the pipes and a
 * sentinel's: 0, or -1 with *STATUS (said). A file short would be a
 * connection that fails as if the server were down. */
static int
room_for(const struct globals *g, const struct pool_names *p, int *status)
{
	unsigned long need = (unsigned long)(p->n * g->nurl * 2) + FILES_SPARE;
	long most;

	if ((most = files_enough(need)) == 0)
		return 0;
	msg("%zu name%s on %zu master%s may take %lu open files, and this "
	    "process may open %ld (ulimit -n): raise the limit, or name "
	    "fewer", p->n, p->n == 1 ? "" : "s", g->nurl, g->nurl == 1 ? "" :
	    "s", need, most);
	*status = EXIT_USAGE;
	return -1;
}

int
pool_open(const struct globals *g, struct lockopts *o,
    const struct pool_names *p, int sig_fd, struct pool_take *t, int *status)
{
	rl_client **rc = t->rc;
	size_t i;

	o->call_start_ms = rl_now_ms();
	if (room_for(g, p, status) < 0)
		return -1;
	for (i = 0; i < p->n; i++) {
		if ((rc[i] = client_open_acquire(g, o->ttl_ms, o->pubsub,
		    o->wait_ms, status)) == NULL) {
			t->which = i;
			pool_close(t, i);
			return -1;
		}
		rl_set_interrupt_fd(rc[i], sig_fd);
	}
	return 0;
}

void
pool_close(struct pool_take *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (i != t->which)
			rl_client_free(t->rc[i]);
}
