/* rl_quorum.h: the arithmetic of leases and quorums, and how the replies
 * of N >= 1 masters add up to one answer. No I/O: the unit tests call it
 * with made-up replies. One master is a quorum of one. */
#ifndef RL_QUORUM_H
#define RL_QUORUM_H

#include <stddef.h>
#include <stdint.h>

#include "redlock.h"
#include "rl_decode.h"

/* How long one master may take to answer once asked: with one master the
 * whole --reply-timeout, with several the short node timeout, so that one slow
 * master does not eat the lease (Redlock). */
int64_t rl_reply_timeout_ms(size_t n, int64_t node_ms, int64_t timeout_ms);
/* How much longer than the first quorum of N masters the others may take
 * to connect, with NODE_MS the per-master bound: NODE_MS over several
 * masters (a dead one costs a round that much, not --connect-timeout);
 * 0, no limit, for one. */
int64_t rl_straggle_ms(size_t n, int64_t node_ms);
/* Whether two URLs could name one server and count twice: worth a
 * run_id check when there is more than one to count. */
int rl_quorum_check_distinct(size_t n);
/* How many masters the others may fail without losing the quorum. */
size_t rl_quorum_spare(size_t n);

enum rl_outcome {
	RL_OUT_OK,
	RL_OUT_NO_QUORUM,	/* too few answered */
	RL_OUT_WRONGTYPE,	/* master *WHO holds a key of another type */
	RL_OUT_BAD,		/* master *WHO's reply was not the script's */
	RL_OUT_UNACKED		/* granted on a quorum, but too few replicas
				 * acknowledged it on enough of them */
};

/* Replica acknowledgement (--replicas WANT): what the WAIT behind the
 * script counted on each master. */
struct rl_acks {
	int64_t want;		/* replicas asked for */
	size_t granted;		/* masters that said yes */
	size_t unacked;		/* of them, those with fewer acks than WANT */
	int64_t fewest;		/* the lowest count among those (0 when a
				 * master gave none) */
	size_t first;		/* the first of them (n: none) */
	int dflt;		/* the Sentinel default asked (the caller
				 * sets it): the advice differs */
	size_t n;		/* masters asked */
	int64_t wait_ms;	/* the WAIT timeout (the caller sets it) */
	const char *why;	/* the first short master's own reason; ""
				 * or NULL for none (the caller sets it) */
};

/* A master that said yes (V[i] RL_V_YES) but whose ACKS[i] fell short of
 * WANT (-1: no count came) does not count: its verdict becomes
 * RL_V_UNACKED. Fills K. */
void rl_quorum_acks(enum rl_verdict *v, const int64_t *acks, size_t n,
    int64_t want, struct rl_acks *k);
/* One line for the operator on what K means for NAME: "acquired" or
 * "renewed" (DONE); released it (UNDONE) or not. */
void rl_quorum_acks_why(char *buf, size_t len, const char *done,
    const char *name, const struct rl_acks *k, int undone);

/* What the N masters of a round answered, decoded: an entry a master in
 * each array that a combination reads (NULL where it reads none). V[i]
 * is master i's verdict (RL_V_NONE: no reply, RL_V_REFUSED: an error
 * reply). */
struct rl_votes {
	size_t n;
	const enum rl_verdict *v;
	const struct rl_attempt *per;	/* acquire: rl_decode_acquire's */
	const int64_t *holds;		/* release: rl_decode_release's */
	const char *const *nopub;	/* release, force: the decoders' */
};

/* acquire on VS's masters (V and PER), ELAPSED_MS since it was sent.
 * Fills A; *UNDO when grants were or may have been made and must be
 * released everywhere. */
enum rl_outcome rl_combine_acquire(const struct rl_votes *vs,
    int64_t ttl_ms, int64_t elapsed_ms, struct rl_attempt *a, int *undo,
    size_t *who);
/* release: V, HOLDS and NOPUB. */
enum rl_outcome rl_combine_release(const struct rl_votes *vs,
    enum rl_release *rel, int64_t *holds_left, const char **nopub_out,
    size_t *who);
/* force: V and NOPUB. */
enum rl_outcome rl_combine_force(const struct rl_votes *vs, int *deleted,
    const char **nopub_out, size_t *who);
/* renew: *OURS 1 with a quorum, 0 when a quorum can never be had again
 * (renewals do not re-create a lock that is gone); RL_OUT_NO_QUORUM when
 * neither is known yet. *YES: masters that renewed. */
enum rl_outcome rl_combine_renew(const enum rl_verdict *v, size_t n,
    int *ours, size_t *yes);
/* renew, not ours: whether another owner holds the name, TAKEN[i] as
 * rl_decode_renew_taken says for each master. Another owner on any of
 * them counts, as a release counts it (the others may have expired or
 * lost it): a lock taken on one master is not free. */
int rl_combine_renew_taken(const int *taken, size_t n);
/* status: held only where a quorum agrees on the owner; *BEST: whose
 * view is reported (-1 none). */
enum rl_outcome rl_combine_status(const enum rl_verdict *v,
    const struct rl_status *per, size_t n, struct rl_status *st,
    size_t *who);

#endif
