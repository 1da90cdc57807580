/* rl_kind.c: the script calls of each kind of lock: plain (and fair)
 * locks, shared locks, write locks and permits, in Redisson's RLock,
 * RFairLock, RReadWriteLock and RPermitExpirableSemaphore layouts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_client.h"
#include "rl_kind.h"
#include "rl_keys.h"
#include "rl_scripts.h"

#define RL_PREFIX_SEMAPHORE "redisson_sc"

void
rl_call_free(struct rl_call *call)
{
	size_t i;

	for (i = 0; i < call->nown; i++)
		free(call->own[i]);
	free(call->own);
	memset(call, 0, sizeof(*call));
}

const char *
rl_call_own(struct rl_call *call, char *s)
{
	size_t room = call->room > 0 ? 2 * call->room : 8;
	char **own;

	if (s != NULL && call->nown == call->room) {
		if ((own = realloc(call->own, room * sizeof(*own))) == NULL) {
			free(s);
			s = NULL;
		} else {
			call->own = own;
			call->room = room;
		}
	}
	if (s == NULL) {
		call->nomem = 1;
		return NULL;
	}
	call->own[call->nown++] = s;
	return s;
}

const char *
rl_call_copy(struct rl_call *call, const char *s)
{
	return rl_call_own(call, strdup(s));
}

const char *
rl_call_num(struct rl_call *call, int64_t v)
{
	char n[24];

	snprintf(n, sizeof(n), "%lld", (long long)v);
	return rl_call_copy(call, n);
}

/* S, kept by the call; NULL when out of memory. */
static const char *
own(struct rl_call *call, char *s)
{
	return rl_call_own(call, s);
}

static const char *
num(struct rl_call *call, int64_t v)
{
	return rl_call_num(call, v);
}

char *
rl_history_entry(const char *const *f, size_t n)
{
	size_t i, len = sizeof("event\037");
	char *s, *p;

	for (i = 0; i < n; i++)
		len += (f[i] ? strlen(f[i]) : 0) + 1;
	if ((s = p = malloc(len)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		for (const char *v = f[i] ? f[i] : ""; *v != '\0'; v++)
			*p++ = *v == '\037' ? '?' : *v;
		*p++ = '\037';
	}
	memcpy(p, "event\037", sizeof("event\037"));
	return s;
}

/* The key of template T (split by lua/embed.sh) for lock NAME and OWNER,
 * as the call's own. */
static const char *
template_key(struct rl_call *call, const struct rl_template *t,
    const char *name, const char *owner)
{
	size_t n;
	char *s, *k;

	switch (t->form) {
	case RL_TEMPLATE_NAME:
		return name;
	case RL_TEMPLATE_PREFIX:
		return own(call, rl_key(t->text, name));
	case RL_TEMPLATE_SUFFIX:
		return own(call, rl_key_suffix(name, t->text));
	default:
		if (owner == NULL)
			return own(call, NULL);
		n = strlen(t->text) + strlen(owner) + strlen(t->after) + 1;
		if ((s = malloc(n)) == NULL)
			return own(call, NULL);
		snprintf(s, n, "%s%s%s", t->text, owner, t->after);
		k = rl_key_suffix(name, s);
		free(s);
		return own(call, k);
	}
}

void
rl_call_make(struct rl_call *call, const struct rl_script *s,
    const char *name, const char *owner)
{
	int i;

	memset(call, 0, sizeof(*call));
	call->s = s;
	call->nkeys = s->nkeys;
	call->nargs = s->nargs;
	for (i = 0; i < s->nkeys; i++)
		call->keys[i] = template_key(call, &s->templates[i], name,
		    owner);
	/* lua/embed.sh: the publish argument is the last one. */
	if (s->pub >= 0)
		call->args[s->pub] = "PUBLISH";
}

/* A redlock owner token: a UUID in lower-case hex, ':', and a pid of 1 to
 * RL_PID_DIGITS digits without a leading zero. */
#define RL_UUID_FORM "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx:"
#define RL_PID_DIGITS 7

/* OWNER's pid when OWNER is a redlock owner token, else -1. */
static long
token_pid(const char *owner)
{
	size_t i, n = strlen(owner), at = sizeof(RL_UUID_FORM) - 1;

	if (n <= at || n > at + RL_PID_DIGITS)
		return -1;
	for (i = 0; i < at; i++)
		if (RL_UUID_FORM[i] == 'x' ? owner[i] == '\0' ||
		    strchr("0123456789abcdef", owner[i]) == NULL :
		    owner[i] != RL_UUID_FORM[i])
			return -1;
	if (owner[at] == '0' || strspn(owner + at, "0123456789") != n - at)
		return -1;
	return strtol(owner + at, NULL, 10);
}

/* The key of OWNER's permit, hex digits only: for a redlock owner token
 * the UUID's 32 digits and the pid in RL_PID_DIGITS (39 in all, an odd
 * count); for any other token its bytes, two digits each (an even count,
 * at least 2). It names the waiter in the room and on its channel; the
 * scripts make the permit's id of it (rl_permit in lua/prelude.lua), 16
 * bytes as Redisson's: 16 of its SHA-1 (for another token, of the token's
 * SHA-1), and record the token itself beside the permit. */
static const char *
permit_key(struct rl_call *call, const char *owner)
{
	long pid = token_pid(owner);
	size_t i, n = 0, len = strlen(owner);
	char *id;

	/* Room for any long: the pid has RL_PID_DIGITS at most. */
	if ((id = malloc(pid >= 0 ? 32 + 24 : 2 * len + 1)) == NULL)
		return NULL;
	if (pid >= 0) {
		for (i = 0; i < sizeof(RL_UUID_FORM) - 2; i++)
			if (owner[i] != '-')
				id[n++] = owner[i];
		snprintf(id + n, 24, "%0*ld", RL_PID_DIGITS, pid);
	} else {
		for (i = 0; i < len; i++)
			snprintf(id + 2 * i, 3, "%02x", (unsigned char)owner[i]);
		id[2 * len] = '\0';
	}
	return own(call, id);
}

static const char *
mode(const struct rl_lock *l)
{
	return rl_kind_ops(l->kind)->mode;
}

/* Every key and argument is there, or the call is freed. */
enum rl_err
rl_call_made(rl_client *c, struct rl_call *call)
{
	int i;

	for (i = 0; i < call->nkeys && !call->nomem; i++)
		if (call->keys[i] == NULL)
			call->nomem = 1;
	for (i = 0; i < call->nargs && !call->nomem; i++)
		if (call->args[i] == NULL)
			call->nomem = 1;
	if (!call->nomem)
		return RL_OK;
	rl_call_free(call);
	return rl_seterr(c, RL_ENOMEM, "out of memory");
}

static enum rl_err
made(rl_client *c, struct rl_call *call)
{
	return rl_call_made(c, call);
}

/* The caller's host, pid, user and cmd into the arguments named by
 * META_ARGS(SCRIPT). */
#define META_ARGS(S) RL_##S##_ARG_HOST, RL_##S##_ARG_PID, \
	RL_##S##_ARG_USER, RL_##S##_ARG_CMD
static void
meta_args(const struct rl_meta *meta, struct rl_call *call, int host,
    int pid, int user, int cmd)
{
	call->args[host] = meta && meta->host ? meta->host : "";
	call->args[pid] = num(call, meta ? meta->pid : 0);
	call->args[user] = meta && meta->user ? meta->user : "";
	call->args[cmd] = meta && meta->cmd ? meta->cmd : "";
}

/* The kind a name's history records for L: NULL for a plain lock's,
 * whose entries have no "kind". */
static const char *
kind_name(const struct rl_lock *l)
{
	return rl_kind_ops(l->kind)->history;
}

/* The caller's part of a history entry (rl_history_entry) for OWNER,
 * described by META, having waited WAITED_MS, with KIND last when not
 * NULL. */
static char *
history_meta(const char *owner, const struct rl_meta *meta,
    int64_t waited_ms, const char *kind)
{
	char pid[24], waited[24];

	snprintf(pid, sizeof(pid), "%ld", meta ? meta->pid : 0L);
	snprintf(waited, sizeof(waited), "%lld", (long long)waited_ms);
	return rl_history_entry((const char *[]){ "owner", owner,
	    "host", meta ? meta->host : NULL, "pid", pid,
	    "user", meta ? meta->user : NULL, "cmd", meta ? meta->cmd : NULL,
	    "wait_ms", waited, "kind", kind }, kind != NULL ? 14 : 12);
}

/* S as a JSON string at P (room: 6 bytes a byte, and 3), as Lua's cjson
 * writes it but for '/': quotes, backslashes and control characters
 * escaped; the end of it. */
static char *
json_str(char *p, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	*p++ = '"';
	for (; s != NULL && *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch < 0x20) {
			memcpy(p, "\\u00", 4);
			p[4] = hex[ch >> 4];
			p[5] = hex[ch & 15];
			p += 6;
		} else
			*p++ = (char)ch;
	}
	*p++ = '"';
	return p;
}

/* The start of a holder record (see rl_holder_meta in lua/prelude.lua):
 * a JSON object with META's host, pid, user and cmd, without its closing
 * brace, for the script to add what the server knows. Malloc'd; NULL
 * when out of memory. */
static char *
holder_json(const struct rl_meta *meta)
{
	const char *f[5] = { meta ? meta->host : NULL, meta ? meta->user :
	    NULL, meta ? meta->cmd : NULL, meta ? meta->proc.boot : NULL,
	    meta ? meta->proc.pidns : NULL };
	size_t len = 96, i;
	char *s, *p;

	for (i = 0; i < 5; i++)
		len += (f[i] ? 6 * strlen(f[i]) : 0) + 16;
	if ((s = malloc(len)) == NULL)
		return NULL;
	p = s + sprintf(s, "{\"host\":");
	p = json_str(p, f[0]);
	p += sprintf(p, ",\"pid\":%ld,\"user\":", meta ? meta->pid : 0L);
	p = json_str(p, f[1]);
	p += sprintf(p, ",\"cmd\":");
	p = json_str(p, f[2]);
	/* Where the process runs, which status judges it by (no host name
	 * alone decides), and whether one renews the lease. */
	if (f[3] != NULL && f[4] != NULL) {
		p += sprintf(p, ",\"boot\":");
		p = json_str(p, f[3]);
		p += sprintf(p, ",\"pidns\":");
		p = json_str(p, f[4]);
	}
	if (meta != NULL && meta->proc.renewed)
		p += sprintf(p, ",\"renew\":true");
	*p = '\0';
	return s;
}

/* Where a script takes the history's arguments and a release's flags
 * (HISTORY_AT(SCRIPT), RELEASE_AT(SCRIPT): their enum names). */
struct hist_at {
	int max, ttl, entry, flags;
};
#define HISTORY_AT(S) (&(const struct hist_at){ RL_##S##_ARG_HIST_MAX, \
	RL_##S##_ARG_HIST_TTL, RL_##S##_ARG_HIST_ENTRY, -1 })
#define RELEASE_AT(S) (&(const struct hist_at){ RL_##S##_ARG_HIST_MAX, \
	RL_##S##_ARG_HIST_TTL, RL_##S##_ARG_HIST_ENTRY, RL_##S##_ARG_FLAGS })

/* How long the caller of C has waited so far (0: it does not wait). */
static int64_t
waited(const rl_client *c)
{
	return c->wait_since_ms > 0 ? rl_now_ms() - c->wait_since_ms : 0;
}

/* The history's three arguments, at AT, of CALL for L's owner (META),
 * as an acquisition passes them. */
static void
history_args(rl_client *c, const struct rl_lock *l,
    const struct rl_meta *meta, struct rl_call *call,
    const struct hist_at *at)
{
	call->args[at->max] = c->hist_max;
	call->args[at->ttl] = c->hist_ttl;
	call->args[at->entry] = own(call, history_meta(l->owner, meta,
	    waited(c), kind_name(l)));
}

/* A release's history arguments and its flags, at AT, of CALL (max,
 * expiry, L's owner's entry with COMMAND's exit status where known, and
 * the kind; flags: "l" for the watchdog's release, which has an exit
 * status to record, so that a hold it finds gone is recorded as lost). */
static void
release_args(rl_client *c, const struct rl_lock *l, struct rl_call *call,
    const struct hist_at *at)
{
	const char *kind = kind_name(l), *f[6] = { "owner", l->owner };
	size_t n = 2;

	if (c->exit_status[0] != '\0') {
		f[n] = "exit";
		f[n + 1] = c->exit_status;
		n += 2;
	}
	if (kind != NULL) {
		f[n] = "kind";
		f[n + 1] = kind;
		n += 2;
	}
	call->args[at->max] = c->hist_max;
	call->args[at->ttl] = c->hist_ttl;
	call->args[at->entry] = own(call, rl_history_entry(f, n));
	call->args[at->flags] = c->exit_status[0] == '\0' ? "" : "l";
}

/* A waiter's leaving, recorded in the history's arguments at AT: L's
 * owner (META), having waited WAITED_MS. */
static void
leave_args(rl_client *c, const struct rl_lock *l, const struct rl_meta *meta,
    int64_t waited_ms, struct rl_call *call, const struct hist_at *at)
{
	call->args[at->max] = c->hist_max;
	call->args[at->ttl] = c->hist_ttl;
	call->args[at->entry] = own(call, history_meta(l->owner, meta,
	    waited_ms, kind_name(l)));
}

/* The waiter's name of OWNER: its token; a permit's key. */
static const char *
token(struct rl_call *call, const char *owner)
{
	(void)call;
	return owner;
}

/* The acquire script's sixteenth argument, into CALL: how long the
 * caller will still wait, for queue ("" when it does not wait, "-1" for
 * ever). */
static const char *
gives_up_arg(const rl_client *c, struct rl_call *call)
{
	int64_t left;

	if (c->wait_until_ms < -1)
		return "";
	if (c->wait_until_ms == -1)
		return "-1";
	left = c->wait_until_ms - rl_now_ms();
	return num(call, left > 0 ? left : 0);
}

/* The acquire script's flags, the call's own: a caller that waits joins
 * the fair queue, or the room of plain waiters; one already in the room
 * (every attempt of its wait after the first, and a plain waiter that
 * queues) leaves it when it acquires; --supersede's; and a call that only
 * re-enters. */
static const char *
fair_flags(const rl_client *c, const struct rl_try *t, struct rl_call *call)
{
	const struct rl_fair *fair = t->fair;
	char flags[8], *f = flags;

	if (t->l->reenter)
		*f++ = 'e';
	/* --supersede: its first call supersedes, the later ones look. */
	if (c->supersede > 0)
		*f++ = c->supersede == 1 ? 'S' : 's';

	if (t->join != RL_JOIN_NO)
		*f++ = 'j';
	if (t->join == RL_JOIN_AGAIN || (fair && fair->plain))
		*f++ = 'w';
	if (fair && t->join == RL_JOIN_AGAIN)
		*f++ = 'r';
	if (fair && fair->want_position)
		*f++ = 'p';
	*f = '\0';
	return rl_call_copy(call, flags);
}

/* An exclusive lock's acquisition (acquire.lua), fair or not, with C's
 * history, minimum hold and wait. */
static enum rl_err
lock_acquire(rl_client *c, const struct rl_try *t, struct rl_call *call)
{
	const struct rl_lock *l = t->l;
	const struct rl_fair *fair = t->fair;
	const char *name = l->name, *owner = l->owner;
	const char **a = call->args;

	rl_call_make(call, &rl_script_acquire, name, owner);
	RL_CALL_ARGS(ACQUIRE, 17);
	a[RL_ACQUIRE_ARG_LEASE] = num(call, t->ttl_ms);
	a[RL_ACQUIRE_ARG_OWNER] = owner;
	meta_args(t->meta, call, META_ARGS(ACQUIRE));
	a[RL_ACQUIRE_ARG_MODE] = fair == NULL ? "" : fair->plain ? "queue" :
	    "fair";
	a[RL_ACQUIRE_ARG_WAITER_TIMEOUT] = num(call,
	    fair ? fair->waiter_timeout_ms : c->waiter_ms);
	a[RL_ACQUIRE_ARG_FLAGS] = fair_flags(c, t, call);
	a[RL_ACQUIRE_ARG_CHANNEL] = own(call, rl_key(RL_PREFIX_CHANNEL, name));
	a[RL_ACQUIRE_ARG_MIN_HOLD] = num(call, c->min_hold_ms);
	history_args(c, l, t->meta, call, HISTORY_AT(ACQUIRE));
	a[RL_ACQUIRE_ARG_HOLDER_JSON] = own(call, holder_json(t->meta));
	a[RL_ACQUIRE_ARG_GIVES_UP] = gives_up_arg(c, call);
	return made(c, call);
}

static enum rl_err
lock_release(rl_client *c, const struct rl_lock *l, struct rl_call *call)
{
	rl_call_make(call, &rl_script_release, l->name, l->owner);
	RL_CALL_ARGS(RELEASE, 7);
	call->args[RL_RELEASE_ARG_OWNER] = l->owner;
	call->args[RL_RELEASE_ARG_MESSAGE] = "0";
	release_args(c, l, call, RELEASE_AT(RELEASE));
	return made(c, call);
}

static enum rl_err
lock_renew(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    struct rl_call *call)
{
	rl_call_make(call, &rl_script_renew, l->name, l->owner);
	RL_CALL_ARGS(RENEW, 2);
	call->args[RL_RENEW_ARG_LEASE] = num(call, ttl_ms);
	call->args[RL_RENEW_ARG_OWNER] = l->owner;
	return made(c, call);
}

/* Any lock's removal but a semaphore's: force.lua takes a read-write
 * lock's too. */
static enum rl_err
lock_force(rl_client *c, const struct rl_lock *l, const struct rl_meta *by,
    struct rl_call *call)
{
	const char **a = call->args;

	rl_call_make(call, &rl_script_force, l->name, NULL);
	RL_CALL_ARGS(FORCE, 7);
	a[RL_FORCE_ARG_MESSAGE] = "0";
	a[RL_FORCE_ARG_HIST_MAX] = c->hist_max;
	a[RL_FORCE_ARG_HIST_TTL] = c->hist_ttl;
	a[RL_FORCE_ARG_HOST] = by && by->host ? by->host : "";
	a[RL_FORCE_ARG_PID] = num(call, by ? by->pid : 0);
	a[RL_FORCE_ARG_USER] = by && by->user ? by->user : "";
	return made(c, call);
}

/* A waiter of L's room that gives up (room_leave.lua), named WAITER
 * there; as the listener, it hands the role on. */
static enum rl_err
room_leave(rl_client *c, const struct rl_lock *l, const struct rl_meta *meta,
    int64_t waited_ms, struct rl_call *call)
{
	const char **a = call->args;

	rl_call_make(call, &rl_script_room_leave, l->name, l->owner);
	RL_CALL_ARGS(ROOM_LEAVE, 6);
	a[RL_ROOM_LEAVE_ARG_WAITER] = rl_kind_ops(l->kind)->waiter(call,
	    l->owner);
	a[RL_ROOM_LEAVE_ARG_CHANNEL] = own(call, rl_kind_channel(l));
	/* A waiter that gives up is recorded in the name's history. */
	leave_args(c, l, meta, waited_ms, call, HISTORY_AT(ROOM_LEAVE));
	return made(c, call);
}

/* rw_leave.lua of L's owner, recording nothing. */
static void
rw_leave_make(const struct rl_lock *l, struct rl_call *call)
{
	const char **a = call->args;

	rl_call_make(call, &rl_script_rw_leave, l->name, l->owner);
	RL_CALL_ARGS(RW_LEAVE, 5);
	a[RL_RW_LEAVE_ARG_OWNER] = l->owner;
	a[RL_RW_LEAVE_ARG_HIST_MAX] = a[RL_RW_LEAVE_ARG_HIST_TTL] =
	    a[RL_RW_LEAVE_ARG_HIST_ENTRY] = "";
}

enum rl_err
rl_call_unannounce(rl_client *c, const struct rl_lock *l,
    struct rl_call *call)
{
	/* Not a read-write lock's waiter: its leaving the room records it
	 * (no history: the stream is not touched). */
	rw_leave_make(l, call);
	return made(c, call);
}

/* A shared lock's, or a write lock's, acquisition. */
static enum rl_err
rw_acquire(rl_client *c, const struct rl_try *t, struct rl_call *call)
{
	const struct rl_lock *l = t->l;
	const char *name = l->name, *owner = l->owner;
	const char **a = call->args;

	rl_call_make(call, &rl_script_rw_acquire, name, owner);
	RL_CALL_ARGS(RW_ACQUIRE, 16);
	a[RL_RW_ACQUIRE_ARG_LEASE] = num(call, t->ttl_ms);
	a[RL_RW_ACQUIRE_ARG_OWNER] = owner;
	meta_args(t->meta, call, META_ARGS(RW_ACQUIRE));
	a[RL_RW_ACQUIRE_ARG_MODE] = mode(l);
	a[RL_RW_ACQUIRE_ARG_WAITER_TIMEOUT] = num(call, c->waiter_ms);
	a[RL_RW_ACQUIRE_ARG_FLAGS] = l->reenter ? "e" :
	    t->join != RL_JOIN_NO ? "j" : "";
	a[RL_RW_ACQUIRE_ARG_CHANNEL] = own(call, rl_key(RL_PREFIX_RWLOCK,
	    name));
	a[RL_RW_ACQUIRE_ARG_MIN_HOLD] = num(call, c->min_hold_ms);
	history_args(c, l, t->meta, call, HISTORY_AT(RW_ACQUIRE));
	a[RL_RW_ACQUIRE_ARG_HOLDER_JSON] = own(call, holder_json(t->meta));
	return made(c, call);
}

static enum rl_err
rw_release(rl_client *c, const struct rl_lock *l, struct rl_call *call)
{
	rl_call_make(call, &rl_script_rw_release, l->name, l->owner);
	RL_CALL_ARGS(RW_RELEASE, 7);
	call->args[RL_RW_RELEASE_ARG_OWNER] = l->owner;
	call->args[RL_RW_RELEASE_ARG_MODE] = mode(l);
	release_args(c, l, call, RELEASE_AT(RW_RELEASE));
	return made(c, call);
}

static enum rl_err
rw_renew(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    struct rl_call *call)
{
	rl_call_make(call, &rl_script_rw_renew, l->name, l->owner);
	RL_CALL_ARGS(RW_RENEW, 3);
	call->args[RL_RW_RENEW_ARG_LEASE] = num(call, ttl_ms);
	call->args[RL_RW_RENEW_ARG_OWNER] = l->owner;
	call->args[RL_RW_RENEW_ARG_MODE] = mode(l);
	return made(c, call);
}

/* A read-write lock's waiter that gives up: a writer's announcement
 * withdrawn, and (reader or writer) recorded in the name's history. */
static enum rl_err
rw_leave(rl_client *c, const struct rl_lock *l, const struct rl_meta *meta,
    int64_t waited_ms, struct rl_call *call)
{
	rw_leave_make(l, call);
	leave_args(c, l, meta, waited_ms, call, HISTORY_AT(RW_LEAVE));
	return made(c, call);
}

static enum rl_err
permit_acquire(rl_client *c, const struct rl_try *t, struct rl_call *call)
{
	const struct rl_lock *l = t->l;
	const char **a = call->args;

	rl_call_make(call, &rl_script_permit_acquire, l->name, l->owner);
	RL_CALL_ARGS(PERMIT_ACQUIRE, 15);
	a[RL_PERMIT_ACQUIRE_ARG_LEASE] = num(call, t->ttl_ms);
	a[RL_PERMIT_ACQUIRE_ARG_PERMIT] = permit_key(call, l->owner);
	a[RL_PERMIT_ACQUIRE_ARG_LIMIT] = num(call, l->limit);
	meta_args(t->meta, call, META_ARGS(PERMIT_ACQUIRE));
	a[RL_PERMIT_ACQUIRE_ARG_WAITER_TIMEOUT] = num(call, c->waiter_ms);
	a[RL_PERMIT_ACQUIRE_ARG_FLAGS] = l->reenter ? "e" :
	    t->join == RL_JOIN_AGAIN ? "jw" : t->join == RL_JOIN_YES ? "j" : "";
	a[RL_PERMIT_ACQUIRE_ARG_MIN_HOLD] = num(call, c->min_hold_ms);
	history_args(c, l, t->meta, call, HISTORY_AT(PERMIT_ACQUIRE));
	a[RL_PERMIT_ACQUIRE_ARG_HOLDER_JSON] = own(call,
	    holder_json(t->meta));
	return made(c, call);
}

static enum rl_err
permit_release(rl_client *c, const struct rl_lock *l, struct rl_call *call)
{
	rl_call_make(call, &rl_script_permit_release, l->name, l->owner);
	RL_CALL_ARGS(PERMIT_RELEASE, 6);
	call->args[RL_PERMIT_RELEASE_ARG_PERMIT] = permit_key(call, l->owner);
	release_args(c, l, call, RELEASE_AT(PERMIT_RELEASE));
	return made(c, call);
}

static enum rl_err
permit_renew(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    struct rl_call *call)
{
	rl_call_make(call, &rl_script_permit_renew, l->name, l->owner);
	RL_CALL_ARGS(PERMIT_RENEW, 2);
	call->args[RL_PERMIT_RENEW_ARG_LEASE] = num(call, ttl_ms);
	call->args[RL_PERMIT_RENEW_ARG_PERMIT] = permit_key(call, l->owner);
	return made(c, call);
}

/* A semaphore's removal, with all its permits. */
static enum rl_err
permit_force(rl_client *c, const struct rl_lock *l, const struct rl_meta *by,
    struct rl_call *call)
{
	const char **a = call->args;

	rl_call_make(call, &rl_script_permit_force, l->name, NULL);
	RL_CALL_ARGS(PERMIT_FORCE, 6);
	a[RL_PERMIT_FORCE_ARG_HIST_MAX] = c->hist_max;
	a[RL_PERMIT_FORCE_ARG_HIST_TTL] = c->hist_ttl;
	a[RL_PERMIT_FORCE_ARG_HOST] = by && by->host ? by->host : "";
	a[RL_PERMIT_FORCE_ARG_PID] = num(call, by ? by->pid : 0);
	a[RL_PERMIT_FORCE_ARG_USER] = by && by->user ? by->user : "";
	return made(c, call);
}

void
rl_call_unused(struct rl_call *call)
{
	switch (call->s->id) {
	case RL_SCRIPT_RELEASE:
		call->args[RL_RELEASE_ARG_FLAGS] = "u";
		break;
	case RL_SCRIPT_PERMIT_RELEASE:
		call->args[RL_PERMIT_RELEASE_ARG_FLAGS] = "u";
		break;
	case RL_SCRIPT_RW_RELEASE:
		call->args[RL_RW_RELEASE_ARG_FLAGS] = "u";
		break;
	default:
		break;
	}
}

void
rl_call_unrecorded(struct rl_call *call)
{
	if (call->s->id == RL_SCRIPT_ROOM_LEAVE)
		call->args[RL_ROOM_LEAVE_ARG_HIST_MAX] = "";
	else if (call->s->id == RL_SCRIPT_RW_LEAVE)
		call->args[RL_RW_LEAVE_ARG_HIST_MAX] = "";
}

void
rl_call_quiet(struct rl_call *call)
{
	if (call->s->id == RL_SCRIPT_RELEASE)
		call->args[RL_RELEASE_ARG_MESSAGE] = "";
}

char *
rl_kind_waiter_channel(const struct rl_lock *l)
{
	struct rl_call ids = { 0 };
	char *ch = rl_kind_channel(l), *s = NULL;
	const char *id = rl_kind_ops(l->kind)->waiter(&ids, l->owner);
	size_t n;

	if (ch != NULL && id != NULL) {
		n = strlen(ch) + strlen(id) + 2;
		if ((s = malloc(n)) != NULL)
			snprintf(s, n, "%s:%s", ch, id);
	}
	free(ch);
	rl_call_free(&ids);
	return s;
}

char *
rl_kind_rw_channel(const char *name)
{
	return rl_key(RL_PREFIX_RWLOCK, name);
}

char *
rl_kind_channel(const struct rl_lock *l)
{
	return rl_key(rl_kind_ops(l->kind)->channel, l->name);
}

/* The kinds of lock. A Java reader's watchdog (Redisson's ReadLockTask)
 * sets NAME's expiry to its own timeout, whatever it was: 30 s by
 * default, 10 s at the least. A read hold, and a permit, is renewed
 * often enough that NAME never runs out under it when that reader
 * dies. */
static const struct rl_kind_ops kinds[] = {
	[RL_EXCLUSIVE] = {
		.kind = RL_EXCLUSIVE,
		.channel = RL_PREFIX_CHANNEL,
		.queue = 1,
		.room = 1,
		.redlock = 1,
		.waiter = token,
		.acquire = lock_acquire,
		.release = lock_release,
		.renew = lock_renew,
		.force = lock_force,
		.leave = room_leave,
	},
	[RL_SHARED] = {
		.kind = RL_SHARED,
		.several = "shared locks",
		.history = "read",
		.mode = "read",
		.channel = RL_PREFIX_RWLOCK,
		.renew_max_ms = RL_SHARED_RENEW_MAX_MS,
		.waiter = token,
		.acquire = rw_acquire,
		.release = rw_release,
		.renew = rw_renew,
		.force = lock_force,
		.leave = rw_leave,
	},
	[RL_WRITE] = {
		.kind = RL_WRITE,
		.several = "write locks",
		.history = "write",
		.mode = "write",
		.channel = RL_PREFIX_RWLOCK,
		.waiter = token,
		.acquire = rw_acquire,
		.release = rw_release,
		.renew = rw_renew,
		.force = lock_force,
		.leave = rw_leave,
	},
	[RL_PERMIT] = {
		.kind = RL_PERMIT,
		.several = "semaphores (--limit)",
		.history = "permit",
		.channel = RL_PREFIX_SEMAPHORE,
		.room = 1,
		.limited = 1,
		.renew_max_ms = RL_SHARED_RENEW_MAX_MS,
		.waiter = permit_key,
		.acquire = permit_acquire,
		.release = permit_release,
		.renew = permit_renew,
		.force = permit_force,
		.leave = room_leave,
	},
};

const struct rl_kind_ops *
rl_kind_ops(enum rl_lock_kind kind)
{
	return (unsigned)kind < sizeof(kinds) / sizeof(kinds[0]) ?
	    &kinds[kind] : &kinds[RL_EXCLUSIVE];
}

int64_t
rl_kind_renew_period_ms(enum rl_lock_kind kind, int64_t ttl_ms)
{
	int64_t period = rl_renew_period_ms(ttl_ms), most;

	most = rl_kind_ops(kind)->renew_max_ms;
	return most > 0 && period > most ? most : period;
}

const struct rl_kind_ops *
rl_kind_check(rl_client *c, const struct rl_lock *l, int acquire)
{
	const struct rl_kind_ops *k = rl_kind_ops(l->kind);

	if (acquire && k->limited && l->limit < 1) {
		rl_seterr(c, RL_EUSAGE, "a semaphore needs at least one "
		    "permit");
		return NULL;
	}
	if (k->several != NULL && !rl_one_master(c)) {
		rl_policy(c, k->several);
		return NULL;
	}
	return k;
}
