/* rl_error.h: one line for each way a server can fail us, with what to do. */
#ifndef RL_ERROR_H
#define RL_ERROR_H

#include <stddef.h>

#include "redlock.h"

/* Room for one message line. */
#define RL_WHY_MAX 400

/* The longest part of a server's message that a line quotes. */
#define RL_REASON_MAX 160

/* The first N bytes of S into BUF, for a line: whole when N <= MAX, else
 * cut after the last whole word within MAX bytes and ended with an
 * ellipsis, so that a server's words are never cut in two. */
void rl_clip(const char *s, size_t n, size_t max, char *buf, size_t len);
/* The ACL user a URL logs in as ("default" without one). */
const char *rl_url_user(const struct rl_url *u);
/* STR, an error reply from the server at U to DOING (AUTH, SUBSCRIBE, the
 * acquire script...), as an enum rl_err and a line in BUF: refusals the
 * operator can act on name the fix; the rest is redlock's fault. */
enum rl_err rl_error_reply(const struct rl_url *u, const char *str,
    const char *doing, char *buf, size_t len);
/* Whether STR, AUTH's error reply, says that the server has no password
 * to check (Redis, Valkey; any version): the handshake goes on without
 * AUTH, and rl_note_nopass says so. */
int rl_error_nopass(const char *str);
void rl_note_nopass(const struct rl_url *u, char *buf, size_t len);
/* U's answer was not RESP (an HTTP server, say), as WHY (the reply
 * reader's error) tells: a condition of the server, RL_ESERVER. */
enum rl_err rl_error_proto(const struct rl_url *u, const char *why,
    char *buf, size_t len);
/* A failed connection to U: WHAT ("cannot connect to", "lost connection
 * to") and WHY (strerror, or our own words). */
enum rl_err rl_error_io(const struct rl_url *u, const char *what,
    const char *why, char *buf, size_t len);

#endif
