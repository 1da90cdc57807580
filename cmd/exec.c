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

static int run(struct globals *, int, char **);

const struct cmd cmd_exec = {
	"exec", "exec [OPTIONS] NAME -- COMMAND [ARG...]",
	"Acquire NAME, run COMMAND (no shell), renew the lease every ttl/3\n"
	"until it exits, release, and exit with its status.\n\n",
	run, lock_opts, CMD_EXEC,
	"run COMMAND holding NAME, renewing its lease"
};

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

/* COMMAND's start, made ready before the lock is held so that little
 * but one vfork and one exec comes between acquisition and COMMAND. */
struct spawn {
	char **argv;
	char **envp;		/* the environment, with REDLOCK_* set */
	char *set[16];		/* the "K=V" strings of envp we made */
	size_t nset;
	int tty;		/* COMMAND gets the terminal */
	pid_t watchdog;		/* its parent */
	int err_fd;		/* the child writes exec's errno here */
};

/* K=V into S's own strings; -1 when out of memory. */
static int
spawn_put(struct spawn *s, const char *k, const char *v)
{
	char *kv;

	if (s->nset >= sizeof(s->set) / sizeof(s->set[0]) ||
	    asprintf(&kv, "%s=%s", k, v) < 0)
		return -1;
	s->set[s->nset++] = kv;
	return 0;
}

/* Whether environment string E sets a variable S sets. */
static int
spawn_overrides(const struct spawn *s, const char *e)
{
	size_t i, n;

	for (i = 0; i < s->nset; i++) {
		n = strcspn(s->set[i], "=") + 1;
		if (strncmp(s->set[i], e, n) == 0)
			return 1;
	}
	return 0;
}

static void
spawn_free(struct spawn *s)
{
	size_t i;

	for (i = 0; i < s->nset; i++)
		free(s->set[i]);
	free(s->envp);
	s->nset = 0;
	s->envp = NULL;
}

/* COMMAND's environment, for NAME held by O with FENCE: 0, or -1 (out
 * of memory). The TLS files given as options go as absolute paths,
 * since COMMAND may change directory; REDLOCK_HELD makes a nested exec
 * of NAME re-enter rather than wait for this one. */
static int
spawn_env(struct spawn *s, const struct globals *g, const char *name,
    const struct lockopts *o, int64_t fence)
{
	const char *tk[] = { "REDLOCK_CACERT", "REDLOCK_CERT", "REDLOCK_KEY" };
	const char *tv[] = { g->tls.cacert, g->tls.cert, g->tls.key };
	char num[32], *held, *abs;
	size_t i, n, k;
	int bad = 0;

	s->nset = 0;
	bad |= spawn_put(s, "REDLOCK_NAME", name_shown(name));
	bad |= spawn_put(s, "REDLOCK_OWNER", o->owner);
	if ((held = held_with(name, o->owner, o->held_kind)) == NULL)
		bad = -1;
	else
		bad |= spawn_put(s, "REDLOCK_HELD", held);
	free(held);
	snprintf(num, sizeof(num), "%lld", (long long)fence);
	bad |= spawn_put(s, "REDLOCK_FENCE", num);
	snprintf(num, sizeof(num), "%lld", (long long)o->ttl_ms);
	bad |= spawn_put(s, "REDLOCK_TTL_MS", num);
	bad |= spawn_put(s, "REDLOCK_URL", g->url_text);
	/* Nested calls make the same keys of a NAME (REDLOCK_HELD's are
	 * the keys). */
	if (key_prefix[0] != '\0')
		bad |= spawn_put(s, "REDLOCK_PREFIX", key_prefix);
	for (i = 0; i < sizeof(tk) / sizeof(tk[0]); i++) {
		if (tv[i] == NULL)
			continue;
		abs = realpath(tv[i], NULL);
		bad |= spawn_put(s, tk[i], abs != NULL ? abs : tv[i]);
		free(abs);
	}
	/* A nested call wakes and is woken as this one. */
	if (o->pubsub_given)
		bad |= spawn_put(s, PUBSUB_VAR, pubsub_name(o->pubsub));
	for (n = 0; environ[n] != NULL; n++)
		;
	if (bad || (s->envp = calloc(n + s->nset + 1,
	    sizeof(*s->envp))) == NULL) {
		spawn_free(s);
		return -1;
	}
	for (i = 0, k = 0; i < n; i++)
		if (!spawn_overrides(s, environ[i]))
			s->envp[k++] = environ[i];
	for (i = 0; i < s->nset; i++)
		s->envp[k++] = s->set[i];
	s->envp[k] = NULL;
	return 0;
}

/* In the child of vfork: become COMMAND. It shares the watchdog's memory
 * until it execs, so it only makes system calls; exec's errno goes back
 * on S->err_fd. */
static void __attribute__((noreturn))
spawn_child(const struct spawn *s)
{
	int e;

	/* If the watchdog dies too, the kernel kills COMMAND. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != s->watchdog)
		_exit(EXIT_LOST);
	setpgid(0, 0);
	if (s->tty) {
		/* COMMAND gets the terminal, as a shell would give it. */
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(STDIN_FILENO, getpid());
	}
	sig_restore();
	execvpe(s->argv[0], s->argv, s->envp);
	e = errno;
	if (write(s->err_fd, &e, sizeof(e)) < 0) {
		/* The parent then sees exec fail only in the status. */
	}
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

/* Why exec of COMMAND failed (errno E), in one line. */
static void
spawn_failed(char **cmd, int e)
{
	/* "./deploy.sh 1 0" quoted as one word: meant for a shell. */
	if (e == ENOENT && cmd[1] == NULL && strchr(cmd[0], ' ') != NULL)
		msg("cannot run %s: %s; to have /bin/sh split it into words, "
		    "give it as -c '%s' instead of after --", esc(cmd[0]),
		    strerror(e), esc(cmd[0]));
	else
		msg("cannot run %s: %s", esc(cmd[0]), strerror(e));
}

/* Start COMMAND as S says, in a process group of its own: its pid, or -1
 * (errno set). All signals are blocked in the caller. */
static pid_t
spawn(struct spawn *s)
{
	int ep[2], e = 0;
	pid_t pid;

	if (pipe2(ep, O_CLOEXEC) < 0)
		return -1;
	s->err_fd = ep[1];
	pid = vfork();
	if (pid == 0)
		spawn_child(s);
	e = errno;
	close(ep[1]);
	if (pid < 0) {
		close(ep[0]);
		errno = e;
		return -1;
	}
	setpgid(pid, pid);
	/* EOF once the child has exec'd (the pipe closes on it); errno
	 * when it could not. */
	e = 0;
	while (read(ep[0], &e, sizeof(e)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (e != 0)
		spawn_failed(s->argv, e);
	return pid;
}

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

/* The watchdog, once NAME is held on RC: start COMMAND, keep the lease,
 * release, report. */
static void __attribute__((noreturn))
watchdog(rl_client *rc, const struct globals *g, struct job *j,
    const struct rl_attempt *a, int which, int64_t wait_ms, int parent_fd,
    int report_fd)
{
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
	r.wait_ms = wait_ms;
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

/* Index of the first word of ARGV (ARGC words) that is neither an
 * option nor an option's value, as written: NAME; ARGC when none is. */
static int
first_operand(int argc, char **argv)
{
	struct getopts go;
	int ch, at = argc;

	opts_getopt(lock_opts, CMD_EXEC, "-", &go);
	optind = 0;
	while ((ch = getopt_long(argc, argv, go.shortopts, go.longopts,
	    NULL)) != -1)
		if (ch == 1) {
			at = optind - 1;
			break;
		}
	optind = 0;
	return at;
}

/* Whether getopt's '?' was for an option exec does not have, rather
 * than for one without its value. */
static int
unknown_option(char **argv)
{
	const char *word = argv[optind - 1];
	const struct getopts *go = cmd_getopt(&cmd_exec);
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
 * An option getopt stopped at that exec does not take (unknown, or
 * flock's -F, --unlock, --fcntl), CH as it returned it. Without "--",
 * one after NAME (NAME_AT below optind: getopt leaves the words it
 * passed over just before the one it is in) is COMMAND's: redlock exec
 * -n backup pg_dump -Fc db. Said so; EXIT_USAGE.
 */
static int
refuse(int ch, int dashdash, int name_at, char **argv)
{
	const char *word = argv[optind - 1];
	const struct getopts *go = cmd_getopt(&cmd_exec);
	char opt[8];
	int status;

	if (ch == '?' && !unknown_option(argv))
		return bad_option(&cmd_exec, argv, go->shortopts,
		    go->longopts);
	snprintf(opt, sizeof(opt), "-%c", ch == 'F' ? 'F' : optopt);
	if (!dashdash && name_at < optind)
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

/* Exec's own options, CH with ARG, into J, and the lock options:
 * STEP_GO_ON once taken, else STEP_EXIT with *STATUS. */
static enum step
exec_option(struct job *j, int ch, const char *arg, int *status)
{
	switch (ch) {
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

/* NAME and COMMAND, after the options, into J (DD: where "--" is, or
 * ARGC): STEP_GO_ON, or STEP_EXIT with *STATUS. */
static enum step
operands(struct job *j, int argc, char **argv, int dd, int *status)
{
	const char *bad = NULL;
	int r;

	if (optind >= dd)
		bad = j->o.any ? "missing NAME... after --any" :
		    "missing NAME";
	else if (!j->o.any && optind + 1 < dd && j->shell != NULL)
		return step_exit(status, usage_error(&cmd_exec, "one NAME, "
		    "then -c STRING (or -- and COMMAND); got '%s' too",
		    esc(argv[optind + 1])));
	else if (!j->o.any && optind + 1 < dd)
		return step_exit(status, usage_error(&cmd_exec, "one NAME, "
		    "then -- and COMMAND; got '%s' before --",
		    esc(argv[optind + 1])));
	else if ((j->name = argv[optind])[0] == '\0')
		bad = "NAME is empty";
	else if (j->shell != NULL && dd < argc)
		bad = "-c STRING and -- COMMAND do not go together: give "
		    "COMMAND one way";
	else if (j->shell == NULL && dd >= argc)
		bad = "missing -- before COMMAND";
	else if (j->shell == NULL && dd + 1 >= argc)
		bad = "missing COMMAND after --";
	if (bad != NULL)
		return step_exit(status, usage_error(&cmd_exec, "%s", bad));
	if ((r = pool_parse(&cmd_exec, j->o.any, argv + optind, dd - optind,
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
		j->cmd = argv + dd + 1;
	return STEP_GO_ON;
}

/* The command line into J: STEP_GO_ON, or STEP_EXIT with *STATUS. */
static enum step
parse(struct globals *g, int argc, char **argv, struct job *j, int *status)
{
	const struct getopts *go = cmd_getopt(&cmd_exec);
	int ch, dd, name_at;

	lockopts_init(&j->o);
	j->on_lost = ON_LOST_TERM;
	j->kill_after = DEFAULT_KILL_AFTER_MS;
	j->max_hold = 0;
	j->metrics_file = NULL;
	j->shell = NULL;
	/* Our words end at "--"; COMMAND's begin after it. */
	for (dd = 1; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
		;
	name_at = first_operand(dd, argv);
	while ((ch = getopt_long(dd, argv, go->shortopts, go->longopts,
	    NULL)) != -1) {
		if (ch == 'h')
			return step_exit(status, print_help(&cmd_exec));
		if (ch == '?' || ch == 'F' || ch == OPT_FLOCK_UNLOCK ||
		    ch == OPT_FLOCK_FCNTL)
			return step_exit(status,
			    refuse(ch, dd < argc, name_at, argv));
		if (exec_option(j, ch, optarg, status) == STEP_EXIT)
			return STEP_EXIT;
	}
	if (operands(j, argc, argv, dd, status) == STEP_EXIT)
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

/* Acquire J's NAME, or one of its pool's, on a new client *RC (j->name
 * set to the name held): STEP_GO_ON when held, else STEP_EXIT with
 * *STATUS (*RC freed). */
static enum step
acquire(struct globals *g, struct job *j, int sig_fd, rl_client **rc,
    struct rl_attempt *a, size_t *held, int *status)
{
	struct rl_meta meta;
	struct rl_attempt as[RL_ANY_MAX];
	rl_client *rcs[RL_ANY_MAX];
	char cmdline[CMDLINE_MAX];
	enum step step;
	size_t which;
	int s;

	if (pool_open(g, &j->o, &j->pool, sig_fd, rcs, status) < 0)
		return STEP_EXIT;
	/* While HELLO is on its way. */
	cmdline_masked(j->cmd, cmdline, sizeof(cmdline));
	meta_self(&meta, 1);
	meta.pid = (long)j->relay;
	meta.cmd = j->o.label != NULL ? j->o.label : cmdline;
	step = lock_acquire_pool(rcs, &j->pool, &j->o, &meta, as, &which,
	    status);
	/* The name held, or the one the messages are about. */
	pool_close(rcs, j->pool.n, which);
	*rc = rcs[which];
	*a = as[which];
	j->name = j->pool.name[which];
	*held = which;
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
	struct rl_attempt a;
	rl_client *rc;
	int64_t t0 = rl_now_ms();
	enum step step;
	size_t which;
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
	step = acquire(g, j, sig_fd, &rc, &a, &which, &status);
	r.wait_ms = rl_now_ms() - t0;
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
		give_back(rc, j);
		rl_client_free(rc);
		exit(0);
	}
	/* Waiting is over: the pipe that cut it short goes (its number
	 * may be the watchdog's SIGCHLD pipe's next). */
	rl_set_interrupt_fd(rc, -1);
	close(sig_fd);
	watchdog(rc, g, j, &a, (int)which, r.wait_ms, parent_fd, report_fd);
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
		close(sig_fd);
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

static void
signal_group(pid_t child, int s)
{
	if (kill(-child, s) < 0 && errno == ESRCH)
		kill(child, s);
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
	if (done->lost == LOST_GONE && done->lost_how == GONE_REMOVED &&
	    done->removed_by[0] != '\0')
		return done->removed_by;
	if (done->lost == LOST_GONE)
		return gone_why(done->lost_how);
	if (done->lost == LOST_LATE && done->slow)
		return "the server answered the acquisition too late to renew "
		    "the lease in time: it was busy, with DEBUG SLEEP, a slow "
		    "script or a fork for persistence";
	if (done->lost == LOST_LATE)
		return "the watchdog ran past its local deadline without "
		    "renewing it: it was stopped or starved of CPU";
	if (done->unacked)
		return "too few replicas acknowledged its renewals "
		    "(--replicas)";
	return "the server stopped answering";
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
run(struct globals *g, int argc, char **argv)
{
	struct job j;
	struct metrics_run m = { 0 };
	int status, sig_fd;

	if (parse(g, argc, argv, &j, &status) == STEP_EXIT)
		return status;
	if ((sig_fd = sig_catch(relayed_signals, 6)) < 0) {
		msg("cannot set up signals: %s", strerror(errno));
		return EXIT_SOFTWARE;
	}
	m.start_ms = wall_ms();
	status = run_job(g, &j, sig_fd, &m);
	if (j.metrics_file != NULL) {
		/* Once the run is over: its status stays what it is. */
		m.end_ms = wall_ms();
		m.status = status;
		metrics_record(j.metrics_file, j.name, &m);
	}
	return status;
}
