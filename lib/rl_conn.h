/* rl_conn.h: one connection to one server, non-blocking and poll-driven.
 *
 * The connection owns its socket; hiredis only formats commands
 * (redisFormatCommandArgv) and parses replies (redisReader). Nothing here
 * blocks: the caller polls rl_conn_fd() for rl_conn_events() and calls
 * rl_conn_io(). Commands run on the server in the order they were sent,
 * and a reply given up on (rl_conn_late) is read and dropped when it
 * comes, so the connection stays in step instead of being replaced by one
 * that could overtake it. */
#ifndef RL_CONN_H
#define RL_CONN_H

#include <stddef.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "redlock.h"
#include "rl_error.h"

struct rl_conn;

/* What moves the bytes: plain sockets (rl_transport_tcp); TLS and the
 * tests' fake connection layer plug in here. */
struct rl_transport {
	/* Start connecting C to C->url: 0 with C->fd set (connect(2) may
	 * still be in progress), -1 with C->why. */
	int (*open)(struct rl_conn *c);
	/* C->fd is ready while connecting: 0 connected, 1 not yet (C->fd
	 * may have changed: another address; C->want: what to poll for, 0
	 * for POLLOUT), -1 failed (C->why; C->err may say RL_EAUTH, else
	 * it is RL_ECONNECT). */
	int (*finish)(struct rl_conn *c);
	ssize_t (*read)(struct rl_conn *c, void *buf, size_t len);
	ssize_t (*write)(struct rl_conn *c, const void *buf, size_t len);
	void (*close)(struct rl_conn *c);
	/* After read or write failed (-1, errno not EAGAIN): why, in words
	 * (NULL: strerror(errno) says it). */
	const char *(*error)(struct rl_conn *c);
};

extern const struct rl_transport rl_transport_tcp;	/* rl_tcp.c */
extern const struct rl_transport rl_transport_tls;	/* rl_tls.c */
extern const struct rl_transport rl_transport_sentinel;	/* rl_sentinel.c */

enum rl_conn_state {
	RL_CONN_CLOSED,
	RL_CONN_CONNECTING,	/* connect(2) in progress */
	RL_CONN_HANDSHAKE,	/* AUTH, SELECT (and ROLE) sent, replies due */
	RL_CONN_READY
};

enum rl_io {
	RL_IO_WAIT,		/* nothing (more) for now */
	RL_IO_REPLY,		/* a reply, or a pub/sub message */
	RL_IO_FAIL		/* closed: err and why say why */
};

/* How many scripts a connection remembers having loaded. */
#define RL_CONN_KNOWN 24

struct rl_conn {
	const struct rl_url *url;
	const struct rl_transport *t;
	enum rl_conn_state state;
	int fd;
	short want;		/* connecting: the transport waits for this */
	const char *stage;	/* connecting: what a timeout now means, from
				 * the transport (NULL: connect(2)) */
	size_t rx;		/* bytes received since the connection opened */
	void *priv;		/* the transport's own */
	unsigned turn;		/* the transport's own, kept across connects
				 * (Sentinel: which sentinel to ask first) */
	redisReader *reader;
	char *out;		/* bytes to write, from outoff */
	size_t outlen, outoff;
	char *held;		/* commands held back until the handshake ends */
	size_t heldlen;
	int heldn;
	const char *hs[4];	/* handshake commands whose replies are due */
	int nhs;
	int probe;		/* HELLO's reply is due (it holds nothing
				 * back) */
	int ask_info;		/* INFO memory goes behind the handshake
				 * (rl_set_eviction_check; kept across
				 * opens) */
	int info_due;		/* its reply is due (it holds nothing back
				 * either) */
	char evicts[32];	/* what it said: the server's
				 * maxmemory-policy when it may evict a
				 * lock, else "" (it may not, or INFO was
				 * refused or has not answered yet) */
	enum rl_pubsub pubsub;	/* rl_set_pubsub: auto (0) learns sharded
				 * from HELLO; classic sends no HELLO;
				 * sharded makes HELLO part of the
				 * handshake, which fails (RL_ESERVER) on a
				 * server without sharded pub/sub */
	int sharded;		/* 1: channels are sharded (SPUBLISH,
				 * SSUBSCRIBE): auto, on a Redis 7 or newer
				 * cluster node, from HELLO; 0 not; -1 not
				 * known yet */
	int replicas;		/* through Sentinel: how many replicas the
				 * master has, as the sentinels count them
				 * (rl_sentinel_replicas) or ROLE does (those
				 * connected), whichever is more; -1: not
				 * known */
	const char *known[RL_CONN_KNOWN];	/* scripts (their SHA) that
				 * ran or were sent whole on this connection:
				 * the server has them cached */
	int nknown;
	int nopass;		/* AUTH was refused as the server has no
				 * password (rl_error_nopass): the handshake
				 * went on without it */
	int due;		/* replies due to commands sent */
	int drop;		/* the first DROP of them were given up on */
	enum rl_err err;
	char why[RL_WHY_MAX];
};

/* A closed connection to U over T. */
void rl_conn_init(struct rl_conn *c, const struct rl_url *u,
    const struct rl_transport *t);
/* Start connecting, with AUTH and SELECT (and, through Sentinel, ROLE)
 * queued behind, then HELLO, whose reply sets sharded (as pubsub says),
 * then with ask_info INFO memory, whose reply sets evicts; -1 with
 * err/why. */
int rl_conn_open(struct rl_conn *c);
/* Queue CMD (LEN bytes, one formatted command). Before the handshake has
 * ended it is held back, so that no command runs as the wrong user or in
 * the wrong database. -1 when out of memory. */
int rl_conn_send(struct rl_conn *c, const char *cmd, size_t len);
int rl_conn_fd(const struct rl_conn *c);
/* POLLOUT while connecting or writing, else POLLIN; 0 when closed. */
short rl_conn_events(const struct rl_conn *c);
/* Do what REVENTS allow, then take one reply: RL_IO_REPLY with *OUT (the
 * caller frees it), RL_IO_WAIT, or RL_IO_FAIL (the connection is closed).
 * After RL_IO_REPLY call again with REVENTS 0: more may have been read. */
enum rl_io rl_conn_io(struct rl_conn *c, short revents, redisReply **out);
/* The replies due are given up on: they are dropped as they come. While
 * connecting, when nothing has been written, the connection is closed. */
void rl_conn_late(struct rl_conn *c);
void rl_conn_close(struct rl_conn *c);
/* Whether the script SHA (the pointer: scripts are built in) is cached on
 * the server, as far as this connection saw; and to note that it is. */
int rl_conn_knows(const struct rl_conn *c, const char *sha);
void rl_conn_learn(struct rl_conn *c, const char *sha);

#endif
