/* rl_client.h: the client handle behind redlock.h's rl_client, for the
 * files of lib/ that run operations on it. */
#ifndef RL_CLIENT_H
#define RL_CLIENT_H

#include <poll.h>
#include <stdarg.h>

#include "redlock.h"
#include "rl_call.h"
#include "rl_round.h"

struct rl_client {
	size_t n;		/* masters: one, or several for Redlock */
	struct rl_node *nodes;
	int checked;		/* connected once (and no server twice) */
	int64_t connect_timeout_ms;
	int64_t timeout_ms;	/* --reply-timeout */
	int64_t node_timeout_ms;	/* several masters: per master */
	int replicas;		/* --replicas: WAIT for this many; 0: not;
				 * -1: the Sentinel default (rl_acks) */
	int64_t waiter_ms;	/* rl_set_waiter_timeout */
	int64_t min_hold_ms;	/* rl_set_min_hold */
	int supersede;		/* rl_set_supersede: 0 off; 1 the next
				 * attempt arrives (supersedes), 2 the
				 * attempts of its wait after it */
	char hist_max[24];	/* rl_set_history: events kept ("": none) */
	char hist_ttl[24];	/* and the stream's expiry in ms */
	char exit_status[16];	/* rl_set_exit_status: "" when none */
	int64_t wait_since_ms;	/* rl_acquire: its wait began (0: none) */
	int64_t wait_until_ms;	/* rl_acquire: its wait ends (monotonic);
				 * -1: never; -2: not waiting */
	int intr_fd;
	int64_t connect_until_ms;	/* rl_connect by then (-w); -1 */
	int64_t connect_wait_ms;	/* ...the -w that set it, ms */
	int64_t until_ms;	/* rounds connect by then (a wait's
				 * deadline); -1: no limit but the timeouts */
	int64_t end_ms;		/* rl_acquire: its rounds are cut short
				 * by then, replies and all (rl_client_run);
				 * -1: no limit but the timeouts */
	int intr_seen;		/* rl_acquire: the interrupt came, and its
				 * rounds watch intr_fd no more */
	struct rl_round round;	/* the last round; replies in nodes */
	char errstr[640];
	char note[RL_WHY_MAX];	/* rl_connect_note's line */
	int refused;		/* errstr is one master's own refusal, which
				 * says what to do */
};

/* -w bounds the whole call: a reply still due when it runs out is
 * waited for this much longer, and the calls on the way out (leaving the
 * queue or the room) get this much from when they start, at the most. */
#define RL_LATE_MS 250
/* A signal ends a wait within this: what is left of it is the way out's
 * (a fair waiter's leave). */
#define RL_INTR_MS 100

/* New clients connect over T, whatever their URLs ask for (the tests'
 * fake connections); NULL: the URLs' own transports again. */
void rl_client_set_transport(const struct rl_transport *t);
enum rl_err rl_seterr(rl_client *c, enum rl_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The client's timeouts for a round that needs NEED masters connected,
 * the connect timeout cut to what is left until c->until_ms. */
struct rl_round_opts rl_opts(const rl_client *c, size_t need);
/* rl_opts for a script that takes the publish command last and surely
 * publishes (a release): see rl_round_opts pub and learn. */
struct rl_round_opts rl_opts_pub(const rl_client *c);
/* Whether a reply of a round with the options O is given up on before
 * --reply-timeout (several masters: at the node timeout). */
int rl_opts_early(const rl_client *c, const struct rl_round_opts *o);
/* Run c->round to its end, polling in between. In rl_acquire it is cut
 * short at c->end_ms, or when intr_fd becomes readable (watched until
 * then: rl_client_interrupted): what was sent is written, then replies
 * due are given up on as at their timeouts, and a cut at end_ms says so
 * in the masters' lines (nd->why). */
void rl_client_run(rl_client *c);
/* The interrupt came: rounds stop watching for it, and end within
 * RL_INTR_MS from now. */
void rl_client_interrupted(rl_client *c);
/* Whether every master a call of the last acquisition's hold goes to
 * (node away aside) owes replies given up on: an answer would come
 * behind them, no sooner. */
int rl_client_behind_late(const rl_client *c);
/* The way out of a wait bounded by -w (c->end_ms set, no interrupt):
 * its calls get at least RL_LATE_MS from now, unless they would go
 * behind replies given up on (rl_client_behind_late). */
void rl_client_way_out(rl_client *c);
/* The commands that subscribe to the N channels CH, SUBSCRIBE and
 * SSUBSCRIBE, into CMD and LEN: one command per channel, sent together
 * (SSUBSCRIBE refuses channels of two slots in one command). -1 when out
 * of memory. */
int rl_format_sub(const char *const *ch, size_t n, char *cmd[2],
    size_t len[2]);
/* Run CALL on every master and wait for the round to end (each step
 * bounded by the timeouts of O, or of rl_opts(c, 1) when O is NULL); CALL
 * NULL: only connect. Replies are in c->nodes[i].reply until the next
 * round. RL_ENOMEM only: what came back is for the caller to add up. */
enum rl_err rl_run(rl_client *c, const struct rl_round_opts *o,
    const struct rl_call *call);
/* rl_run, with WAIT for c->replicas (within WAIT_MS) pipelined behind the
 * script when there are any to wait for. */
enum rl_err rl_run_ack(rl_client *c, const struct rl_round_opts *o,
    int64_t wait_ms, const struct rl_call *call);
/* rl_run_ack, but a round on the side of a call (opts aside) keeps its
 * replies in the nodes, to be read, until rl_round_end(&c->round) frees
 * them and puts those of the round before back (rl_round_end_keep). */
enum rl_err rl_run_open(rl_client *c, const struct rl_round_opts *o,
    int64_t wait_ms, const struct rl_call *call);
/* Replica acknowledgement of the last round, as rl_quorum_acks takes
 * it: the count each master gave into ACKS, and the count wanted. In the
 * Sentinel default (c->replicas -1) one acknowledgement is wanted, and a
 * master that had no replica connected, which was sent no WAIT, is not
 * held back, unless the ROLE sent instead found some (node recount), nor
 * one that refused WAIT (a user without it: let through, as a refused
 * ROLE is). */
int64_t rl_acks(const rl_client *c, int64_t *acks);
/* The last round reached too few masters to DOING: one master's own
 * message when its failure alone decided, else how many answered and the
 * first failure. */
enum rl_err rl_no_quorum(rl_client *c, const char *doing);
/* Master J's error from the last round as the client's. */
enum rl_err rl_node_error(rl_client *c, size_t j);
/* Failovers heard (rl_switch.h), for a waiter's or a watchdog's poll
 * loop: PFD (room for c->n) gets the sentinels' subscriptions, opened as
 * they are due; how many. */
size_t rl_switch_pollfds(rl_client *c, int64_t now, struct pollfd *pfd);
/* When rl_switch_pollfds is due again at the latest (-1: only when a
 * descriptor is ready). */
int64_t rl_switch_wake_ms(const rl_client *c);
/* After the poll: what came on them (PFD as rl_switch_pollfds filled it,
 * or NULL to poll them now without waiting). 1 when a master's switch
 * was announced: rl_switch_follow is due, once no round is in flight. */
int rl_switch_step(rl_client *c, const struct pollfd *pfd, int64_t now);
/* Close the connections that a switch heard left on the old master:
 * commands', and pub/sub ones when SUB_CLOSED (c->n entries, set for the
 * masters whose pub/sub connection was closed) is given; the next
 * connect asks the sentinel that announced it first. How many were. */
size_t rl_switch_follow(rl_client *c, int *sub_closed);

#endif
