/* fuzz_cli.c: the command line of every subcommand, through
 * redlock_main(). Words are separated by NUL bytes. No connection is ever
 * made: the hiredis connect calls are wrapped to fail. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../../cmd/cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
redisContext *__wrap_redisConnectWithTimeout(const char *ip, int port,
    const struct timeval tv);
redisContext *__wrap_redisConnectUnixWithTimeout(const char *path,
    const struct timeval tv);
redisContext *__wrap_redisConnectNonBlock(const char *ip, int port);
redisContext *__wrap_redisConnectUnixNonBlock(const char *path);

redisContext *
__wrap_redisConnectWithTimeout(const char *ip, int port,
    const struct timeval tv)
{
	(void)ip;
	(void)port;
	(void)tv;
	return NULL;
}

redisContext *
__wrap_redisConnectUnixWithTimeout(const char *path, const struct timeval tv)
{
	(void)path;
	(void)tv;
	return NULL;
}

redisContext *
__wrap_redisConnectNonBlock(const char *ip, int port)
{
	(void)ip;
	(void)port;
	return NULL;
}

redisContext *
__wrap_redisConnectUnixNonBlock(const char *path)
{
	(void)path;
	return NULL;
}

#define MAX_WORDS 32

static int
lowest_free_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	char *buf = malloc(size + 1), *argv[MAX_WORDS + 2];
	int argc = 0, before;
	size_t i, start = 0;

	if (buf == NULL)
		return 0;
	if (!ready) {
		/* Run with -close_fd_mask=3: redlock's own messages would
		 * drown the fuzzer's. */
		char *first[] = { (char *)"redlock", (char *)"lock",
		    (char *)"x", NULL };

		unsetenv("REDLOCK_URL");
		unsetenv("REDLOCK_OWNER");
		unsetenv("REDLOCK_HELD");
		unsetenv("REDLOCK_PASSWORD");
		/* Let the signal pipe, reused by every later run, exist. */
		redlock_main(3, first);
		ready = 1;
	}
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = (char *)"redlock";
	for (i = 0; i <= size && argc < MAX_WORDS + 1; i++) {
		if (i == size || buf[i] == '\0') {
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	before = lowest_free_fd();
	redlock_main(argc, argv);
	/* No descriptor may outlive a run (the signal pipe is reused). */
	if (lowest_free_fd() > before)
		abort();
	free(buf);
	return 0;
}
