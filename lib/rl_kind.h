/* rl_kind.h: the script calls of each kind of lock a client takes. */
#ifndef RL_KIND_H
#define RL_KIND_H

#include "redlock.h"
#include "rl_round.h"
#include "rl_scripts.h"

/* One script call: the script, its keys and arguments, each at the
 * position its enum names (build/rl_scripts.h, from the script's header).
 * The strings are the call's own until rl_call_free. */
struct rl_call {
	const struct rl_script *s;
	int nkeys, nargs;
	const char *keys[RL_SCRIPT_KEYS_MAX];
	const char *args[RL_SCRIPT_ARGS_MAX];
	char *own[RL_SCRIPT_KEYS_MAX + 4];
	size_t nown;
	int nomem;
	char num[5][24];
	char flags[8];
};

/* In a builder that sets the N arguments of script S (RL_<S>_ARG_*,
 * publish included) by name: the build fails when S's header gains or
 * loses one, until the builder says what it is. */
#define RL_CALL_ARGS(S, N) _Static_assert(RL_##S##_ARGS == (N), \
	"the arguments of " #S " changed: set each one by name")

/* The call of script S on lock NAME for OWNER (NULL when no key of S
 * names it): every key of S made from its template, the publish
 * argument (if any) set to PUBLISH (the round sends SPUBLISH there where
 * channels are sharded), the other arguments NULL, for the caller to set
 * by their names (RL_<SCRIPT>_ARG_<NAME>); then rl_call_made. */
void rl_call_make(struct rl_call *call, const struct rl_script *s,
    const char *name, const char *owner);
/* RL_OK when every key and argument of CALL is there; else the call is
 * freed and RL_ENOMEM set on C. */
enum rl_err rl_call_made(rl_client *c, struct rl_call *call);
/* S (malloc'd, or NULL: out of memory), kept by CALL until
 * rl_call_free; and V in decimal in CALL's number I (of 5). */
const char *rl_call_own(struct rl_call *call, char *s);
const char *rl_call_num(struct rl_call *call, size_t i, int64_t v);

/* The call that acquires NAME for OWNER in the client's kind (not
 * RL_EXCLUSIVE: rl_lock.c has its own, with the fair queue); JOIN says
 * whether a writer that finds it busy announces itself, WAITER_MS for how
 * long. */
enum rl_err rl_call_acquire(rl_client *c, const char *name,
    const char *owner, int64_t ttl_ms, const struct rl_meta *meta,
    enum rl_join join, int64_t waiter_ms, struct rl_call *call);
/* Give back one hold, and renew, in any kind. */
enum rl_err rl_call_release(rl_client *c, const char *name,
    const char *owner, struct rl_call *call);
/* A release's flags set to "u": an acquisition undone (or a hold never
 * used) keeps no minimum hold. */
void rl_call_unused(struct rl_call *call);
/* An exclusive lock's release that wakes nobody (its message ""). */
void rl_call_quiet(struct rl_call *call);
enum rl_err rl_call_renew(rl_client *c, const char *name, const char *owner,
    int64_t ttl_ms, struct rl_call *call);
/* Delete NAME whoever holds it: a lock (any kind but RL_PERMIT), or a
 * semaphore with all its permits; the name's history records BY as who
 * did it. */
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
