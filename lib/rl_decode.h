/* rl_decode.h: what each script's reply says, read without a connection.
 *
 * Positions are named after the scripts' return comments in lua/: a
 * reordered reply must be changed here, in one place. Strings point into
 * the reply and live as long as it does. */
#ifndef RL_DECODE_H
#define RL_DECODE_H

#include <hiredis/hiredis.h>

#include "redlock.h"

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

enum { RL_R_VERDICT, RL_R_BADKEY, RL_R_BADTYPE };
/* status, NAME a Redisson semaphore: {-1, NAME, "string", kind, free,
 * taken, permits, waiting, ours}, each permit {id, expires_ms, left_ms,
 * host, pid, user, cmd, since_ms, fence} */
enum { RL_R_KIND = RL_R_BADTYPE + 1, RL_R_FREE, RL_R_TAKEN, RL_R_PERMITS,
	RL_R_WAITING, RL_R_OURS };
enum { RL_PM_ID, RL_PM_EXPIRES, RL_PM_LEFT, RL_PM_HOST, RL_PM_PID,
	RL_PM_USER, RL_PM_CMD, RL_PM_SINCE, RL_PM_FENCE, RL_PM_OWNER,
	RL_PM_UNTIL, RL_PM_BOOT, RL_PM_PIDNS, RL_PM_RENEWED };
/* acquire: {1, fence, holds, nopub, skipped} */
enum { RL_ACQ_FENCE = 1, RL_ACQ_HOLDS, RL_ACQ_NOPUB, RL_ACQ_SKIPPED };
/* acquire: {0, pttl, owner, host, pid, user, cmd, held_ms, position,
 * queued, head_wait_ms, rejoined, ahead, listen, announced, held_until,
 * by_owner, by_host, by_pid, by_cmd, gone}: by_* when superseded (by_owner
 * "": lapsed), gone 1 when there was nothing to re-enter (rl_gone) */
enum { RL_BUSY_PTTL = 1, RL_BUSY_OWNER, RL_BUSY_HOST, RL_BUSY_PID,
	RL_BUSY_USER, RL_BUSY_CMD, RL_BUSY_HELD_MS, RL_BUSY_POSITION,
	RL_BUSY_QUEUED, RL_BUSY_HEAD_WAIT, RL_BUSY_REJOINED, RL_BUSY_AHEAD,
	RL_BUSY_LISTEN, RL_BUSY_ANNOUNCED, RL_BUSY_UNTIL, RL_BUSY_BY_OWNER,
	RL_BUSY_BY_HOST, RL_BUSY_BY_PID, RL_BUSY_BY_CMD, RL_BUSY_GONE };
/* release: {2, nopub, held_until} | {1, holds} | {0, exists} */
enum { RL_REL_NOPUB = 1, RL_REL_HOLDS = 1, RL_REL_EXISTS = 1,
	RL_REL_UNTIL = 2 };
/* force: {1, nopub, owner, host, pid, user, cmd, held_ms} | {0} */
enum { RL_FORCE_NOPUB = 1, RL_FORCE_OWNER, RL_FORCE_HOST, RL_FORCE_PID,
	RL_FORCE_USER, RL_FORCE_CMD, RL_FORCE_HELD };
/* leave: {n, position, nopub} */
enum { RL_LEAVE_POSITION = 1 };
/* status: {1, waiting, pttl, owner, holds, host, pid, user, cmd,
 * since_ms, fence, held_ms, mode, readers, writer, held_until} |
 * {0, waiting}, each reader {owner, holds, pttl, host, pid, user, cmd,
 * since_ms, fence, held_until} */
enum { RL_ST_WAITING = 1, RL_ST_PTTL, RL_ST_OWNER, RL_ST_HOLDS, RL_ST_HOST,
	RL_ST_PID, RL_ST_USER, RL_ST_CMD, RL_ST_SINCE, RL_ST_FENCE,
	RL_ST_HELD_MS, RL_ST_MODE, RL_ST_READERS, RL_ST_WRITER, RL_ST_UNTIL,
	RL_ST_BOOT, RL_ST_PIDNS, RL_ST_RENEWED };
enum { RL_RD_OWNER, RL_RD_HOLDS, RL_RD_PTTL, RL_RD_HOST, RL_RD_PID,
	RL_RD_USER, RL_RD_CMD, RL_RD_SINCE, RL_RD_FENCE, RL_RD_UNTIL, RL_RD_BOOT,
	RL_RD_PIDNS, RL_RD_RENEWED };
/* queue: {now_ms, holder, unordered, rw, guests, waiter...} (or {-1,
 * key, type}), rw {} or {mode, readers, waiting, writer, writer_ms},
 * guests {entry...}, each entry {owner, ms, host, pid, user, cmd,
 * since_ms} */
enum { RL_Q_HOLDER = 1, RL_Q_UNORDERED, RL_Q_RW, RL_Q_GUESTS, RL_Q_WAITERS };
enum { RL_QRW_MODE, RL_QRW_READERS, RL_QRW_WAITING, RL_QRW_WRITER,
	RL_QRW_WRITER_MS };
enum { RL_QE_OWNER, RL_QE_MS, RL_QE_HOST, RL_QE_PID, RL_QE_USER,
	RL_QE_CMD, RL_QE_SINCE, RL_QE_UNTIL, RL_QE_GIVES_UP, RL_QE_BOOT,
	RL_QE_PIDNS, RL_QE_RENEWED };

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
