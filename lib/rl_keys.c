/* rl_keys.c: which kinds of lock need one master. (A lock's keys: the
 * scripts' headers in lua/, made by rl_call_make.) */
#include <stdlib.h>
#include <string.h>

#include "rl_client.h"
#include "rl_keys.h"

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
