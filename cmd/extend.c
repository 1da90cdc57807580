/* extend.c: lock --extend: lengthen a hold that another job took, by its
 * token, without taking another hold. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

/* The kind of hold OWNER has at NAME, from one status call, when NAME is
 * not a plain lock, into *K: RL_PERMIT (a semaphore), RL_WRITE or
 * RL_SHARED (a read-write lock's writer or reader; *ALSO_READ when a
 * writer reads too), else RL_EXCLUSIVE: nothing more to try. The status
 * call's error, but for a semaphore's RL_EWRONGTYPE. */
static enum rl_err
kind_of(rl_client *rc, const char *name, const char *owner,
    enum rl_lock_kind *k, int *also_read)
{
	struct rl_status st;
	struct rl_reader r;
	enum rl_err e;
	size_t i;

	*k = RL_EXCLUSIVE;
	*also_read = 0;
	e = rl_status(rc, name, &st);
	if (e == RL_EWRONGTYPE && (st.kind == RL_KIND_SEMAPHORE ||
	    st.kind == RL_KIND_EXPIRABLE)) {
		*k = RL_PERMIT;
		return RL_OK;
	}
	if (e != RL_OK || st.kind != RL_KIND_RWLOCK)
		return e;
	if (st.owner != NULL && strcmp(st.owner, owner) == 0)
		*k = RL_WRITE;
	for (i = 0; rl_status_reader(&st, i, &r) == 0; i++)
		if (r.owner != NULL && strcmp(r.owner, owner) == 0) {
			if (*k == RL_WRITE)
				*also_read = 1;
			else
				*k = RL_SHARED;
		}
	return RL_OK;
}

/*
 * Lengthen OWNER's hold of NAME to at least MS from now, by the server's
 * clock, never shortening it and never adding a hold: the renewal the
 * lease keeper sends, one script call per master and the same quorum.
 * A plain lock's is the first and only call. Where it is not OWNER's
 * (one master only: several take plain locks alone), one status call
 * tells whether NAME is a semaphore or a read-write lock that OWNER has
 * a permit or holds of, and those are renewed as their keepers renew
 * them; a key of another type there is EXIT_WRONGTYPE, as for unlock.
 * 0, EXIT_NOT_HELD (said), or an error's status.
 */
int
lock_extend(struct globals *g, const char *name, struct lockopts *o,
    int64_t ms)
{
	struct rl_lock l = { .name = name, .owner = o->owner,
	    .kind = RL_EXCLUSIVE };
	rl_client *rc;
	enum rl_err e;
	int status, ours = 0, read = 0, also_read = 0;
	char d[32];

	if ((rc = client_open_pubsub(g, ms, o->pubsub, &status)) == NULL)
		return status;
	rl_set_replicas(rc, o->replicas);
	e = rl_renew(rc, &l, ms, &ours);
	if (e == RL_OK && !ours && rl_nodes(rc) == 1 &&
	    (e = kind_of(rc, name, o->owner, &l.kind, &also_read)) ==
	    RL_OK && l.kind != RL_EXCLUSIVE) {
		e = rl_renew(rc, &l, ms, &ours);
		if (e == RL_OK && also_read) {
			l.kind = RL_SHARED;
			e = rl_renew(rc, &l, ms, &read);
			ours |= read;
		}
	}
	if (e != RL_OK) {
		status = fail(rc, e, name);
		rl_client_free(rc);
		return status;
	}
	rl_client_free(rc);
	rl_duration_format(ms, d, sizeof(d));
	if (!ours) {
		msg("%s is not held by that owner: it was released, its lease "
		    "ran out, or another token holds it; nothing was changed",
		    esc(name_shown(name)));
		return EXIT_NOT_HELD;
	}
	event(o, "extended %s: its lease is at least %s from now",
	    esc(name_shown(name)), d);
	return 0;
}
