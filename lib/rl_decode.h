/* rl_decode.h: what each script's reply says, read without a connection.
 *
 * Positions are named by the scripts' RETURNS headers in lua/, from which
 * lua/embed.sh generates them (RL_RET_<SHAPE>_<FIELD>, build/rl_scripts.h):
 * a reordered reply is changed in its script's header alone, and a field
 * renamed there fails to compile here. Strings point into the reply and
 * live as long as it does. */
#ifndef RL_DECODE_H
#define RL_DECODE_H

#include <hiredis/hiredis.h>

#include "redlock.h"
#include "rl_scripts.h"

/* The first element of every array reply but renew's. */
enum rl_verdict {
	RL_V_UNACKED = -5,	/* granted, but too few replicas acknowledged
				 * it (--replicas): not counted */
	RL_V_REFUSED = -4,	/* an error reply: the script did not run */
	RL_V_NONE = -3,		/* no reply from this master */
	RL_V_BAD = -2,		/* not what the script returns */
	RL_V_WRONGTYPE = -1,	/* {-1, key, type} */
	RL_V_NO = 0,		/* busy, not released, not held... */
	RL_V_YES = 1,		/* acquired, decremented, held, deleted */
	RL_V_RELEASED = 2	/* release: the last hold given back */
};

/* Element I of array reply R: DEF or NULL when missing, nil or of another
 * type. Integers may come as decimal strings (fences past 2^53). */
int64_t rl_elem_int(const redisReply *r, size_t i, int64_t def);
const char *rl_elem_str(const redisReply *r, size_t i);
/* The verdict of R (RL_V_NONE for NULL). */
enum rl_verdict rl_verdict(const redisReply *r);

/* acquire: the verdict, and what it says in A (acquired: fence, holds,
 * nopub; busy: the holder and the queue; wrong type: badkey, badtype). */
enum rl_verdict rl_decode_acquire(const redisReply *r, struct rl_attempt *a);
/* release: *HOLDS left (decremented) or whether it exists (not owner). */
enum rl_verdict rl_decode_release(const redisReply *r, int64_t *holds,
    const char **nopub);
/* release: the end of the minimum hold that the release left in place,
 * finished (--min-hold); 0 when it gave the hold back. */
int64_t rl_decode_release_until(const redisReply *r);
enum rl_verdict rl_decode_force(const redisReply *r, const char **nopub);
/* The holder a force reply R removed into A (owner, host, pid, user, cmd,
 * held_ms); A untouched when R names none. */
void rl_decode_forced(const redisReply *r, struct rl_attempt *a);
/* One stream entry R ({id, {field, value...}}) of a name's history into
 * EV, its strings copied to *ARENA (room: rl_event_room), which moves
 * past them; -1 when R is not one. */
int rl_decode_event(const redisReply *r, struct rl_event *ev,
    char **arena);
/* The room in bytes that rl_decode_event needs at *ARENA for entry R. */
size_t rl_event_room(const redisReply *r);

/* renew: RL_V_YES, RL_V_NO, or RL_V_BAD/NONE. */
enum rl_verdict rl_decode_renew(const redisReply *r);
/* renew said no because another owner holds the name: 1, else 0. */
int rl_decode_renew_taken(const redisReply *r);
enum rl_verdict rl_decode_status(const redisReply *r, struct rl_status *st);
enum rl_verdict rl_decode_leave(const redisReply *r, int64_t *position);
/* queue: -1 when out of memory; Q->waiters is allocated. */
int rl_decode_queue(const redisReply *r, struct rl_queue *q,
    enum rl_verdict *v);
/* runid: the server's run_id, NULL when it would not tell. */
const char *rl_decode_runid(const redisReply *r);

#endif
