/* rl_tcp.c: a non-blocking connect(2) over every address of a name, and
 * the plain socket transport. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rl_conn.h"
#include "rl_tcp.h"

void
rl_tcp_init(struct rl_tcp *t)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
}

/* Start connect(2) to the next address that does not fail at once. */
static int
next(struct rl_tcp *t)
{
	struct addrinfo *ai;
	int fd, one = 1;

	while ((ai = t->next) != NULL) {
		t->next = ai->ai_next;
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			t->last_errno = errno;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    errno == EINPROGRESS) {
			t->fd = fd;
			return 0;
		}
		t->last_errno = errno;
		close(fd);
	}
	t->why = strerror(t->last_errno);
	return -1;
}

static int
start_unix(struct rl_tcp *t, const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		t->why = "path too long";
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		t->fd = fd;
		return 0;
	}
	/* EAGAIN on a unix socket: its accept queue is full, a refusal. */
	t->why = errno == EAGAIN ? "the server's accept queue is full" :
	    strerror(errno);
	if (fd >= 0)
		close(fd);
	return -1;
}

int
rl_tcp_start(struct rl_tcp *t, const char *host, int port, const char *path)
{
	struct addrinfo hints;
	char portstr[16];
	int rc;

	rl_tcp_clear(t);
	if (host == NULL)
		return start_unix(t, path);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(portstr, sizeof(portstr), "%d", port);
	if ((rc = getaddrinfo(host, portstr, &hints, &t->list)) != 0) {
		t->list = NULL;
		t->why = gai_strerror(rc);
		return -1;
	}
	t->next = t->list;
	t->last_errno = ECONNREFUSED;
	if (next(t) < 0) {
		rl_tcp_done(t);
		return -1;
	}
	return 0;
}

int
rl_tcp_finish(struct rl_tcp *t)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0) {
		rl_tcp_done(t);
		return 0;
	}
	close(t->fd);
	t->fd = -1;
	t->last_errno = err;
	t->why = strerror(err);
	if (t->list != NULL && next(t) == 0)
		return 1;
	rl_tcp_done(t);
	return -1;
}

void
rl_tcp_done(struct rl_tcp *t)
{
	if (t->list != NULL)
		freeaddrinfo(t->list);
	t->list = t->next = NULL;
}

void
rl_tcp_clear(struct rl_tcp *t)
{
	rl_tcp_done(t);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* ---- plain sockets ---- */

static int
tcp_open(struct rl_conn *c)
{
	struct rl_tcp *t = malloc(sizeof(*t));

	if (t == NULL) {
		rl_error_io(c->url, "cannot connect to", "out of memory",
		    c->why, sizeof(c->why));
		return -1;
	}
	rl_tcp_init(t);
	if (rl_tcp_start(t, c->url->host, c->url->port, c->url->path) < 0) {
		rl_error_io(c->url, "cannot connect to", t->why, c->why,
		    sizeof(c->why));
		free(t);
		return -1;
	}
	c->priv = t;
	c->fd = t->fd;
	return 0;
}

static int
tcp_finish(struct rl_conn *c)
{
	struct rl_tcp *t = c->priv;
	int rc = rl_tcp_finish(t);

	c->fd = t->fd;
	if (rc < 0)
		rl_error_io(c->url, "cannot connect to", t->why, c->why,
		    sizeof(c->why));
	return rc;
}

ssize_t
rl_tcp_read(struct rl_conn *c, void *buf, size_t len)
{
	return read(c->fd, buf, len);
}

ssize_t
rl_tcp_write(struct rl_conn *c, const void *buf, size_t len)
{
	/* MSG_NOSIGNAL: a closed peer is an error here, not a SIGPIPE. */
	return send(c->fd, buf, len, MSG_NOSIGNAL);
}

static void
tcp_close(struct rl_conn *c)
{
	struct rl_tcp *t = c->priv;

	if (t != NULL) {
		t->fd = c->fd;
		rl_tcp_clear(t);
		free(t);
	} else if (c->fd >= 0)
		close(c->fd);
	c->priv = NULL;
	c->fd = -1;
}

const struct rl_transport rl_transport_tcp = {
	tcp_open, tcp_finish, rl_tcp_read, rl_tcp_write, tcp_close, NULL
};
