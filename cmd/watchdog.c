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

static void
signal_child(const struct watch *w, int sig)
{
	if (w->child <= 0)
		return;
	if (kill(-w->child, sig) < 0 && errno == ESRCH)
		kill(w->child, sig);
}

/* The lease is lost: say so and apply --on-lost. Returns when COMMAND
 * must be SIGKILLed at the latest (-1: not at all). */
static int64_t
lose(struct watch *w, const rl_keeper *k, enum lost why, int64_t now)
{
	char ago[32];
	int64_t kill_at = -1;

	w->lost = why;
	w->lost_after_ms = now - rl_keeper_confirmed_ms(k);
	rl_duration_format(w->lost_after_ms, ago, sizeof(ago));
	event(w->lo, "lost %s: %s; lease last confirmed %s ago", esc(w->name),
	    why == LOST_GONE ? "it is gone or held by another owner" :
	    "the server stopped answering", ago);
	if (w->child <= 0)
		return -1;
	switch (w->on_lost) {
	case ON_LOST_TERM:
		signal_child(w, SIGTERM);
		kill_at = now + w->kill_after_ms;
		if (why == LOST_UNREACHABLE &&
		    kill_at > rl_keeper_deadline_ms(k))
			kill_at = rl_keeper_deadline_ms(k);
		break;
	case ON_LOST_KILL:
		signal_child(w, SIGKILL);
		break;
	case ON_LOST_IGNORE:
		msg("lost the lock on %s (%s; last confirmed %s ago); COMMAND "
		    "goes on unprotected (--on-lost ignore)", esc(w->name),
		    why == LOST_GONE ? "gone or held by another owner" :
		    "server not answering", ago);
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

void
watch_run(struct watch *w)
{
	rl_keeper *k;
	struct pollfd pfd[4];
	int64_t now, grace, kill_at = -1, wake, until, period;
	int keeping = 1, child_done = w->child <= 0, stop = 0, n, s;
	int64_t renewals = 0;
	enum rl_keep st;
	enum rl_err e;
	pid_t r;

	k = rl_keeper_new(w->rc, w->name, w->owner, w->lo->ttl_ms, w->sent_ms);
	if (k == NULL) {
		msg("out of memory");
		signal_child(w, SIGKILL);
		w->lost = LOST_GONE;
		return;
	}
	period = rl_renew_period_ms(w->lo->ttl_ms);
	/* Start terminating this long before the local deadline, so that
	 * COMMAND is dead before the server can expire the lease. */
	grace = w->kill_after_ms < period ? w->kill_after_ms : period;
	for (;;) {
		now = rl_now_ms();
		if (w->lost == LOST_NO &&
		    now >= rl_keeper_deadline_ms(k) - grace)
			kill_at = earliest(kill_at, lose(w, k,
			    LOST_UNREACHABLE, now));
		if (kill_at >= 0 && now >= kill_at) {
			event(w->lo, "COMMAND outlived --kill-after: SIGKILL");
			signal_child(w, SIGKILL);
			kill_at = -1;
		}
		if (w->child > 0 ? child_done :
		    (stop || (w->lost != LOST_NO && w->on_lost != ON_LOST_IGNORE)))
			break;

		n = 0;
		pfd[n].fd = w->sig_fd;
		pfd[n++].events = POLLIN;
		pfd[n].fd = w->parent_fd;
		pfd[n++].events = POLLIN;
		pfd[n].fd = w->pid_fd;
		pfd[n++].events = POLLIN;
		pfd[n].fd = keeping ? rl_keeper_fd(k) : -1;
		pfd[n++].events = keeping ? rl_keeper_events(k) : POLLIN;
		/* The deadlines no renewal step may hold up. */
		until = kill_at;
		if (w->lost == LOST_NO)
			until = earliest(until, rl_keeper_deadline_ms(k) - grace);
		wake = until;
		if (keeping)
			wake = earliest(wake, rl_keeper_wake_ms(k));
		if (poll(pfd, (nfds_t)n, wake < 0 ? -1 :
		    (int)(wake > now ? wake - now : 0)) < 0 && errno != EINTR) {
			msg("poll: %s", strerror(errno));
			break;
		}
		now = rl_now_ms();

		if (pfd[0].revents != 0) {
			while ((s = sig_next(w->sig_fd)) != 0) {
				if (s != SIGCHLD) {
					stop = 1;	/* keepalive told to end */
					continue;
				}
				if (w->child <= 0 || child_done)
					continue;
				r = waitpid(w->child, &w->child_status, WNOHANG);
				if (r == w->child)
					child_done = 1;
			}
		}
		if (pfd[1].revents != 0) {
			char b[16];

			if (read(w->parent_fd, b, sizeof(b)) <= 0) {
				/* redlock is gone: COMMAND must not run on
				 * unprotected. */
				w->orphaned = 1;
				w->parent_fd = -1;
				if (!child_done) {
					signal_child(w, SIGTERM);
					kill_at = earliest(kill_at,
					    now + w->kill_after_ms);
				}
			}
		}
		if (pfd[2].revents != 0) {
			stop = 1;	/* the watched process exited */
			w->pid_fd = -1;
		}
		if (keeping && (pfd[3].revents != 0 ||
		    now >= rl_keeper_wake_ms(k))) {
			e = rl_keeper_step(k, now, until, &st);
			if (st == RL_KEEP_GONE) {
				keeping = 0;
				if (w->lost == LOST_NO)
					kill_at = earliest(kill_at,
					    lose(w, k, LOST_GONE, now));
				else
					w->lost = LOST_GONE;
			} else if (e != RL_OK)
				event(w->lo, "renewing %s: %s; retrying",
				    esc(w->name), esc(rl_errstr(w->rc)));
			else if (rl_keeper_renewals(k) != renewals) {
				renewals = rl_keeper_renewals(k);
				event(w->lo, "renewed %s (lease %lldms)",
				    esc(w->name), (long long)w->lo->ttl_ms);
			}
		}
		if (w->child > 0 && child_done)
			break;
	}

	/* Release, unless the lock is gone or the server is not answering
	 * (then the lease runs out by itself). */
	if (w->lost == LOST_NO ||
	    (w->lost == LOST_UNREACHABLE && w->on_lost == ON_LOST_IGNORE)) {
		enum rl_release rel;
		struct rl_attempt a;
		int64_t holds;

		rl_keeper_settle(k);
		e = rl_release(w->rc, w->name, w->owner, &rel, &holds, &a);
		if (e != RL_OK)
			msg("could not release %s: %s; it is freed when its "
			    "lease runs out", esc(w->name),
			    esc(rl_errstr(w->rc)));
		else if (rel == RL_NOT_OWNER)
			msg("%s was no longer held at release: the lease ran "
			    "out", esc(w->name));
		else {
			w->released = 1;
			if (a.nopub != NULL)
				warn_nopub(w->rc, w->name, a.nopub, 1);
			event(w->lo, "released %s", esc(w->name));
		}
	}
	rl_keeper_free(k);
}
