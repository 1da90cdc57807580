/* rl_call.h: one script call as a value, which the builders of
 * rl_kind.c and rl_lock.c make and the rounds of rl_client.c run. */
#ifndef RL_CALL_H
#define RL_CALL_H

#include <stddef.h>

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

#endif
