/* rl_lock.h: what the files of lib/ call in rl_lock.c besides redlock.h. */
#ifndef RL_LOCK_H
#define RL_LOCK_H

#include "redlock.h"

/* rl_leave on the side of a call: its round sets aside the replies of
 * the call's last round, which strings handed to the caller point into,
 * and puts them back at its end (rl_round_opts aside). */
enum rl_err rl_leave_aside(rl_client *c, const char *name, const char *owner,
    int64_t *position);

#endif
