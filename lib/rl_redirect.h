/* rl_redirect.h: following Redis Cluster's redirections (MOVED, ASK),
 * the one follower of a round's commands and a waiter's subscriptions. */
#ifndef RL_REDIRECT_H
#define RL_REDIRECT_H

#include <stddef.h>
#include <stdint.h>

#include "redlock.h"

/* Redis Cluster: a command answered with MOVED is sent again to the node
 * named, which stays the node's address from then on; one answered with
 * ASK (a slot being migrated) is sent there once, behind ASKING. At most
 * RL_MAX_REDIRECTS of them to nodes new to the round, per master. One
 * sent back to a node it went to earlier in the round (a ping-pong: while
 * a slot changes owner, the old owner may hand it on before the new one
 * has taken it, and each names the other) is sent again RL_TRYAGAIN_MS
 * later, as one answered with TRYAGAIN (its keys half migrated) is: both
 * for as long as a reply may take (the round's reply_ms) from the first
 * of them. */
#define RL_MAX_REDIRECTS 5
#define RL_TRYAGAIN_MS 50

/* Where one master's command went in a round (or a waiter's subscription,
 * rl_sub.c) before the address it is at now: its own, then those MOVED
 * and ASK named, each once. */
struct rl_hops {
	char *host[RL_MAX_REDIRECTS + 1];	/* NULL: a unix socket */
	int port[RL_MAX_REDIRECTS + 1];
	size_t n;
};

/* One command's or subscription's redirections: the hops it made, how
 * many to nodes new to it, and when its tries of a ping-pong end. */
struct rl_follow {
	struct rl_hops hops;
	int moves;		/* MOVED and ASK to a new node followed */
	int64_t end;		/* a ping-pong is tried until then; 0: none
				 * yet (a round's TRYAGAIN shares it) */
};

/* What rl_follow is told of a redirection, and what it says of it. */
struct rl_redir {
	const char *doing;	/* "the acquire script", for WHY */
	int64_t reply_ms;	/* a ping-pong is tried this long from its
				 * first bounce */
	int ask_ok;		/* an ASK is followed (a subscription's is
				 * not) */
	char *why;		/* RL_FOLLOW_OVER: the line naming both
				 * nodes, into these WHYLEN bytes */
	size_t whylen;
	char *host;		/* RL_FOLLOW_NEW and BACK: where to (the
				 * caller's to free, or rl_node_move's) */
	int port;
	int ask;		/* and whether it is an ASK */
};

enum rl_follow_step {
	RL_FOLLOW_NOT,		/* no redirection to follow: none, an ASK
				 * not followed, or too many new nodes */
	RL_FOLLOW_NEW,		/* to a node new to it: go there now */
	RL_FOLLOW_BACK,		/* back to a node it came from (a ping-pong,
				 * while a slot changes owner): go there
				 * RL_TRYAGAIN_MS later */
	RL_FOLLOW_OVER,		/* a ping-pong that outlasted its tries: it
				 * failed (WHY), and ran on neither node */
	RL_FOLLOW_NOMEM
};

/* STR, an error that the node at AT answered for F: where to go. F's
 * hops gain AT when it goes on (NEW, BACK). */
enum rl_follow_step rl_follow(struct rl_follow *f, const struct rl_url *at,
    const char *str, int64_t now, struct rl_redir *to);
/* Forget what F followed. */
void rl_follow_clear(struct rl_follow *f);

/* "MOVED 3999 127.0.0.1:6381" or "ASK ...": the address (*HOST is the
 * caller's to free) and whether it is an ASK; -1 when STR is neither. */
int rl_redirection(const char *str, char **host, int *port, int *ask);
/* Whether HOST:PORT, where a MOVED or ASK from AT sends a command, is
 * one of H (then the command is going back and forth), AT itself not
 * counted: a node that names itself is not a ping-pong. */
int rl_hops_back(const struct rl_hops *h, const struct rl_url *at,
    const char *host, int port);
/* Remember AT in H (when not there yet, and while there is room); -1
 * when out of memory. */
int rl_hops_add(struct rl_hops *h, const struct rl_url *at);
void rl_hops_clear(struct rl_hops *h);
/* A ping-pong that outlasted its time: AT the node that answered STR
 * (MOVED ...) to DOING, HOST:PORT the node it named, for MS ms. */
struct rl_bounce {
	const struct rl_url *at;
	char *host;
	int port;
	const char *doing;
	const char *str;
	int64_t ms;
};
/* "A and B kept sending DOING to each other (MOVED ...) for MS ms: ..."
 * into BUF (LEN bytes), of ping-pong B. */
void rl_hops_why(const struct rl_bounce *b, char *buf, size_t len);

#endif
