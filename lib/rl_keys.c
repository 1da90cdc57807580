/* rl_keys.c: a lock's keys, and which kinds of lock need one master. */
#include <stdlib.h>
#include <string.h>

#include "rl_client.h"
#include "rl_keys.h"

void
rl_keys_free(struct rl_keys *k)
{
	free(k->lock);
	free(k->channel);
	free(k->holder);
	free(k->token);
	free(k->queue);
	free(k->timeout);
	free(k->waiter);
	free(k->room);
	free(k->listener);
	free(k->writer);
	free(k->tag);
	free(k->permits);
	free(k->rwchannel);
	free(k->log);
	memset(k, 0, sizeof(*k));
}

enum rl_err
rl_keys_make(rl_client *c, const char *name, struct rl_keys *k)
{
	memset(k, 0, sizeof(*k));
	if (name[0] == '\0')
		return rl_seterr(c, RL_EUSAGE, "the lock name is empty");
	k->lock = strdup(name);
	k->channel = rl_key(RL_PREFIX_CHANNEL, name);
	k->holder = rl_key(RL_PREFIX_HOLDER, name);
	k->token = rl_key(RL_PREFIX_TOKEN, name);
	k->queue = rl_key(RL_PREFIX_QUEUE, name);
	k->timeout = rl_key(RL_PREFIX_TIMEOUT, name);
	k->waiter = rl_key(RL_PREFIX_WAITER, name);
	k->room = rl_key(RL_PREFIX_ROOM, name);
	k->listener = rl_key(RL_PREFIX_LISTENER, name);
	k->writer = rl_key(RL_PREFIX_WRITER, name);
	k->tag = rl_key_suffix(name, NULL);
	k->permits = rl_key_suffix(name, "timeout");
	k->rwchannel = rl_key(RL_PREFIX_RWLOCK, name);
	k->log = rl_key(RL_PREFIX_LOG, name);
	if (!k->lock || !k->channel || !k->holder || !k->token || !k->queue ||
	    !k->timeout || !k->waiter || !k->room || !k->listener ||
	    !k->writer || !k->tag || !k->permits || !k->rwchannel || !k->log) {
		rl_keys_free(k);
		return rl_seterr(c, RL_ENOMEM, "out of memory");
	}
	return RL_OK;
}

void
rl_keys_lock(const struct rl_keys *k, const char **keys)
{
	keys[0] = k->lock;
	keys[1] = k->token;
	keys[2] = k->holder;
	keys[3] = k->queue;
	keys[4] = k->timeout;
	keys[5] = k->waiter;
	keys[6] = k->room;
	keys[7] = k->listener;
	keys[8] = k->writer;
}

void
rl_keys_queue(const struct rl_keys *k, const char **keys)
{
	keys[0] = k->lock;
	keys[1] = k->holder;
	keys[2] = k->queue;
	keys[3] = k->timeout;
	keys[4] = k->waiter;
	keys[5] = k->room;
	keys[6] = k->listener;
	keys[7] = k->writer;
}

void
rl_keys_status(const struct rl_keys *k, const char **keys)
{
	keys[0] = k->lock;
	keys[1] = k->holder;
	keys[2] = k->queue;
	keys[3] = k->timeout;
	keys[4] = k->waiter;
	keys[5] = k->permits;
	keys[6] = k->tag;
	keys[7] = k->room;
	keys[8] = k->listener;
	keys[9] = k->writer;
}

int
rl_one_master(const rl_client *c)
{
	return c->n == 1;
}

enum rl_err
rl_policy(rl_client *c, const char *what)
{
	if (what != NULL && c->n > 1)
		return rl_seterr(c, RL_EUSAGE, "%s are not available across "
		    "several masters", what);
	return RL_OK;
}
