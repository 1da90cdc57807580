/* rl_kind.h: the script calls of each kind of lock a client takes. */
#ifndef RL_KIND_H
#define RL_KIND_H

#include "redlock.h"
#include "rl_call.h"
#include "rl_round.h"
#include "rl_scripts.h"

/* In a builder that sets the N arguments of script S (RL_<S>_ARG_*,
 * publish included) by name: the build fails when S's header gains or
 * loses one, until the builder says what it is. */
#define RL_CALL_ARGS(S, N) _Static_assert(RL_##S##_ARGS == (N), \
	"the arguments of " #S " changed: set each one by name")

/* The call of script S (struct rl_call: rl_call.h) on lock NAME for
 * OWNER (NULL when no key of S names it): every key of S made from its
 * template, the publish argument (if any) set to PUBLISH (the round sends
 * SPUBLISH there where channels are sharded), the other arguments NULL,
 * for the caller to set by their names (RL_<SCRIPT>_ARG_<NAME>); then
 * rl_call_made. */
void rl_call_make(struct rl_call *call, const struct rl_script *s,
    const char *name, const char *owner);
/* RL_OK when every key and argument of CALL is there; else the call is
 * freed and RL_ENOMEM set on C (a string of it could not be made). */
enum rl_err rl_call_made(rl_client *c, struct rl_call *call);
/* S (malloc'd, or NULL: out of memory) kept by CALL until rl_call_free;
 * a copy of S; V in decimal: each the call's own, however many it makes
 * (its list of them grows), NULL when out of memory. */
const char *rl_call_own(struct rl_call *call, char *s);
const char *rl_call_copy(struct rl_call *call, const char *s);
const char *rl_call_num(struct rl_call *call, int64_t v);
void rl_call_free(struct rl_call *call);

/* A release's flags set to "u": an acquisition undone (or a hold never
 * used) keeps no minimum hold. */
void rl_call_unused(struct rl_call *call);
/* A waiter's way out (the room's, a read-write lock's) that records
 * nothing in the name's history: a superseded waiter was recorded by the
 * call that superseded it. */
void rl_call_unrecorded(struct rl_call *call);
/* An exclusive lock's release that wakes nobody (its message ""). */
void rl_call_quiet(struct rl_call *call);
/* A waiter of an exclusive lock or a permit that announced itself to a
 * read-write lock's readers (K_writer) withdraws its announcement; it
 * records nothing (its leaving the room does). */
enum rl_err rl_call_unannounce(rl_client *c, const struct rl_lock *l,
    struct rl_call *call);
/* The caller's part of an entry in a name's history (see rl_log in
 * lua/prelude.lua): the N strings of F (name, value, name, value...; a
 * NULL value as ""), each followed by byte 31, then "event" and byte 31,
 * for the script to add the event's name (and what the server knows); a
 * byte 31 in a value becomes '?'. Malloc'd; NULL when out of memory. */
char *rl_history_entry(const char *const *f, size_t n);
/* The channel of L's kind of lock (releases publish there; a read-write
 * lock's waiters listen to it), and the one that wakes L's owner as a
 * fair waiter or a waiter of the room, CHANNEL:OWNER (a permit's id for
 * OWNER); malloc'd. */
char *rl_kind_channel(const struct rl_lock *l);
/* The channel of read-write lock NAME, where Redisson's read and write
 * releases publish; malloc'd. */
char *rl_kind_rw_channel(const char *name);
char *rl_kind_waiter_channel(const struct rl_lock *l);

/* What a kind of lock is, and the calls of each of its operations, as
 * the transports' tables (rl_conn.h): one constant table per kind, each
 * entry the kind's own builder. A fair lock is RL_EXCLUSIVE's, waiting
 * in its queue (rl_fair). */
struct rl_kind_ops {
	enum rl_lock_kind kind;
	/* Refused on several masters, as "%s are not available across
	 * several masters"; NULL: any number of masters. */
	const char *several;
	const char *history;	/* its holds' "kind" in a name's history
				 * ("read", "write", "permit"); NULL: a
				 * plain lock's, which have none */
	const char *mode;	/* a read-write lock's: "read", "write" */
	const char *channel;	/* the prefix of the channel its releases
				 * publish on, its waiters' (CHANNEL:ID) */
	int queue;		/* may wait in a fair queue; a waiter held
				 * up by readers announces itself to them */
	int room;		/* its waiters wait in the name's room;
				 * else on the read-write lock's channel */
	int limited;		/* one of L's LIMIT permits: at least one */
	int redlock;		/* taken in a Redlock round (rl_lock.c):
				 * on a quorum of masters, whole where a
				 * NOSCRIPT could come late, a waiter's
				 * heartbeat WAITing in a round of its own;
				 * else on its one master, as sent */
	int64_t renew_max_ms;	/* heartbeat: renewed at least this often
				 * (rl_keeper); 0: every third of a lease */
	/* OWNER's name as a waiter (in the room, on its channel), the
	 * call's own; NULL when out of memory. */
	const char *(*waiter)(struct rl_call *call, const char *owner);
	/* The calls: acquire (attempt T), release, renew, force (remove
	 * whoever holds it; the name's history records BY as who did it),
	 * and leave (a waiter that gives up, recorded in the name's history
	 * with META, having waited WAITED_MS: the room's, or the read-write
	 * lock's announcement). */
	enum rl_err (*acquire)(rl_client *c, const struct rl_try *t,
	    struct rl_call *call);
	enum rl_err (*release)(rl_client *c, const struct rl_lock *l,
	    struct rl_call *call);
	enum rl_err (*renew)(rl_client *c, const struct rl_lock *l,
	    int64_t ttl_ms, struct rl_call *call);
	enum rl_err (*force)(rl_client *c, const struct rl_lock *l,
	    const struct rl_meta *by, struct rl_call *call);
	enum rl_err (*leave)(rl_client *c, const struct rl_lock *l,
	    const struct rl_meta *meta, int64_t waited_ms,
	    struct rl_call *call);
};

/* The table of KIND (RL_EXCLUSIVE's for a kind out of range). */
const struct rl_kind_ops *rl_kind_ops(enum rl_lock_kind kind);
/* L's table, when C can take, renew and release it; else NULL, with the
 * refusal (RL_EUSAGE) on C: a kind several masters cannot take, or
 * (ACQUIRE) a permit of fewer than one. */
const struct rl_kind_ops *rl_kind_check(rl_client *c, const struct rl_lock *l,
    int acquire);

#endif
