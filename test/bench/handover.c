/* handover.c: the server's side of a handoff, two ways, alternating round
 * by round on one redis-server: from the release's send to the waiter
 * reading the reply of the acquisition that took the lock.
 *
 * - message: the waiter is subscribed; the release publishes, the waiter
 *   wakes, sends its acquisition and wakes again for the reply. This is
 *   how redlock's waiters take a lock today.
 * - pop: the waiter has sent a BLPOP on a list, and its acquisition
 *   behind it on the same connection; the release pushes on the list,
 *   the server runs the acquisition as soon as the pop returns, and the
 *   waiter wakes once, for both replies. It removes the same two
 *   wake-ups (the server's for the acquisition, the waiter's for its
 *   reply) as a release that granted the lock to the waiter it wakes,
 *   so it bounds what such a grant would save.
 *
 * The scripts are the least a lock needs (SET NX PX, DEL), not redlock's;
 * the release publishes and pushes in both ways, so that the server does
 * the same work. Times are CLOCK_MONOTONIC, shared by both processes.
 * usage: bench-handover PORT ROUNDS
 * Prints one line per way: "message|pop MEDIAN P90 P99 N" in us. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char release_lua[] =
    "redis.call('del', KEYS[1]) redis.call('lpush', KEYS[2], '1') "
    "redis.call('pexpire', KEYS[2], 1000) "
    "redis.call('publish', KEYS[3], '0') return 1";
static const char acquire_lua[] =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', 30000) then "
    "redis.call('del', KEYS[2]) return 1 end return 0";

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
die(const char *what)
{
	fprintf(stderr, "bench-handover: %s\n", what);
	exit(1);
}

static void
put(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		die("write to a pipe failed");
}

static void
get(int fd, void *p, size_t n)
{
	ssize_t r;

	while ((r = read(fd, p, n)) < 0 && errno == EINTR)
		;
	if (r != (ssize_t)n)
		die("the other process is gone");
}

static redisContext *
connect_to(int port)
{
	redisContext *c = redisConnect("127.0.0.1", port);

	if (c == NULL || c->err)
		die("cannot connect to the server");
	return c;
}

/* ARGC words of ARGV as one command on C, its reply not read. */
static void
append(redisContext *c, int argc, const char **argv)
{
	if (redisAppendCommandArgv(c, argc, argv, NULL) != REDIS_OK)
		die("out of memory");
}

/* The next reply on C, as an integer (-1 for any other kind). */
static long long
reply(redisContext *c)
{
	redisReply *r;
	long long v;

	if (redisGetReply(c, (void **)&r) != REDIS_OK)
		die("lost the connection");
	v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
	freeReplyObject(r);
	return v;
}

static void
run(redisContext *c, int argc, const char **argv)
{
	append(c, argc, argv);
	reply(c);
}

static const char *acquire[] = {
	"EVAL", acquire_lua, "2", "lock", "wake", "waiter"
};
static const char *pop[] = { "BLPOP", "wake", "5" };

/* The waiter: in round I, tell READY it waits, take the lock the way
 * I's parity says, put the time it held it on TIMES, let go. */
static void
waiter(int port, int rounds, int ready, int times)
{
	redisContext *c = connect_to(port), *s = connect_to(port);
	const char *sub[] = { "SUBSCRIBE", "channel" };
	const char *del[] = { "DEL", "lock" };
	long long t, got;
	int i, done;

	append(s, 2, sub);
	reply(s);
	for (i = 0; i < rounds; i++) {
		if (i % 2 == 1) {
			append(c, 3, pop);
			append(c, 6, acquire);
			for (done = 0; !done;)
				if (redisBufferWrite(c, &done) != REDIS_OK)
					die("lost the connection");
			put(ready, "r", 1);
			reply(c);
			got = reply(c);
			t = now_us();
			reply(s);	/* the release's message */
		} else {
			put(ready, "r", 1);
			reply(s);
			append(c, 6, acquire);
			got = reply(c);
			t = now_us();
		}
		if (got != 1)
			die("the waiter did not get the lock");
		run(c, 2, del);
		put(times, &t, sizeof(t));
	}
	exit(0);
}

static int
cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static void
print(const char *way, long long *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	printf("%s %lld %lld %lld %d\n", way, v[n / 2], v[n * 9 / 10],
	    v[n * 99 / 100], n);
}

int
main(int argc, char **argv)
{
	const char *release[] = {
		"EVAL", release_lua, "3", "lock", "wake", "channel"
	};
	const char *take[] = { "SET", "lock", "holder", "PX", "30000" };
	const char *clear[] = { "DEL", "wake" };
	int ready[2], times[2], port, rounds, i, n[2] = { 0, 0 };
	long long *d[2], t0, t1;
	redisContext *c;
	pid_t pid;
	char b;

	if (argc != 3 || (port = atoi(argv[1])) <= 0 ||
	    (rounds = atoi(argv[2])) < 2) {
		fprintf(stderr, "usage: bench-handover PORT ROUNDS\n");
		return 64;
	}
	if ((d[0] = calloc((size_t)rounds, sizeof(**d))) == NULL ||
	    (d[1] = calloc((size_t)rounds, sizeof(**d))) == NULL)
		die("out of memory");
	if (pipe(ready) < 0 || pipe(times) < 0)
		die("pipe failed");
	if ((pid = fork()) < 0)
		die("fork failed");
	if (pid == 0)
		waiter(port, rounds, ready[1], times[1]);
	c = connect_to(port);
	for (i = 0; i < rounds; i++) {
		run(c, 2, clear);
		run(c, 5, take);
		get(ready[0], &b, 1);
		/* The waiter blocked, or listening, well before the release. */
		usleep(2000);
		t0 = now_us();
		run(c, 6, release);
		get(times[0], &t1, sizeof(t1));
		d[i % 2][n[i % 2]++] = t1 - t0;
	}
	waitpid(pid, NULL, 0);
	print("message", d[0], n[0]);
	print("pop", d[1], n[1]);
	return 0;
}
