/* rl_kind.h: the script calls of each kind of lock a client takes. */
#ifndef RL_KIND_H
#define RL_KIND_H

#include "redlock.h"

#define RL_CALL_MAX 16
/* One script call: the script, its keys and arguments. The strings are
 * the call's own until rl_call_free. */
struct rl_call {
	const struct rl_script *s;
	int nkeys, nargs;
	const char *keys[RL_CALL_MAX];
	const char *args[RL_CALL_MAX];
	char *own[RL_CALL_MAX];
	size_t nown;
	char num[5][24];
};

/* The call that acquires NAME for OWNER in the client's kind (not
 * RL_EXCLUSIVE: rl_lock.c has its own, with the fair queue); JOIN says
 * whether a writer that finds it busy announces itself, WAITER_MS for how
 * long. The round runs it with the publish command last. */
enum rl_err rl_call_acquire(rl_client *c, const char *name,
    const char *owner, int64_t ttl_ms, const struct rl_meta *meta,
    enum rl_join join, int64_t waiter_ms, struct rl_call *call);
/* Give back one hold (publish command last), and renew, in any kind.
 * The release's flags are its last argument before the publish command:
 * an undo sets it to "u" (an acquisition undone keeps no minimum hold). */
enum rl_err rl_call_release(rl_client *c, const char *name,
    const char *owner, struct rl_call *call);
enum rl_err rl_call_renew(rl_client *c, const char *name, const char *owner,
    int64_t ttl_ms, struct rl_call *call);
/* Delete NAME whoever holds it (publish command last): a lock (any
 * kind but RL_PERMIT), or a semaphore with all its permits; the name's
 * history records BY as who did it. */
enum rl_err rl_call_force(rl_client *c, const char *name,
    const struct rl_meta *by, struct rl_call *call);
/* A writer that waited and gives up: its announcement withdrawn; a
 * read-write lock's waiter (reader or writer) is recorded in its history
 * with META, having waited WAITED_MS. */
enum rl_err rl_call_unannounce(rl_client *c, const char *name,
    const char *owner, const struct rl_meta *meta, int64_t waited_ms,
    struct rl_call *call);
void rl_call_free(struct rl_call *call);
/* The caller's part of an entry in a name's history (see rl_log in
 * lua/prelude.lua): the N strings of F (name, value, name, value...; a
 * NULL value as ""), each followed by byte 31, then "event" and byte 31,
 * for the script to add the event's name (and what the server knows); a
 * byte 31 in a value becomes '?'. Malloc'd; NULL when out of memory. */
char *rl_history_entry(const char *const *f, size_t n);
/* That part for OWNER, described by META, having waited WAITED_MS. */
char *rl_history_meta(const char *owner, const struct rl_meta *meta,
    int64_t waited_ms);
/* The start of a holder record (see rl_holder_meta in lua/prelude.lua):
 * a JSON object with META's host, pid, user and cmd, without its closing
 * brace, for the script to add what the server knows. Malloc'd; NULL
 * when out of memory. */
char *rl_holder_json(const struct rl_meta *meta);
/* A plain or --limit waiter that gives up leaves the room, recorded in
 * the name's history with META, having waited WAITED_MS. */
enum rl_err rl_call_room_leave(rl_client *c, const char *name,
    const char *owner, const struct rl_meta *meta, int64_t waited_ms,
    struct rl_call *call);
/* The channel of the client's kind of lock (releases publish there; a
 * read-write lock's waiters listen to it), and the one that wakes OWNER
 * as a fair waiter or a waiter of the room, CHANNEL:OWNER (a permit's id
 * for OWNER); malloc'd. */
char *rl_kind_channel(const rl_client *c, const char *name);
/* The channel of read-write lock NAME, where Redisson's read and write
 * releases publish; malloc'd. */
char *rl_kind_rw_channel(const char *name);
char *rl_kind_waiter_channel(const rl_client *c, const char *name,
    const char *owner);

#endif
