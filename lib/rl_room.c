/* rl_room.c: a waiter's place on the server: a plain waiter queued
 * behind a Java holder, the head of the queue and the room's listener
 * listening to the name's channel, and leaving on the way out. */
#include <string.h>

#include "rl_keys.h"
#include "rl_lock.h"
#include "rl_waiter.h"

int64_t
rl_room_heartbeat_ms(const struct rl_fair *fair)
{
	int64_t h = fair->waiter_timeout_ms / 3;

	return h > 0 ? h : 1;
}

int
rl_room_behind_java(struct rl_waiter *w)
{
	const struct rl_attempt *a = w->a;

	if (w->fair != NULL || !w->head || a->owner == NULL ||
	    a->host != NULL || !rl_one_master(w->c) || !w->k->queue)
		return 0;
	w->plainq.waiter_timeout_ms = w->c->waiter_ms;
	w->plainq.want_position = 0;
	w->plainq.plain = 1;
	w->fair = &w->plainq;
	return 1;
}

enum rl_err
rl_room_after_attempt(struct rl_waiter *w)
{
	size_t j;

	if (w->head || ((w->fair == NULL || w->a->ahead != 0) &&
	    (!w->room || !w->a->listen)))
		return RL_OK;
	w->head = 1;
	for (j = 0; j < w->c->n; j++)
		if (rl_sub_as_head(w, j) < 0)
			return rl_seterr(w->c, RL_ENOMEM, "out of memory");
	return RL_OK;
}

int64_t
rl_room_announce_ms(const struct rl_waiter *w)
{
	int64_t ms = (w->fair != NULL ? w->fair->waiter_timeout_ms :
	    w->c->waiter_ms) / 3;

	return ms > 0 ? ms : 1;
}

/* Leave the fair queue on every way out (also when the wait failed: the
 * connection may still work, and if it does not, the waiter timeout drops
 * the entry), keeping the first error's message and, in a round on the
 * side, the last attempt's replies (the strings in A point into them). */
static void
leave_queue(rl_client *c, const char *name, const char *owner,
    struct rl_attempt *a)
{
	char keep[sizeof(c->errstr)];
	int64_t position = 0;

	memcpy(keep, c->errstr, sizeof(keep));
	if (rl_leave_aside(c, name, owner, &position) == RL_OK &&
	    position > 0)
		a->ahead = position - 1;
	memcpy(c->errstr, keep, sizeof(keep));
}

/* A last call on the way out (CALL built, RL_OK), on every master,
 * keeping the first error's message and the last attempt's replies. */
static void
last_call(rl_client *c, enum rl_err made, struct rl_call *call)
{
	char keep[sizeof(c->errstr)];
	struct rl_round_opts o = rl_opts_pub(c);

	if (made != RL_OK)
		return;
	memcpy(keep, c->errstr, sizeof(keep));
	o.aside = 1;
	rl_run(c, &o, call);
	memcpy(c->errstr, keep, sizeof(keep));
	rl_call_free(call);
}

void
rl_room_give_up(struct rl_waiter *w)
{
	char keep[sizeof(w->c->errstr)];
	struct rl_call call;
	enum rl_err made;

	/* A call that cannot be built (out of memory) says so in errstr:
	 * the wait's own message is the one to keep. */
	memcpy(keep, w->c->errstr, sizeof(keep));
	rl_client_way_out(w->c);
	if (w->fair != NULL)
		leave_queue(w->c, w->name, w->owner, w->a);
	/* The kind's way out: the room's, or a read-write lock's (a
	 * reader has no announcement, but is recorded giving up). A
	 * superseded waiter is out of the room already where the newer
	 * one's call came, and recorded there: its call (for a master
	 * that call missed) records nothing. */
	if (w->room || !w->k->room) {
		made = w->k->leave(w->c, w->l, w->meta, rl_waited_ms(w->c),
		    &call);
		if (made == RL_OK && w->a->superseded && !w->a->lapsed)
			rl_call_unrecorded(&call);
		last_call(w->c, made, &call);
	}
	if (w->announced && w->k->room)
		last_call(w->c, rl_call_unannounce(w->c, w->l, &call), &call);
	memcpy(w->c->errstr, keep, sizeof(keep));
}
