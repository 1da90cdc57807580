/* rl_error.c: server error replies and connection failures as one line. */
#include <stdio.h>
#include <string.h>

#include "rl_error.h"

const char *
rl_url_user(const struct rl_url *u)
{
	return u->user != NULL ? u->user : "default";
}

/* Error replies that are a condition of the server, not a fault of
 * redlock's: how they start, what the operator can do about them, and
 * whether they pass (the command did not run; waiting tries again, and a
 * renewal counts as failed, not as refused). */
static const struct {
	const char *code;
	const char *todo;
	int passes;
} refusals[] = {
	{ "OOM ", "the server is out of memory: free some or raise "
	    "maxmemory (an eviction policy would evict held locks too)", 0 },
	{ "CLUSTERDOWN ", "the cluster is down or does not serve this "
	    "name's slot: check CLUSTER INFO", 1 },
	{ "MOVED ", "the cluster kept sending the command on: check its "
	    "slots (CLUSTER SHARDS)", 0 },
	{ "ASK ", "the cluster kept sending the command on: check its "
	    "slots (CLUSTER SHARDS)", 0 },
	{ "TRYAGAIN ", "the cluster is moving this slot: try again shortly",
	    1 },
	{ "MISCONF ", "the server cannot save to disk and refuses writes: "
	    "fix its disk or its save settings", 0 },
	{ "NOREPLICAS ", "too few replicas are connected to the master "
	    "(min-replicas-to-write)", 0 },
	{ "ERR unknown command ", "the command is renamed or disabled "
	    "(rename-command); redlock needs EVAL and EVALSHA", 0 },
	{ "ERR max number of clients", "the server has as many clients as "
	    "maxclients allows: try again later or raise it", 0 },
};

void
rl_clip(const char *s, size_t n, size_t max, char *buf, size_t len)
{
	size_t cut = n;

	if (n > max) {
		/* s[max] exists: the blank there, or the last one before it,
		 * ends the last whole word. */
		for (cut = max; cut > 0 && s[cut] != ' '; cut--)
			;
		/* One word longer than MAX: cut it, but not inside a UTF-8
		 * sequence. */
		if (cut == 0)
			for (cut = max; cut > 0 &&
			    ((unsigned char)s[cut] & 0xc0) == 0x80; cut--)
				;
		while (cut > 0 && (s[cut - 1] == ' ' || s[cut - 1] == ',' ||
		    s[cut - 1] == ':' || s[cut - 1] == ';'))
			cut--;
	}
	snprintf(buf, len, "%.*s%s", (int)cut, s, cut < n ? "\u2026" : "");
}

/* The server's text up to where a script's location or a command's
 * arguments begin, at most RL_REASON_MAX bytes of it (cut between words),
 * into BUF, for a line. */
static const char *
reason(const char *s, char *buf, size_t len)
{
	const char *p = NULL, *at = s;
	const char *q = strstr(s, ", with args beginning with");
	size_t n;

	/* The last " script: ": Valkey's "ACL failure in script: ..." is
	 * the reason. */
	while ((at = strstr(at, " script: ")) != NULL)
		p = at++;
	n = p != NULL ? (size_t)(p - s) : strlen(s);

	if (q != NULL && (size_t)(q - s) < n)
		n = (size_t)(q - s);
	while (n > 0 && (s[n - 1] == '.' || s[n - 1] == ' '))
		n--;
	rl_clip(s, n, RL_REASON_MAX, buf, len);
	return buf;
}

static int
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* How a script says, before its first write, which command it may not
 * run on which key (rl_denied in lua/prelude.lua). */
#define RL_DENIED "NOPERM this user may not run "

/* STR, a script's own refusal (RL_DENIED COMMAND " on " KEY): the
 * command, lowercased for the rule that grants it, and the key. */
static void
denied(const char *url, const char *user, const char *str,
    const char *doing, char *buf, size_t len)
{
	const char *cmd = str + strlen(RL_DENIED), *on = strstr(cmd, " on ");
	char lower[32], key[RL_REASON_MAX + 8];
	size_t i, n = on != NULL ? (size_t)(on - cmd) : strlen(cmd);

	if (n >= sizeof(lower))
		n = sizeof(lower) - 1;
	for (i = 0; i < n; i++)
		lower[i] = (char)(cmd[i] >= 'A' && cmd[i] <= 'Z' ?
		    cmd[i] - 'A' + 'a' : cmd[i]);
	lower[i] = '\0';
	on = on != NULL ? on + 4 : "";
	rl_clip(on, strlen(on), RL_REASON_MAX, key, sizeof(key));
	snprintf(buf, len, "%s does not let user %s run %.*s on %s, which %s "
	    "needs (nothing was changed): grant it with ACL SETUSER %s +%s "
	    "and a key pattern that matches %s", url, user, (int)n, cmd, key,
	    doing, user, lower, key);
}

/* Refused for want of a permission: which one to grant. */
static enum rl_err
noperm(const struct rl_url *u, const char *url, const char *why,
    const char *doing, char *buf, size_t len)
{
	const char *user = rl_url_user(u);

	if (strncmp(doing, "SUBSCRIBE", 9) == 0 ||
	    strncmp(doing, "SSUBSCRIBE", 10) == 0)
		snprintf(buf, len, "%s refused %s for user %s (%s): a "
		    "waiter needs it to be woken; grant it with ACL SETUSER "
		    "%s " RL_ACL_CHANNELS, url, doing, user, why, user);
	else if (strcmp(doing, "WAIT") == 0)
		snprintf(buf, len, "%s refused WAIT for user %s (%s): "
		    "--replicas needs it; grant it with ACL SETUSER %s +wait",
		    url, user, why, user);
	else
		snprintf(buf, len, "%s refused %s for user %s (%s): grant it "
		    "EVALSHA, EVAL, the commands the scripts run, the keys and "
		    "the channels " RL_ACL_CHANNELS, url, doing, user, why);
	return RL_EAUTH;
}

enum rl_err
rl_error_reply(const struct rl_url *u, const char *str, const char *doing,
    char *buf, size_t len)
{
	char url[512], why[RL_REASON_MAX + 8];
	size_t i;

	rl_url_format(u, url, sizeof(url));
	reason(str, why, sizeof(why));
	if (starts(str, "NOAUTH") || strstr(str, "unauthenticated") != NULL) {
		snprintf(buf, len, "%s requires authentication: give the "
		    "password in the URL or in REDLOCK_PASSWORD", url);
		return RL_EAUTH;
	}
	if (starts(str, "WRONGPASS") || strstr(str, "invalid password") ||
	    rl_error_nopass(str)) {
		snprintf(buf, len, "authentication to %s refused (%s): "
		    "check the user and password", url, why);
		return RL_EAUTH;
	}
	if (starts(str, RL_DENIED)) {
		denied(url, rl_url_user(u), str, doing, buf, len);
		return RL_EAUTH;
	}
	/* In a script: Redis 7.0's words, then Valkey's. */
	if (starts(str, "NOPERM") ||
	    strstr(str, "user executing the script can't") != NULL ||
	    strstr(str, "ACL failure in script") != NULL)
		return noperm(u, url, why, doing, buf, len);
	/* A lost master, not a refusal: the round closes the connection,
	 * and the next one connects again (through Sentinel: to the new
	 * master). */
	if (starts(str, "READONLY")) {
		if (u->master != NULL)
			snprintf(buf, len, "the master of %s is a read-only "
			    "replica now (a failover?); the next attempt asks "
			    "the sentinels again", url);
		else
			snprintf(buf, len, "%s is a read-only replica: give "
			    "the master's URL, or a redis+sentinel:// URL to "
			    "follow failovers", url);
		return RL_ECONNECT;
	}
	/* Checked before anything ran: the name is to blame, not the
	 * server. */
	if (starts(str, "CROSSSLOT")) {
		snprintf(buf, len, "%s refused %s (CROSSSLOT): the keys of "
		    "this name fall in different slots of the cluster; a name "
		    "with '{' needs a non-empty {tag} ('jobs{backup}'), one "
		    "without must not contain '}'", url, doing);
		return RL_EUSAGE;
	}
	if (starts(str, "LOADING") || starts(str, "BUSY") ||
	    starts(str, "MASTERDOWN")) {
		snprintf(buf, len, "%s cannot serve now (%s): try again "
		    "shortly", url, why);
		return RL_ECONNECT;
	}
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		if (starts(str, refusals[i].code)) {
			snprintf(buf, len, "%s refused %s (%s): %s", url,
			    doing, why, refusals[i].todo);
			return refusals[i].passes ? RL_ECONNECT : RL_ESERVER;
		}
	if (strcmp(doing, "AUTH") == 0 || strcmp(doing, "SELECT") == 0) {
		snprintf(buf, len, "%s refused %s (%s): check the user, "
		    "the password and the database in the URL", url, doing,
		    why);
		return RL_EAUTH;
	}
	/* For a report: the whole text, a script's location too. */
	rl_clip(str, strlen(str), RL_REASON_MAX, why, sizeof(why));
	snprintf(buf, len, "%s failed on %s: %s", doing, url, why);
	return RL_EPROTO;
}

int
rl_error_nopass(const char *str)
{
	/* Redis 6 and later, Valkey: "ERR AUTH <password> called without
	 * any password configured for the default user..."; Redis 5 and
	 * older: "ERR Client sent AUTH, but no password is set". */
	return strstr(str, "without any password configured") != NULL ||
	    strstr(str, "no password is set") != NULL;
}

void
rl_note_nopass(const struct rl_url *u, char *buf, size_t len)
{
	char url[512];

	rl_url_format(u, url, sizeof(url));
	snprintf(buf, len, "%s has no password set and refused AUTH: went on "
	    "without it (the password given is not needed)", url);
}

enum rl_err
rl_error_proto(const struct rl_url *u, const char *why, char *buf,
    size_t len)
{
	char url[512];

	rl_url_format(u, url, sizeof(url));
	snprintf(buf, len, "%s answered something that is not the Redis "
	    "protocol (%s): is this a Redis server? check the URL", url,
	    why != NULL && why[0] != '\0' ? why : "unreadable reply");
	return RL_ESERVER;
}

enum rl_err
rl_error_io(const struct rl_url *u, const char *what, const char *why,
    char *buf, size_t len)
{
	char url[512];

	rl_url_format(u, url, sizeof(url));
	snprintf(buf, len, "%s %s: %s", what, url,
	    why != NULL && why[0] != '\0' ? why : "unknown error");
	return RL_ECONNECT;
}
