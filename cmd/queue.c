/* queue.c: the holder of a lock, its fair waiters in order, and how many
 * wait without --fair. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#include "cmd.h"

static void init(void *);
static enum step option(void *, const struct parse *, int, const char *,
    int *);
static int run(struct globals *, void *, const struct parse *);

/* What one queue is asked to show. */
struct view {
	const char *name;
	int json;
	int64_t every;		/* --watch interval; 0: one snapshot */
};

static const struct opt queue_opts[] = {
	{ .name = "json", .val = 'J', .cmds = CMD_QUEUE,
	  .help = "one JSON object (one per line with --watch)" },
	{ .name = "watch", .val = 'W', .arg = ARG_OPT_DURATION,
	  .metavar = "INTERVAL", .cmds = CMD_QUEUE,
	  .help = "redraw every INTERVAL (default: 1s) until\n"
	  "interrupted; --watch INTERVAL NAME too" },
	{ .name = "help", .letter = 'h', .cmds = CMD_QUEUE,
	  .help = "show this help" },
	OPT_END
};

const struct cmd cmd_queue = {
	.name = "queue", .usage = "queue [--json] [--watch[=INTERVAL]] NAME",
	.help = "Show who holds NAME and who waits for it in its fair queue, "
	"in order:\nposition, host and pid (or owner), waiting for, gives up "
	"in, command;\nand who waits without --fair, in no order, the same "
	"way.\n\n",
	.opts = queue_opts, .bit = CMD_QUEUE,
	.brief = "the holder and the fair waiters of NAME",
	.examples =
	"  redlock queue deploy\n"
	"  redlock queue --watch deploy\n",
	.exits =
	"0, 64 usage, 65 NAME is not a fair lock's, 69 server unreachable\n"
	"  or refused\n",
	.operands = OPERANDS_NAME, .job_size = sizeof(struct view),
	.init = init, .option = option,
	.run = run
};

#define DEFAULT_WATCH_MS 1000

/* The rest of waiter W's JSON object, after its "{" (and position). */
static void
json_waiter(const struct rl_qentry *w)
{
	json_who(stdout, w->owner, w->host, w->pid, w->user, w->cmd);
	json_int(stdout, "waiting_ms", w->age_ms, w->age_ms >= 0);
	json_int(stdout, "deadline_ms", w->ms, w->ms != INT64_MIN);
	json_int(stdout, "gives_up_ms", w->gives_up_ms,
	    w->gives_up_ms != INT64_MIN);
	putchar('}');
}

static void
print_json(const char *name, const struct rl_queue *q)
{
	size_t i;

	fputs("{", stdout);
	json_bytes(stdout, "name", name_shown(name));
	printf(",\"held\":%s,\"holder\":", q->held ? "true" : "false");
	if (q->held) {
		putchar('{');
		json_who(stdout, q->holder.owner, q->holder.host,
		    q->holder.pid, q->holder.user, q->holder.cmd);
		json_int(stdout, "held_ms", q->holder.age_ms,
		    q->holder.age_ms >= 0);
		json_running(hold_running(&q->holder.proc, q->holder.pid,
		    q->holder.age_ms, q->holder.held_until_ms));
		json_int(stdout, "lease_ms", q->holder.ms, q->holder.ms >= 0);
		json_finished(q->holder.held_until_ms);
		putchar('}');
	} else
		fputs("null", stdout);
	fputs(",\"waiters\":[", stdout);
	for (i = 0; i < q->n; i++) {
		printf("%s{\"position\":%zu,", i ? "," : "", i + 1);
		json_waiter(&q->waiters[i]);
	}
	printf("],\"unordered\":%lld,\"unordered_waiters\":[",
	    (long long)q->unordered);
	for (i = 0; i < q->nguests; i++) {
		fputs(i ? ",{" : "{", stdout);
		json_waiter(&q->guests[i]);
	}
	putchar(']');
	if (q->mode != NULL) {
		fputs(",\"rwlock\":{\"mode\":", stdout);
		json_str(stdout, q->mode);
		json_int(stdout, "readers", q->readers, 1);
		json_int(stdout, "waiting", q->rw_waiting, 1);
		fputc(',', stdout);
		json_bytes(stdout, "writer_waiting", q->writer);
		json_int(stdout, "writer_ms", q->writer_ms,
		    q->writer != NULL && q->writer_ms >= 0);
		putchar('}');
	}
	puts("}");
}

/* A read-write lock's waiters: how many (readers and writers, redlock's
 * and Java's, in no order: redlock's readers leave no other trace), and
 * the writer that waits first. */
static void
print_rw(const struct rl_queue *q)
{
	char left[32];

	if (q->rw_waiting > 0)
		printf("%lld waiting to read or write, in no order\n",
		    (long long)q->rw_waiting);
	if (q->writer != NULL) {
		rl_duration_format(q->writer_ms, left, sizeof(left));
		printf("first: writer %s; new readers wait behind it (it "
		    "announced itself, %s left)\n", esc(q->writer), left);
	}
}

#define WHO_W 24		/* "host pid", or the owner without them */
#define TIME_W 8

/* S, as esc() shows it, cut to W characters with "\u2026" as the last
 * one when it is longer, padded with blanks to W unless LAST. Cut only
 * on a terminal: a pipe or a file (a script, a CI log) gets it whole. */
static void
put_cut(const char *s, size_t w, int last)
{
	const unsigned char *p = (const unsigned char *)esc(s);
	size_t n, used = 0, total = 0;
	const unsigned char *q;

	for (q = p; *q != '\0'; q += n ? n : 1, total++)
		n = rl_utf8_len(q);
	if (!isatty(STDOUT_FILENO))
		w = total > w ? total : w;
	for (; *p != '\0' && used < w; used++) {
		if (total > w && used == w - 1) {
			fputs("\xe2\x80\xa6", stdout);
			used++;
			break;
		}
		n = rl_utf8_len(p);
		fwrite(p, 1, n ? n : 1, stdout);
		p += n ? n : 1;
	}
	while (!last && used++ < w)
		putchar(' ');
}

/* The width to fit: the terminal's, else 80 columns (for the columns'
 * alignment only: put_cut cuts nothing off a terminal). */
static size_t
width(void)
{
	struct winsize ws;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col >= 60)
		return ws.ws_col;
	return 80;
}

/* How much longer W will wait (its -w), into BUF: "forever", "-" when
 * not recorded (Redisson's waiters, older redlock's), "expired" once its
 * heartbeat has stopped (it is dropped at the head). */
static const char *
gives_up(const struct rl_qentry *w, char *buf, size_t len)
{
	if (w->ms != INT64_MIN && w->ms <= 0)
		return "expired";
	if (w->gives_up_ms == INT64_MIN)
		return "-";
	if (w->gives_up_ms < 0)
		return "forever";
	rl_duration_format(w->gives_up_ms, buf, len);
	return buf;
}

/* Waiters W (N of them), one line each under a heading, fitted to the
 * width (full values in --json): the position (ORDERED: the fair queue's;
 * else "-"), who waits, for how long so far, how long it will still
 * wait, and its command. */
static void
print_waiters(const struct rl_qentry *ws, size_t n, int ordered)
{
	char who[320], waiting[32], left[32];
	size_t i, cmd_w = width() - (4 + WHO_W + 2 + TIME_W + 2 + TIME_W + 2);

	printf("%-4s%-*s  %-*s  %-*s  %s\n", "POS", WHO_W, "WAITER", TIME_W,
	    "WAITING", TIME_W, "GIVES UP", "COMMAND");
	for (i = 0; i < n; i++) {
		const struct rl_qentry *w = &ws[i];

		if (w->host != NULL && w->pid > 0)
			snprintf(who, sizeof(who), "%s %ld", w->host, w->pid);
		else
			snprintf(who, sizeof(who), "%s",
			    w->owner != NULL ? w->owner : "-");
		rl_duration_format(w->age_ms, waiting, sizeof(waiting));
		if (ordered)
			printf("%-4zu", i + 1);
		else
			printf("%-4s", "-");
		put_cut(who, WHO_W, 0);
		printf("  %-*s  %-*s  ", TIME_W, w->age_ms >= 0 ? waiting :
		    "-", TIME_W, gives_up(w, left, sizeof(left)));
		put_cut(w->cmd != NULL ? w->cmd : "-", cmd_w, 1);
		putchar('\n');
	}
}

/* The waiters without --fair: how many, then each that the room lists
 * (up to 100), and how many more there are. */
static void
print_guests(const struct rl_queue *q)
{
	if (q->unordered <= 0)
		return;
	printf("%lld waiting without --fair, in no order%s\n",
	    (long long)q->unordered, q->nguests > 0 ? ":" : "");
	if (q->nguests == 0)
		return;
	print_waiters(q->guests, q->nguests, 0);
	if ((int64_t)q->nguests < q->unordered)
		printf("... and %lld more\n",
		    (long long)(q->unordered - (int64_t)q->nguests));
	if (q->n > 0)
		putchar('\n');
}

/* "NAME: held by HOST pid N (CMD) for HELD, lease LEASE left", CMD cut
 * so that the line fits the width. */
static void
print_holder(const char *name, const struct rl_qentry *h, const char *held,
    const char *lease)
{
	char head[1200], who[1100], tail[200], fin[80];
	size_t used, w = width();
	const struct holder hd = { .host = h->host, .pid = h->pid,
	    .not_running = hold_running(&h->proc, h->pid, h->age_ms,
	    h->held_until_ms) == 0, .upto_pid = 1 };

	snprintf(head, sizeof(head), "%s: %s (", esc(name_shown(name)),
	    held_by(&hd, who, sizeof(who)));
	snprintf(tail, sizeof(tail), ") for %s%s, lease %s left", held,
	    finished_text(h->held_until_ms, fin, sizeof(fin)), lease);
	used = strlen(head) + strlen(tail);
	fputs(head, stdout);
	/* At least a few characters of it, however long the rest is. */
	put_cut(h->cmd != NULL ? h->cmd : "-", used + 12 < w ? w - used : 12,
	    1);
	puts(tail);
}

static void
print_text(const char *name, const struct rl_queue *q)
{
	char held[32], lease[32], who[1100];

	if (q->held) {
		rl_duration_format(q->holder.age_ms, held, sizeof(held));
		rl_duration_format(q->holder.ms, lease, sizeof(lease));
		if (q->mode != NULL && strcmp(q->mode, "read") == 0)
			printf("%s: held by %lld reader%s, lease %s left\n",
			    esc(name_shown(name)), (long long)q->readers,
			    q->readers == 1 ? "" : "s", lease);
		else if (q->holder.host != NULL)
			print_holder(name, &q->holder, held, lease);
		else
			printf("%s: %s, lease %s left\n", esc(name_shown(name)),
			    held_by(&(struct holder){ .owner = q->holder.owner },
			    who, sizeof(who)), lease);
	} else
		printf("%s: free\n", esc(name_shown(name)));
	print_guests(q);
	print_rw(q);
	if (q->n == 0) {
		if (q->unordered == 0 && q->rw_waiting == 0 &&
		    q->writer == NULL)
			printf("no one waiting\n");
		return;
	}
	print_waiters(q->waiters, q->n, 1);
}

static int
show(rl_client *rc, const char *name, int json)
{
	struct rl_queue q;
	enum rl_err e;

	if ((e = rl_queue(rc, name, &q)) != RL_OK) {
		rl_queue_clear(&q);
		return fail(rc, e, name);
	}
	if (json)
		print_json(name, &q);
	else
		print_text(name, &q);
	rl_queue_clear(&q);
	return flush_stdout();
}

static void
init(void *job)
{
	struct view *v = job;

	v->json = 0;
	v->every = 0;
}

static enum step
option(void *job, const struct parse *p, int ch, const char *arg,
    int *status)
{
	struct view *v = job;

	if (ch == 'J') {
		v->json = 1;
		return STEP_GO_ON;
	}
	/* --watch */
	v->every = DEFAULT_WATCH_MS;
	if (arg != NULL && (parse_duration(&cmd_queue, "--watch", arg,
	    &v->every) < 0))
		return step_exit(status, EXIT_USAGE);
	/* --watch 2s NAME, as typed for --wait 2s: a word that is a
	 * duration, with another after it, is the interval, not NAME (the
	 * parser goes on after it). */
	if (arg == NULL && optind + 1 < p->argc && p->argv[optind][0] != '-' &&
	    rl_duration_parse(p->argv[optind], &v->every) == 0)
		optind++;
	if (v->every < 100)
		return step_exit(status, usage_error(&cmd_queue,
		    "--watch: redraw at most every 100ms"));
	return STEP_GO_ON;
}

/* One --watch frame: a heading (on a terminal, a cleared screen) and the
 * snapshot; 0, else the exit status. */
static int
frame(rl_client *rc, const struct view *v, int tty)
{
	struct timeval tv;
	char when[40], iv[32];
	int status;

	gettimeofday(&tv, NULL);
	format_time((int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000,
	    when, sizeof(when));
	rl_duration_format(v->every, iv, sizeof(iv));
	if (tty)
		fputs("\033[H\033[2J", stdout);
	if (!v->json)
		printf("%s  every %s: redlock queue %s\n\n", when, iv,
		    esc(v->name));
	if ((status = show(rc, v->name, v->json)) != 0)
		return status;
	if (!tty && !v->json)
		putchar('\n');
	return flush_stdout();
}

/* --watch: a snapshot every interval until a signal ends it. */
static int
watch_queue(rl_client *rc, const struct view *v)
{
	int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	int status, tty, sig_fd;

	if ((sig_fd = sig_catch(sigs, 3)) < 0) {
		msg("cannot set up signals: %s", strerror(errno));
		return EXIT_SOFTWARE;
	}
	tty = isatty(STDOUT_FILENO) && !v->json;
	for (;;) {
		struct pollfd p = { sig_fd, POLLIN, 0 };

		/* A frame that cannot reach the server says so; the next one
		 * connects afresh, through the sentinels again after a
		 * failover. The rest ends the watch. */
		if ((status = frame(rc, v, tty)) == EXIT_UNAVAILABLE)
			rl_client_disconnect(rc);
		else if (status != 0)
			return status;
		/* A signal caught during the poll interrupts it (EINTR, even
		 * with SA_RESTART) after its byte is in the pipe: look at the
		 * pipe whatever poll says, or a Ctrl-C draws one more frame,
		 * which against a server that stopped answering waits out
		 * --reply-timeout before the watch ends. */
		(void)poll(&p, 1, (int)v->every);
		if (sig_next(sig_fd) != 0)
			return 0;
	}
}

static int
run(struct globals *g, void *job, const struct parse *p)
{
	struct view *v = job;
	rl_client *rc;
	int status;

	v->name = p->name;
	if ((status = one_master(&cmd_queue, g, "fair queues are", "")) != 0)
		return status;
	if ((rc = client_open(g, DEFAULT_TTL_FOR_TIMEOUT, &status)) == NULL)
		return status;
	if (v->every == 0)
		status = show(rc, v->name, v->json);
	else
		status = watch_queue(rc, v);
	rl_client_free(rc);
	return status;
}
