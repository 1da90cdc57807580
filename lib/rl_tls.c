/* rl_tls.c: the TLS transport (stub until it is written). */
#include <errno.h>
#include <stdio.h>

#include "rl_conn.h"

int
rl_tls_setup(const struct rl_tls_opts *o, char *err, size_t errlen)
{
	(void)o;
	snprintf(err, errlen, "TLS is not built yet");
	return -1;
}

static int
tls_open(struct rl_conn *c)
{
	rl_error_io(c->url, "cannot connect to", "TLS is not built yet",
	    c->why, sizeof(c->why));
	return -1;
}

static int
tls_finish(struct rl_conn *c)
{
	(void)c;
	return -1;
}

static ssize_t
tls_io(struct rl_conn *c, void *buf, size_t len)
{
	(void)c, (void)buf, (void)len;
	errno = EIO;
	return -1;
}

static ssize_t
tls_write(struct rl_conn *c, const void *buf, size_t len)
{
	(void)c, (void)buf, (void)len;
	errno = EIO;
	return -1;
}

static void
tls_close(struct rl_conn *c)
{
	(void)c;
}

const struct rl_transport rl_transport_tls = {
	tls_open, tls_finish, tls_io, tls_write, tls_close, NULL
};
