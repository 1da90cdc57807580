/* rl_tcp.h: start and finish a non-blocking connect(2), for the transports.
 *
 * Every transport ends in a socket: the plain one is only this, TLS runs
 * its handshake on top, and Sentinel connects to a sentinel before the
 * master. */
#ifndef RL_TCP_H
#define RL_TCP_H

#include <netdb.h>
#include <sys/types.h>

struct rl_conn;

struct rl_tcp {
	int fd;			/* -1 until started */
	struct addrinfo *list, *next;	/* addresses not tried yet */
	int last_errno;
	const char *why;	/* after -1: strerror or gai_strerror */
};

void rl_tcp_init(struct rl_tcp *t);
/* Start connecting to HOST:PORT, or to the unix socket PATH when HOST is
 * NULL: 0 with T->fd set (connect(2) may be in progress), -1 with T->why.
 * Host names are looked up with getaddrinfo(3), which blocks. */
int rl_tcp_start(struct rl_tcp *t, const char *host, int port,
    const char *path);
/* T->fd became writable: 0 connected, 1 not yet (T->fd may have changed:
 * the next address is tried), -1 failed with T->why. */
int rl_tcp_finish(struct rl_tcp *t);
/* Forget the addresses; the socket stays open and is the caller's. */
void rl_tcp_done(struct rl_tcp *t);
/* Close the socket too. */
void rl_tcp_clear(struct rl_tcp *t);
/* Plain reads and writes on C->fd, for transports that end in a socket;
 * a peer gone is an error, never a SIGPIPE. */
ssize_t rl_tcp_read(struct rl_conn *c, void *buf, size_t len);
ssize_t rl_tcp_write(struct rl_conn *c, const void *buf, size_t len);

#endif
