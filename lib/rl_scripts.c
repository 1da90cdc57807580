/* rl_scripts.c: the Lua scripts embedded at build time (lua/embed.sh),
 * defined here, once; build/rl_scripts.h declares them. */
#define RL_SCRIPTS_DEFINE
#include "rl_scripts.h"
