/* rl_keys.h: the Redis keys of one lock, and what a lock kind needs. */
#ifndef RL_KEYS_H
#define RL_KEYS_H

#include "redlock.h"

struct rl_keys {
	char *lock, *channel, *holder, *token, *queue, *timeout, *waiter;
	char *room, *listener, *writer;
	/* Redisson's other kinds at NAME, for status: "{NAME}" (a read
	 * hold's lease key is "{NAME}:OWNER:rwlock_timeout:N") and
	 * "{NAME}:timeout" (a permit-expirable semaphore's permits). */
	char *tag, *permits;
	char *rwchannel;	/* a read-write lock's channel */
	char *log;		/* redlock_log:{NAME}: history */
};

/* All keys of NAME in Redisson's layout; RL_EUSAGE for an empty name. */
enum rl_err rl_keys_make(rl_client *c, const char *name, struct rl_keys *k);
void rl_keys_free(struct rl_keys *k);
/* KEYS of the acquire, status and queue scripts (release and force:
 * rl_kind.h). */
#define RL_KEYS_LOCK 9
#define RL_KEYS_STATUS 10
#define RL_KEYS_QUEUE 8
void rl_keys_lock(const struct rl_keys *k, const char **keys);
void rl_keys_status(const struct rl_keys *k, const char **keys);
void rl_keys_queue(const struct rl_keys *k, const char **keys);
/* WHAT ("fair locks") needs one master: RL_EUSAGE on several, else
 * RL_OK (also for WHAT NULL, a kind every deployment has). */
enum rl_err rl_policy(rl_client *c, const char *what);
/* One master, not several (Redlock). */
int rl_one_master(const rl_client *c);

#endif
