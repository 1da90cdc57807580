/* rl_round.h: one command on N >= 1 masters at once, against deadlines.
 *
 * A round connects to the masters that have no connection, and once every
 * one is connected or has failed, sends the command to those connected,
 * but only when they are at least NEED: too few reachable, nothing is
 * sent and nothing changes. Replies are gathered until each master has
 * answered or run out of time. One master is simply a round of one.
 *
 * Two ways to drive it: rl_round_pollfds/rl_round_wake/rl_round_step from
 * a caller's poll loop (the watchdog), or rl_round_run, which blocks until
 * the round is over (every step of it bounded). */
#ifndef RL_ROUND_H
#define RL_ROUND_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "rl_call.h"
#include "rl_conn.h"
#include "rl_redirect.h"
#include "rl_switch.h"

#define RL_MAX_NODES 16

enum rl_phase {
	RL_PH_OFF,		/* not in this round */
	RL_PH_CONNECT,		/* connecting, AUTH and SELECT included */
	RL_PH_READY,		/* connected, waiting for the others */
	RL_PH_SENT,		/* its reply is due */
	RL_PH_DONE		/* reply, or err and why */
};

/* One master: its URL, connections, and its part in the current round. */
struct rl_node {
	struct rl_url url;
	struct rl_conn conn;	/* commands and scripts */
	struct rl_conn sub;	/* pub/sub while waiting */
	struct rl_switch sw;	/* through Sentinel: failovers heard (a
				 * waiter's, a watchdog's) */
	redisReply *reply;	/* the round's reply; NULL: err and why
				 * (err RL_OK: reachable but not asked) */
	enum rl_err err;
	char why[RL_WHY_MAX];
	int refused;		/* the error was the server's reply: the
				 * command did not run */
	int skip;		/* left out of the next round */
	int sent;		/* the round's command went (it may have
				 * run there) */
	int away;		/* the last acquisition never went to this
				 * master (it could not connect, or was left
				 * out): rounds of that hold's release leave
				 * it out (opts hold) */
	enum rl_phase phase;
	int full;		/* the script itself was sent (EVAL) */
	int answered;		/* the script's reply (or refusal) came */
	int stale;		/* replies to drop first: the WAIT behind an
				 * EVALSHA refused with NOSCRIPT */
	int waits;		/* a WAIT went behind the round's command */
	int wait_refused;	/* and was refused (an ACL without WAIT) */
	int roles;		/* the Sentinel default on a connection that
				 * saw no replica: ROLE went behind instead,
				 * to count them again */
	int exists;		/* SCRIPT EXISTS went behind (rl_round_exists) */
	int recount;		/* and counted some: the command went
				 * without the WAIT it needed (conn replicas
				 * now says how many) */
	int64_t acks;		/* replicas the pipelined WAIT counted; -1:
				 * none asked for, or no count came (why
				 * says so when WAIT was refused) */
	struct rl_follow fw;	/* MOVED and ASK followed this round (its
				 * end: no more tries of a ping-pong or of
				 * TRYAGAIN from then; 0) */
	int asking;		/* it goes behind ASKING (an ASK) */
	int64_t retry_at;	/* TRYAGAIN, a ping-pong: send again then;
				 * 0 */
	int sharded;		/* its channels are sharded (a Redis 7
				 * cluster): SPUBLISH, SSUBSCRIBE; learnt
				 * from the connections' HELLO */
	int known;		/* sharded was learnt */
	char *home;		/* after an ASK: the host to go back to */
	int home_port;
	int64_t deadline;
};

struct rl_round_opts {
	size_t need;		/* connected masters needed to send at all */
	int64_t connect_ms;	/* to connect, AUTH and SELECT included */
	int64_t connect_wait_ms; /* > 0: connect_ms is what is left of a
				 * wait (-w) this long, shorter than
				 * --connect-timeout */
	int64_t reply_ms;	/* to answer once sent */
	size_t enough;		/* once this many masters are connected... */
	int64_t straggle_ms;	/* > 0: ...those still connecting get at
				 * most this long more (the per-master
				 * bound): a master that does not answer
				 * costs a round that, never the whole
				 * connect_ms (several masters,
				 * rl_straggle_ms) */
	int keep;		/* only masters still connected take part: a
				 * lone WAIT must follow its write on the
				 * same connection */
	int pub;		/* the script's last argument is the
				 * command that wakes waiters (its publish,
				 * lua/embed.sh): sent as SPUBLISH to
				 * masters whose channels are sharded, else
				 * as given (PUBLISH) */
	int learn;		/* pub, and a new connection's HELLO must
				 * have answered first: the script surely
				 * publishes */
	int aside;		/* a round on the side of a call (a release
				 * that undoes, a WAIT after the fact): the
				 * replies of the round before, which
				 * strings handed to callers point into,
				 * are put back at its end (rl_round_end),
				 * its own freed */
	int hold;		/* it gives back the hold of the client's
				 * last acquisition (a release, an undo):
				 * masters that acquisition never went to
				 * (node away) are left out, where a count
				 * of the same owner's would be another
				 * hold's (an outer one) */
	int whole;		/* a script the connection has not run goes
				 * whole (EVAL), not by its SHA: a reply
				 * given up on at the node timeout could be
				 * a NOSCRIPT, and the command must run (a
				 * release, an undo), or be known to have
				 * run where it was sent (an acquisition) */
};

struct rl_round {
	struct rl_node *nodes;
	size_t n;
	struct rl_round_opts o;
	char doing[64];		/* "the acquire script", for messages */
	const char *sha;	/* the script's; NULL for a command */
	const char *src;	/* the script itself; NULL for a command */
	char *cmd, *full;	/* EVALSHA and EVAL (made when a node needs
				 * it, whole_of); or a command and NULL */
	size_t cmdlen, fulllen;
	char *scmd, *sfull;	/* the same with SPUBLISH (opts pub); NULL */
	size_t scmdlen, sfulllen;
	char *wait;		/* WAIT, pipelined behind the script; NULL */
	size_t waitlen;
	int wait_seen;		/* only to masters that had replicas
				 * connected (rl_conn replicas) */
	int64_t wait_ms;	/* its timeout, added to each reply deadline */
	char *exists;		/* SCRIPT EXISTS, pipelined behind; NULL */
	size_t existslen;
	const char *const *shas;	/* what it asks of: EXISTS_N SHAs */
	size_t exists_n;
	int64_t sent_ms;	/* when the command went out */
	int64_t cut_ms;		/* when masters still connecting are given
				 * up on (opts straggle_ms); 0 */
	size_t nsent;		/* to how many masters */
	int sent;
	int done;
	int aside;		/* o.aside: BEFORE holds the replies of the
				 * round before, until the end */
	redisReply *before[RL_MAX_NODES];
};

/* The one place a master's address changes after a MOVED or an ASK
 * (rl_redirection): it becomes HOST:PORT (HOST is taken over), for its
 * commands and its subscription alike. Its command connection is closed,
 * and replies still due on it with it: what was pipelined behind the
 * command (WAIT) ran on the wrong node and counts for nothing. After an
 * ASK, the address holds for the round only (its own again at the
 * round's end) and the command goes behind ASKING; after a MOVED, it
 * stays, and the subscription is closed too (made again at the new
 * address). */
void rl_node_move(struct rl_node *nd, char *host, int port, int ask);
/* One line of CLUSTER NODES (LEN bytes, no newline), in rl_scan.c: the
 * address of a master that serves slots, into HOST (HOSTLEN bytes, cut
 * short to fit) and *PORT; 0, or -1 for any other node or line (a port
 * that is not a number from 1 to 65535 too). */
int rl_cluster_master(const char *line, size_t len, char *host,
    size_t hostlen, int *port);

/* Start a round of CALL (its script, keys and arguments) on the N masters
 * of NODES; CALL NULL: only connect. Replies of the previous round are
 * freed. -1 when out of memory. */
int rl_round_script(struct rl_round *r, struct rl_node *nodes, size_t n,
    const struct rl_round_opts *o, const struct rl_call *call);
/* The same for a plain command (ARGV[0] names it in messages). */
int rl_round_command(struct rl_round *r, struct rl_node *nodes, size_t n,
    const struct rl_round_opts *o, int argc, const char **argv);
/* Before the round's first step: pipeline WAIT REPLICAS WAIT_MS behind the
 * script on each master, in the same write, its reply gathered in the
 * same round (node acks); each master's reply deadline grows by WAIT_MS.
 * A NOSCRIPT is answered with EVAL and WAIT again, and the WAIT that
 * followed the refused EVALSHA is dropped. REPLICAS below 0 (the
 * Sentinel default): WAIT 1, sent only to masters whose connection saw
 * replicas connected when it opened (node waits says which). -1 when out
 * of memory. */
int rl_round_ack(struct rl_round *r, int replicas, int64_t wait_ms);
/* Before the round's first step, instead of WAIT: pipeline SCRIPT EXISTS
 * of the N scripts SHAS (pointers that outlive the connections) behind
 * the command, in the same write; each master's connection learns those
 * its server has (rl_conn_learn), so that a command that must run goes
 * by its SHA there (opts whole), as after a script that ran. -1 when out
 * of memory. */
int rl_round_exists(struct rl_round *r, const char *const *shas, size_t n);
/* What to poll for while the round runs: how many entries of PFD (at
 * most RL_MAX_NODES) were filled. */
size_t rl_round_pollfds(const struct rl_round *r, struct pollfd *pfd);
/* When the round must be stepped at the latest (-1: done). */
int64_t rl_round_wake(const struct rl_round *r);
/* Do every I/O that is ready now, without blocking, and give up on the
 * masters whose time is over; 1 when the round is done. */
int rl_round_step(struct rl_round *r, int64_t now);
/* Step until done, polling in between. */
void rl_round_run(struct rl_round *r);
/* A command (ARGV, ARGC words) on ND alone, run to its end: its reply,
 * the caller's to keep and free (later rounds leave it alone), or NULL
 * (ND's err and why say why; nothing when out of memory). */
redisReply *rl_round_once(struct rl_node *nd, const struct rl_round_opts *o,
    int argc, const char **argv);
/* Masters that answered (a reply that is not an error). */
size_t rl_round_answered(const struct rl_round *r);
/* Free the command; masters still due are given up on. The one place
 * replies outlive a round on the side (opts aside): they are put back. */
void rl_round_end(struct rl_round *r);
/* rl_round_end, but a round on the side keeps its own replies in the
 * nodes, to be read, until rl_round_end again frees them and puts those
 * of the round before back. */
void rl_round_end_keep(struct rl_round *r);

#endif
