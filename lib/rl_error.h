/* rl_error.h: one line for each way a server can fail us, with what to do. */
#ifndef RL_ERROR_H
#define RL_ERROR_H

#include <stddef.h>

#include "redlock.h"

/* Room for one message line. */
#define RL_WHY_MAX 400

/* The ACL user a URL logs in as ("default" without one). */
const char *rl_url_user(const struct rl_url *u);
/* STR, an error reply from the server at U to DOING (AUTH, SUBSCRIBE, the
 * acquire script...), as an enum rl_err and a line in BUF: refusals the
 * operator can act on name the fix; the rest is redlock's fault. */
enum rl_err rl_error_reply(const struct rl_url *u, const char *str,
    const char *doing, char *buf, size_t len);
/* A failed connection to U: WHAT ("cannot connect to", "lost connection
 * to") and WHY (strerror, or our own words). */
enum rl_err rl_error_io(const struct rl_url *u, const char *what,
    const char *why, char *buf, size_t len);

#endif
