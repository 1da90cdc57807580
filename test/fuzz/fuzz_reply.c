/* fuzz_reply.c: how lib/ reads what a server sends. The input is the
 * server's side of the connection (RESP), served through a fake transport
 * (a socketpair) to the acquire, release, renew, status and queue
 * operations in turn; then the connection ends. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rl_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PEERS 16

static const uint8_t *input;
static size_t input_len;
static int peers[MAX_PEERS], npeers;

/* A connection whose server says INPUT (the first time) and then hangs
 * up; what the client writes is left unread. */
static int
fake_open(struct rl_conn *c)
{
	int sv[2];

	if (npeers == MAX_PEERS ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) < 0)
		return -1;
	if (input_len > 0 &&
	    write(sv[1], input, input_len) != (ssize_t)input_len) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	input_len = 0;
	shutdown(sv[1], SHUT_WR);
	peers[npeers++] = sv[1];
	c->fd = sv[0];
	return 0;
}

static int
fake_finish(struct rl_conn *c)
{
	(void)c;
	return 0;
}

static ssize_t
fake_read(struct rl_conn *c, void *buf, size_t len)
{
	return read(c->fd, buf, len);
}

static ssize_t
fake_write(struct rl_conn *c, const void *buf, size_t len)
{
	return send(c->fd, buf, len, MSG_NOSIGNAL);
}

static void
fake_close(struct rl_conn *c)
{
	close(c->fd);
	c->fd = -1;
}

static const struct rl_transport fake = {
	fake_open, fake_finish, fake_read, fake_write, fake_close, NULL
};

/* hiredis 0.14 allocates an aggregate's element array from its header
 * before the elements arrive, with no limit: a server announcing billions
 * of elements exhausts memory. The server is trusted not to; inputs that
 * announce more than a million are not redlock's to survive. */
static int
huge(const uint8_t *data, size_t size)
{
	size_t i, digits;

	for (i = 0; i < size; i++) {
		if (data[i] != '*' && data[i] != '$')
			continue;
		for (digits = 0; i + 1 + digits < size &&
		    data[i + 1 + digits] >= '0' && data[i + 1 + digits] <= '9';
		    digits++)
			;
		if (digits > 6)
			return 1;
	}
	return 0;
}

/* Every reader and permit a status reply lists, read to the end. */
static void
status_lists(const struct rl_status *st)
{
	struct rl_reader r;
	struct rl_permit p;
	size_t i;

	for (i = 0; rl_status_reader(st, i, &r) == 0; i++)
		if (r.owner != NULL)
			(void)strlen(r.owner);
	for (i = 0; rl_status_permit(st, i, &p) == 0; i++)
		if (p.id != NULL)
			(void)strlen(p.id);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct rl_lock x = { .name = "x", .owner = "o:1" };
	struct rl_url u = { 0 };
	struct rl_attempt a;
	struct rl_status st;
	struct rl_queue q;
	enum rl_release rel;
	int64_t holds;
	int ours;
	rl_client *c;

	/* More than a socket buffer holds would block the fake server. */
	if (huge(data, size) || size > 65536)
		return 0;
	input = data;
	input_len = size;
	rl_client_set_transport(&fake);
	u.host = (char *)"127.0.0.1";
	u.port = 6379;
	if ((c = rl_client_new(&u, 100, 100)) != NULL) {
		rl_try_acquire(c, &(struct rl_try){ &x, 1000, NULL, NULL,
		    RL_JOIN_NO }, &a);
		if (a.owner != NULL)
			(void)strlen(a.owner);
		rl_release(c, &x, &rel, &holds, &a);
		rl_renew(c, &x, 1000, &ours);
		if (rl_status(c, "x", &st) == RL_OK && st.owner != NULL)
			(void)strlen(st.owner);
		status_lists(&st);
		rl_queue(c, "x", &q);
		rl_queue_clear(&q);
		rl_client_free(c);
	}
	while (npeers > 0)
		close(peers[--npeers]);
	return 0;
}
