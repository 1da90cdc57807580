/* exec.c: run COMMAND while holding NAME; a watchdog renews the lease. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

static void init(void *);
static enum step option(void *, const struct parse *, int, const char *,
    int *);
static enum step unknown(void *, const struct parse *, int *);
static int run(struct globals *, void *, const struct parse *);


#define DEFAULT_KILL_AFTER_MS 5000

/* What the watchdog tells redlock, over a pipe. */
struct report {
	int kind;		/* REPORT_STARTED, REPORT_DONE, REPORT_EXIT */
	pid_t child;
	int status;		/* wait status of COMMAND; -1: not started;
				 * REPORT_EXIT: redlock's exit status */
	int which;		/* the name held, of the pool's */
	uint32_t away;		/* REPORT_STARTED: the masters the
				 * acquisition never went to
				 * (rl_client_away) */
	int busy;		/* REPORT_EXIT: NAME was busy */
	int64_t wait_ms;	/* from the start of the wait to the
				 * acquisition, or to REPORT_EXIT */
	int lost;		/* enum lost */
	int unacked;		/* renewals failed for want of replicas */
	int64_t lost_after_ms;
	int lost_how;		/* enum gone: how LOST_GONE found it */
	int gone;		/* enum gone: what the release found */
	int max_held;		/* COMMAND was stopped at --max-hold */
	int released;
	int64_t held_until_ms;	/* watch held_until_ms */
	int lost_signal;	/* watch lost_signal */
	int killed_at_deadline;	/* watch killed_at_deadline */
	int slow;		/* watch slow */
	char removed_by[400];	/* removed by unlock --force: who, from
				 * the history (watch removed_by); or "" */
};
enum { REPORT_STARTED = 1, REPORT_DONE, REPORT_EXIT };

/* The hold an acquisition took: its client, the attempt that took it,
 * the name's place in the pool, and how long the wait took. */
struct taken {
	rl_client *rc;
	struct rl_attempt a;
	int which;
	int64_t wait_ms;
};

/* What one exec is asked to do. */
struct job {
	struct lockopts o;
	enum on_lost on_lost;
	int64_t kill_after;
	int64_t max_hold;	/* 0: none */
	const char *max_hold_arg;
	const char *metrics_file;	/* --metrics-file; or NULL */
	const char *name;	/* the name held: one of pool's */
	struct pool_names pool;	/* NAME, or --any's NAME... */
	char **cmd;
	pid_t relay;		/* redlock's own process */
	const char *shell;	/* -c STRING; or NULL */
	char *sh_argv[4];	/* /bin/sh -c STRING */
};

const struct cmd cmd_exec = {
	.name = "exec", .usage = "exec [OPTIONS] NAME -- COMMAND [ARG...]",
	.help = "Acquire NAME, run COMMAND (no shell), renew the lease every "
	"ttl/3\nuntil it exits, release, and exit with its status.\n\n",
	.opts = lock_opts, .bit = CMD_EXEC,
	.brief = "run COMMAND holding NAME, renewing its lease",
	.examples =
	"  redlock exec -n -q backup -- /usr/local/bin/backup\n"
	"  redlock exec -w 10m --fair deploy -- make deploy\n",
	.exits =
	"COMMAND's, or 64 usage, 65 NAME is not a lock, 69 server\n"
	"  unreachable or refused, 75 busy (-E), 79 lease lost, 80 superseded,\n"
	"  124 --max-hold, 126 or 127 COMMAND not run, 128+N a signal\n",
	.flags = CMD_DASHDASH, .job_size = sizeof(struct job), .init = init,
	.option = option, .unknown = unknown, .run = run
};

static void
report(int fd, const struct report *r)
{
	ssize_t n;

	do
		n = write(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
}

/* "redlock: watchdog for NAME" as this process's line in ps. */
static void
set_title(const char *name)
{
	char title[256];

	snprintf(title, sizeof(title), "redlock: watchdog for %s", esc(name));
	proc_title(title);
}

/* How the watch W of the name held (WHICH, of the pool's) ended, to
 * redlock on FD. */
static void
report_done(int fd, const struct watch *w, int which)
{
	struct report r = { 0 };

	r.kind = REPORT_DONE;
	r.which = which;
	r.status = w->child_status;
	r.lost = w->lost;
	r.lost_how = w->lost_how;
	r.lost_after_ms = w->lost_after_ms;
	r.lost_signal = w->lost_signal;
	r.unacked = w->unacked;
	r.gone = w->gone_at_release;
	r.max_held = w->max_held;
	r.released = w->released;
	r.held_until_ms = w->held_until_ms;
	r.killed_at_deadline = w->killed_at_deadline;
	r.slow = w->slow;
	memcpy(r.removed_by, w->removed_by, sizeof(r.removed_by));
	report(fd, &r);
}

/* The watchdog, once T holds NAME: start COMMAND, keep the lease,
 * release, report. */
static void __attribute__((noreturn))
watchdog(const struct globals *g, struct job *j, const struct taken *t,
    int parent_fd, int report_fd)
{
	rl_client *rc = t->rc;
	const struct rl_attempt *a = &t->a;
	int which = t->which;
	struct rl_lock held = lockopts_lock(&j->o, j->name);
	struct report r = { 0 };
	struct spawn sp = { 0 };
	struct watch w;
	sigset_t old;
	int sigchld = SIGCHLD;
	size_t i;
	pid_t pid, caller;

	/* Signals for COMMAND reach it from redlock, not from here: a kill
	 * of every redlock process must not deliver them twice. */
	for (i = 0; i < sizeof(relayed_signals) / sizeof(relayed_signals[0]);
	    i++)
		signal(relayed_signals[i], SIG_IGN);
	memset(&w, 0, sizeof(w));
	w.answered_ms = rl_now_ms();	/* the acquisition's answer: just in */
	w.sig_fd = sig_catch(&sigchld, 1);
	caller = getpgrp();
	sp.argv = j->cmd;
	sp.watchdog = getpid();
	sp.tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == caller;
	/* A process group of its own, before COMMAND starts: a SIGKILL to
	 * the caller's group (a CI runner's cancel, timeout -s KILL) ends
	 * redlock, not this process, which then ends COMMAND's group and
	 * releases. In a background group, writing to a terminal must not
	 * stop it (stty tostop). */
	signal(SIGTTOU, SIG_IGN);
	setpgid(0, 0);
	sig_block_all(&old);
	pid = spawn_env(&sp, g, j->name, &j->o, a->fence) < 0 ? -1 :
	    spawn(&sp);
	sig_unblock(&old);
	spawn_free(&sp);
	if (pid < 0) {
		msg("cannot start COMMAND: %s", strerror(errno));
		r.kind = REPORT_DONE;
		r.status = -1;
		r.which = which;
		report(report_fd, &r);
		rl_release_unused(rc, &held, &(enum rl_release){ 0 },
		    &(int64_t){ 0 }, &(struct rl_attempt){ 0 });
		rl_client_free(rc);
		exit(0);
	}
	r.kind = REPORT_STARTED;
	r.child = pid;
	r.which = which;
	r.wait_ms = t->wait_ms;
	r.away = rl_client_away(rc);
	report(report_fd, &r);
	/* Not its parent's line in ps: a name of its own. COMMAND has its
	 * own copy of the words by now. */
	set_title(j->name);

	w.rc = rc;
	w.name = j->name;
	w.owner = j->o.owner;
	w.lo = &j->o;
	w.sent_ms = a->sent_ms;
	w.on_lost = j->on_lost;
	w.kill_after_ms = j->kill_after;
	w.max_hold_ms = j->max_hold;
	w.child = pid;
	w.what = j->cmd[0];
	w.parent_fd = parent_fd;
	w.pid_fd = -1;
	watch_run(&w);
	if (sp.tty)
		tcsetpgrp(STDIN_FILENO, caller);
	report_done(report_fd, &w, which);
	rl_client_free(rc);
	exit(0);
}

/* Stop the wait on NAME at a signal: exit 128+N, COMMAND never started. */
static int
interrupted(int sig_fd, const char *name, const struct lockopts *o)
{
	return wait_interrupted(o, name, sig_next(sig_fd));
}

static int
parse_on_lost(const char *s, enum on_lost *out)
{
	if (strcmp(s, "term") == 0)
		*out = ON_LOST_TERM;
	else if (strcmp(s, "kill") == 0)
		*out = ON_LOST_KILL;
	else if (strcmp(s, "ignore") == 0)
		*out = ON_LOST_IGNORE;
	else
		return -1;
	return 0;
}


/* --max-hold goes with an --on-lost that stops COMMAND, and is no
 * shorter than the renewal period (else the lease is far longer than the
 * job may hold NAME, and would outlast a crash of both processes by as
 * much): 0, or -1 (reported). */
static int
check_max_hold(const struct job *j)
{
	/* Read holds and permits are renewed at least every 9 s. */
	int64_t period = rl_kind_renew_period_ms(j->o.kind, j->o.ttl_ms);
	char p[32], t[32], most[32];

	if (j->max_hold == 0)
		return 0;
	if (j->on_lost == ON_LOST_IGNORE) {
		usage_error(&cmd_exec, "--max-hold with --on-lost ignore: "
		    "nothing would stop COMMAND; use --on-lost term or kill");
		return -1;
	}
	if (j->max_hold >= period)
		return 0;
	rl_duration_format(period, p, sizeof(p));
	rl_duration_format(j->o.ttl_ms, t, sizeof(t));
	rl_duration_format(3 * j->max_hold, most, sizeof(most));
	usage_error(&cmd_exec, "--max-hold %s is shorter than the renewal "
	    "period (%s, for --ttl %s): a lease that long would hold NAME "
	    "for far longer than the job may after a crash; give --ttl %s "
	    "or less, or a longer --max-hold", esc(j->max_hold_arg), p, t,
	    most);
	return -1;
}

/* Whether getopt's '?' was for an option exec does not have, rather
 * than for one without its value. */
static int
unknown_option(const struct parse *p)
{
	const char *word = p->argv[optind - 1];
	const struct getopts *go = p->go;
	const struct option *o;
	size_t n;

	if (optopt == 0)
		return 1;
	if (strncmp(word, "--", 2) == 0) {
		n = strcspn(word + 2, "=");
		for (o = go->longopts; o->name != NULL; o++)
			if (o->val == optopt && strncmp(o->name, word + 2,
			    n) == 0)
				return 0;
	}
	return strchr(go->shortopts, optopt) == NULL;
}

/*
 * An option that exec does not take (unknown, or flock's -F, --unlock,
 * --fcntl), CH as the parser gave it ('?': unknown). Without "--", one
 * after NAME is COMMAND's: redlock exec -n backup pg_dump -Fc db. Said
 * so; EXIT_USAGE.
 */
static int
refuse(int ch, const struct parse *p)
{
	const char *word = p->argv[optind - 1];
	const struct getopts *go = p->go;
	char **argv = p->argv;
	char opt[8];
	int status;

	if (ch == '?' && !unknown_option(p))
		return bad_option(&cmd_exec, argv, go->shortopts,
		    go->longopts);
	snprintf(opt, sizeof(opt), "-%c", ch == 'F' ? 'F' : optopt);
	if (p->dd == p->full_argc && p->nops > 0)
		return usage_error(&cmd_exec, "unknown option '%s' after NAME: "
		    "put -- before COMMAND (redlock exec [options] NAME -- "
		    "COMMAND...)", ch == '?' && optopt == 0 ? esc(word) :
		    ch == '?' || ch == 'F' ? opt : esc(word));
	if (ch == 'F')
		return usage_error(&cmd_exec, "-F (--no-fork) is flock's: "
		    "redlock runs COMMAND in a child of its own, beside the "
		    "watchdog that renews the lease; drop -F");
	if (ch == '?')
		return bad_option(&cmd_exec, argv, go->shortopts,
		    go->longopts);
	/* --unlock, --fcntl: lockopts_parse says what to do instead. */
	lockopts_parse(&cmd_exec, &(struct lockopts){ 0 }, ch, NULL, &status);
	return EXIT_USAGE;
}

static void
init(void *job)
{
	struct job *j = job;

	lockopts_init(&j->o);
	j->on_lost = ON_LOST_TERM;
	j->kill_after = DEFAULT_KILL_AFTER_MS;
	j->max_hold = 0;
	j->metrics_file = NULL;
	j->shell = NULL;
}

static enum step
unknown(void *job, const struct parse *p, int *status)
{
	(void)job;
	return step_exit(status, refuse('?', p));
}

/* Exec's own options, CH with ARG, into J, and the lock options:
 * STEP_GO_ON once taken, else STEP_EXIT with *STATUS. */
static enum step
option(void *job, const struct parse *p, int ch, const char *arg,
    int *status)
{
	struct job *j = job;

	switch (ch) {
	case 'F':
	case OPT_FLOCK_UNLOCK:
	case OPT_FLOCK_FCNTL:
		return step_exit(status, refuse(ch, p));
	case OPT_ON_LOST:
		if (parse_on_lost(arg, &j->on_lost) < 0)
			return step_exit(status, usage_error(&cmd_exec,
			    "--on-lost: '%s' is not term, kill or ignore",
			    esc(arg)));
		return STEP_GO_ON;
	case OPT_KILL_AFTER:
		return parse_duration(&cmd_exec, "--kill-after", arg,
		    &j->kill_after) < 0 ? step_exit(status, EXIT_USAGE) :
		    STEP_GO_ON;
	case OPT_MAX_HOLD:
		j->max_hold_arg = arg;
		return parse_duration(&cmd_exec, "--max-hold", arg,
		    &j->max_hold) < 0 ? step_exit(status, EXIT_USAGE) :
		    STEP_GO_ON;
	case OPT_METRICS_FILE:
		j->metrics_file = arg;
		return STEP_GO_ON;
	case 'c':
		j->shell = arg;
		return STEP_GO_ON;
	case 'o':
		/* flock's --close: COMMAND never has the lock's
		 * connection (close-on-exec), so there is nothing to do. */
		return STEP_GO_ON;
	}
	return lockopts_parse(&cmd_exec, &j->o, ch, arg, status);
}

/* NAME and COMMAND, after the options, into J: STEP_GO_ON, or
 * STEP_EXIT with *STATUS. */
static enum step
operands(struct job *j, const struct parse *p, int *status)
{
	char **ops = p->argv + 1;
	int dashdash = p->dd < p->full_argc, r;
	const char *bad = NULL;

	if (p->nops == 0)
		bad = j->o.any ? "missing NAME... after --any" :
		    "missing NAME";
	else if (!j->o.any && p->nops > 1 && j->shell != NULL)
		return step_exit(status, usage_error(&cmd_exec, "one NAME, "
		    "then -c STRING (or -- and COMMAND); got '%s' too",
		    esc(ops[1])));
	else if (!j->o.any && p->nops > 1)
		return step_exit(status, usage_error(&cmd_exec, "one NAME, "
		    "then -- and COMMAND; got '%s' before --", esc(ops[1])));
	else if ((j->name = ops[0])[0] == '\0')
		bad = "NAME is empty";
	else if (j->shell != NULL && dashdash)
		bad = "-c STRING and -- COMMAND do not go together: give "
		    "COMMAND one way";
	else if (j->shell == NULL && !dashdash)
		bad = "missing -- before COMMAND";
	else if (j->shell == NULL && p->dd + 1 >= p->full_argc)
		bad = "missing COMMAND after --";
	if (bad != NULL)
		return step_exit(status, usage_error(&cmd_exec, "%s", bad));
	if ((r = pool_parse(&cmd_exec, j->o.any, ops, p->nops,
	    &j->pool)) != 0)
		return step_exit(status, r);
	j->name = j->pool.name[0];
	if (j->shell != NULL) {
		/* /bin/sh, not flock's $SHELL: a cron job runs the same
		 * whoever's login shell it inherits. */
		j->sh_argv[0] = (char *)"/bin/sh";
		j->sh_argv[1] = (char *)"-c";
		j->sh_argv[2] = (char *)j->shell;
		j->sh_argv[3] = NULL;
		j->cmd = j->sh_argv;
	} else
		j->cmd = p->argv + p->dd + 1;
	return STEP_GO_ON;
}

/* The operands, and the options together: STEP_GO_ON, or STEP_EXIT
 * with *STATUS. */
static enum step
check(struct globals *g, struct job *j, const struct parse *p, int *status)
{
	if (operands(j, p, status) == STEP_EXIT)
		return STEP_EXIT;
	if (lockopts_check(&cmd_exec, &j->o, g, "exec") < 0 ||
	    lockopts_finish_pool(&j->pool, &j->o) < 0 ||
	    check_max_hold(j) < 0 ||
	    (j->metrics_file != NULL &&
	    metrics_check(&cmd_exec, j->metrics_file) < 0))
		return step_exit(status, EXIT_USAGE);
	j->name = j->pool.name[0];
	return STEP_GO_ON;
}

/* Give back the hold this exec took, COMMAND never started (a signal
 * first, or the watchdog could not start): unused, it keeps no minimum
 * hold (--min-hold). */
static void
give_back(rl_client *rc, const struct job *j)
{
	struct rl_lock l = lockopts_lock(&j->o, j->name);
	struct rl_attempt a;
	enum rl_release rel;
	int64_t holds;

	rl_release_unused(rc, &l, &rel, &holds, &a);
}

/* Acquire J's NAME, or one of its pool's, on a new client into T
 * (j->name set to the name held): STEP_GO_ON when held, else STEP_EXIT
 * with *STATUS (T's client freed). */
static enum step
acquire(struct globals *g, struct job *j, int sig_fd, struct taken *t,
    int *status)
{
	struct pool_take pool, *pt = &pool;
	struct rl_meta meta;
	char cmdline[CMDLINE_MAX];
	rl_client **rc = &t->rc;
	enum step step;
	int s;

	if (pool_open(g, &j->o, &j->pool, sig_fd, pt, status) < 0)
		return STEP_EXIT;
	/* While HELLO is on its way. */
	cmdline_masked(j->cmd, cmdline, sizeof(cmdline));
	meta_self(&meta, 1);
	meta.pid = (long)j->relay;
	meta.cmd = j->o.label != NULL ? j->o.label : cmdline;
	step = lock_acquire_pool(pt, &j->pool, &j->o, &meta, status);
	/* The name held, or the one the messages are about. */
	pool_close(pt, j->pool.n);
	t->rc = pt->rc[pt->which];
	t->a = pt->a[pt->which];
	t->which = (int)pt->which;
	j->name = j->pool.name[pt->which];
	/* Ended by redlock's death: nobody reads a message. */
	if (getppid() != j->relay)
		j->o.quiet = 1;
	if (step == STEP_INTERRUPTED)
		*status = interrupted(sig_fd, j->pool.n > 1 ? j->pool.label :
		    j->name, &j->o);
	else if (step == STEP_GO_ON && (s = sig_next(sig_fd)) != 0) {
		/* A signal that came while acquiring: COMMAND never starts. */
		give_back(*rc, j);
		event(&j->o, "released %s: signal %d before COMMAND started",
		    esc(j->name), s);
		*status = 128 + s;
	} else if (step == STEP_GO_ON)
		return STEP_GO_ON;
	rl_client_free(*rc);
	return STEP_EXIT;
}

/*
 * The watchdog process, forked before anything is sent: it acquires
 * (waiting as long as it must), then starts COMMAND, keeps the lease and
 * releases, reporting to redlock on REPORT_FD. Holding the connection it
 * acquired on, it needs no second one (nor a second TLS handshake), and
 * only COMMAND's start comes between the acquisition and COMMAND.
 */
static void __attribute__((noreturn))
waiter(struct globals *g, struct job *j, int sig_fd, int parent_fd,
    int report_fd)
{
	struct report r = { 0 };
	struct taken t = { 0 };
	int64_t t0 = rl_now_ms();
	enum step step;
	int status;

	/* redlock dies while this waits: the wait ends, as at a signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGHUP) < 0 || getppid() != j->relay)
		_exit(EXIT_SOFTWARE);
	if (sig_fd < 0) {
		msg("cannot set up signals: %s", strerror(errno));
		r.kind = REPORT_EXIT;
		r.status = EXIT_SOFTWARE;
		report(report_fd, &r);
		exit(0);
	}
	step = acquire(g, j, sig_fd, &t, &status);
	r.wait_ms = t.wait_ms = rl_now_ms() - t0;
	if (step == STEP_EXIT) {
		r.kind = REPORT_EXIT;
		r.status = status;
		r.busy = j->o.busy;
		report(report_fd, &r);
		exit(0);
	}
	/* Held: from here this process outlives redlock, to end COMMAND
	 * and release. Unless redlock is already gone. */
	if (prctl(PR_SET_PDEATHSIG, 0) < 0 || getppid() != j->relay) {
		give_back(t.rc, j);
		rl_client_free(t.rc);
		exit(0);
	}
	/* Waiting is over: the pipe that cut it short goes (its number
	 * may be the watchdog's SIGCHLD pipe's next). */
	rl_set_interrupt_fd(t.rc, -1);
	sig_drop();
	watchdog(g, j, &t, parent_fd, report_fd);
}

/* Fork the watchdog: its pid, and in *REPORT_FD the read end of its
 * reports; -1 (reported). */
static pid_t
spawn_watchdog(struct globals *g, struct job *j, int sig_fd, int *report_fd)
{
	int alive[2], rpipe[2];
	sigset_t old;
	pid_t wd;

	if (pipe2(alive, O_CLOEXEC) < 0 || pipe2(rpipe, O_CLOEXEC) < 0) {
		msg("cannot start the watchdog: pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	j->relay = getpid();
	sig_block_all(&old);
	wd = fork();
	if (wd == 0) {
		close(alive[1]);
		close(rpipe[0]);
		sig_drop();
		/* Its own handlers and pipe first: a signal waits for
		 * them. */
		sig_fd = sig_catch(relayed_signals, 6);
		sig_unblock(&old);
		waiter(g, j, sig_fd, alive[0], rpipe[1]);
	}
	sig_unblock(&old);
	close(alive[0]);
	close(rpipe[1]);
	if (wd < 0) {
		msg("cannot start the watchdog: fork: %s", strerror(errno));
		close(rpipe[0]);
		close(alive[1]);
		return -1;
	}
	/* alive[1] stays open, unread, until redlock exits: the watchdog
	 * sees EOF on its end when redlock dies. */
	*report_fd = rpipe[0];
	return wd;
}

/* Relay signals until the watchdog WD reports its end (1, in *DONE) or
 * dies (0): to WD while it waits, to COMMAND's process group once started
 * (*CHILD, its pid, with the name held in *WHICH). A signal that came
 * before COMMAND started is sent to it too: the watchdog heeds signals
 * only before it holds the lock. */
static int
relay(int sig_fd, int report_fd, pid_t wd, pid_t *child, int *which,
    struct report *done)
{
	struct report rep;
	int pending[8], npending = 0, s, i;
	ssize_t n;

	for (;;) {
		struct pollfd p[2] = {
			{ sig_fd, POLLIN, 0 }, { report_fd, POLLIN, 0 }
		};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return 0;
		while ((s = sig_next(sig_fd)) != 0)
			if (*child > 0)
				signal_group(*child, s);
			else {
				kill(wd, s);
				if (npending < 8)
					pending[npending++] = s;
			}
		if (p[1].revents == 0)
			continue;
		n = read(report_fd, &rep, sizeof(rep));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(rep))
			return 0;	/* EOF: the watchdog is gone */
		if (rep.kind == REPORT_STARTED) {
			*child = rep.child;
			*which = rep.which;
			done->wait_ms = rep.wait_ms;
			done->away = rep.away;
			for (i = 0; i < npending; i++)
				signal_group(*child, pending[i]);
			npending = 0;
		} else if (rep.kind == REPORT_DONE ||
		    rep.kind == REPORT_EXIT) {
			if (rep.kind == REPORT_DONE) {
				rep.wait_ms = done->wait_ms;
				rep.away = done->away;
			}
			*which = rep.which;
			*done = rep;
			return 1;
		}
	}
}

/* Why the lease was lost while COMMAND ran, for its line. */
static const char *
lost_text(const struct report *done)
{
	struct loss l = { done->lost, done->lost_how, done->slow,
	    done->unacked, done->removed_by };

	return lost_why(&l, 0);
}

/* The exit status, once the watchdog WD has ended. */
static int
finish(struct globals *g, struct job *j, pid_t wd, pid_t child,
    int reported, const struct report *done)
{
	rl_client *rc;
	char ago[32], fate[200];
	int status, s;

	while (waitpid(wd, &status, 0) < 0 && errno == EINTR)
		;
	if (reported && done->kind == REPORT_EXIT)
		return done->status;
	if (!reported && child <= 0) {
		/* Before COMMAND: if it held NAME, the lease runs out. */
		msg("the watchdog of %s died (status %d) before COMMAND "
		    "started; a hold it took ends with its lease; try again",
		    esc(j->pool.n > 1 ? j->pool.label : j->name),
		    child_exit(status));
		return EXIT_SOFTWARE;
	}
	if (!reported) {
		/* The watchdog died: COMMAND runs unprotected. Stop it and
		 * give the lock back. */
		if (child > 0)
			signal_group(child, SIGKILL);
		if ((rc = client_open_pubsub(g, j->o.ttl_ms, j->o.pubsub,
		    &s)) != NULL) {
			/* COMMAND ran: its minimum hold is kept. Not on
			 * masters the acquisition never went to. */
			struct rl_lock l = lockopts_lock(&j->o, j->name);

			rl_client_set_away(rc, done->away);
			rl_release(rc, &l, &(enum rl_release){ 0 },
			    &(int64_t){ 0 }, &(struct rl_attempt){ 0 });
			rl_client_free(rc);
		}
		msg("the watchdog of %s died (status %d): COMMAND was killed "
		    "and the lock released", esc(j->name), child_exit(status));
		return EXIT_LOST;
	}
	if (done->status == -1)
		return EXIT_SOFTWARE;
	if (WIFSIGNALED(done->status))
		event(&j->o, "COMMAND ended on signal %d (status %d)",
		    WTERMSIG(done->status), child_exit(done->status));
	else
		event(&j->o, "COMMAND exited %d", child_exit(done->status));
	if (done->lost != LOST_NO && j->on_lost != ON_LOST_IGNORE) {
		rl_duration_format(done->lost_after_ms, ago, sizeof(ago));
		msg("lost the lock on %s while COMMAND ran (%s; lease last "
		    "confirmed %s before the loss): %s", esc(j->name),
		    lost_text(done), ago, lost_fate(done->status,
		    done->lost_signal, done->killed_at_deadline, fate,
		    sizeof(fate)));
		return EXIT_LOST;
	}
	if (done->gone != GONE_NO) {
		msg("lost the lock on %s before its release (COMMAND exited "
		    "%d): %s; another holder may have run beside COMMAND",
		    esc(j->name), child_exit(done->status),
		    done->gone == GONE_REMOVED && done->removed_by[0] != '\0' ?
		    done->removed_by : gone_why(done->gone));
		if (j->on_lost != ON_LOST_IGNORE)
			return EXIT_LOST;
	}
	if (done->max_held) {
		msg("COMMAND held %s for --max-hold %s: it was stopped%s",
		    esc(j->name), esc(j->max_hold_arg), kept_text(done->released,
		    done->held_until_ms, fate, sizeof(fate)));
		return EXIT_MAX_HOLD;
	}
	return child_exit(done->status);
}

/* Acquire J's NAME, run COMMAND under the watchdog, release: the exit
 * status, and into *M what the metrics say of it. */
static int
run_job(struct globals *g, struct job *j, int sig_fd, struct metrics_run *m)
{
	struct report done = { 0 };
	pid_t wd, child = 0;
	int status, report_fd, reported, which = 0;
	int64_t t0 = rl_now_ms();

	if ((wd = spawn_watchdog(g, j, sig_fd, &report_fd)) < 0)
		return EXIT_SOFTWARE;
	reported = relay(sig_fd, report_fd, wd, &child, &which, &done);
	if (which >= 0 && (size_t)which < j->pool.n)
		j->name = j->pool.name[which];
	status = finish(g, j, wd, child, reported, &done);
	m->wait_ms = child > 0 || (reported && done.kind == REPORT_EXIT) ?
	    done.wait_ms : rl_now_ms() - t0;
	m->busy = reported && done.kind == REPORT_EXIT && done.busy;
	m->hold_ms = child > 0 ? rl_now_ms() - (t0 + done.wait_ms) : 0;
	m->ran = child > 0;
	m->lost = reported && done.kind == REPORT_DONE &&
	    (done.lost != LOST_NO || done.gone != GONE_NO);
	return status;
}

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
run(struct globals *g, void *job, const struct parse *p)
{
	struct job *j = job;
	struct metrics_run m = { 0 };
	int status, sig_fd;

	if (check(g, j, p, &status) == STEP_EXIT)
		return status;
	if ((sig_fd = sig_catch(relayed_signals, 6)) < 0) {
		msg("cannot set up signals: %s", strerror(errno));
		return EXIT_SOFTWARE;
	}
	m.start_ms = wall_ms();
	status = run_job(g, j, sig_fd, &m);
	if (j->metrics_file != NULL) {
		/* Once the run is over: its status stays what it is. */
		m.end_ms = wall_ms();
		m.status = status;
		metrics_record(j->metrics_file, j->name, &m);
	}
	return status;
}
