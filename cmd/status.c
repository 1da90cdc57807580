/* status.c: who holds a lock, for how long, and how many wait for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "cmd.h"

static void init(void *);
static enum step option(void *, const struct parse *, int, const char *,
    int *);
static int run(struct globals *, void *, const struct parse *);

/* What one status is asked to show, besides its names. */
struct ask {
	int json;
	int verbose;
};

static const struct opt status_opts[] = {
	{ .name = "json", .val = 'J', .cmds = CMD_STATUS,
	  .help = "one JSON object (an array without NAME)" },
	{ .name = "verbose", .letter = 'v', .cmds = CMD_STATUS,
	  .help = "list entries with their fences too" },
	{ .name = "help", .letter = 'h', .cmds = CMD_STATUS,
	  .help = "show this help" },
	OPT_END
};

const struct cmd cmd_status = {
	.name = "status", .usage = "status [--json] [-v] [NAME...]",
	.help =
	"Show who holds NAME (exit 0) or that it is free (exit 1), also for a\n"
	"read-write lock (every reader) and a semaphore (--limit: every permit\n"
	"taken, and how many are free). Without NAME, list every lock held,\n"
	"Redisson's too, sorted by name (exit 0; \"no locks held\" on stderr\n"
	"and exit 1 if none), a line each (-v: with its fence) that fits a\n"
	"terminal. A holder on this host whose\n"
	"process is gone is \"not running\", with the line that frees NAME.\n"
	"Several NAMEs (a pool's): a line each, or a JSON array of status\n"
	"NAME --json's objects (exit 0 if any is held).\n\n",
	.opts = status_opts, .bit = CMD_STATUS,
	.brief = "who holds NAME, or every lock",
	.examples =
	"  redlock status deploy\n"
	"  redlock status --json\n",
	.exits =
	"0 held (without NAME: some lock is), 1 free, 64 usage,\n"
	"  65 NAME is not a lock, 69 server unreachable or refused\n",
	.job_size = sizeof(struct ask), .init = init, .option = option,
	.run = run
};

struct listing {
	rl_client *rc;
	int json;
	int verbose;
	int count;
	enum rl_err err;
	const char *errname;
	char *errname_buf;
};

/* Several masters: each one's view, then the verdict's numbers. */
static void
json_nodes(rl_client *rc, const struct rl_status *st)
{
	struct rl_status ns;
	const char *err;
	char url[512];
	size_t i;

	printf(",\"quorum\":%zu,\"held_on\":%zu,\"nodes\":[",
	    rl_quorum(rl_nodes(rc)), st->held_on);
	for (i = 0; i < rl_nodes(rc); i++) {
		rl_node_status(rc, i, &ns, url, sizeof(url), &err);
		fputs(i ? ",{\"url\":" : "{\"url\":", stdout);
		json_str(stdout, url);
		if (err != NULL) {
			fputs(",\"error\":", stdout);
			json_str(stdout, err);
			fputs("}", stdout);
			continue;
		}
		printf(",\"held\":%s,", ns.held ? "true" : "false");
		json_bytes(stdout, "owner", ns.held ? ns.owner : NULL);
		printf(",\"lease_ms\":");
		if (ns.held && ns.pttl >= 0)
			printf("%lld", (long long)ns.pttl);
		else
			fputs("null", stdout);
		printf(",\"fence\":");
		if (ns.held && ns.fence >= 0)
			printf("%lld", (long long)ns.fence);
		else
			fputs("null", stdout);
		fputs("}", stdout);
	}
	fputs("]", stdout);
}

/* One master's line where it holds NAME: the owner (a read-write lock's
 * readers in read mode), the lease, the fence ("-" when not recorded). */
static void
print_node(const char *url, const struct rl_status *ns)
{
	char lease[32], fence[24] = "-";

	rl_duration_format(ns->pttl, lease, sizeof(lease));
	if (ns->fence >= 0)
		snprintf(fence, sizeof(fence), "%lld", (long long)ns->fence);
	printf("  master   %s: held by %s, lease %s left, fence %s\n", esc(url),
	    ns->owner == NULL && ns->kind == RL_KIND_RWLOCK ? "readers" :
	    esc(ns->owner), lease, fence);
}

static void
print_nodes(rl_client *rc, const struct rl_status *st)
{
	struct rl_status ns;
	const char *err;
	char url[512];
	size_t i;

	printf("  quorum   held on %zu of %zu masters (need %zu)\n",
	    st->held_on, rl_nodes(rc), rl_quorum(rl_nodes(rc)));
	for (i = 0; i < rl_nodes(rc); i++) {
		rl_node_status(rc, i, &ns, url, sizeof(url), &err);
		if (err != NULL)
			printf("  master   %s: no answer: %s\n", esc(url),
			    esc(err));
		else if (!ns.held)
			printf("  master   %s: free\n", esc(url));
		else
			print_node(url, &ns);
	}
}

/* ,"readers":[...] of a read-write lock. */
static void
json_readers(const struct rl_status *st)
{
	struct rl_reader r;
	size_t i;

	fputs(",\"readers\":[", stdout);
	for (i = 0; rl_status_reader(st, i, &r) == 0; i++) {
		fputs(i ? ",{" : "{", stdout);
		json_bytes(stdout, "owner", r.owner);
		json_int(stdout, "holds", r.holds, 1);
		json_int(stdout, "lease_ms", r.pttl, r.pttl >= 0);
		json_meta(stdout, r.host, r.pid, r.user, r.cmd);
		json_running(hold_running(&r.proc, r.pid, -1, r.held_until_ms));
		json_int(stdout, "since_ms", r.since_ms, r.since_ms >= 0);
		json_int(stdout, "fence", r.fence, r.fence >= 0);
		json_finished(r.held_until_ms);
		fputs("}", stdout);
	}
	fputs("]", stdout);
}

/* How event EV ended a hold, for status of a free lock. */
static const char *
ended(const struct rl_event *ev)
{
	if (strcmp(ev->event, "released") == 0)
		return "released";
	if (strcmp(ev->event, "forced") == 0)
		return "removed by unlock --force";
	/* An acquisition last, and the lock free: its lease ran out. */
	if (strcmp(ev->event, "expired") == 0 ||
	    strcmp(ev->event, "acquired") == 0)
		return "expired";
	if (strcmp(ev->event, "lost") == 0)
		return "lost";
	return NULL;
}

/* The last event of NAME's history that ended a hold, or NULL (none, or
 * the history cannot be read); it is *EV's (malloc'd: free it). */
static const struct rl_event *
last_end(rl_client *rc, const char *name, struct rl_event **ev)
{
	const char *undone = NULL;
	size_t n, i;

	if (rl_log_read(rc, name, 10, NULL, 0, ev, &n) != RL_OK)
		return NULL;
	/* An attempt undone is no hold: neither it nor its acquisition. */
	for (i = n; i > 0; i--) {
		const struct rl_event *e = &(*ev)[i - 1];

		if (strcmp(e->event, "undone") == 0)
			undone = e->owner;
		else if (undone != NULL && strcmp(e->owner, undone) == 0)
			undone = NULL;
		else if (ended(e) != NULL)
			return e;
	}
	return NULL;
}

/* A free lock's status in JSON: ,"last":{...} (who held it last, how
 * and when that ended), or null. */
static void
json_last(rl_client *rc, const char *name)
{
	struct rl_event *ev = NULL;
	const struct rl_event *e = last_end(rc, name, &ev);
	char when[40];

	fputs(",\"last\":", stdout);
	if (e == NULL) {
		fputs("null", stdout);
		free(ev);
		return;
	}
	format_time(e->time_ms, when, sizeof(when));
	printf("{\"ended\":\"%s\",\"time\":\"%s\"", ended(e), when);
	json_int(stdout, "time_ms", e->time_ms, 1);
	fputc(',', stdout);
	json_who(stdout, e->owner, e->host, e->pid, e->user, e->cmd);
	json_decimal(stdout, "fence", e->fence);
	json_int(stdout, "hold_ms", e->hold_ms, e->hold_ms >= 0);
	json_int(stdout, "exit", e->exit_status, e->exit_status >= 0);
	fputc('}', stdout);
	free(ev);
}

static void
print_json(rl_client *rc, const char *name, const struct rl_status *st,
    int last)
{
	int rw = st->kind == RL_KIND_RWLOCK;

	fputs("{", stdout);
	json_bytes(stdout, "name", name_shown(name));
	printf(",\"held\":%s,\"kind\":\"%s\"", st->held ? "true" : "false",
	    rw ? "rwlock" : "lock");
	if (st->held) {
		fputs(",\"mode\":", stdout);
		json_str(stdout, rw ? st->mode : "exclusive");
		fputc(',', stdout);
		json_who(stdout, st->owner, st->host, st->pid, st->user,
		    st->cmd);
		json_running(st->owner != NULL ? hold_running(&st->proc,
		    st->pid, st->held_ms, st->held_until_ms) : -1);
		json_int(stdout, "since_ms", st->since_ms, st->since_ms >= 0);
		json_int(stdout, "held_ms", st->held_ms, st->held_ms >= 0);
		json_int(stdout, "holds", st->holds, 1);
		json_int(stdout, "lease_ms", st->pttl, st->pttl >= 0);
		json_int(stdout, "fence", st->fence, st->fence >= 0);
		json_finished(st->held_until_ms);
		if (rw) {
			json_readers(st);
			fputc(',', stdout);
			json_bytes(stdout, "writer_waiting", st->writer);
		}
	}
	json_int(stdout, "waiting", st->waiting, 1);
	if (rl_nodes(rc) > 1)
		json_nodes(rc, st);
	/* A free lock's last holder (LAST): a round of its own. */
	if (last && !st->held)
		json_last(rc, name);
	fputs("}", stdout);
}

/* One line per reader of a read-write lock. */
static void
print_readers(const struct rl_status *st)
{
	struct rl_reader r;
	char d[32], f[96];
	size_t i;

	for (i = 0; rl_status_reader(st, i, &r) == 0; i++) {
		printf("  reader   %s (%lld hold%s, ", esc(r.owner),
		    (long long)r.holds, r.holds == 1 ? "" : "s");
		if (r.pttl >= 0) {
			rl_duration_format(r.pttl, d, sizeof(d));
			printf("lease %s left)", d);
		} else
			printf("no lease left)");
		/* A reader of redlock's: who it is. */
		if (r.host != NULL)
			printf(": %s pid %ld (%s), fence %lld", esc(r.host),
			    r.pid, esc(r.cmd), (long long)r.fence);
		printf("%s%s\n", finished_text(r.held_until_ms, f, sizeof(f)),
		    hold_running(&r.proc, r.pid, -1, r.held_until_ms) == 0 ?
		    ", not running" : "");
	}
}

/* How many wait for NAME; for a read-write lock, also the writer that
 * waits first, which redlock's new readers wait behind. */
static void
print_waiting(const struct rl_status *st)
{
	printf("  waiting  %lld\n", (long long)st->waiting);
	if (st->writer != NULL)
		printf("  first    writer %s (new readers wait behind it)\n",
		    esc(st->writer));
}

/* A read-write lock without a writer (read mode): the readers, then the
 * lock's lease. */
static void
print_read(const char *name, const struct rl_status *st)
{
	char d[32];

	printf("%s: held\n", esc(name_shown(name)));
	printf("  mode     %s (Redisson read-write lock)\n", esc(st->mode));
	print_readers(st);
	printf("  holds    %lld\n", (long long)st->holds);
	if (st->pttl >= 0) {
		rl_duration_format(st->pttl, d, sizeof(d));
		printf("  lease    %s left\n", d);
	} else
		printf("  lease    no expiry\n");
	print_waiting(st);
}

static void
print_long(const char *name, const struct rl_status *st)
{
	char t[48], d[32], f[96];

	if (!st->held) {
		printf("%s: free\n", esc(name_shown(name)));
		if (st->waiting > 0)
			printf("  waiting  %lld\n", (long long)st->waiting);
		return;
	}
	if (st->kind == RL_KIND_RWLOCK && st->owner == NULL) {
		print_read(name, st);
		return;
	}
	printf("%s: held\n", esc(name_shown(name)));
	printf("  owner    %s\n", esc(st->owner));
	printf("  host     %s\n", esc(st->host));
	if (st->pid > 0)
		printf("  pid      %ld%s\n", st->pid, hold_running(&st->proc,
		    st->pid, st->held_ms, st->held_until_ms) == 0 ?
		    " (not running)" : "");
	else
		printf("  pid      -\n");
	printf("  user     %s\n", esc(st->user));
	printf("  command  %s\n", esc(st->cmd));
	if (st->since_ms >= 0) {
		format_time(st->since_ms, t, sizeof(t));
		rl_duration_format(st->held_ms, d, sizeof(d));
		printf("  since    %s (%s ago)\n", t, d);
	} else
		printf("  since    -\n");
	printf("  holds    %lld\n", (long long)st->holds);
	if (st->pttl >= 0) {
		rl_duration_format(st->pttl, d, sizeof(d));
		printf("  lease    %s left\n", d);
	} else
		printf("  lease    no expiry\n");
	if (st->fence >= 0)
		printf("  fence    %lld\n", (long long)st->fence);
	else
		printf("  fence    -\n");
	if (st->held_until_ms > 0)
		printf("  state    %s\n", finished_text(st->held_until_ms, f,
		    sizeof(f)) + 2);
	else if (hold_running(&st->proc, st->pid, st->held_ms, 0) ==
	    HOLD_UNRENEWED)
		printf("  state    held by lock, no process renews it, lease "
		    "ends in %s\n", d);
	if (st->kind == RL_KIND_RWLOCK) {
		printf("  mode     %s (Redisson read-write lock)\n",
		    esc(st->mode));
		print_readers(st);
	} else
		printf("  mode     exclusive\n");
	print_waiting(st);
}

/* HEAD then TAIL as one line on standard output, whole on a pipe. On a
 * terminal it is cut to the width (so that a list is a line per lock):
 * HEAD (the holder and its command) gives way, ending in "\u2026", so
 * that TAIL (the lease, how many wait) stays whole where it fits beside
 * the first KEEP bytes of HEAD (the name); else the end is cut. */
static void
put_line(const char *head, size_t keep, const char *tail)
{
	char line[4096], name[1100];
	size_t w, n, tw;

	snprintf(line, sizeof(line), "%s%s", head, tail);
	n = strlen(line);
	if (!isatty(STDOUT_FILENO) ||
	    fit_columns(line, (w = columns(STDOUT_FILENO))) == n) {
		printf("%s\n", line);
		return;
	}
	tw = text_columns(tail);
	snprintf(name, sizeof(name), "%.*s", (int)keep, head);
	if (tw + text_columns(name) + 1 < w) {
		fwrite(head, 1, fit_columns(head, w - tw - 1), stdout);
		printf("\xe2\x80\xa6%s\n", tail);
	} else {
		fwrite(line, 1, fit_columns(line, w), stdout);
		putchar('\n');
	}
}

/* One line for NAME: who holds it (a read-write lock in read mode: how
 * many readers), the lease, how many wait; the fence with VERBOSE. */
static void
print_line(const char *name, const struct rl_status *st, int verbose)
{
	char d[32], l[32], f[96], fence[48] = "", who[2200], head[2400];
	char tail[256];
	size_t keep;
	const struct holder h = { .owner = st->owner, .host = st->host,
	    .pid = st->pid, .cmd = st->cmd, .held = d,
	    .not_running = st->host != NULL && hold_running(&st->proc,
	    st->pid, st->held_ms, st->held_until_ms) == 0 };

	rl_duration_format(st->held_ms, d, sizeof(d));
	rl_duration_format(st->pttl, l, sizeof(l));
	finished_text(st->held_until_ms, f, sizeof(f));
	if (hold_running(&st->proc, st->pid, st->held_ms,
	    st->held_until_ms) == HOLD_UNRENEWED)
		snprintf(f, sizeof(f), ", no process renews it");
	if (verbose && st->host != NULL)
		snprintf(fence, sizeof(fence), ", fence %lld",
		    (long long)st->fence);
	held_by(&h, who, sizeof(who));
	if (st->kind == RL_KIND_RWLOCK && st->owner == NULL)
		snprintf(head, sizeof(head), "%s: held by %zu reader%s (%lld "
		    "hold%s, read-write lock)", esc(name_shown(name)),
		    st->readers, st->readers == 1 ? "" : "s",
		    (long long)st->holds, st->holds == 1 ? "" : "s");
	else
		snprintf(head, sizeof(head), "%s: %s", esc(name_shown(name)),
		    who);
	keep = strlen(esc(name_shown(name))) + 1;
	snprintf(tail, sizeof(tail), "%s, lease %s left%s, %lld waiting",
	    st->kind == RL_KIND_RWLOCK && st->owner == NULL ? "" : f, l,
	    st->kind == RL_KIND_RWLOCK && st->owner == NULL ? "" : fence,
	    (long long)st->waiting);
	put_line(head, keep, tail);
}

/* How long permit P has been held (the server's clock), -1 unknown. */
static int64_t
permit_held_ms(const struct rl_permit *p)
{
	if (p->since_ms < 0 || p->expires_ms < 0)
		return -1;
	return p->expires_ms - p->left_ms - p->since_ms;
}

/* ,"permits":[...] of an expirable semaphore. */
static void
json_permits(const struct rl_status *st)
{
	struct rl_permit p;
	size_t i;

	fputs(",\"permits\":[", stdout);
	for (i = 0; rl_status_permit(st, i, &p) == 0; i++) {
		fputs(i ? ",{\"id\":" : "{\"id\":", stdout);
		json_str(stdout, p.id);
		json_int(stdout, "expires_ms", p.expires_ms, p.expires_ms >= 0);
		json_int(stdout, "lease_ms", p.left_ms, p.expires_ms >= 0);
		fputc(',', stdout);
		json_who(stdout, p.owner != NULL ? p.owner : p.id, p.host,
		    p.pid, p.user, p.cmd);
		json_running(hold_running(&p.proc, p.pid,
		    permit_held_ms(&p), p.held_until_ms));
		json_int(stdout, "since_ms", p.since_ms, p.since_ms >= 0);
		json_int(stdout, "held_ms", permit_held_ms(&p),
		    permit_held_ms(&p) >= 0);
		json_int(stdout, "fence", p.fence, p.fence >= 0);
		json_finished(p.held_until_ms);
		fputs("}", stdout);
	}
	fputs("]", stdout);
}

static void
print_permit(const struct rl_permit *p)
{
	char t[48], d[32], who[640] = "", h[32], f[96], by[2200];
	struct holder hd = { .host = p->host, .pid = p->pid,
	    .cmd = p->cmd, .held = h };

	if (p->host != NULL) {
		rl_duration_format(permit_held_ms(p), h, sizeof(h));
		hd.not_running = hold_running(&p->proc, p->pid,
		    permit_held_ms(p), p->held_until_ms) == 0;
		snprintf(who, sizeof(who), "%s%s, fence %lld, ",
		    held_by(&hd, by, sizeof(by)),
		    finished_text(p->held_until_ms, f, sizeof(f)),
		    (long long)p->fence);
	}
	if (p->expires_ms < 0) {
		printf("  permit   %s: %sno expiry\n", esc(p->id), who);
		return;
	}
	format_time(p->expires_ms, t, sizeof(t));
	rl_duration_format(p->left_ms < 0 ? -p->left_ms : p->left_ms, d,
	    sizeof(d));
	if (p->left_ms > 0)
		printf("  permit   %s: %slease %s left\n", esc(p->id), who, d);
	else
		printf("  permit   %s: %sexpired %s (%s ago), not yet given "
		    "back\n", esc(p->id), who, t, d);
}

/* NAME is a semaphore: the line that counts its permits. */
static void
print_taken(const char *name, const struct rl_status *st)
{
	char head[1100], tail[120];

	snprintf(head, sizeof(head), "%s", esc(name_shown(name)));
	snprintf(tail, sizeof(tail), ": a semaphore: %lld permit%s taken, "
	    "%lld free", (long long)st->taken, st->taken == 1 ? "" : "s",
	    (long long)st->free);
	put_line(head, strlen(head), tail);
}

/* NAME is a semaphore: its permits, taken and free (JSON: one object,
 * no newline). Held (exit 0) when a permit is taken, or none is free. */
static int
print_semaphore(const char *name, const struct rl_status *st, int json)
{
	int x = st->kind == RL_KIND_EXPIRABLE;
	struct rl_permit p;
	size_t i;

	if (json) {
		fputs("{", stdout);
		json_bytes(stdout, "name", name_shown(name));
		printf(",\"kind\":\"%s\"", x ? "expirable_semaphore" :
		    "semaphore");
		printf(",\"held\":%s", st->taken > 0 || st->free <= 0 ?
		    "true" : "false");
		json_int(stdout, "permits_free", st->free, 1);
		json_int(stdout, "permits_taken", st->taken, 1);
		json_int(stdout, "waiting", st->waiting, 1);
		if (x)
			json_permits(st);
		fputs("}", stdout);
	} else {
		print_taken(name, st);
		for (i = 0; rl_status_permit(st, i, &p) == 0; i++)
			print_permit(&p);
		if (x && st->taken > (int64_t)i)
			printf("  permit   ... and %lld more\n",
			    (long long)st->taken - (long long)i);
		if (st->waiting > 0)
			printf("  waiting  %lld\n", (long long)st->waiting);
	}
	return st->taken > 0 || st->free <= 0 ? EXIT_HELD : EXIT_NOT_HELD;
}

/* Whether every holder that ST lists (the owner, each reader, each
 * permit) is known not to run: then unlock --force takes NAME from no
 * live process, and status NAME says how. */
static int
all_gone(const struct rl_status *st)
{
	struct rl_reader r;
	struct rl_permit p;
	size_t i, n = 0;

	if (st->owner != NULL && (st->kind == RL_KIND_LOCK ||
	    st->kind == RL_KIND_RWLOCK)) {
		if (hold_running(&st->proc, st->pid, st->held_ms,
		    st->held_until_ms) != 0)
			return 0;
		n++;
	}
	for (i = 0; rl_status_reader(st, i, &r) == 0; i++, n++)
		if (hold_running(&r.proc, r.pid, -1, r.held_until_ms) != 0)
			return 0;
	for (i = 0; rl_status_permit(st, i, &p) == 0; i++, n++)
		if (hold_running(&p.proc, p.pid, permit_held_ms(&p),
		    p.held_until_ms) != 0)
			return 0;
	if (st->kind == RL_KIND_EXPIRABLE && (int64_t)i != st->taken)
		return 0;	/* some not listed */
	return n > 0;
}

/* Under status NAME's lines, when no holder of NAME runs: the command
 * that frees it. */
static void
print_gone(const struct globals *g, const char *name,
    const struct rl_status *st)
{
	if (!all_gone(st))
		return;
	printf("%s: not running: no process that holds it is left on this "
	    "host; free it with:\n  ", esc(name_shown(name)));
	force_line(stdout, g, name);
}

static int
list_one(void *arg, const char *name)
{
	struct listing *l = arg;
	struct rl_status st;
	enum rl_err e;

	/* --prefix: the names under it only, shown without it. */
	if (!name_under(name))
		return 0;
	if ((e = rl_status(l->rc, name, &st)) != RL_OK) {
		if (e == RL_EWRONGTYPE && st.kind == RL_KIND_EXPIRABLE &&
		    st.taken > 0) {
			/* A semaphore with a permit taken (--limit's, or
			 * Redisson's RPermitExpirableSemaphore): a line,
			 * not each permit. */
			if (l->json) {
				fputs(l->count ? ",\n " : "\n ", stdout);
				print_semaphore(name, &st, 1);
			} else
				print_taken(name, &st);
			l->count++;
			return 0;
		}
		if (e == RL_EWRONGTYPE || e == RL_EKIND)
			return 0;	/* not a lock: say nothing */
		l->err = e;
		l->errname_buf = strdup(name);
		return 1;
	}
	if (!st.held)
		return 0;	/* expired since SCAN saw it */
	if (l->json) {
		fputs(l->count ? ",\n " : "\n ", stdout);
		print_json(l->rc, name, &st, 0);
	} else
		print_line(name, &st, l->verbose);
	l->count++;
	return 0;
}

static int
list_all(rl_client *rc, int json, int verbose)
{
	struct listing l = { rc, json, verbose, 0, RL_OK, NULL, NULL };
	enum rl_err e;
	int status;

	if (json)
		fputs("[", stdout);
	e = rl_scan(rc, list_one, &l);
	if (json)
		fputs(l.count ? "\n]\n" : "]\n", stdout);
	if (e == RL_OK && l.err != RL_OK)
		e = l.err;
	if (e != RL_OK) {
		status = fail(rc, e, l.errname_buf ? l.errname_buf : "");
		free(l.errname_buf);
		return status;
	}
	if ((status = flush_stdout()) != 0)
		return status;
	/* Nothing printed looks like a hang or a failure; a script that
	 * reads the list still gets it empty. */
	if (l.count == 0 && !json)
		fputs("no locks held\n", stderr);
	return l.count > 0 ? EXIT_HELD : EXIT_NOT_HELD;
}

/* Under a free lock's status: who held it last and how that ended, from
 * its history (nothing when there is none, or it cannot be read). */
static void
print_last(rl_client *rc, const char *name)
{
	struct rl_event *ev = NULL;
	const struct rl_event *e = last_end(rc, name, &ev);
	struct timeval tv;
	char ago[32], d[32], who[2200];

	if (e != NULL) {
		gettimeofday(&tv, NULL);
		rl_duration_format((int64_t)tv.tv_sec * 1000 +
		    tv.tv_usec / 1000 - e->time_ms, ago, sizeof(ago));
		printf("  last     %s, ", held_by(&(struct holder){
		    .owner = e->owner, .host = e->host[0] != '\0' ? e->host :
		    NULL, .pid = e->pid, .cmd = e->cmd }, who, sizeof(who)));
		/* Its lease ran out at a time not recorded: when it began. */
		if (strcmp(e->event, "acquired") == 0)
			printf("expired (its lease ran out), acquired %s ago",
			    ago);
		else
			printf("%s %s ago", ended(e), ago);
		if (e->hold_ms >= 0) {
			rl_duration_format(e->hold_ms, d, sizeof(d));
			printf(" after %s", d);
		}
		if (e->exit_status >= 0)
			printf(", exit %d", e->exit_status);
		putchar('\n');
	}
	free(ev);
}

/* status NAME NAME...: NAMES (N of them) one line each, or as a JSON
 * array of the objects status NAME --json prints; EXIT_HELD when any is
 * held. */
static int
status_several(rl_client *rc, char **names, int n, int json, int verbose)
{
	struct rl_status st;
	enum rl_err e;
	int i, held = 0;

	if (json)
		fputs("[", stdout);
	for (i = 0; i < n; i++) {
		if (json)
			fputs(i > 0 ? ",\n " : "\n ", stdout);
		e = rl_status(rc, names[i], &st);
		if (e == RL_EWRONGTYPE && st.kind != RL_KIND_LOCK) {
			held |= print_semaphore(names[i], &st, json) == 0;
			continue;
		}
		if (e != RL_OK)
			return fail(rc, e, names[i]);
		held |= st.held;
		if (json)
			print_json(rc, names[i], &st, 1);
		else if (st.held)
			print_line(names[i], &st, verbose);
		else
			printf("%s: free, %lld waiting\n", esc(name_shown(names[i])),
			    (long long)st.waiting);
	}
	if (json)
		fputs("\n]\n", stdout);
	if (flush_stdout() != 0)
		return EXIT_SOFTWARE;
	return held ? EXIT_HELD : EXIT_NOT_HELD;
}

static void
init(void *job)
{
	struct ask *a = job;

	a->json = a->verbose = 0;
}

static enum step
option(void *job, const struct parse *p, int ch, const char *arg,
    int *status)
{
	struct ask *a = job;

	(void)p;
	(void)arg;
	(void)status;
	if (ch == 'J')
		a->json = 1;
	else
		a->verbose = 1;
	return STEP_GO_ON;
}

static int
run(struct globals *g, void *job, const struct parse *p)
{
	const struct ask *a = job;
	struct rl_status st;
	enum rl_err e;
	rl_client *rc;
	const char *name;
	char **names = p->argv + 1;
	int i, json = a->json, verbose = a->verbose, status;

	for (i = 0; i < p->nops; i++) {
		if (names[i][0] == '\0')
			return usage_error(&cmd_status, "NAME is empty");
		/* --prefix: the names of the keys from here on. */
		if ((names[i] = (char *)name_key(names[i])) == NULL) {
			msg("out of memory");
			return EXIT_SOFTWARE;
		}
	}
	name = p->nops > 0 ? names[0] : NULL;
	if ((rc = client_open(g, DEFAULT_TTL_FOR_TIMEOUT, &status)) == NULL)
		return status;
	if (p->nops > 1) {
		status = status_several(rc, names, p->nops, json, verbose);
		rl_client_free(rc);
		return status;
	}
	if (name == NULL) {
		status = list_all(rc, json, verbose);
		rl_client_free(rc);
		return status;
	}
	if ((e = rl_status(rc, name, &st)) != RL_OK) {
		if (e == RL_EWRONGTYPE && st.kind != RL_KIND_LOCK) {
			status = print_semaphore(name, &st, json);
			if (json)
				putchar('\n');
			else
				print_gone(g, name, &st);
		} else
			status = fail(rc, e, name);
		rl_client_free(rc);
		if (flush_stdout() != 0)
			return EXIT_SOFTWARE;
		return status;
	}
	if (json) {
		print_json(rc, name, &st, 1);
		putchar('\n');
	} else {
		print_long(name, &st);
		if (rl_nodes(rc) > 1)
			print_nodes(rc, &st);
		/* Last: it reads the history, a round of its own. */
		if (!st.held)
			print_last(rc, name);
		if (st.held)
			print_gone(g, name, &st);
	}
	rl_client_free(rc);
	if ((status = flush_stdout()) != 0)
		return status;
	return st.held ? EXIT_HELD : EXIT_NOT_HELD;
}
