/* rl_decode.c: script replies into lib's structures, no I/O. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rl_decode.h"

/* A stream entry (XRANGE): {id, {field, value...}}. */
enum { EV_ID, EV_FIELDS };

static const redisReply *
elem(const redisReply *r, size_t i)
{
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
		return NULL;
	return r->element[i];
}

int64_t
rl_elem_int(const redisReply *r, size_t i, int64_t def)
{
	const redisReply *e = elem(r, i);
	long long v;
	char *end;

	if (e != NULL && e->type == REDIS_REPLY_INTEGER)
		return e->integer;
	if (e != NULL && e->type == REDIS_REPLY_STRING && e->len > 0 &&
	    e->str[0] >= '0' && e->str[0] <= '9') {
		errno = 0;
		v = strtoll(e->str, &end, 10);
		if (errno == 0 && *end == '\0')
			return v;
	}
	return def;
}

const char *
rl_elem_str(const redisReply *r, size_t i)
{
	const redisReply *e = elem(r, i);

	if (e == NULL || (e->type != REDIS_REPLY_STRING &&
	    e->type != REDIS_REPLY_STATUS))
		return NULL;
	return e->str;
}

/* The scripts' verdicts, as their RETURNS headers give them, are these. */
_Static_assert(RL_RET_ACQUIRED == RL_V_YES && RL_RET_BUSY == RL_V_NO &&
    RL_RET_WRONGTYPE == RL_V_WRONGTYPE && RL_RET_RELEASED == RL_V_RELEASED &&
    RL_RET_NESTED == RL_V_YES && RL_RET_NOT_HELD == RL_V_NO &&
    RL_RET_DELETED == RL_V_YES && RL_RET_FREE == RL_V_NO &&
    RL_RET_HELD == RL_V_YES, "a script's verdict is not rl_verdict's");

enum rl_verdict
rl_verdict(const redisReply *r)
{
	int64_t v;

	if (r == NULL)
		return RL_V_NONE;
	if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER)
		return RL_V_BAD;
	v = r->element[0]->integer;
	return v >= RL_V_WRONGTYPE && v <= RL_V_RELEASED ?
	    (enum rl_verdict)v : RL_V_BAD;
}

/* Where a holder's process runs, from the elements of E at BOOT, PIDNS
 * and RENEWED (PROC_AT(SHAPE): those of reply shape SHAPE): boot id, pid
 * namespace, renewed (1). */
#define PROC_AT(S) RL_RET_##S##_BOOT, RL_RET_##S##_PIDNS, RL_RET_##S##_RENEWED
static void
proc_of(const redisReply *e, size_t boot, size_t pidns, size_t renewed,
    struct rl_proc *p)
{
	p->boot = rl_elem_str(e, boot);
	p->pidns = rl_elem_str(e, pidns);
	p->renewed = rl_elem_int(e, renewed, 0) == 1;
}

static enum rl_verdict
wrongtype(const redisReply *r, const char **key, const char **type)
{
	*key = rl_elem_str(r, RL_RET_WRONGTYPE_KEY);
	*type = rl_elem_str(r, RL_RET_WRONGTYPE_TYPE);
	return RL_V_WRONGTYPE;
}

static void
holder(const redisReply *r, struct rl_attempt *a)
{
	a->pttl = rl_elem_int(r, RL_RET_BUSY_PTTL, -1);
	a->owner = rl_elem_str(r, RL_RET_BUSY_OWNER);
	a->host = rl_elem_str(r, RL_RET_BUSY_HOST);
	a->pid = (long)rl_elem_int(r, RL_RET_BUSY_PID, 0);
	a->cmd = rl_elem_str(r, RL_RET_BUSY_CMD);
	a->held_ms = rl_elem_int(r, RL_RET_BUSY_HELD_MS, -1);
	a->position = rl_elem_int(r, RL_RET_BUSY_POSITION, 0);
	a->queued = rl_elem_int(r, RL_RET_BUSY_QUEUED, 0);
	a->head_wait_ms = rl_elem_int(r, RL_RET_BUSY_HEAD_WAIT_MS, -1);
	a->rejoined = rl_elem_int(r, RL_RET_BUSY_REJOINED, 0) == 1;
	a->ahead = rl_elem_int(r, RL_RET_BUSY_AHEAD, -1);
	a->listen = rl_elem_int(r, RL_RET_BUSY_LISTEN, 0) == 1;
	a->announced = rl_elem_int(r, RL_RET_BUSY_ANNOUNCED, 0) == 1;
	a->held_until_ms = rl_elem_int(r, RL_RET_BUSY_HELD_UNTIL, 0);
	a->by_owner = rl_elem_str(r, RL_RET_BUSY_BY_OWNER);
	a->superseded = a->by_owner != NULL;
	a->lapsed = a->superseded && a->by_owner[0] == '\0';
	if (a->lapsed)
		a->by_owner = NULL;
	a->gone = rl_elem_int(r, RL_RET_BUSY_GONE, 0) == 1;
	a->by_host = rl_elem_str(r, RL_RET_BUSY_BY_HOST);
	a->by_pid = (long)rl_elem_int(r, RL_RET_BUSY_BY_PID, 0);
	a->by_cmd = rl_elem_str(r, RL_RET_BUSY_BY_CMD);
}

enum rl_verdict
rl_decode_acquire(const redisReply *r, struct rl_attempt *a)
{
	enum rl_verdict v = rl_verdict(r);

	switch (v) {
	case RL_V_YES:
		a->fence = rl_elem_int(r, RL_RET_ACQUIRED_FENCE, 0);
		a->holds = rl_elem_int(r, RL_RET_ACQUIRED_HOLDS, 1);
		a->nopub = rl_elem_str(r, RL_RET_ACQUIRED_NOPUB);
		a->skipped = rl_elem_str(r, RL_RET_ACQUIRED_SKIPPED);
		return v;
	case RL_V_NO:
		holder(r, a);
		return v;
	case RL_V_WRONGTYPE:
		return wrongtype(r, &a->badkey, &a->badtype);
	case RL_V_NONE:
		return v;
	default:
		return RL_V_BAD;
	}
}

enum rl_verdict
rl_decode_release(const redisReply *r, int64_t *holds, const char **nopub)
{
	enum rl_verdict v = rl_verdict(r);

	*holds = 0;
	*nopub = NULL;
	if (v == RL_V_RELEASED)
		*nopub = rl_elem_str(r, RL_RET_RELEASED_NOPUB);
	else if (v == RL_V_YES)
		*holds = rl_elem_int(r, RL_RET_NESTED_HOLDS, 0);
	else if (v == RL_V_NO)
		*holds = rl_elem_int(r, RL_RET_NOT_HELD_EXISTS, 0);
	return v;
}

int64_t
rl_decode_release_until(const redisReply *r)
{
	return rl_verdict(r) == RL_V_RELEASED ?
	    rl_elem_int(r, RL_RET_RELEASED_UNTIL, 0) : 0;
}

enum rl_verdict
rl_decode_force(const redisReply *r, const char **nopub)
{
	enum rl_verdict v = rl_verdict(r);

	*nopub = v == RL_V_YES ? rl_elem_str(r, RL_RET_DELETED_NOPUB) : NULL;
	return v == RL_V_RELEASED ? RL_V_BAD : v;
}

void
rl_decode_forced(const redisReply *r, struct rl_attempt *a)
{
	if (rl_verdict(r) != RL_V_YES || rl_elem_str(r, RL_RET_DELETED_OWNER) == NULL)
		return;
	a->owner = rl_elem_str(r, RL_RET_DELETED_OWNER);
	a->host = rl_elem_str(r, RL_RET_DELETED_HOST);
	a->pid = (long)rl_elem_int(r, RL_RET_DELETED_PID, 0);
	a->user = rl_elem_str(r, RL_RET_DELETED_USER);
	a->cmd = rl_elem_str(r, RL_RET_DELETED_CMD);
	a->held_ms = rl_elem_int(r, RL_RET_DELETED_HELD_MS, -1);
}

/* A decimal field value S, or DEF when empty or not a number. */
static int64_t
field_int(const char *s, int64_t def)
{
	long long v;
	char *end;

	if (s == NULL || *s == '\0')
		return def;
	errno = 0;
	v = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0' ? v : def;
}

/* Field F's value in EV's string fields, by name. */
static void
event_field(struct rl_event *ev, const char *f, const char *v)
{
	static const struct { const char *name; size_t off; } str[] = {
		{ "event", offsetof(struct rl_event, event) },
		{ "owner", offsetof(struct rl_event, owner) },
		{ "host", offsetof(struct rl_event, host) },
		{ "user", offsetof(struct rl_event, user) },
		{ "cmd", offsetof(struct rl_event, cmd) },
		{ "fence", offsetof(struct rl_event, fence) },
		{ "kind", offsetof(struct rl_event, kind) },
		{ "by_host", offsetof(struct rl_event, by_host) },
		{ "by_user", offsetof(struct rl_event, by_user) },
		{ "by_cmd", offsetof(struct rl_event, by_cmd) },
		{ "holder", offsetof(struct rl_event, holder) },
	};
	size_t i;

	for (i = 0; i < sizeof(str) / sizeof(str[0]); i++)
		if (strcmp(f, str[i].name) == 0)
			*(const char **)(void *)((char *)ev + str[i].off) = v;
	if (strcmp(f, "pid") == 0)
		ev->pid = (long)field_int(v, 0);
	else if (strcmp(f, "by_pid") == 0)
		ev->by_pid = (long)field_int(v, 0);
	else if (strcmp(f, "wait_ms") == 0)
		ev->wait_ms = field_int(v, -1);
	else if (strcmp(f, "hold_ms") == 0)
		ev->hold_ms = field_int(v, -1);
	else if (strcmp(f, "exit") == 0)	/* an int, or not known */
		ev->exit_status = field_int(v, -1) <= INT_MAX ?
		    (int)field_int(v, -1) : -1;
	else if (strcmp(f, "held_until") == 0)
		ev->until_ms = field_int(v, -1);
}

/* The field "e" of a history entry V: field/value pairs, each string
 * but the last followed by byte 31 (or NUL), copied to *ARENA (which
 * moves past the copy) with those bytes made NULs, into EV. */
static void
packed(struct rl_event *ev, const redisReply *v, char **arena)
{
	char *p = *arena, *end = p + v->len, *k;
	size_t i;

	for (i = 0; i < v->len; i++)
		p[i] = v->str[i] == '\037' ? '\0' : v->str[i];
	*end = '\0';
	*arena = end + 1;
	while (p < end) {
		k = p;
		p += strlen(p) + 1;
		if (p > end)
			break;
		event_field(ev, k, p);
		p += strlen(p) + 1;
	}
}

size_t
rl_event_room(const redisReply *r)
{
	const redisReply *f = elem(r, EV_FIELDS);
	size_t i, n = 0;

	for (i = 0; f != NULL && f->type == REDIS_REPLY_ARRAY &&
	    i + 1 < f->elements; i += 2)
		n += f->element[i + 1]->len + 1;
	return n;
}

int
rl_decode_event(const redisReply *r, struct rl_event *ev, char **arena)
{
	const redisReply *id = elem(r, EV_ID), *f = elem(r, EV_FIELDS);
	size_t i;

	memset(ev, 0, sizeof(*ev));
	ev->event = ev->owner = ev->host = ev->user = ev->cmd = ev->fence =
	    ev->kind = ev->by_host = ev->by_user = ev->by_cmd = ev->holder =
	    "";
	ev->wait_ms = ev->hold_ms = ev->until_ms = -1;
	ev->exit_status = -1;
	if (id == NULL || id->type != REDIS_REPLY_STRING || f == NULL ||
	    f->type != REDIS_REPLY_ARRAY || id->len >= sizeof(ev->id))
		return -1;
	memcpy(ev->id, id->str, id->len + 1);
	ev->time_ms = field_int(ev->id, -1);
	if (ev->time_ms < 0)	/* "MS-SEQ": the milliseconds before '-' */
		ev->time_ms = strtoll(ev->id, NULL, 10);
	for (i = 0; i + 1 < f->elements; i += 2)
		if (f->element[i]->type == REDIS_REPLY_STRING &&
		    f->element[i + 1]->type == REDIS_REPLY_STRING &&
		    strcmp(f->element[i]->str, "e") == 0)
			packed(ev, f->element[i + 1], arena);
		else if (f->element[i]->type == REDIS_REPLY_STRING &&
		    f->element[i + 1]->type == REDIS_REPLY_STRING)
			event_field(ev, f->element[i]->str,
			    f->element[i + 1]->str);
	return 0;
}

static int
is(const struct rl_event *e, const char *what)
{
	return strcmp(e->event, what) == 0;
}

/* Release (or loss, or removal) E's holder, kind, token and hold time,
 * where not recorded, from its acquisition A. */
static void
fill_from(struct rl_event *e, const struct rl_event *a)
{
	if (e->host[0] == '\0') {
		e->host = a->host;
		e->pid = a->pid;
		e->user = a->user;
		e->cmd = a->cmd;
	}
	if (e->kind[0] == '\0')
		e->kind = a->kind;
	if (e->fence[0] == '\0')
		e->fence = a->fence;
	if (e->hold_ms < 0 && a->time_ms > 0 && e->time_ms >= a->time_ms)
		e->hold_ms = e->time_ms - a->time_ms;
}

/* A hold nobody else holds beside it: a plain lock's (no kind) or a
 * write lock's. */
static int
exclusive(const struct rl_event *e)
{
	return e->kind[0] == '\0' || strcmp(e->kind, "write") == 0;
}

/* Whether end event E (a release, loss or removal) is of the hold that
 * acquisition A took: the same owner, and the same kind where both say
 * (a writer may hold reads of its own beside its write). */
static int
same_hold(const struct rl_event *a, const struct rl_event *e)
{
	return strcmp(a->owner, e->owner) == 0 && (a->kind[0] == '\0' ||
	    e->kind[0] == '\0' || strcmp(a->kind, e->kind) == 0);
}

/* Whether acquisition E proves that the hold of an earlier acquisition
 * A, not ended since, had ended when E was made: one of them holds
 * alone (of another owner), or the same owner took the same kind afresh
 * (a re-entry is not recorded) or a write after its read (a reader does
 * not upgrade). Readers and permits overlap: they prove nothing, nor
 * does a writer's own read beside its write. */
static int
ended(const struct rl_event *a, const struct rl_event *e)
{
	if (strcmp(a->owner, e->owner) == 0)
		return strcmp(a->kind, e->kind) == 0 || exclusive(e);
	return exclusive(a) || exclusive(e);
}

/* An "expired" event for acquisition A put in at EV[I] (N events before,
 * room for one more), at the time of the event that was there. */
static void
expire(struct rl_event *ev, size_t n, size_t i, const struct rl_event *a)
{
	struct rl_event acq = *a, *e = &ev[i];

	memmove(e + 1, e, (n - i) * sizeof(*e));
	e->event = "expired";
	e->id[0] = '\0';
	e->wait_ms = e->hold_ms = e->until_ms = -1;
	e->owner = acq.owner;
	e->host = acq.host;
	e->pid = acq.pid;
	e->user = acq.user;
	e->cmd = acq.cmd;
	e->kind = acq.kind;
	e->fence = acq.fence;
	e->exit_status = -1;
	e->holder = e->by_host = e->by_user = e->by_cmd = "";
	e->by_pid = 0;
}

/* Take entry K out of the N of OPEN, keeping the others' order. */
static void
drop(size_t *open, size_t *n, size_t k)
{
	memmove(open + k, open + k + 1, (*n - k - 1) * sizeof(*open));
	(*n)--;
}

size_t
rl_events_infer(struct rl_event *ev, size_t n, size_t cap)
{
	size_t *open, nopen = 0, i, j, k;	/* acquisitions not ended */

	if ((open = malloc((n + 1) * sizeof(*open))) == NULL)
		return n;
	for (i = 0; i < n; i++) {
		if (is(&ev[i], "acquired")) {
			/* Open holds come before I: the insertions (at I)
			 * move none of them. */
			for (k = 0; k < nopen;) {
				if (!ended(&ev[open[k]], &ev[i])) {
					k++;
					continue;
				}
				if (n < cap)
					expire(ev, n++, i++, &ev[open[k]]);
				drop(open, &nopen, k);
			}
			open[nopen++] = i;
			continue;
		}
		if (!is(&ev[i], "released") && !is(&ev[i], "lost") &&
		    !is(&ev[i], "forced") && !is(&ev[i], "undone"))
			continue;
		for (j = i; j > 0; j--)
			if (is(&ev[j - 1], "acquired") &&
			    same_hold(&ev[j - 1], &ev[i])) {
				fill_from(&ev[i], &ev[j - 1]);
				break;
			}
		for (k = 0; k < nopen;)
			if (same_hold(&ev[open[k]], &ev[i]))
				drop(open, &nopen, k);
			else
				k++;
	}
	free(open);
	return n;
}

enum rl_verdict
rl_decode_renew(const redisReply *r)
{
	if (r == NULL)
		return RL_V_NONE;
	if (r->type != REDIS_REPLY_INTEGER)
		return RL_V_BAD;
	return r->integer == RL_RET_RENEWED ? RL_V_YES : RL_V_NO;
}

int
rl_decode_renew_taken(const redisReply *r)
{
	return r != NULL && r->type == REDIS_REPLY_INTEGER &&
	    r->integer == RL_RET_TAKEN;
}

/* The array at position I of R (its element count in *N), or NULL. */
static const redisReply *
list(const redisReply *r, size_t i, size_t *n)
{
	const redisReply *l = elem(r, i);

	if (l == NULL || l->type != REDIS_REPLY_ARRAY)
		return NULL;
	*n = l->elements;
	return l;
}

/* Wrong type: and if it is a Redisson semaphore, what it holds. */
static void
semaphore(const redisReply *r, struct rl_status *st)
{
	const char *kind = rl_elem_str(r, RL_RET_WRONGTYPE_KIND);

	if (kind != NULL && strcmp(kind, "semaphore") == 0)
		st->kind = RL_KIND_SEMAPHORE;
	else if (kind != NULL && strcmp(kind, "expirable") == 0)
		st->kind = RL_KIND_EXPIRABLE;
	else
		return;
	st->free = rl_elem_int(r, RL_RET_WRONGTYPE_FREE, 0);
	st->taken = rl_elem_int(r, RL_RET_WRONGTYPE_TAKEN, 0);
	st->list = list(r, RL_RET_WRONGTYPE_PERMITS, &st->permits);
	st->waiting = rl_elem_int(r, RL_RET_WRONGTYPE_WAITING, 0);
	st->ours = rl_elem_int(r, RL_RET_WRONGTYPE_OURS, 0);
}

/* Held: a Redisson read-write lock when the reply names a mode. */
static void
rwlock(const redisReply *r, struct rl_status *st)
{
	const char *mode = rl_elem_str(r, RL_RET_HELD_MODE);

	if (mode == NULL ||
	    (strcmp(mode, "read") != 0 && strcmp(mode, "write") != 0))
		return;
	st->kind = RL_KIND_RWLOCK;
	st->mode = mode;
	st->list = list(r, RL_RET_HELD_READERS, &st->readers);
	st->writer = rl_elem_str(r, RL_RET_HELD_WRITER);
}

enum rl_verdict
rl_decode_status(const redisReply *r, struct rl_status *st)
{
	enum rl_verdict v = rl_verdict(r);

	memset(st, 0, sizeof(*st));
	st->pttl = -1;
	st->since_ms = -1;
	st->fence = -1;
	st->held_ms = -1;
	if (v == RL_V_WRONGTYPE) {
		semaphore(r, st);
		return wrongtype(r, &st->badkey, &st->badtype);
	}
	if (v != RL_V_YES && v != RL_V_NO)
		return v == RL_V_NONE ? v : RL_V_BAD;
	st->waiting = rl_elem_int(r, RL_RET_HELD_WAITING, 0);
	if (v == RL_V_NO)
		return v;
	st->held = 1;
	rwlock(r, st);
	st->pttl = rl_elem_int(r, RL_RET_HELD_PTTL, -1);
	st->owner = rl_elem_str(r, RL_RET_HELD_OWNER);
	st->holds = rl_elem_int(r, RL_RET_HELD_HOLDS, 0);
	st->host = rl_elem_str(r, RL_RET_HELD_HOST);
	st->pid = (long)rl_elem_int(r, RL_RET_HELD_PID, 0);
	st->user = rl_elem_str(r, RL_RET_HELD_USER);
	st->cmd = rl_elem_str(r, RL_RET_HELD_CMD);
	st->since_ms = rl_elem_int(r, RL_RET_HELD_SINCE_MS, -1);
	st->fence = rl_elem_int(r, RL_RET_HELD_FENCE, -1);
	st->held_ms = rl_elem_int(r, RL_RET_HELD_HELD_MS, -1);
	st->held_until_ms = rl_elem_int(r, RL_RET_HELD_HELD_UNTIL, 0);
	proc_of(r, PROC_AT(HELD), &st->proc);
	return v;
}

int
rl_status_reader(const struct rl_status *st, size_t i, struct rl_reader *rd)
{
	const redisReply *e = st->kind == RL_KIND_RWLOCK &&
	    i < st->readers ? elem(st->list, i) : NULL;

	memset(rd, 0, sizeof(*rd));
	rd->pttl = -1;
	rd->since_ms = -1;
	rd->fence = -1;
	if (e == NULL || e->type != REDIS_REPLY_ARRAY)
		return -1;
	rd->owner = rl_elem_str(e, RL_RET_READER_OWNER);
	rd->holds = rl_elem_int(e, RL_RET_READER_HOLDS, 0);
	rd->pttl = rl_elem_int(e, RL_RET_READER_PTTL, -1);
	rd->host = rl_elem_str(e, RL_RET_READER_HOST);
	rd->pid = (long)rl_elem_int(e, RL_RET_READER_PID, 0);
	rd->user = rl_elem_str(e, RL_RET_READER_USER);
	rd->cmd = rl_elem_str(e, RL_RET_READER_CMD);
	rd->since_ms = rl_elem_int(e, RL_RET_READER_SINCE_MS, -1);
	rd->fence = rl_elem_int(e, RL_RET_READER_FENCE, -1);
	rd->held_until_ms = rl_elem_int(e, RL_RET_READER_HELD_UNTIL, 0);
	proc_of(e, PROC_AT(READER), &rd->proc);
	return 0;
}

int
rl_status_permit(const struct rl_status *st, size_t i, struct rl_permit *p)
{
	const redisReply *e = st->kind == RL_KIND_EXPIRABLE &&
	    i < st->permits ? elem(st->list, i) : NULL;

	memset(p, 0, sizeof(*p));
	p->expires_ms = -1;
	if (e == NULL || e->type != REDIS_REPLY_ARRAY)
		return -1;
	p->id = rl_elem_str(e, RL_RET_PERMIT_ID);
	p->expires_ms = rl_elem_int(e, RL_RET_PERMIT_EXPIRES_MS, -1);
	p->left_ms = p->expires_ms >= 0 ? rl_elem_int(e, RL_RET_PERMIT_LEFT_MS, 0) : 0;
	p->host = rl_elem_str(e, RL_RET_PERMIT_HOST);
	p->pid = (long)rl_elem_int(e, RL_RET_PERMIT_PID, 0);
	p->user = rl_elem_str(e, RL_RET_PERMIT_USER);
	p->cmd = rl_elem_str(e, RL_RET_PERMIT_CMD);
	p->since_ms = rl_elem_int(e, RL_RET_PERMIT_SINCE_MS, -1);
	p->fence = rl_elem_int(e, RL_RET_PERMIT_FENCE, -1);
	p->owner = rl_elem_str(e, RL_RET_PERMIT_OWNER);
	p->held_until_ms = rl_elem_int(e, RL_RET_PERMIT_HELD_UNTIL, 0);
	proc_of(e, PROC_AT(PERMIT), &p->proc);
	return 0;
}

enum rl_verdict
rl_decode_leave(const redisReply *r, int64_t *position)
{
	*position = 0;
	if (r == NULL)
		return RL_V_NONE;
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 2)
		return RL_V_BAD;
	*position = rl_elem_int(r, RL_RET_LEFT_POSITION, 0);
	return RL_V_YES;
}

static void
qentry(const redisReply *e, struct rl_qentry *q)
{
	q->owner = rl_elem_str(e, RL_RET_ENTRY_OWNER);
	q->ms = rl_elem_int(e, RL_RET_ENTRY_MS, INT64_MIN);
	q->host = rl_elem_str(e, RL_RET_ENTRY_HOST);
	q->pid = (long)rl_elem_int(e, RL_RET_ENTRY_PID, 0);
	q->user = rl_elem_str(e, RL_RET_ENTRY_USER);
	q->cmd = rl_elem_str(e, RL_RET_ENTRY_CMD);
	q->age_ms = rl_elem_int(e, RL_RET_ENTRY_AGE_MS, -1);
	q->held_until_ms = rl_elem_int(e, RL_RET_ENTRY_HELD_UNTIL, -1);
	q->gives_up_ms = rl_elem_int(e, RL_RET_ENTRY_GIVES_UP, INT64_MIN);
	proc_of(e, PROC_AT(ENTRY), &q->proc);
}

int
rl_decode_queue(const redisReply *r, struct rl_queue *q, enum rl_verdict *v)
{
	const redisReply *h = elem(r, RL_RET_QUEUE_HOLDER), *rw, *g;
	size_t i;

	memset(q, 0, sizeof(*q));
	*v = rl_verdict(r);
	if (*v == RL_V_WRONGTYPE) {
		wrongtype(r, &q->badkey, &q->badtype);
		return 0;
	}
	if (*v == RL_V_NONE)
		return 0;
	if (h == NULL || h->type != REDIS_REPLY_ARRAY) {
		*v = RL_V_BAD;
		return 0;
	}
	if (h->elements > 0) {
		q->held = 1;
		qentry(h, &q->holder);
	}
	q->unordered = rl_elem_int(r, RL_RET_QUEUE_UNORDERED, 0);
	rw = elem(r, RL_RET_QUEUE_RW);
	if (rw != NULL && rw->type == REDIS_REPLY_ARRAY && rw->elements > 0) {
		q->mode = rl_elem_str(rw, RL_RET_RW_MODE);
		q->readers = rl_elem_int(rw, RL_RET_RW_READERS, 0);
		q->rw_waiting = rl_elem_int(rw, RL_RET_RW_WAITING, 0);
		q->writer = rl_elem_str(rw, RL_RET_RW_WRITER);
		q->writer_ms = rl_elem_int(rw, RL_RET_RW_WRITER_MS, -1);
	}
	q->n = r->elements > RL_RET_QUEUE_WAITERS ? r->elements - RL_RET_QUEUE_WAITERS : 0;
	if (q->n > 0 &&
	    (q->waiters = calloc(q->n, sizeof(*q->waiters))) == NULL) {
		q->n = 0;
		return -1;
	}
	for (i = 0; i < q->n; i++)
		qentry(r->element[i + RL_RET_QUEUE_WAITERS], &q->waiters[i]);
	g = elem(r, RL_RET_QUEUE_GUESTS);
	q->nguests = g != NULL && g->type == REDIS_REPLY_ARRAY ?
	    g->elements : 0;
	if (q->nguests > 0 &&
	    (q->guests = calloc(q->nguests, sizeof(*q->guests))) == NULL) {
		q->nguests = 0;
		return -1;
	}
	for (i = 0; i < q->nguests; i++)
		qentry(g->element[i], &q->guests[i]);
	*v = RL_V_YES;
	return 0;
}

const char *
rl_decode_runid(const redisReply *r)
{
	return r != NULL && r->type == REDIS_REPLY_STRING ? r->str : NULL;
}
