/* rl_call.h: one script call as a value, which the builders of
 * rl_kind.c and rl_lock.c make and the rounds of rl_round.c and
 * rl_client.c run. */
#ifndef RL_CALL_H
#define RL_CALL_H

#include <stddef.h>

#include "rl_scripts.h"

/* One script call (struct rl_script: build/rl_scripts.h): the script,
 * its keys and arguments, each at the position its enum names (from the
 * script's header). The strings it made (rl_kind.c: rl_call_make and the
 * builders) are its own, OWN (NOWN of ROOM), until rl_call_free; NOMEM:
 * one could not be made. */
struct rl_call {
	const struct rl_script *s;
	int nkeys, nargs;
	const char *keys[RL_SCRIPT_KEYS_MAX];
	const char *args[RL_SCRIPT_ARGS_MAX];
	char **own;
	size_t nown, room;
	int nomem;
};

#endif
