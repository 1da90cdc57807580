/* rl_keys.h: what a lock kind needs: one master, or several. */
#ifndef RL_KEYS_H
#define RL_KEYS_H

#include "redlock.h"

/* WHAT ("fair locks") needs one master: RL_EUSAGE on several, else
 * RL_OK (also for WHAT NULL, a kind every deployment has). */
enum rl_err rl_policy(rl_client *c, const char *what);
/* One master, not several (Redlock). */
int rl_one_master(const rl_client *c);

#endif
