/* lock.c: acquire NAME, print the owner token, and exit holding it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "cmd.h"

static void init(void *);
static enum step option(void *, const struct parse *, int, const char *,
    int *);
static int run(struct globals *, void *, const struct parse *);


/* The calling process's command line, for status ("deploy.sh"), its
 * secrets masked. */
static void
parent_cmd(char *buf, size_t len)
{
	char path[64], raw[4096], *words[256];
	ssize_t n, i;
	size_t nw = 0;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)getppid());
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, raw, sizeof(raw) - 1);
	close(fd);
	if (n <= 0)
		return;
	raw[n] = '\0';
	while (n > 0 && raw[n - 1] == '\0')
		n--;
	/* The words, NUL-separated; those past 255 are left out. */
	for (i = 0; i < n && nw + 1 < sizeof(words) / sizeof(words[0]); i++)
		if (i == 0 || raw[i - 1] == '\0')
			words[nw++] = raw + i;
	words[nw] = NULL;
	cmdline_masked(words, buf, len);
}

/* Fork the detached watchdog of --keepalive: it renews until the lock is
 * gone (unlock), the watched process exits, or it is signalled, and then
 * releases. It owns the connection from here on. */
static pid_t
start_keepalive(rl_client *rc, const char *name, struct lockopts *o,
    const struct rl_attempt *a, int pid_fd)
{
	struct watch w;
	sigset_t old;
	pid_t pid;
	int fd;

	fflush(stdout);
	fflush(stderr);
	/* A signal that reaches the child before its own handlers are in
	 * place waits for them, instead of going to the parent's pipe. */
	sig_block_all(&old);
	if ((pid = fork()) != 0) {
		sig_unblock(&old);
		return pid;
	}
	setsid();
	/* Let go of the caller's terminal and pipes: tok=$(redlock lock
	 * --keepalive x) must not wait for this process. */
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	/* A child of the process that acquired: its own TLS connections,
	 * made at the first renewal. */
	rl_client_forked(rc);
	memset(&w, 0, sizeof(w));
	w.rc = rc;
	w.name = name;
	w.owner = o->owner;
	w.lo = o;
	w.sent_ms = a->sent_ms;
	w.on_lost = ON_LOST_TERM;
	w.child = 0;
	w.parent_fd = -1;
	w.pid_fd = pid_fd;
	w.sig_fd = sig_catch(relayed_signals, 6);
	sig_unblock(&old);
	watch_run(&w);
	rl_client_free(rc);
	exit(0);
}

/* Give back the hold just taken, on the caller's connection. */
static void
give_back(rl_client *rc, const char *name, const struct lockopts *o)
{
	struct rl_attempt a;
	enum rl_release rel;
	int64_t holds;

	struct rl_lock l = lockopts_lock(o, name);

	if (rl_release_unused(rc, &l, &rel, &holds, &a) != RL_OK)
		msg("could not release %s: %s; it is freed when its lease "
		    "runs out", esc(name_shown(name)), esc(rl_errstr(rc)));
}

/* NAME is held: print the token, then (PID_FD >= 0) start the keepalive
 * watchdog. A token nobody got, or a lease nobody would renew, is given
 * back at once, before any watchdog exists. */
static int
hand_over(rl_client *rc, const char *name, struct lockopts *o,
    const struct rl_attempt *a, int pid_fd)
{
	int status;

	printf("%s\n", o->owner);
	/* --any: which name of the pool, on a line of its own. */
	if (o->any)
		printf("%s\n", name_shown(name));
	if ((status = flush_stdout()) != 0) {
		give_back(rc, name, o);
		return status;
	}
	if (pid_fd >= 0 && start_keepalive(rc, name, o, a, pid_fd) < 0) {
		msg("cannot start the keepalive watchdog: fork: %s; %s was "
		    "released", strerror(errno), esc(name_shown(name)));
		give_back(rc, name, o);
		return EXIT_SOFTWARE;
	}
	return 0;
}

/* What one lock is asked to do. */
struct job {
	struct lockopts o;
	const char *name;	/* the name held: one of pool's */
	struct pool_names pool;	/* NAME, or --any's NAME... */
	int keepalive;
	pid_t watched;		/* --pid, or 0 */
	int64_t extend_ms;	/* --extend, or -1 */
	int other;		/* the first option given that --extend does
				 * not take, or 0 */
};

const struct cmd cmd_lock = {
	.name = "lock", .usage = "lock [OPTIONS] NAME",
	.help = "Acquire NAME and print the owner token; the lease lasts "
	"--ttl.\nGive the token to unlock (--owner, or REDLOCK_OWNER), or to "
	"a\nlater job's lock --owner TOKEN --extend DURATION NAME.\n\n",
	.opts = lock_opts, .bit = CMD_LOCK,
	.brief = "acquire NAME and print the owner token",
	.examples =
	"  tok=$(redlock lock -t 10m --keepalive deploy) && ./step1 && ./step2\n"
	"  redlock unlock --owner \"$tok\" deploy\n",
	.exits =
	"0 held (the token printed), 1 --extend: not held, 64 usage,\n"
	"  65 NAME is not a lock, 69 server unreachable or refused, 75 busy\n"
	"  (-E), 80 superseded, 128+N a signal\n",
	.job_size = sizeof(struct job), .init = init, .option = option,
	.run = run
};

/* The shortest --extend: its renewal's reply must come within a third
 * of it, as the lease keeper's (the --ttl floor of --keepalive). */
#define EXTEND_MIN_MS 30

/* What --extend takes besides: the token, and how the call is sent. */
static int
extend_takes(int ch)
{
	return ch == OPT_EXTEND || ch == OPT_OWNER || ch == OPT_REPLICAS ||
	    ch == OPT_PUBSUB || ch == 'q' || ch == 'v';
}

/* Option CH as its long name (else its letter) into BUF. */
static const char *
option_word(int ch, char *buf, size_t len)
{
	const struct opt *t;

	for (t = lock_opts; t->name != NULL || t->letter != 0; t++)
		if (t->val == ch || (t->val == 0 && t->letter == ch))
			break;
	if (t->name != NULL)
		snprintf(buf, len, "--%s", t->name);
	else
		snprintf(buf, len, "-%c", ch);
	return buf;
}

/* --extend DURATION into J. */
static int
parse_extend(const char *arg, struct job *j)
{
	if (parse_duration(&cmd_lock, "--extend", arg, &j->extend_ms) < 0)
		return EXIT_USAGE;
	if (j->extend_ms < EXTEND_MIN_MS)
		return usage_error(&cmd_lock, "--extend must be at least %dms: "
		    "the renewal's reply must come within a third of it",
		    EXTEND_MIN_MS);
	return 0;
}

/* --extend's preconditions, once every option is parsed: 0, or the
 * status (said). Nothing is sent before. */
static int
check_extend(struct job *j)
{
	char w[32];

	if (j->other != 0)
		return usage_error(&cmd_lock, "%s does not go with --extend, "
		    "which takes no hold and changes only the lease of one "
		    "that exists, whatever its options; drop %s",
		    option_word(j->other, w, sizeof(w)), w);
	if (j->o.owner == NULL) {
		msg("lock --extend needs --owner TOKEN, the token lock printed "
		    "when it took %s: without it, no hold is known to extend; "
		    "nothing was changed", esc(j->name));
		return EXIT_NOT_HELD;
	}
	if (!j->o.pubsub_given && pubsub_default(&cmd_lock,
	    &j->o.pubsub) < 0)
		return EXIT_USAGE;
	return 0;
}

static int
parse_pid(const char *arg, pid_t *pid)
{
	long v;

	if (parse_number(arg, 1, INT_MAX, &v) < 0)
		return usage_error(&cmd_lock, "--pid: '%s' is not a process id",
		    esc(arg));
	*pid = (pid_t)v;
	return 0;
}

static void
init(void *job)
{
	struct job *j = job;

	lockopts_init(&j->o);
	j->keepalive = 0;
	j->watched = 0;
	j->extend_ms = -1;
	j->other = 0;
}

static enum step
option(void *job, const struct parse *p, int ch, const char *arg,
    int *status)
{
	struct job *j = job;
	int r;

	(void)p;
	if (!extend_takes(ch) && j->other == 0)
		j->other = ch;
	switch (ch) {
	case OPT_EXTEND:
		return (r = parse_extend(arg, j)) != 0 ? step_exit(status, r) :
		    STEP_GO_ON;
	case OPT_MAX_HOLD:
		return step_exit(status, usage_error(&cmd_lock, "--max-hold "
		    "is for exec: lock runs no COMMAND to stop when it is "
		    "reached"));
	case OPT_METRICS_FILE:
		return step_exit(status, usage_error(&cmd_lock, "--metrics-file "
		    "is for exec: lock ends before the hold does, with no run "
		    "to record"));
	case OPT_KEEPALIVE:
		j->keepalive = 1;
		return STEP_GO_ON;
	case OPT_PID:
		return (r = parse_pid(arg, &j->watched)) != 0 ?
		    step_exit(status, r) : STEP_GO_ON;
	}
	return lockopts_parse(&cmd_lock, &j->o, ch, arg, status);
}

/* The operands, and the options together: STEP_GO_ON, or STEP_EXIT
 * with *STATUS. */
static enum step
check(struct globals *g, struct job *j, const struct parse *p, int *status)
{
	int r;

	if ((r = pool_parse(&cmd_lock, j->o.any, p->argv + 1, p->nops,
	    &j->pool)) != 0)
		return step_exit(status, r);
	j->name = j->pool.name[0];
	if (j->extend_ms >= 0)
		return (r = check_extend(j)) != 0 ? step_exit(status, r) :
		    STEP_GO_ON;
	if (j->watched != 0 && !j->keepalive)
		return step_exit(status, usage_error(&cmd_lock,
		    "--pid goes with --keepalive"));
	if (lockopts_check(&cmd_lock, &j->o, g,
	    j->keepalive ? "--keepalive" : NULL) < 0)
		return step_exit(status, EXIT_USAGE);
	/* Nobody renews the lease: it would end before the minimum hold. */
	if (!j->keepalive && j->o.min_hold_ms > j->o.ttl_ms)
		return step_exit(status, usage_error(&cmd_lock, "--min-hold "
		    "is longer than the lease (--ttl), which nobody renews "
		    "without --keepalive: give --ttl of at least the "
		    "--min-hold, or --keepalive"));
	if (lockopts_finish_pool(&j->pool, &j->o) < 0)
		return step_exit(status, EXIT_USAGE);
	j->name = j->pool.name[0];
	return STEP_GO_ON;
}

/* --keepalive: a pidfd on the process to outlive (--pid, else the
 * caller) into *PID_FD: STEP_GO_ON, or STEP_EXIT with *STATUS. */
static enum step
watch_pid(struct job *j, int *pid_fd, int *status)
{
	if (j->watched == 0)
		j->watched = getppid();
	/* Held open from now on, the pidfd names this very process even if
	 * its number is reused later. */
	if ((*pid_fd = (int)pidfd_open(j->watched, 0)) < 0) {
		if (errno == ESRCH)
			*status = usage_error(&cmd_lock, "--pid: no process "
			    "%ld", (long)j->watched);
		else {
			msg("cannot watch process %ld: pidfd_open: %s (Linux "
			    "5.3 or later is needed)", (long)j->watched,
			    strerror(errno));
			*status = EXIT_SOFTWARE;
		}
		return STEP_EXIT;
	}
	fcntl(*pid_fd, F_SETFD, FD_CLOEXEC);
	return STEP_GO_ON;
}

/* Acquire J's NAME and hand it over (PID_FD >= 0: to the keepalive
 * watchdog); PID_FD is closed on every path. */
static int
take(struct globals *g, struct job *j, int pid_fd)
{
	struct pool_take t;
	struct rl_meta meta;
	char cmdline[CMDLINE_MAX];
	int status, sig_fd, s;
	enum step step;

	parent_cmd(cmdline, sizeof(cmdline));
	meta_self(&meta, j->keepalive);
	meta.pid = (long)(j->keepalive ? j->watched : caller_pid());
	meta.cmd = j->o.label != NULL ? j->o.label : cmdline;
	if ((sig_fd = sig_catch(relayed_signals, 6)) < 0) {
		msg("cannot set up signals: %s", strerror(errno));
		if (pid_fd >= 0)
			close(pid_fd);
		return EXIT_SOFTWARE;
	}
	/* A signal ends a wait cleanly: a fair waiter leaves the queue. */
	if (pool_open(g, &j->o, &j->pool, sig_fd, &t, &status) < 0) {
		if (pid_fd >= 0)
			close(pid_fd);
		return status;
	}
	step = lock_acquire_pool(&t, &j->pool, &j->o, &meta, &status);
	pool_close(&t, j->pool.n);
	j->name = j->pool.name[t.which];
	if (step == STEP_INTERRUPTED) {
		s = sig_next(sig_fd);
		rl_client_free(t.rc[t.which]);
		if (pid_fd >= 0)
			close(pid_fd);
		return wait_interrupted(&j->o, j->pool.n > 1 ? j->pool.label :
		    j->name, s);
	}
	if (step == STEP_GO_ON)
		status = hand_over(t.rc[t.which], j->name, &j->o,
		    &t.a[t.which], pid_fd);
	if (pid_fd >= 0)
		close(pid_fd);
	rl_client_free(t.rc[t.which]);
	return status;
}

static int
run(struct globals *g, void *job, const struct parse *p)
{
	struct job *j = job;
	int status, pid_fd = -1;

	if (check(g, j, p, &status) == STEP_EXIT)
		return status;
	if (j->extend_ms >= 0)
		return lock_extend(g, j->name, &j->o, j->extend_ms);
	if (g->stdout_closed) {
		/* Not even acquired: NAME would stay held by a lost token. */
		msg("standard output is closed: nowhere to print the owner "
		    "token; run lock with it open, as in tok=$(redlock lock "
		    "NAME)");
		return EXIT_SOFTWARE;
	}
	if (j->keepalive && watch_pid(j, &pid_fd, &status) == STEP_EXIT)
		return status;
	return take(g, j, pid_fd);
}
