/* rl_kind.c: the script calls of shared locks, write locks and permits,
 * in Redisson's RReadWriteLock and RPermitExpirableSemaphore layouts. */
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
	memset(call, 0, sizeof(*call));
}

/* S, kept by the call; NULL when out of memory. */
static const char *
own(struct rl_call *call, char *s)
{
	if (s != NULL)
		call->own[call->nown++] = s;
	return s;
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

static const char *
num(struct rl_call *call, size_t i, int64_t v)
{
	snprintf(call->num[i], sizeof(call->num[i]), "%lld", (long long)v);
	return call->num[i];
}

/* The keys named by PREFIX (Redisson's "PREFIX:{NAME}") or SUFFIX
 * ("{NAME}:SUFFIX"), as the call's own. */
static const char *
key(struct rl_call *call, const char *prefix, const char *name)
{
	return own(call, rl_key(prefix, name));
}

static const char *
suffixed(struct rl_call *call, const char *name, const char *suffix)
{
	return own(call, rl_key_suffix(name, suffix));
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

/* A reader's lease prefix "{NAME}:OWNER:rwlock_timeout". */
static const char *
read_leases(struct rl_call *call, const char *name, const char *owner)
{
	size_t n = strlen(owner) + sizeof(":rwlock_timeout");
	char *s = malloc(n);
	const char *k;

	if (s == NULL)
		return NULL;
	snprintf(s, n, "%s:rwlock_timeout", owner);
	k = suffixed(call, name, s);
	free(s);
	return k;
}

static const char *
mode(const struct rl_lock *l)
{
	return rl_kind_ops(l->kind)->mode;
}

/* Every key and argument is there, or the call is freed. */
static enum rl_err
made(rl_client *c, struct rl_call *call)
{
	int i;

	for (i = 0; i < call->nkeys; i++)
		if (call->keys[i] == NULL)
			goto nomem;
	for (i = 0; i < call->nargs; i++)
		if (call->args[i] == NULL)
			goto nomem;
	return RL_OK;
nomem:
	rl_call_free(call);
	return rl_seterr(c, RL_ENOMEM, "out of memory");
}

static void
meta_args(const struct rl_meta *meta, struct rl_call *call, int at)
{
	call->args[at] = meta && meta->host ? meta->host : "";
	call->args[at + 1] = num(call, 3, meta ? meta->pid : 0);
	call->args[at + 2] = meta && meta->user ? meta->user : "";
	call->args[at + 3] = meta && meta->cmd ? meta->cmd : "";
}

/* The kind a name's history records for L: NULL for a plain lock's,
 * whose entries have no "kind". */
static const char *
kind_name(const struct rl_lock *l)
{
	return rl_kind_ops(l->kind)->history;
}

/* rl_history_meta with KIND last, when not NULL. */
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

char *
rl_holder_json(const struct rl_meta *meta)
{
	const char *f[3] = { meta ? meta->host : NULL, meta ? meta->user :
	    NULL, meta ? meta->cmd : NULL };
	size_t len = 64, i;
	char *s, *p;

	for (i = 0; i < 3; i++)
		len += (f[i] ? 6 * strlen(f[i]) : 0) + 16;
	if ((s = malloc(len)) == NULL)
		return NULL;
	p = s + sprintf(s, "{\"host\":");
	p = json_str(p, f[0]);
	p += sprintf(p, ",\"pid\":%ld,\"user\":", meta ? meta->pid : 0L);
	p = json_str(p, f[1]);
	p += sprintf(p, ",\"cmd\":");
	p = json_str(p, f[2]);
	*p = '\0';
	return s;
}

char *
rl_history_meta(const char *owner, const struct rl_meta *meta,
    int64_t waited_ms)
{
	return history_meta(owner, meta, waited_ms, NULL);
}

/* The history's three arguments at AT of CALL for L's owner (META), as
 * rl_try_acquire passes them for a plain lock. */
static void
history_args(rl_client *c, const struct rl_lock *l,
    const struct rl_meta *meta, struct rl_call *call, int at)
{
	const char *owner = l->owner;

	call->args[at] = c->hist_max;
	call->args[at + 1] = c->hist_ttl;
	call->args[at + 2] = own(call, history_meta(owner, meta,
	    c->wait_since_ms > 0 ? rl_now_ms() - c->wait_since_ms : 0,
	    kind_name(l)));
}

/* A release's history arguments at AT of CALL (max, expiry, OWNER's
 * entry with COMMAND's exit status where known, and the kind), and its
 * flags after them: "l" for the watchdog's release, which has an exit
 * status to record, so that a hold it finds gone is recorded as lost. */
static void
release_args(rl_client *c, const struct rl_lock *l, struct rl_call *call,
    int at)
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
	call->args[at] = c->hist_max;
	call->args[at + 1] = c->hist_ttl;
	call->args[at + 2] = own(call, rl_history_entry(f, n));
	call->args[at + 3] = c->exit_status[0] == '\0' ? "" : "l";
}

enum rl_err
rl_call_acquire(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    const struct rl_meta *meta, enum rl_join join, int64_t waiter_ms,
    struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;

	memset(call, 0, sizeof(*call));
	call->args[0] = num(call, 0, ttl_ms);
	if (l->kind == RL_PERMIT) {
		call->s = &rl_script_permit_acquire;
		call->nkeys = 5;
		call->keys[0] = name;
		call->keys[1] = suffixed(call, name, "timeout");
		call->keys[2] = key(call, RL_PREFIX_HOLDER, name);
		call->keys[3] = key(call, RL_PREFIX_TOKEN, name);
		call->keys[4] = key(call, RL_PREFIX_SEMAPHORE, name);
		call->keys[5] = key(call, RL_PREFIX_ROOM, name);
		call->keys[6] = key(call, RL_PREFIX_LISTENER, name);
		call->keys[7] = key(call, RL_PREFIX_LOG, name);
		call->nkeys = 8;
		call->nargs = 14;
		call->args[1] = permit_key(call, owner);
		call->args[2] = num(call, 1, l->limit);
		meta_args(meta, call, 3);
		call->args[7] = num(call, 2, c->waiter_ms);
		call->args[8] = join == RL_JOIN_AGAIN ? "jw" :
		    join == RL_JOIN_YES ? "j" : "";
		call->args[9] = num(call, 4, c->min_hold_ms);
		history_args(c, l, meta, call, 10);
		call->args[13] = own(call, rl_holder_json(meta));
		return made(c, call);
	}
	call->s = &rl_script_rw_acquire;
	call->nkeys = 5;
	call->keys[0] = name;
	call->keys[1] = key(call, RL_PREFIX_TOKEN, name);
	call->keys[2] = key(call, RL_PREFIX_HOLDER, name);
	call->keys[3] = read_leases(call, name, owner);
	call->keys[4] = key(call, RL_PREFIX_WRITER, name);
	call->keys[5] = key(call, RL_PREFIX_LOG, name);
	call->nkeys = 6;
	call->nargs = 15;
	call->args[1] = owner;
	meta_args(meta, call, 2);
	call->args[6] = mode(l);
	call->args[7] = num(call, 2, waiter_ms);
	call->args[8] = join != RL_JOIN_NO ? "j" : "";
	call->args[9] = key(call, RL_PREFIX_RWLOCK, name);
	call->args[10] = num(call, 4, c->min_hold_ms);
	history_args(c, l, meta, call, 11);
	call->args[14] = own(call, rl_holder_json(meta));
	return made(c, call);
}

/* The keys of release.lua and force.lua: the lock, its channel, the
 * holder records, the fair queue's three and the room's two (release.lua:
 * and the read-write lock's channel; force.lua: and "{NAME}", which names
 * a read-write lock's read leases, and the read-write lock's channel). */
static void
lock_keys(struct rl_call *call, const char *name)
{
	call->nkeys = 8;
	call->keys[0] = name;
	call->keys[1] = key(call, RL_PREFIX_CHANNEL, name);
	call->keys[2] = key(call, RL_PREFIX_HOLDER, name);
	call->keys[3] = key(call, RL_PREFIX_QUEUE, name);
	call->keys[4] = key(call, RL_PREFIX_TIMEOUT, name);
	call->keys[5] = key(call, RL_PREFIX_WAITER, name);
	call->keys[6] = key(call, RL_PREFIX_ROOM, name);
	call->keys[7] = key(call, RL_PREFIX_LISTENER, name);
}

/* The semaphore's keys of permit_release.lua and permit_force.lua. */
static void
semaphore_keys(struct rl_call *call, const char *name)
{
	call->nkeys = 6;
	call->keys[0] = name;
	call->keys[1] = suffixed(call, name, "timeout");
	call->keys[2] = key(call, RL_PREFIX_HOLDER, name);
	call->keys[3] = key(call, RL_PREFIX_SEMAPHORE, name);
	call->keys[4] = key(call, RL_PREFIX_ROOM, name);
	call->keys[5] = key(call, RL_PREFIX_LISTENER, name);
}

enum rl_err
rl_call_release(rl_client *c, const struct rl_lock *l, struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;

	memset(call, 0, sizeof(*call));
	switch (l->kind) {
	case RL_EXCLUSIVE:
		call->s = &rl_script_release;
		lock_keys(call, name);
		/* Where Redisson's read and write locks wait behind the
		 * marker of a plain hold. */
		call->keys[call->nkeys++] = key(call, RL_PREFIX_RWLOCK, name);
		call->keys[call->nkeys++] = key(call, RL_PREFIX_LOG, name);
		call->nargs = 6;
		call->args[0] = owner;
		call->args[1] = "0";
		release_args(c, l, call, 2);
		break;
	case RL_PERMIT:
		call->s = &rl_script_permit_release;
		semaphore_keys(call, name);
		call->keys[call->nkeys++] = key(call, RL_PREFIX_LOG, name);
		call->nargs = 5;
		call->args[0] = permit_key(call, owner);
		release_args(c, l, call, 1);
		break;
	default:
		call->s = &rl_script_rw_release;
		call->nkeys = 6;
		call->keys[0] = name;
		call->keys[1] = key(call, RL_PREFIX_RWLOCK, name);
		call->keys[2] = key(call, RL_PREFIX_CHANNEL, name);
		call->keys[3] = key(call, RL_PREFIX_HOLDER, name);
		call->keys[4] = read_leases(call, name, owner);
		call->keys[5] = suffixed(call, name, NULL);
		/* The fair queue's and the room's: whoever waits there is
		 * woken on its own channel when NAME goes. */
		call->keys[6] = key(call, RL_PREFIX_QUEUE, name);
		call->keys[7] = key(call, RL_PREFIX_TIMEOUT, name);
		call->keys[8] = key(call, RL_PREFIX_WAITER, name);
		call->keys[9] = key(call, RL_PREFIX_ROOM, name);
		call->keys[10] = key(call, RL_PREFIX_LISTENER, name);
		call->keys[11] = key(call, RL_PREFIX_LOG, name);
		call->nkeys = 12;
		call->nargs = 6;
		call->args[0] = owner;
		call->args[1] = mode(l);
		release_args(c, l, call, 2);
		break;
	}
	return made(c, call);
}

enum rl_err
rl_call_renew(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;

	memset(call, 0, sizeof(*call));
	call->args[0] = num(call, 0, ttl_ms);
	switch (l->kind) {
	case RL_EXCLUSIVE:
		call->s = &rl_script_renew;
		call->nkeys = 2;
		call->keys[0] = name;
		call->keys[1] = key(call, RL_PREFIX_HOLDER, name);
		call->nargs = 2;
		call->args[1] = owner;
		break;
	case RL_PERMIT:
		call->s = &rl_script_permit_renew;
		call->nkeys = 2;
		call->keys[0] = suffixed(call, name, "timeout");
		call->keys[1] = key(call, RL_PREFIX_HOLDER, name);
		call->nargs = 2;
		call->args[1] = permit_key(call, owner);
		break;
	default:
		call->s = &rl_script_rw_renew;
		call->nkeys = 3;
		call->keys[0] = name;
		call->keys[1] = key(call, RL_PREFIX_HOLDER, name);
		call->keys[2] = read_leases(call, name, owner);
		call->nargs = 3;
		call->args[1] = owner;
		call->args[2] = mode(l);
		break;
	}
	return made(c, call);
}

enum rl_err
rl_call_force(rl_client *c, const struct rl_lock *l, const struct rl_meta *by,
    struct rl_call *call)
{
	const char *name = l->name;
	int at = 1;

	memset(call, 0, sizeof(*call));
	if (l->kind == RL_PERMIT) {
		call->s = &rl_script_permit_force;
		semaphore_keys(call, name);
		at = 0;
	} else {
		call->s = &rl_script_force;
		lock_keys(call, name);
		call->keys[call->nkeys++] = suffixed(call, name, NULL);
		call->keys[call->nkeys++] = key(call, RL_PREFIX_RWLOCK, name);
		call->args[0] = "0";
	}
	call->keys[call->nkeys++] = key(call, RL_PREFIX_LOG, name);
	call->nargs = at + 5;
	call->args[at] = c->hist_max;
	call->args[at + 1] = c->hist_ttl;
	call->args[at + 2] = by && by->host ? by->host : "";
	call->args[at + 3] = num(call, 0, by ? by->pid : 0);
	call->args[at + 4] = by && by->user ? by->user : "";
	return made(c, call);
}

enum rl_err
rl_call_unannounce(rl_client *c, const struct rl_lock *l,
    const struct rl_meta *meta, int64_t waited_ms, struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;

	memset(call, 0, sizeof(*call));
	call->s = &rl_script_rw_leave;
	call->nkeys = 2;
	call->keys[0] = key(call, RL_PREFIX_WRITER, name);
	call->keys[1] = key(call, RL_PREFIX_RWLOCK, name);
	call->nargs = 4;
	call->args[0] = owner;
	call->args[1] = call->args[2] = call->args[3] = "";
	if (l->kind != RL_SHARED && l->kind != RL_WRITE)
		return made(c, call);	/* its leaving the room records it */
	call->keys[call->nkeys++] = key(call, RL_PREFIX_LOG, name);
	call->args[1] = c->hist_max;
	call->args[2] = c->hist_ttl;
	call->args[3] = own(call, history_meta(owner, meta, waited_ms,
	    kind_name(l)));
	return made(c, call);
}

enum rl_err
rl_call_room_leave(rl_client *c, const struct rl_lock *l,
    const struct rl_meta *meta, int64_t waited_ms, struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;

	memset(call, 0, sizeof(*call));
	call->s = &rl_script_room_leave;
	call->nkeys = 2;
	call->keys[0] = key(call, RL_PREFIX_ROOM, name);
	call->keys[1] = key(call, RL_PREFIX_LISTENER, name);
	call->nargs = 2;
	call->args[0] = l->kind == RL_PERMIT ? permit_key(call, owner) : owner;
	call->args[1] = own(call, rl_kind_channel(l));
	/* A waiter that gives up is recorded in the name's history. */
	call->keys[call->nkeys++] = key(call, RL_PREFIX_LOG, name);
	call->args[2] = c->hist_max;
	call->args[3] = c->hist_ttl;
	call->args[4] = own(call, history_meta(owner, meta, waited_ms,
	    kind_name(l)));
	call->nargs = 5;
	return made(c, call);
}

char *
rl_kind_waiter_channel(const struct rl_lock *l)
{
	struct rl_call ids = { 0 };
	char *ch = rl_kind_channel(l), *s = NULL;
	const char *id = l->kind == RL_PERMIT ? permit_key(&ids, l->owner) :
	    l->owner;
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
		.release = rl_call_release,
		.renew = rl_call_renew,
		.force = rl_call_force,
		.leave = rl_call_room_leave,
	},
	[RL_SHARED] = {
		.kind = RL_SHARED,
		.several = "shared locks",
		.history = "read",
		.mode = "read",
		.channel = RL_PREFIX_RWLOCK,
		.renew_max_ms = RL_SHARED_RENEW_MAX_MS,
		.acquire = rl_call_acquire,
		.release = rl_call_release,
		.renew = rl_call_renew,
		.force = rl_call_force,
		.leave = rl_call_unannounce,
	},
	[RL_WRITE] = {
		.kind = RL_WRITE,
		.several = "write locks",
		.history = "write",
		.mode = "write",
		.channel = RL_PREFIX_RWLOCK,
		.acquire = rl_call_acquire,
		.release = rl_call_release,
		.renew = rl_call_renew,
		.force = rl_call_force,
		.leave = rl_call_unannounce,
	},
	[RL_PERMIT] = {
		.kind = RL_PERMIT,
		.several = "semaphores (--limit)",
		.history = "permit",
		.channel = RL_PREFIX_SEMAPHORE,
		.room = 1,
		.renew_max_ms = RL_SHARED_RENEW_MAX_MS,
		.acquire = rl_call_acquire,
		.release = rl_call_release,
		.renew = rl_call_renew,
		.force = rl_call_force,
		.leave = rl_call_room_leave,
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

	if (acquire && l->kind == RL_PERMIT && l->limit < 1) {
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
