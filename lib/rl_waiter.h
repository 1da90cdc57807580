/* rl_waiter.h: one wait of rl_acquire, which the files of the waiting
 * engine share: rl_sub.c (subscriptions and redirections), rl_room.c
 * (the waiter's place on the server), rl_wait.c (its attempts) and
 * rl_pool.c (the waits of rl_acquire_any in one poll). */
#ifndef RL_WAITER_H
#define RL_WAITER_H

#include "rl_client.h"
#include "rl_kind.h"

/* Reconnecting: the delays double from RL_BACKOFF_MIN_MS up to
 * RL_BACKOFF_MAX_MS, each with up to half again at random, so that the
 * waiters of a restarted server do not all come back at once. */
#define RL_BACKOFF_MIN_MS 50
#define RL_BACKOFF_MAX_MS 1000

/* One wait of rl_acquire (rl_acquire_any: one a name): its arguments,
 * what it listens to, and when it tries to reconnect. */
struct rl_waiter {
	rl_client *c;
	const struct rl_lock *l;	/* the hold wanted */
	const struct rl_kind_ops *k;	/* its kind */
	const char *name, *owner;
	int64_t ttl_ms;
	const struct rl_meta *meta;
	const struct rl_fair *fair;
	struct rl_fair plainq;	/* a plain waiter's queue
				 * (rl_room_behind_java) */
	int room;		/* a plain or --limit waiter: in the room */
	int announced;		/* an exclusive waiter that an attempt
				 * announced to readers: it withdraws the
				 * announcement when it gives up */
	rl_wait_cb cb;
	void *cbarg;
	struct rl_attempt *a;
	char *subcmd[2];	/* SUBSCRIBE channel, and SSUBSCRIBE where
				 * channels are sharded, formatted */
	size_t subcmdlen[2];
	char *headcmd[2];	/* the same for the name's channel, which
				 * the head of a fair queue and the room's
				 * listener listen to as well (a plain
				 * holder's release, Redisson's), and for an
				 * exclusive waiter the read-write lock's */
	size_t headcmdlen[2];
	int nhead;		/* channels in headcmd */
	int head;		/* the caller is the head, or the listener */
	int headsub[RL_MAX_NODES];	/* master i was sent headcmd */
	/* Subscription i's commands sent and answered (confirmed or
	 * refused; messages aside), and which answer may be a refusal
	 * that does not matter (0: none): the read-write lock's channel
	 * for an exclusive waiter, which a user granted the lock's
	 * channels only may not have. */
	int asked[RL_MAX_NODES], answered[RL_MAX_NODES];
	int optional[RL_MAX_NODES];
	char doing[2][256];	/* "SUBSCRIBE to channel", for messages */
	int kind[RL_MAX_NODES];	/* which one master i was sent */
	struct rl_follow fw[RL_MAX_NODES];	/* the MOVEDs subscription
						 * i followed since it
						 * last came or failed */
	int listening[RL_MAX_NODES];	/* subscribed on master i */
	int64_t sub_end[RL_MAX_NODES];	/* subscribing on i until then */
	int regained;		/* a subscription came (back) */
	int64_t deadline;	/* -1: forever */
	int64_t sub_at;		/* when to subscribe the missing ones */
	int64_t sub_backoff;	/* last delay between failed subscriptions */
	int sub_lost;		/* a subscription was lost since the last
				 * attempt answered (its retry was at once) */
	int64_t try_backoff;	/* last delay between failed attempts */
	int try_failed;		/* the last attempt could not reach a quorum */
	int waiting;		/* busy at its first attempt, and waits */
	struct rl_call_ctx ctx;	/* the call's state on its client (c->ctx) */
};

/* rl_sub.c: subscriptions and their redirections. */
/* A random delay of 0..N ms. */
int64_t rl_random_ms(int64_t n);
/* The next delay after *LAST (0: none yet) between reconnects, with up
 * to half again at random; *LAST becomes it, without the random part. */
int64_t rl_backoff_ms(int64_t *last);
/* Subscriptions made. */
size_t rl_sub_listening(const struct rl_waiter *w);
/* Subscriptions on their way. */
size_t rl_sub_subscribing(const struct rl_waiter *w);
/* Out of reach: the attempt failed, or no subscription is left. */
void rl_sub_note_lost(struct rl_waiter *w);
/* A fair waiter at the head of the queue listens to the lock's channel
 * too, where a release that wakes no fair waiter (a Redisson RLock's)
 * publishes; those behind it need not: only the head may take the lock.
 * So does the listener of the room, for all of its waiters. The
 * confirmation counts as a message: one attempt more. */
int rl_sub_as_head(struct rl_waiter *w, size_t j);
/* Start subscribing where no subscription is. */
void rl_sub_missing(struct rl_waiter *w, int64_t now);
/* What came on subscription J: the confirmation, messages (*GOT), or a
 * refusal. Only a refusal that waiting cannot cure is returned; that of
 * the optional channel is let be (its releases are heard at the next
 * try instead). */
enum rl_err rl_sub_io(struct rl_waiter *w, size_t j, short revents,
    int64_t now, int *got);
/* The sentinels announced a failover (rl_switch.h): the connections left
 * on the old master are closed, subscriptions with them (made again on
 * the new one), and the waiter tries at once (*GOT). */
void rl_sub_switch(struct rl_waiter *w, int64_t now, int *got);
/* Subscriptions a round closed (it followed MOVED elsewhere), or of the
 * wrong kind now that the master is known to shard its channels: made
 * again at once. */
void rl_sub_stale(struct rl_waiter *w, int64_t now);
/* What a waiter subscribes to: a waiter of a read-write lock to the
 * read-write lock's channel, and the lock's as well (headcmd: there
 * Redisson's RLock and redlock's exclusive releases publish); a fair
 * waiter, or one of the room, to its own, and at the head of the queue or
 * as the room's listener to the name's channel as well, and an exclusive
 * one to the read-write lock's too, where Redisson's readers and writers
 * publish their releases and nowhere else. */
int rl_sub_cmd(struct rl_waiter *w);
/* W's subscriptions closed, and their commands freed. */
void rl_sub_end(struct rl_waiter *w);

/* rl_room.c: the waiter's place on the server (the fair queue, the
 * room, an announcement to readers). */
/* A fair waiter refreshes its place this often. */
int64_t rl_room_heartbeat_ms(const struct rl_fair *fair);
/* A plain waiter behind a holder that is not redlock's (a Java service)
 * queues too, since Redisson's fair lock wakes only the head of its queue
 * and never publishes on the lock's channel; it still takes a free lock
 * as a plain lock does. Only the room's listener does, which listens to
 * the lock's channel as well, so that one waiter retries on each release
 * of Redisson's. One master only, as fair locks. 1 when it is to queue. */
int rl_room_behind_java(struct rl_waiter *w);
/* What an attempt told a waiter: the head of a fair queue, or the
 * listener of the room, listens to the name's channel as well. */
enum rl_err rl_room_after_attempt(struct rl_waiter *w);
/* How often an exclusive waiter that announced itself to readers renews
 * the announcement. */
int64_t rl_room_announce_ms(const struct rl_waiter *w);
/* Stop waiting without the lock: leave the fair queue, or the room (the
 * listener hands its role on), and a writer, or an exclusive waiter that
 * announced itself, withdraws its announcement, so that readers held back
 * by it come in. Each records giving up in the name's history. */
void rl_room_give_up(struct rl_waiter *w);

/* rl_wait.c: one wait's attempts. */
/* One attempt while waiting; when it could not reach the masters (or
 * reached a replaced one), RL_OK with w->try_failed set. */
enum rl_err rl_wait_attempt(struct rl_waiter *w);
/* When to try again after a busy attempt. */
int64_t rl_wait_retry(struct rl_waiter *w);
/* The first attempt of wait W: RL_OK when acquired, or busy (and, with
 * WAIT_MS not 0, set to wait: w->waiting), else an error. */
enum rl_err rl_wait_first(struct rl_waiter *w, int64_t wait_ms);

#endif
