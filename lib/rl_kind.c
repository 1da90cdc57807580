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

const char *
rl_call_own(struct rl_call *call, char *s)
{
	if (s == NULL || call->nown == sizeof(call->own) /
	    sizeof(call->own[0])) {
		free(s);
		call->nomem = 1;
		return NULL;
	}
	call->own[call->nown++] = s;
	return s;
}

/* S, kept by the call; NULL when out of memory. */
static const char *
own(struct rl_call *call, char *s)
{
	return rl_call_own(call, s);
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

const char *
rl_call_num(struct rl_call *call, size_t i, int64_t v)
{
	snprintf(call->num[i], sizeof(call->num[i]), "%lld", (long long)v);
	return call->num[i];
}

static const char *
num(struct rl_call *call, size_t i, int64_t v)
{
	return rl_call_num(call, i, v);
}

/* The key named by PREFIX (Redisson's "PREFIX:{NAME}"), as the call's
 * own. */
static const char *
key(struct rl_call *call, const char *prefix, const char *name)
{
	return own(call, rl_key(prefix, name));
}

/* "{NAME}:SUFFIX" with OWNER in SUFFIX the owner token, as the call's
 * own. */
static const char *
suffixed(struct rl_call *call, const char *name, const char *suffix,
    const char *owner)
{
	const char *at = strstr(suffix, "OWNER");
	size_t n;
	char *s;

	if (at == NULL)
		return own(call, rl_key_suffix(name, suffix));
	if (owner == NULL)
		return own(call, NULL);
	n = strlen(suffix) + strlen(owner);
	if ((s = malloc(n)) == NULL)
		return own(call, NULL);
	snprintf(s, n, "%.*s%s%s", (int)(at - suffix), suffix, owner,
	    at + sizeof("OWNER") - 1);
	own(call, s);
	return own(call, rl_key_suffix(name, s));
}

/* The key of TEMPLATE (lua/embed.sh: NAME, PREFIX:{NAME}, {NAME} or
 * {NAME}:SUFFIX) for lock NAME and OWNER, as the call's own. */
static const char *
template_key(struct rl_call *call, const char *t, const char *name,
    const char *owner)
{
	const char *brace = strstr(t, "{NAME}");
	char prefix[64];

	if (strcmp(t, "NAME") == 0)
		return name;
	if (brace == NULL || (brace > t && (brace[-1] != ':' ||
	    brace - t > (ptrdiff_t)sizeof(prefix) || brace[6] != '\0')))
		return own(call, NULL);
	if (brace > t) {
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(brace - t - 1),
		    t);
		return own(call, rl_key(prefix, name));
	}
	if (brace[6] == '\0')
		return own(call, rl_key_suffix(name, NULL));
	return brace[6] == ':' ? suffixed(call, name, brace + 7, owner) :
	    own(call, NULL);
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
		call->keys[i] = template_key(call, s->templates[i], name,
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
	call->args[pid] = num(call, 3, meta ? meta->pid : 0);
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

char *
rl_history_meta(const char *owner, const struct rl_meta *meta,
    int64_t waited_ms)
{
	return history_meta(owner, meta, waited_ms, NULL);
}

/* The history's three arguments, named by HISTORY_ARGS(SCRIPT), of CALL
 * for L's owner (META), as rl_try_acquire passes them for a plain lock.
 */
#define HISTORY_ARGS(S) RL_##S##_ARG_HIST_MAX, RL_##S##_ARG_HIST_TTL, \
	RL_##S##_ARG_HIST_ENTRY
static void
history_args(rl_client *c, const struct rl_lock *l,
    const struct rl_meta *meta, struct rl_call *call, int max, int ttl,
    int entry)
{
	const char *owner = l->owner;

	call->args[max] = c->hist_max;
	call->args[ttl] = c->hist_ttl;
	call->args[entry] = own(call, history_meta(owner, meta,
	    rl_waited_ms(c), kind_name(l)));
}

/* A release's history arguments and its flags, named by
 * RELEASE_ARGS(SCRIPT), of CALL (max, expiry, L's owner's entry with
 * COMMAND's exit status where known, and the kind; flags: "l" for the
 * watchdog's release, which has an exit status to record, so that a hold
 * it finds gone is recorded as lost). */
#define RELEASE_ARGS(S) HISTORY_ARGS(S), RL_##S##_ARG_FLAGS
static void
release_args(rl_client *c, const struct rl_lock *l, struct rl_call *call,
    int max, int ttl, int entry, int flags)
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
	call->args[max] = c->hist_max;
	call->args[ttl] = c->hist_ttl;
	call->args[entry] = own(call, rl_history_entry(f, n));
	call->args[flags] = c->exit_status[0] == '\0' ? "" : "l";
}

/* rl_call_acquire of a permit. */
static enum rl_err
permit_acquire(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    const struct rl_meta *meta, enum rl_join join, struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;
	const char **a = call->args;

	rl_call_make(call, &rl_script_permit_acquire, name, owner);
	RL_CALL_ARGS(PERMIT_ACQUIRE, 15);
	a[RL_PERMIT_ACQUIRE_ARG_LEASE] = num(call, 0, ttl_ms);
	a[RL_PERMIT_ACQUIRE_ARG_PERMIT] = permit_key(call, owner);
	a[RL_PERMIT_ACQUIRE_ARG_LIMIT] = num(call, 1, l->limit);
	meta_args(meta, call, META_ARGS(PERMIT_ACQUIRE));
	a[RL_PERMIT_ACQUIRE_ARG_WAITER_TIMEOUT] = num(call, 2, c->waiter_ms);
	a[RL_PERMIT_ACQUIRE_ARG_FLAGS] = l->reenter ? "e" :
	    join == RL_JOIN_AGAIN ? "jw" : join == RL_JOIN_YES ? "j" : "";
	a[RL_PERMIT_ACQUIRE_ARG_MIN_HOLD] = num(call, 4, c->min_hold_ms);
	history_args(c, l, meta, call, HISTORY_ARGS(PERMIT_ACQUIRE));
	a[RL_PERMIT_ACQUIRE_ARG_HOLDER_JSON] = own(call, rl_holder_json(meta));
	return made(c, call);
}

enum rl_err
rl_call_acquire(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    const struct rl_meta *meta, enum rl_join join, int64_t waiter_ms,
    struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;
	const char **a = call->args;

	if (l->kind == RL_PERMIT)
		return permit_acquire(c, l, ttl_ms, meta, join, call);
	rl_call_make(call, &rl_script_rw_acquire, name, owner);
	RL_CALL_ARGS(RW_ACQUIRE, 16);
	a[RL_RW_ACQUIRE_ARG_LEASE] = num(call, 0, ttl_ms);
	a[RL_RW_ACQUIRE_ARG_OWNER] = owner;
	meta_args(meta, call, META_ARGS(RW_ACQUIRE));
	a[RL_RW_ACQUIRE_ARG_MODE] = mode(l);
	a[RL_RW_ACQUIRE_ARG_WAITER_TIMEOUT] = num(call, 2, waiter_ms);
	a[RL_RW_ACQUIRE_ARG_FLAGS] = l->reenter ? "e" :
	    join != RL_JOIN_NO ? "j" : "";
	a[RL_RW_ACQUIRE_ARG_CHANNEL] = key(call, RL_PREFIX_RWLOCK, name);
	a[RL_RW_ACQUIRE_ARG_MIN_HOLD] = num(call, 4, c->min_hold_ms);
	history_args(c, l, meta, call, HISTORY_ARGS(RW_ACQUIRE));
	a[RL_RW_ACQUIRE_ARG_HOLDER_JSON] = own(call, rl_holder_json(meta));
	return made(c, call);
}

enum rl_err
rl_call_release(rl_client *c, const struct rl_lock *l, struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;
	const char **a = call->args;

	switch (l->kind) {
	case RL_EXCLUSIVE:
		rl_call_make(call, &rl_script_release, name, owner);
		RL_CALL_ARGS(RELEASE, 7);
		a[RL_RELEASE_ARG_OWNER] = owner;
		a[RL_RELEASE_ARG_MESSAGE] = "0";
		release_args(c, l, call, RELEASE_ARGS(RELEASE));
		break;
	case RL_PERMIT:
		rl_call_make(call, &rl_script_permit_release, name, owner);
		RL_CALL_ARGS(PERMIT_RELEASE, 6);
		a[RL_PERMIT_RELEASE_ARG_PERMIT] = permit_key(call, owner);
		release_args(c, l, call, RELEASE_ARGS(PERMIT_RELEASE));
		break;
	default:
		rl_call_make(call, &rl_script_rw_release, name, owner);
		RL_CALL_ARGS(RW_RELEASE, 7);
		a[RL_RW_RELEASE_ARG_OWNER] = owner;
		a[RL_RW_RELEASE_ARG_MODE] = mode(l);
		release_args(c, l, call, RELEASE_ARGS(RW_RELEASE));
		break;
	}
	return made(c, call);
}

void
rl_call_unused(struct rl_call *call)
{
	if (call->s == &rl_script_release)
		call->args[RL_RELEASE_ARG_FLAGS] = "u";
	else if (call->s == &rl_script_permit_release)
		call->args[RL_PERMIT_RELEASE_ARG_FLAGS] = "u";
	else if (call->s == &rl_script_rw_release)
		call->args[RL_RW_RELEASE_ARG_FLAGS] = "u";
}

void
rl_call_unrecorded(struct rl_call *call)
{
	if (call->s == &rl_script_room_leave)
		call->args[RL_ROOM_LEAVE_ARG_HIST_MAX] = "";
	else if (call->s == &rl_script_rw_leave)
		call->args[RL_RW_LEAVE_ARG_HIST_MAX] = "";
}

void
rl_call_quiet(struct rl_call *call)
{
	if (call->s == &rl_script_release)
		call->args[RL_RELEASE_ARG_MESSAGE] = "";
}

enum rl_err
rl_call_renew(rl_client *c, const struct rl_lock *l, int64_t ttl_ms,
    struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;
	const char **a = call->args;

	switch (l->kind) {
	case RL_EXCLUSIVE:
		rl_call_make(call, &rl_script_renew, name, owner);
		RL_CALL_ARGS(RENEW, 2);
		a[RL_RENEW_ARG_LEASE] = num(call, 0, ttl_ms);
		a[RL_RENEW_ARG_OWNER] = owner;
		break;
	case RL_PERMIT:
		rl_call_make(call, &rl_script_permit_renew, name, owner);
		RL_CALL_ARGS(PERMIT_RENEW, 2);
		a[RL_PERMIT_RENEW_ARG_LEASE] = num(call, 0, ttl_ms);
		a[RL_PERMIT_RENEW_ARG_PERMIT] = permit_key(call, owner);
		break;
	default:
		rl_call_make(call, &rl_script_rw_renew, name, owner);
		RL_CALL_ARGS(RW_RENEW, 3);
		a[RL_RW_RENEW_ARG_LEASE] = num(call, 0, ttl_ms);
		a[RL_RW_RENEW_ARG_OWNER] = owner;
		a[RL_RW_RENEW_ARG_MODE] = mode(l);
		break;
	}
	return made(c, call);
}

enum rl_err
rl_call_force(rl_client *c, const struct rl_lock *l, const struct rl_meta *by,
    struct rl_call *call)
{
	const char *name = l->name;
	const char **a = call->args;
	const char *host = by && by->host ? by->host : "";
	const char *user = by && by->user ? by->user : "";

	if (l->kind == RL_PERMIT) {
		rl_call_make(call, &rl_script_permit_force, name, NULL);
		RL_CALL_ARGS(PERMIT_FORCE, 6);
		a[RL_PERMIT_FORCE_ARG_HIST_MAX] = c->hist_max;
		a[RL_PERMIT_FORCE_ARG_HIST_TTL] = c->hist_ttl;
		a[RL_PERMIT_FORCE_ARG_HOST] = host;
		a[RL_PERMIT_FORCE_ARG_PID] = num(call, 0, by ? by->pid : 0);
		a[RL_PERMIT_FORCE_ARG_USER] = user;
		return made(c, call);
	}
	rl_call_make(call, &rl_script_force, name, NULL);
	RL_CALL_ARGS(FORCE, 7);
	a[RL_FORCE_ARG_MESSAGE] = "0";
	a[RL_FORCE_ARG_HIST_MAX] = c->hist_max;
	a[RL_FORCE_ARG_HIST_TTL] = c->hist_ttl;
	a[RL_FORCE_ARG_HOST] = host;
	a[RL_FORCE_ARG_PID] = num(call, 0, by ? by->pid : 0);
	a[RL_FORCE_ARG_USER] = user;
	return made(c, call);
}

enum rl_err
rl_call_unannounce(rl_client *c, const struct rl_lock *l,
    const struct rl_meta *meta, int64_t waited_ms, struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;
	const char **a = call->args;

	rl_call_make(call, &rl_script_rw_leave, name, owner);
	RL_CALL_ARGS(RW_LEAVE, 5);
	a[RL_RW_LEAVE_ARG_OWNER] = owner;
	/* Not a read-write lock's waiter: its leaving the room records it
	 * (no history: the stream is not touched). */
	a[RL_RW_LEAVE_ARG_HIST_MAX] = a[RL_RW_LEAVE_ARG_HIST_TTL] =
	    a[RL_RW_LEAVE_ARG_HIST_ENTRY] = "";
	if (l->kind != RL_SHARED && l->kind != RL_WRITE)
		return made(c, call);
	a[RL_RW_LEAVE_ARG_HIST_MAX] = c->hist_max;
	a[RL_RW_LEAVE_ARG_HIST_TTL] = c->hist_ttl;
	a[RL_RW_LEAVE_ARG_HIST_ENTRY] = own(call, history_meta(owner, meta,
	    waited_ms, kind_name(l)));
	return made(c, call);
}

enum rl_err
rl_call_room_leave(rl_client *c, const struct rl_lock *l,
    const struct rl_meta *meta, int64_t waited_ms, struct rl_call *call)
{
	const char *name = l->name, *owner = l->owner;
	const char **a = call->args;

	rl_call_make(call, &rl_script_room_leave, name, owner);
	RL_CALL_ARGS(ROOM_LEAVE, 6);
	a[RL_ROOM_LEAVE_ARG_WAITER] = l->kind == RL_PERMIT ?
	    permit_key(call, owner) : owner;
	a[RL_ROOM_LEAVE_ARG_CHANNEL] = own(call, rl_kind_channel(l));
	/* A waiter that gives up is recorded in the name's history. */
	a[RL_ROOM_LEAVE_ARG_HIST_MAX] = c->hist_max;
	a[RL_ROOM_LEAVE_ARG_HIST_TTL] = c->hist_ttl;
	a[RL_ROOM_LEAVE_ARG_HIST_ENTRY] = own(call, history_meta(owner, meta,
	    waited_ms, kind_name(l)));
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
