/* unlock.c: give back one hold of NAME, or delete it with --force. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static int run(struct globals *, int, char **);

const struct cmd cmd_unlock = {
	"unlock", "unlock [--owner TOKEN | --force] NAME",
	"Release one hold of NAME taken with TOKEN; the last one frees it\n"
	"and wakes a waiter.\n\n"
	"      --owner TOKEN       the token lock printed (default: NAME's owner in\n"
	"                          $REDLOCK_HELD, else $REDLOCK_OWNER)\n"
	"      --force             delete NAME whoever holds it, and wake waiters\n"
	"  -h, --help              show this help\n",
	run
};

static int
run(struct globals *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "owner", required_argument, NULL, 'O' },
		{ "force", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *owner = NULL, *name;
	char held[OWNER_MAX_LEN + 1];
	struct rl_attempt a;
	enum rl_release rel;
	enum rl_err e;
	int64_t holds;
	rl_client *rc;
	int ch, force = 0, deleted, status;

	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'O':
			owner = optarg;
			break;
		case 'F':
			force = 1;
			break;
		case 'h':
			return print_help(&cmd_unlock);
		default:
			return bad_option(&cmd_unlock, argv, "h", longopts);
		}
	}
	if ((status = one_name(&cmd_unlock, argc, argv, &name)) != 0)
		return status;
	if (force && owner != NULL)
		return usage_error(&cmd_unlock,
		    "--owner and --force exclude each other");
	/* Inside an exec chain, NAME's own owner first: REDLOCK_OWNER is
	 * that of the nearest exec, which may hold another name. */
	if (!force && owner == NULL) {
		if ((status = held_owner(name, held, sizeof(held))) < 0)
			return EXIT_USAGE;
		owner = status > 0 ? held : getenv("REDLOCK_OWNER");
	}
	if (!force && (owner == NULL || owner[0] == '\0'))
		return usage_error(&cmd_unlock, "which hold? give --owner TOKEN "
		    "(printed by lock) or set REDLOCK_OWNER, or --force");

	if ((rc = client_open(g, DEFAULT_TTL_FOR_TIMEOUT, &status)) == NULL)
		return status;
	if (force) {
		e = rl_force_release(rc, name, &deleted, &a);
		if (e != RL_OK)
			status = fail(rc, e, name);
		else if (!deleted) {
			msg("%s was not held; nothing to delete", esc(name));
			status = EXIT_NOT_HELD;
		} else
			status = 0;
	} else {
		e = rl_release(rc, name, owner, &rel, &holds, &a);
		if (e != RL_OK)
			status = fail(rc, e, name);
		else if (rel == RL_NOT_OWNER) {
			msg("%s is not held by that owner (%s); nothing was "
			    "changed", esc(name), holds ? "another owner holds "
			    "it" : "it is free: the lease may have expired");
			status = EXIT_NOT_HELD;
		} else
			status = 0;
	}
	/* Released or deleted, but the server would not let it wake the
	 * waiters. */
	if (status == 0 && a.nopub != NULL)
		warn_nopub(rc, name, a.nopub, 1);
	rl_client_free(rc);
	return status;
}
