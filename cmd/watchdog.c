/* watchdog.c: renew a held lease while COMMAND runs; act when it is lost. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"

const char *
gone_why(int gone)
{
	switch (gone) {
	case GONE_EXPIRED:
		return "its lease had expired";
	case GONE_REMOVED:
		return "it was removed while held (unlock --force, a deleted "
		    "key or data lost by the server)";
	case GONE_UNCONFIRMED:
		return "its lease ran out while the watchdog was stopped or "
		    "starved of CPU, and too few masters confirmed the "
		    "release to show that it had not";
	default:
		return "it was taken by another owner";
	}
}

int
child_exit(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_SOFTWARE;
}

const char *
lost_fate(int st, int lost_signal, int at_deadline, char *buf, size_t len)
{
	int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;

	if (lost_signal == 0)
		snprintf(buf, len, "COMMAND was not signalled: it had ended, "
		    "status %d", child_exit(st));
	else if (lost_signal == SIGKILL)
		snprintf(buf, len, "COMMAND was killed (SIGKILL)");
	else if (sig == SIGTERM)
		snprintf(buf, len, "COMMAND was terminated (SIGTERM)");
	else if (sig == SIGKILL && at_deadline)
		snprintf(buf, len, "COMMAND was sent SIGTERM, then killed "
		    "(SIGKILL) at the local lease deadline, before the server "
		    "could expire the lease (before --kill-after)");
	else if (sig == SIGKILL)
		snprintf(buf, len, "COMMAND was sent SIGTERM, then killed "
		    "(SIGKILL) when it outlived --kill-after");
	else if (sig != 0)
		snprintf(buf, len, "COMMAND was sent SIGTERM and ended on "
		    "signal %d", sig);
	else
		snprintf(buf, len, "COMMAND was sent SIGTERM and exited %d",
		    child_exit(st));
	return buf;
}

const char *
kept_text(int released, int64_t held_until_ms, char *buf, size_t len)
{
	char when[40];

	if (!released)
		return "";
	if (held_until_ms <= 0)
		return " and the lock released";
	format_time(held_until_ms, when, sizeof(when));
	snprintf(buf, len, "; the lock stays held until %s, the end of its "
	    "minimum hold (--min-hold)", when);
	return buf;
}

const char *
lost_why(const struct loss *l, int terse)
{
	if (l->why == LOST_GONE && l->how == GONE_REMOVED &&
	    l->removed_by[0] != '\0')
		return l->removed_by;
	if (l->why == LOST_GONE)
		return gone_why(l->how);
	if (l->why == LOST_LATE && l->slow)
		return terse ? "the server answered late" : "the server "
		    "answered the acquisition too late to renew the lease in "
		    "time: it was busy, with DEBUG SLEEP, a slow script or a "
		    "fork for persistence";
	if (l->why == LOST_LATE)
		return terse ? "the watchdog ran late" : "the watchdog ran past "
		    "its local deadline without renewing it: it was stopped or "
		    "starved of CPU";
	if (l->unacked)
		return "too few replicas acknowledged its renewals (--replicas)";
	return terse ? "server not answering" : "the server stopped answering";
}

/* W's loss, found as WHY, for lost_why. */
static struct loss
watch_loss(const struct watch *w, enum lost why)
{
	struct loss l = { why, w->lost_how, w->slow, w->unacked,
	    w->removed_by };

	return l;
}

/* The lease is lost: say so and apply --on-lost. Returns when COMMAND
 * must be SIGKILLed at the latest (-1: not at all). */
static int64_t
lose(struct watch *w, const rl_keeper *k, enum lost why, int64_t now)
{
	struct loss loss = watch_loss(w, why);
	char ago[32];
	int64_t kill_at = -1;

	w->lost = why;
	w->lost_after_ms = now - rl_keeper_confirmed_ms(k);
	rl_duration_format(w->lost_after_ms, ago, sizeof(ago));
	event(w->lo, "lost %s: %s; lease last confirmed %s ago", esc(w->name),
	    lost_why(&loss, 0), ago);
	if (w->child <= 0)
		return -1;
	if (w->on_lost != ON_LOST_IGNORE)
		w->lost_signal = w->on_lost == ON_LOST_KILL ? SIGKILL : SIGTERM;
	switch (w->on_lost) {
	case ON_LOST_TERM:
		signal_group(w->child, SIGTERM);
		kill_at = now + w->kill_after_ms;
		if (why != LOST_GONE && kill_at > rl_keeper_deadline_ms(k))
			kill_at = w->kill_deadline = rl_keeper_deadline_ms(k);
		break;
	case ON_LOST_KILL:
		signal_group(w->child, SIGKILL);
		break;
	case ON_LOST_IGNORE:
		msg("lost the lock on %s (%s; last confirmed %s ago); COMMAND "
		    "goes on unprotected (--on-lost ignore)", esc(w->name),
		    lost_why(&loss, 1), ago);
		break;
	}
	return kill_at;
}

static int64_t
earliest(int64_t a, int64_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* The loop's state between two polls. */
struct loop {
	struct watch *w;
	rl_keeper *k;
	int64_t grace;		/* lost this long before the deadline */
	int64_t kill_at;	/* SIGKILL COMMAND then; -1: not */
	int64_t renewals;	/* as last said with -v */
	int keeping;		/* the keeper still renews */
	int child_done;
	int stop;		/* a signal or the watched process's exit */
};

/* How often the watchdog looks for what is left of COMMAND's group once
 * COMMAND has exited (see group_left). */
#define GROUP_POLL_MS 20

/* The poll set, one entry per source, in this order; the keeper's (one
 * per master) last. */
enum { PFD_SIG, PFD_PARENT, PFD_PID, PFD_KEEPER };
#define PFD_MAX (PFD_KEEPER + RL_KEEPER_MAX_FDS)

/* When COMMAND is to be stopped for --max-hold; -1: not (any more). */
static int64_t
max_hold_at(const struct loop *l)
{
	const struct watch *w = l->w;

	if (w->max_hold_ms <= 0 || w->max_held || l->child_done ||
	    w->lost != LOST_NO)
		return -1;
	return w->sent_ms + w->max_hold_ms;
}

/* COMMAND has held NAME for --max-hold: stop it as --on-lost says. The
 * lease is still renewed until COMMAND's process group is gone. */
static void
stop_max_hold(struct loop *l, int64_t now)
{
	struct watch *w = l->w;

	w->max_held = 1;
	event(w->lo, "%s held for --max-hold: %s to COMMAND", esc(w->name),
	    w->on_lost == ON_LOST_KILL ? "SIGKILL" : "SIGTERM");
	if (w->on_lost == ON_LOST_KILL) {
		signal_group(w->child, SIGKILL);
		return;
	}
	signal_group(w->child, SIGTERM);
	l->kill_at = earliest(l->kill_at, now + w->kill_after_ms);
}

/* The deadline was reached with no renewal sent before it: the watchdog
 * itself did not run in time, which says nothing of the server. */
static int
ran_late(const struct loop *l)
{
	int64_t tried = rl_keeper_tried_ms(l->k);

	return tried < 0 || tried >= rl_keeper_deadline_ms(l->k) - l->grace;
}

/* Run late for want of the server: no renewal was sent since the
 * acquisition, whose answer took longer than the watchdog has taken since
 * (the server was busy: DEBUG SLEEP, a slow script, a fork). */
static int
slow_answer(const struct loop *l, int64_t now)
{
	const struct watch *w = l->w;

	return rl_keeper_tried_ms(l->k) < 0 && rl_keeper_renewals(l->k) == 0 &&
	    w->answered_ms > 0 &&
	    w->answered_ms - w->sent_ms > now - w->answered_ms;
}

/* Before each poll: the lease counts as lost once its local deadline is
 * near, COMMAND is stopped at --max-hold, and gets SIGKILL past
 * --kill-after. */
static void
check_deadlines(struct loop *l, int64_t now)
{
	struct watch *w = l->w;
	int64_t mh = max_hold_at(l);

	if (w->lost == LOST_NO &&
	    now >= rl_keeper_deadline_ms(l->k) - l->grace) {
		w->slow = ran_late(l) && slow_answer(l, now);
		l->kill_at = earliest(l->kill_at, lose(w, l->k,
		    ran_late(l) ? LOST_LATE : LOST_UNREACHABLE, now));
	} else if (mh >= 0 && now >= mh)
		stop_max_hold(l, now);
	if (l->kill_at >= 0 && now >= l->kill_at) {
		/* Before --kill-after, at the lease's local deadline: after
		 * it the server may give NAME to another. */
		w->killed_at_deadline = l->kill_at == w->kill_deadline;
		event(w->lo, w->killed_at_deadline ? "the local lease deadline "
		    "came before --kill-after: SIGKILL to COMMAND, before the "
		    "server can expire the lease" :
		    "COMMAND outlived --kill-after: SIGKILL");
		if (l->child_done)	/* its pid may be another's by now */
			kill(-w->child, SIGKILL);
		else
			signal_group(w->child, SIGKILL);
		l->kill_at = -1;
	}
}

/* COMMAND has exited but a process of its group is left, and the group
 * is the watchdog's to end: COMMAND was stopped at --max-hold, or redlock
 * is gone (orphaned). The hold is kept until none is left, SIGKILL coming
 * at the kill deadline. */
static int
group_left(const struct loop *l)
{
	const struct watch *w = l->w;

	return (w->orphaned || w->max_held) && l->child_done &&
	    group_runs(w->child);
}

/* With COMMAND, the loop ends when it has (and what group_left finds);
 * without, at a signal, at the watched process's exit, or at a loss
 * --on-lost does not ignore. */
static int
finished(const struct loop *l)
{
	const struct watch *w = l->w;

	if (w->child > 0)
		return l->child_done && !group_left(l);
	return l->stop || (w->lost != LOST_NO && w->on_lost != ON_LOST_IGNORE);
}

/* Whether any of the N entries of PFD has an event. */
static int
ready(const struct pollfd *pfd, nfds_t n)
{
	while (n-- > 0)
		if (pfd[n].revents != 0)
			return 1;
	return 0;
}

static nfds_t
build_pollset(const struct loop *l, struct pollfd *pfd)
{
	pfd[PFD_SIG].fd = l->w->sig_fd;
	pfd[PFD_SIG].events = POLLIN;
	pfd[PFD_PARENT].fd = l->w->parent_fd;
	pfd[PFD_PARENT].events = POLLIN;
	pfd[PFD_PID].fd = l->w->pid_fd;
	pfd[PFD_PID].events = POLLIN;
	return PFD_KEEPER + (l->keeping ? rl_keeper_pollfds(l->k,
	    &pfd[PFD_KEEPER]) : 0);
}

/* When the next poll must return (-1: no deadline): the kill deadline,
 * the local lease deadline, --max-hold, or the keeper's next step,
 * whichever comes first. No step of the keeper blocks. */
static int64_t
next_wake(const struct loop *l)
{
	int64_t wake = l->kill_at;

	if (l->w->lost == LOST_NO)
		wake = earliest(wake, rl_keeper_deadline_ms(l->k) - l->grace);
	wake = earliest(wake, max_hold_at(l));
	if (l->keeping)
		wake = earliest(wake, rl_keeper_wake_ms(l->k));
	return wake;
}

static void
on_signals(struct loop *l)
{
	struct watch *w = l->w;
	pid_t r;
	int s;

	while ((s = sig_next(w->sig_fd)) != 0) {
		if (s != SIGCHLD) {
			l->stop = 1;	/* keepalive told to end */
			continue;
		}
		if (w->child <= 0 || l->child_done)
			continue;
		r = waitpid(w->child, &w->child_status, WNOHANG);
		if (r == w->child)
			l->child_done = 1;
	}
}

static void
on_parent(struct loop *l, int64_t now)
{
	struct watch *w = l->w;
	char b[16];

	if (read(w->parent_fd, b, sizeof(b)) > 0)
		return;
	/* redlock is gone: COMMAND must not run on unprotected. */
	w->orphaned = 1;
	w->parent_fd = -1;
	if (!l->child_done) {
		signal_group(w->child, SIGTERM);
		l->kill_at = earliest(l->kill_at, now + w->kill_after_ms);
	}
}

static void
on_pid(struct loop *l)
{
	l->stop = 1;	/* the watched process exited */
	l->w->pid_fd = -1;
}

/* A hold found removed: who removed it, if its history says that an
 * unlock --force took this owner's hold (into w->removed_by). */
static void
find_remover(struct watch *w)
{
	struct rl_event *ev;
	size_t n, i;

	w->removed_by[0] = '\0';
	if (rl_log_read(w->rc, w->name, 5, NULL, 0, &ev, &n) != RL_OK)
		n = 0;
	/* Newest first, back to this owner's acquisition at most (its
	 * release may have recorded the loss after the removal). */
	for (i = n; i > 0; i--) {
		const struct rl_event *e = &ev[i - 1];

		if (strcmp(e->owner, w->owner) != 0)
			continue;
		if (strcmp(e->event, "forced") == 0)
			snprintf(w->removed_by, sizeof(w->removed_by),
			    "removed by unlock --force from %s pid %ld (%s)",
			    esc(e->by_host), e->by_pid, esc(e->by_user));
		if (strcmp(e->event, "lost") != 0)
			break;
	}
	free(ev);
}

/* One renewal step; a lease found gone ends the keeping. */
static void
keeper_turn(struct loop *l, int64_t now)
{
	struct watch *w = l->w;
	enum rl_keep st;
	enum rl_err e;

	e = rl_keeper_step(l->k, now, &st);
	if (st != RL_KEEP_OK) {
		l->keeping = 0;
		/* Not held by anyone: before the local deadline, someone
		 * removed it; after, it may have run out. */
		w->lost_how = st == RL_KEEP_TAKEN ? GONE_TAKEN :
		    now >= rl_keeper_deadline_ms(l->k) ? GONE_EXPIRED :
		    GONE_REMOVED;
		if (w->lost_how == GONE_REMOVED)
			find_remover(w);
		if (w->lost == LOST_NO)
			l->kill_at = earliest(l->kill_at,
			    lose(w, l->k, LOST_GONE, now));
		else
			w->lost = LOST_GONE;
	} else if (e != RL_OK) {
		w->unacked = e == RL_EREPLICAS;
		/* Late, and the server does not answer either. */
		if (w->lost == LOST_LATE)
			w->lost = LOST_UNREACHABLE;
		event(w->lo, "renewing %s: %s; retrying",
		    esc(w->name), esc(rl_errstr(w->rc)));
	} else if (rl_keeper_renewals(l->k) != l->renewals) {
		l->renewals = rl_keeper_renewals(l->k);
		event(w->lo, "renewed %s (lease %lldms)",
		    esc(w->name), (long long)w->lo->ttl_ms);
	}
}

/* The hold W keeps. */
static struct rl_lock
hold(const struct watch *w)
{
	return (struct rl_lock){ .name = w->name, .owner = w->owner,
	    .kind = w->lo->kind, .limit = w->lo->limit };
}

/* Release, unless the lock is gone or the server is not answering (then
 * the lease runs out by itself). Lost for want of acknowledgements from
 * its replicas (--replicas), the master still answers: the lock goes
 * back now rather than when its lease runs out. exec's watchdog lost by
 * running late releases, and the release says what became of the hold
 * (that of --keepalive leaves it, as when the server did not answer). */
static void
release(struct watch *w, rl_keeper *k)
{
	struct rl_lock l = hold(w);
	enum rl_release rel;
	struct rl_attempt a;
	enum rl_err e;
	int64_t holds;
	char when[40];
	int gone, late;

	/* A hold found gone: a release that records the loss in the
	 * history, and changes nothing else (it is not this owner's). */
	if (w->lost == LOST_GONE) {
		if (w->child <= 0)
			rl_set_exit_status(w->rc, -2);
		rl_keeper_settle(k);
		rl_release(w->rc, &l, &rel, &holds, &a);
		return;
	}
	if (w->lost != LOST_NO && !(w->lost == LOST_LATE && w->child > 0) &&
	    !(w->lost == LOST_UNREACHABLE &&
	    (w->on_lost == ON_LOST_IGNORE || w->unacked)))
		return;
	rl_keeper_settle(k);
	/* Past the local deadline, the watchdog learns of COMMAND's end
	 * only now (both were stopped, or it was starved of CPU): COMMAND
	 * may have run past the lease. Only a release that a quorum
	 * confirms shows that the hold was still there. */
	late = w->child > 0 && rl_now_ms() >= rl_keeper_deadline_ms(k);
	e = rl_release(w->rc, &l, &rel, &holds, &a);
	if (late && (e != RL_OK || (rel != RL_NOT_OWNER && !a.confirmed)))
		w->gone_at_release = GONE_UNCONFIRMED;
	if (e != RL_OK)
		msg("could not release %s: %s; it is freed when its "
		    "lease runs out", esc(w->name),
		    esc(rl_errstr(w->rc)));
	else if (rel == RL_NOT_OWNER) {
		/* A permit's release says only that other permits are
		 * taken, as they may have been all along. */
		gone = holds != 0 && w->lo->kind != RL_PERMIT ? GONE_TAKEN :
		    rl_now_ms() >= rl_keeper_deadline_ms(k) ? GONE_EXPIRED :
		    GONE_REMOVED;
		if (gone == GONE_REMOVED)
			find_remover(w);
		if (w->lost == LOST_LATE) {
			w->lost = LOST_GONE;
			w->lost_how = gone;
		} else
			w->gone_at_release = gone;
	} else {
		w->released = 1;
		w->held_until_ms = a.held_until_ms > 0 ? a.held_until_ms : 0;
		if (a.nopub != NULL)
			warn_nopub(w->rc, w->name, a.nopub, 1);
		if (a.held_until_ms > 0) {
			format_time(a.held_until_ms, when, sizeof(when));
			event(w->lo, "finished %s; %s stays held until %s "
			    "(--min-hold)", w->what != NULL ? esc(w->what) :
			    "the hold", esc(w->name), when);
		} else
			event(w->lo, "released %s", esc(w->name));
	}
}

void
watch_run(struct watch *w)
{
	struct rl_lock held = hold(w);
	struct loop l;
	struct pollfd pfd[PFD_MAX];
	int64_t now, wake, period;
	nfds_t n;

	memset(&l, 0, sizeof(l));
	l.w = w;
	l.kill_at = -1;
	l.keeping = 1;
	l.child_done = w->child <= 0;
	l.k = rl_keeper_new(w->rc, &held, w->lo->ttl_ms, w->sent_ms);
	if (l.k == NULL) {
		msg("out of memory");
		signal_group(w->child, SIGKILL);
		w->lost = LOST_GONE;
		return;
	}
	period = rl_renew_period_ms(w->lo->ttl_ms);
	/* Start terminating this long before the local deadline, so that
	 * COMMAND is dead before the server can expire the lease. */
	l.grace = w->kill_after_ms < period ? w->kill_after_ms : period;
	for (;;) {
		now = rl_now_ms();
		/* Stopped outside the poll (a VM pause, SIGSTOP), the
		 * watchdog finds COMMAND's end before it judges the deadline
		 * it overslept: the release tells what became of the hold. */
		on_signals(&l);
		if (w->child > 0 && finished(&l))
			break;
		check_deadlines(&l, now);
		if (finished(&l))
			break;
		n = build_pollset(&l, pfd);
		wake = next_wake(&l);
		if (l.child_done)	/* COMMAND's group, checked again */
			wake = earliest(wake, now + GROUP_POLL_MS);
		if (poll(pfd, n, wake < 0 ? -1 :
		    (int)(wake > now ? wake - now : 0)) < 0 && errno != EINTR) {
			msg("poll: %s", strerror(errno));
			break;
		}
		now = rl_now_ms();
		/* Also when a signal cut the poll short (EINTR, no revents):
		 * a COMMAND that ended while the watchdog was stopped is
		 * found before the deadline it overslept is judged. */
		on_signals(&l);
		if (w->child > 0 && finished(&l))
			break;
		if (pfd[PFD_PARENT].revents != 0)
			on_parent(&l, now);
		if (pfd[PFD_PID].revents != 0)
			on_pid(&l);
		if (l.keeping && (ready(pfd + PFD_KEEPER, n - PFD_KEEPER) ||
		    now >= rl_keeper_wake_ms(l.k)))
			keeper_turn(&l, now);
		if (w->child > 0 && finished(&l))
			break;
	}
	/* The release records how COMMAND ended in the history. */
	if (w->child > 0 && l.child_done)
		rl_set_exit_status(w->rc, WIFEXITED(w->child_status) ?
		    WEXITSTATUS(w->child_status) :
		    WIFSIGNALED(w->child_status) ?
		    128 + WTERMSIG(w->child_status) : -1);
	release(w, l.k);
	rl_keeper_free(l.k);
}
