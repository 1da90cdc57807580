/* unlock.c: give back one hold of NAME, or delete it with --force. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

struct job;
static void init(void *);
static enum step option(void *, const struct parse *, int, const char *,
    int *);
static int run(struct globals *, void *, const struct parse *);

static const struct opt unlock_opts[] = {
	{ .name = "owner", .val = 'O', .arg = ARG_TEXT, .metavar = "TOKEN",
	  .cmds = CMD_UNLOCK,
	  .help = "the token lock printed (default: $REDLOCK_OWNER;\n"
	  "needed for a NAME that an exec above holds)" },
	{ .name = "force", .val = 'F', .cmds = CMD_UNLOCK,
	  .help = "delete NAME whoever holds it, and wake waiters\n"
	  "(a semaphore: with every permit and its count)" },
	{ .name = "pubsub", .val = 'P', .arg = ARG_CHOICE, .metavar = "MODE",
	  .choices = PUBSUB_CHOICES, .cmds = CMD_UNLOCK,
	  .help = "how the release wakes waiters: auto, sharded or\n"
	  "classic, as they wait (see lock --help; default:\n"
	  "$REDLOCK_PUBSUB, else auto)" },
	{ .name = "help", .letter = 'h', .cmds = CMD_UNLOCK,
	  .help = "show this help" },
	OPT_END
};

/* What one unlock is asked to do. */
struct job {
	const char *name;
	const char *owner;	/* NULL with --force */
	int force;
	enum rl_pubsub pubsub;	/* --pubsub, else REDLOCK_PUBSUB */
	int pubsub_given;
	char held[OWNER_MAX_LEN + 1];
};

const struct cmd cmd_unlock = {
	.name = "unlock",
	.usage = "unlock [--owner TOKEN | --force] NAME",
	.help = "Release one hold of NAME taken with TOKEN; the last one "
	"frees it\nand wakes a waiter.\n\n",
	.opts = unlock_opts, .bit = CMD_UNLOCK,
	.brief = "release one hold of NAME",
	.examples =
	"  redlock unlock --owner \"$tok\" deploy\n"
	"  redlock unlock --force deploy\n",
	.exits =
	"0 released (or --force: removed), 1 not held by that owner,\n"
	"  64 usage, 65 NAME is not a lock, 69 server unreachable or refused\n",
	.operands = OPERANDS_NAME, .job_size = sizeof(struct job),
	.init = init, .option = option,
	.run = run
};

/* Without --owner: REDLOCK_OWNER, unless an exec above holds NAME (it
 * is in REDLOCK_HELD): that hold is the exec's, which gives it back
 * when its COMMAND exits, and released from inside it would leave the
 * exec to find its lock lost. Given away only on purpose, with --owner.
 * STEP_GO_ON when found, else STEP_EXIT with *STATUS (reported). */
static enum step
settle_owner(struct job *j, int *status)
{
	int r;

	if (!j->force && j->owner == NULL) {
		if ((r = held_owner(j->name, j->held, sizeof(j->held),
		    NULL)) < 0)
			return step_exit(status, EXIT_USAGE);
		if (r > 0) {
			msg("%s is held by a redlock exec above this process "
			    "(owner %s), which releases it when its COMMAND "
			    "exits; nothing was changed: to release that hold "
			    "now, give --owner %s", esc(j->name),
			    esc(j->held), esc(j->held));
			return step_exit(status, EXIT_USAGE);
		}
		j->owner = getenv("REDLOCK_OWNER");
	}
	if (!j->force && (j->owner == NULL || j->owner[0] == '\0'))
		return step_exit(status, usage_error(&cmd_unlock, "which "
		    "hold? give --owner TOKEN (printed by lock) or set "
		    "REDLOCK_OWNER, or --force"));
	return STEP_GO_ON;
}

static void
init(void *job)
{
	struct job *j = job;

	j->owner = NULL;
	j->force = 0;
}

static enum step
option(void *job, const struct parse *p, int ch, const char *arg,
    int *status)
{
	struct job *j = job;

	(void)p;
	switch (ch) {
	case 'O':
		j->owner = arg;
		break;
	case 'F':
		j->force = 1;
		break;
	case 'P':
		if (parse_pubsub(&cmd_unlock, arg, &j->pubsub) < 0)
			return step_exit(status, EXIT_USAGE);
		j->pubsub_given = 1;
		break;
	}
	return STEP_GO_ON;
}

/* The operands and what the options left to settle: STEP_GO_ON, or
 * STEP_EXIT with *STATUS. */
static enum step
check(struct job *j, const struct parse *p, int *status)
{
	j->name = p->name;
	if (j->force && j->owner != NULL)
		return step_exit(status, usage_error(&cmd_unlock,
		    "--owner and --force exclude each other"));
	if (!j->pubsub_given && pubsub_default(&cmd_unlock, &j->pubsub) < 0)
		return step_exit(status, EXIT_USAGE);
	return settle_owner(j, status);
}

/* What --force removed, on stdout: its holder, where known. */
static void
say_removed(const char *name, const struct rl_attempt *a)
{
	char d[32];

	printf("removed %s", esc(name_shown(name)));
	if (a->owner == NULL) {
		printf("\n");
		return;
	}
	printf(": held by %s", esc(a->owner));
	if (a->host != NULL && a->host[0] != '\0')
		printf(" on %s", esc(a->host));
	if (a->pid > 0)
		printf(" pid %ld", a->pid);
	if (a->user != NULL && a->user[0] != '\0')
		printf(" (%s)", esc(a->user));
	if (a->held_ms >= 0) {
		rl_duration_format(a->held_ms, d, sizeof(d));
		printf(" for %s", d);
	}
	printf("\n");
}

/* Where NAME's key is a string (a semaphore), the call as RL_PERMIT
 * answered E2 after the first as a lock answered E: several masters take
 * no semaphore, and then the refusal's message goes with E. */
static enum rl_err
as_permit(rl_client *rc, enum rl_err e, enum rl_err e2)
{
	return e2 == RL_EUSAGE && rl_nodes(rc) > 1 ? e : e2;
}

/* --force: delete NAME whoever holds it, and say what it removed; the
 * history records who did (this host, pid and user). */
static int
force_delete(rl_client *rc, const char *name, struct rl_attempt *a)
{
	struct rl_meta by = { 0 };
	enum rl_err e;
	int deleted;

	by.host = self_host();
	by.pid = (long)getpid();
	by.user = self_user();
	e = rl_force_release(rc, name, RL_EXCLUSIVE, &by, &deleted, a);
	/* A string at NAME: a semaphore, deleted with its permits. */
	if (e == RL_EWRONGTYPE && a->badtype != NULL &&
	    strcmp(a->badtype, "string") == 0)
		e = as_permit(rc, e, rl_force_release(rc, name, RL_PERMIT, &by,
		    &deleted, a));
	if (e != RL_OK)
		return fail(rc, e, name);
	if (!deleted) {
		msg("%s was not held; nothing to delete", esc(name_shown(name)));
		return EXIT_NOT_HELD;
	}
	say_removed(name, a);
	return 0;
}

/* The kind OWNER holds read-write lock NAME as, from one status call:
 * RL_WRITE (it is the writer), RL_SHARED (a reader), else RL_EXCLUSIVE:
 * NAME is a plain lock or OWNER holds no part of it, and the plain
 * release's answer stands. *E: the status call's error. */
static enum rl_lock_kind
kind_held(rl_client *rc, const char *name, const char *owner, enum rl_err *e)
{
	struct rl_status st;
	struct rl_reader r;
	size_t i;

	if ((*e = rl_status(rc, name, &st)) != RL_OK ||
	    st.kind != RL_KIND_RWLOCK)
		return RL_EXCLUSIVE;
	if (st.owner != NULL && strcmp(st.owner, owner) == 0)
		return RL_WRITE;
	for (i = 0; rl_status_reader(&st, i, &r) == 0; i++)
		if (r.owner != NULL && strcmp(r.owner, owner) == 0)
			return RL_SHARED;
	return RL_EXCLUSIVE;
}

/* Give back one hold of NAME taken as OWNER, whatever its kind. The
 * plain release goes first: one round trip, and its answer is the last
 * word when it released, when NAME is free, or (NAME a string: a
 * semaphore) it says to give back a permit. When another owner holds
 * NAME, or it is a read-write lock, one status call tells which: OWNER's
 * write or shared hold is given back, else the plain answer stands. At
 * most three round trips, one for a plain lock; several masters take
 * no other kind. */
static int
release_one(rl_client *rc, const char *name, const char *owner,
    struct rl_attempt *a)
{
	struct rl_lock l = { .name = name, .owner = owner,
	    .kind = RL_EXCLUSIVE };
	enum rl_release rel = RL_NOT_OWNER;
	enum rl_err e;
	int64_t holds = 0;
	char when[40];

	e = rl_release(rc, &l, &rel, &holds, a);
	if (e == RL_EWRONGTYPE && a->badtype != NULL &&
	    strcmp(a->badtype, "string") == 0) {
		l.kind = RL_PERMIT;
		e = as_permit(rc, e, rl_release(rc, &l, &rel, &holds, a));
	} else if (e == RL_OK && rel == RL_NOT_OWNER && holds &&
	    rl_nodes(rc) == 1 &&
	    (l.kind = kind_held(rc, name, owner, &e)) != RL_EXCLUSIVE)
		e = rl_release(rc, &l, &rel, &holds, a);
	if (e != RL_OK)
		return fail(rc, e, name);
	if (rel == RL_NOT_OWNER) {
		msg("%s is not held by that owner (%s); nothing was "
		    "changed", esc(name_shown(name)), holds ? "another owner holds "
		    "it" : "it is free: the lease may have expired");
		return EXIT_NOT_HELD;
	}
	if (rel == RL_RELEASED && a->held_until_ms > 0) {
		format_time(a->held_until_ms, when, sizeof(when));
		msg("%s stays held until %s: its minimum hold (--min-hold) "
		    "has not ended; unlock --force removes it now", esc(name_shown(name)),
		    when);
	}
	return 0;
}

static int
run(struct globals *g, void *job, const struct parse *p)
{
	struct job *j = job;
	struct rl_attempt a;
	rl_client *rc;
	int status;

	if (check(j, p, &status) == STEP_EXIT)
		return status;
	if ((rc = client_open_pubsub(g, DEFAULT_TTL_FOR_TIMEOUT, j->pubsub,
	    &status)) == NULL)
		return status;
	if (j->force)
		status = force_delete(rc, j->name, &a);
	else
		status = release_one(rc, j->name, j->owner, &a);
	/* Released or deleted, but the server would not let it wake the
	 * waiters. */
	if (status == 0 && a.nopub != NULL)
		warn_nopub(rc, j->name, a.nopub, 1);
	rl_client_free(rc);
	return status;
}
