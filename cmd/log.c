/* log.c: the history of a lock, oldest first, and new events as they come. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"

static void init(void *);
static enum step option(void *, const struct parse *, int, const char *,
    int *);
static int run(struct globals *, void *, const struct parse *);

static const struct opt log_opts[] = {
	{ .name = "json", .val = 'J', .cmds = CMD_LOG,
	  .help = "one JSON object per line" },
	{ .name = "lines", .letter = 'n', .arg = ARG_N, .metavar = "N",
	  .cmds = CMD_LOG, .help = "the last N events (default: 20)" },
	{ .name = "follow", .letter = 'f', .cmds = CMD_LOG,
	  .help = "then print new events as they come, until\n"
	  "interrupted" },
	{ .name = "help", .letter = 'h', .cmds = CMD_LOG,
	  .help = "show this help" },
	OPT_END
};

#define DEFAULT_LINES 20
#define FOLLOW_BLOCK_MS 1000

struct view {
	const char *name;
	int json, follow;
	long n;
};

const struct cmd cmd_log = {
	.name = "log", .usage = "log [--json] [-n N] [--follow] NAME",
	.help = "Show NAME's history, oldest first, one event a line: "
	"acquisitions,\nreleases (hold time, COMMAND's exit status), lost "
	"leases, forced\nremovals, expiries found by the next acquisition, "
	"and waiters that\ngave up.\n\n",
	.opts = log_opts, .bit = CMD_LOG,
	.brief = "NAME's history: holds, releases, losses",
	.examples =
	"  redlock log -n 50 backup\n"
	"  redlock log --follow --json backup\n",
	.exits =
	"0, 64 usage, 65 NAME is not a lock, 69 server unreachable or\n"
	"  refused\n",
	.operands = OPERANDS_NAME, .job_size = sizeof(struct view),
	.init = init, .option = option,
	.run = run
};

/* --follow: the last acquisition printed, while it has not ended, for
 * the events of the next reads (its release's host, its expiry). */
static struct {
	int open;
	char owner[256], host[256], user[128], cmd[1024], fence[32];
	char kind[16];
	long pid;
	int64_t time_ms;
} held;

static void
remember(const struct rl_event *ev)
{
	if (strcmp(ev->event, "acquired") == 0) {
		held.open = 1;
		snprintf(held.owner, sizeof(held.owner), "%s", ev->owner);
		snprintf(held.host, sizeof(held.host), "%s", ev->host);
		snprintf(held.user, sizeof(held.user), "%s", ev->user);
		snprintf(held.cmd, sizeof(held.cmd), "%s", ev->cmd);
		snprintf(held.fence, sizeof(held.fence), "%s", ev->fence);
		snprintf(held.kind, sizeof(held.kind), "%s", ev->kind);
		held.pid = ev->pid;
		held.time_ms = ev->time_ms;
	} else if (strcmp(ev->owner, held.owner) == 0)
		held.open = 0;
}

/* " HOST pid PID (CMD)", or " owner OWNER" when no host was recorded. */
static void
print_who(const struct rl_event *ev)
{
	if (ev->host[0] == '\0') {
		printf(" owner %s", esc(ev->owner));
		return;
	}
	printf(" %s", esc(ev->host));
	if (ev->pid > 0)
		printf(" pid %ld", ev->pid);
	if (ev->cmd[0] != '\0')
		printf(" (%s)", esc(ev->cmd));
}

/* ", held D" and ", exit N" where known. */
static void
print_end(const struct rl_event *ev)
{
	char d[32];

	if (ev->hold_ms >= 0) {
		rl_duration_format(ev->hold_ms, d, sizeof(d));
		printf(", held %s", d);
	}
	if (ev->exit_status >= 0)
		printf(", exit %d", ev->exit_status);
	if (ev->until_ms >= 0) {
		format_time(ev->until_ms, d, sizeof(d));
		printf(", kept until %s (--min-hold)", d);
	}
}

/* ", fence N"; a stored token that is no decimal number (not one of
 * redlock's) escaped and said to be none; nothing when not recorded. */
static void
print_fence(const char *fence)
{
	int64_t v;

	if (rl_decimal(fence, &v) == 0)
		printf(", fence %lld", (long long)v);
	else if (fence[0] != '\0')
		printf(", fence %s (not a fencing token)", esc(fence));
}

static void
print_text(const struct rl_event *ev)
{
	char when[40], d[32];

	format_time(ev->time_ms, when, sizeof(when));
	printf("%s %s", when, esc(ev->event));
	if (ev->kind[0] != '\0')
		printf(" (%s)", esc(ev->kind));
	if (strcmp(ev->event, "acquired") == 0) {
		printf(" by");
		print_who(ev);
		rl_duration_format(ev->wait_ms > 0 ? ev->wait_ms : 0, d,
		    sizeof(d));
		printf(" after %s", d);
	} else if (strcmp(ev->event, "forced") == 0) {
		printf(" by unlock --force from %s pid %ld (%s): removed",
		    esc(ev->by_host), ev->by_pid, esc(ev->by_user));
		print_who(ev);
		print_end(ev);
	} else if (strcmp(ev->event, "gave_up") == 0) {
		printf(":");
		print_who(ev);
		rl_duration_format(ev->wait_ms, d, sizeof(d));
		printf(" stopped waiting after %s", d);
	} else if (strcmp(ev->event, "superseded") == 0) {
		printf(":");
		print_who(ev);
		rl_duration_format(ev->wait_ms > 0 ? ev->wait_ms : 0, d,
		    sizeof(d));
		printf(" stopped waiting after %s: superseded by %s pid %ld "
		    "(%s)", d, esc(ev->by_host), ev->by_pid, esc(ev->by_cmd));
	} else if (strcmp(ev->event, "busy") == 0) {
		printf(":");
		print_who(ev);
		printf(" did not wait (held by %s)", ev->holder[0] != '\0' ?
		    esc(ev->holder) : "a fair waiter ahead");
	} else if (strcmp(ev->event, "undone") == 0) {
		printf(" by");
		print_who(ev);
		printf(": an attempt given back unused (it won too few "
		    "masters, or was not needed)");
	} else if (strcmp(ev->event, "expired") == 0) {
		printf(": the lease of");
		print_who(ev);
		printf(" ran out before it was released");
	} else {
		printf(" by");
		print_who(ev);
		print_end(ev);
	}
	print_fence(ev->fence);
	putchar('\n');
}

static void
print_json(const struct rl_event *ev)
{
	char when[40];

	format_time(ev->time_ms, when, sizeof(when));
	fputs("{\"id\":", stdout);
	json_str(stdout, ev->id);
	printf(",\"time\":\"%s\"", when);
	json_int(stdout, "time_ms", ev->time_ms, 1);
	fputc(',', stdout);
	json_bytes(stdout, "event", ev->event);
	fputs(",\"kind\":", stdout);
	if (ev->kind[0] != '\0')
		json_str(stdout, ev->kind);
	else
		fputs("null", stdout);
	fputc(',', stdout);
	json_who(stdout, ev->owner, ev->host, ev->pid, ev->user, ev->cmd);
	json_decimal(stdout, "fence", ev->fence);
	json_int(stdout, "wait_ms", ev->wait_ms, ev->wait_ms >= 0);
	json_int(stdout, "hold_ms", ev->hold_ms, ev->hold_ms >= 0);
	json_int(stdout, "exit", ev->exit_status, ev->exit_status >= 0);
	json_int(stdout, "held_until_ms", ev->until_ms, ev->until_ms >= 0);
	if (ev->holder[0] != '\0') {
		fputc(',', stdout);
		json_bytes(stdout, "holder", ev->holder);
	}
	if (ev->by_host[0] != '\0' || ev->by_pid > 0) {
		fputs(",\"by\":{\"host\":", stdout);
		json_str(stdout, ev->by_host);
		json_int(stdout, "pid", ev->by_pid, ev->by_pid > 0);
		fputs(",\"user\":", stdout);
		json_str(stdout, ev->by_user);
		if (ev->by_cmd[0] != '\0') {
			fputs(",\"cmd\":", stdout);
			json_str(stdout, ev->by_cmd);
		}
		putchar('}');
	}
	puts("}");
}

/* Print N events; the last one's id into LAST. */
static int
print_all(const struct view *v, const struct rl_event *ev, size_t n,
    char *last, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (v->json)
			print_json(&ev[i]);
		else
			print_text(&ev[i]);
		if (ev[i].id[0] != '\0')
			snprintf(last, len, "%s", ev[i].id);
		remember(&ev[i]);
	}
	return flush_stdout();
}

/* A failed read as a message and an exit status: another type at the
 * history's key is not a lock's fault (65, saying so). */
static int
read_failed(rl_client *rc, enum rl_err e, const char *name)
{
	if (e != RL_EWRONGTYPE)
		return fail(rc, e, name);
	msg("%s: %s", esc(name_shown(name)), esc(rl_errstr(rc)));
	return EXIT_WRONGTYPE;
}

/* A read's N events EV behind the acquisition still held from the reads
 * before (HELD), with what that one tells put back: a malloc'd array,
 * the held one first when *FIRST is 1; NULL when out of memory. */
static struct rl_event *
with_held(const struct rl_event *ev, size_t *n, size_t *first)
{
	struct rl_event *all = calloc(2 * *n + 3, sizeof(*all));

	*first = 0;
	if (all == NULL)
		return NULL;
	if (held.open) {
		all[0].id[0] = '\0';
		all[0].by_host = all[0].by_user = all[0].by_cmd =
		    all[0].holder = "";
		all[0].wait_ms = all[0].hold_ms = -1;
		all[0].exit_status = -1;
		all[0].event = "acquired";
		all[0].owner = held.owner;
		all[0].host = held.host;
		all[0].user = held.user;
		all[0].cmd = held.cmd;
		all[0].fence = held.fence;
		all[0].kind = held.kind;
		all[0].pid = held.pid;
		all[0].time_ms = held.time_ms;
		*first = 1;
	}
	/* A read that timed out: no events, and EV may be NULL. */
	if (*n > 0)
		memcpy(all + *first, ev, *n * sizeof(*ev));
	*n = rl_events_infer(all, *n + *first, 2 * *n + 3);
	return all;
}

/* --follow: new events after LAST as they come, until a signal. */
static int
follow(rl_client *rc, const struct view *v, char *last, size_t len)
{
	int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct rl_event *ev, *all;
	size_t n, first;
	enum rl_err e;
	int sig_fd, status;

	if ((sig_fd = sig_catch(sigs, 3)) < 0) {
		msg("cannot set up signals: %s", strerror(errno));
		return EXIT_SOFTWARE;
	}
	for (;;) {
		struct pollfd p = { sig_fd, POLLIN, 0 };

		if (poll(&p, 1, 0) > 0 && sig_next(sig_fd) != 0)
			return 0;
		e = rl_log_read(rc, v->name, 0, last, FOLLOW_BLOCK_MS, &ev, &n);
		if (e != RL_OK) {
			free(ev);
			return read_failed(rc, e, v->name);
		}
		all = with_held(ev, &n, &first);
		if (all == NULL) {
			free(ev);
			msg("out of memory");
			return EXIT_SOFTWARE;
		}
		/* The events' strings are EV's. */
		status = print_all(v, all + first, n - first, last, len);
		free(all);
		free(ev);
		if (status != 0)
			return status;
	}
}

static void
init(void *job)
{
	struct view *v = job;

	v->json = v->follow = 0;
	v->n = DEFAULT_LINES;
}

static enum step
option(void *job, const struct parse *p, int ch, const char *arg,
    int *status)
{
	struct view *v = job;

	(void)p;
	switch (ch) {
	case 'J':
		v->json = 1;
		break;
	case 'n':
		if (parse_number(arg, 1, RL_HISTORY_MAX_MAX, &v->n) < 0)
			return step_exit(status, usage_error(&cmd_log,
			    "--lines: '%s' is not a number of events from 1 "
			    "to %d", esc(arg), RL_HISTORY_MAX_MAX));
		break;
	case 'f':
		v->follow = 1;
		break;
	}
	return STEP_GO_ON;
}

static int
run(struct globals *g, void *job, const struct parse *p)
{
	struct view *v = job;
	struct rl_event *ev;
	char last[48] = "0-0";
	rl_client *rc;
	enum rl_err e;
	size_t n;
	int status;

	v->name = p->name;
	if ((rc = client_open(g, DEFAULT_TTL_FOR_TIMEOUT, &status)) == NULL)
		return status;
	e = rl_log_read(rc, v->name, v->n, NULL, 0, &ev, &n);
	if (e != RL_OK)
		status = read_failed(rc, e, v->name);
	else
		status = print_all(v, ev, n, last, sizeof(last));
	free(ev);
	if (status == 0 && v->follow)
		status = follow(rc, v, last, sizeof(last));
	rl_client_free(rc);
	return status;
}
