/* fuzz_cli.c: the command line of every subcommand, through
 * redlock_main(). Words are separated by NUL bytes. No connection is ever
 * made: the transport refuses them all. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../cmd/cmd.h"
#include "rl_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every connection is refused at once. */
static int
refuse(struct rl_conn *c)
{
	rl_error_io(c->url, "cannot connect to", "refused (fuzzing)", c->why,
	    sizeof(c->why));
	return -1;
}

static const struct rl_transport refusing = { refuse, NULL, NULL, NULL,
	NULL, NULL };

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

		rl_client_set_transport(&refusing);
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
	/* exec --metrics-file (or a prefix of it, as getopt takes) would
	 * write files wherever the input names them. */
	for (i = 1; i < (size_t)argc; i++)
		if (strncmp(argv[i], "--me", 4) == 0) {
			free(buf);
			return 0;
		}
	before = lowest_free_fd();
	redlock_main(argc, argv);
	/* No descriptor may outlive a run (the signal pipe is reused). */
	if (lowest_free_fd() > before)
		abort();
	free(buf);
	return 0;
}
