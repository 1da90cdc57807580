/* lock.c: acquire NAME, print the owner token, and exit holding it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static int run(struct globals *, int, char **);

const struct cmd cmd_lock = {
	"lock", "lock [OPTIONS] NAME",
	"Acquire NAME and print the owner token; the lease lasts --ttl.\n"
	"Give the token to unlock (--owner, or REDLOCK_OWNER).\n\n"
	LOCKOPTS_HELP
	"  -h, --help              show this help\n",
	run
};

/* The calling process's command line, for status ("deploy.sh"). */
static void
parent_cmd(char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)getppid());
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
}

static int
run(struct globals *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		LOCKOPTS_LONG,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct lockopts o;
	struct rl_attempt a;
	struct rl_meta meta;
	rl_client *rc;
	char cmdline[512];
	const char *name;
	int ch, r, status;

	lockopts_init(&o);
	while ((ch = getopt_long(argc, argv, LOCKOPTS_SHORT "h", longopts,
	    NULL)) != -1) {
		if (ch == 'h')
			return print_help(&cmd_lock);
		if ((r = lockopts_parse(&cmd_lock, &o, ch, optarg)) < 0)
			return EXIT_USAGE;
		if (r == 0)
			return bad_option(&cmd_lock, argv, LOCKOPTS_SHORT "h", longopts);
	}
	if (optind >= argc)
		return usage_error(&cmd_lock, "missing NAME");
	if (optind + 1 < argc)
		return usage_error(&cmd_lock, "one NAME only, got '%s' too",
		    esc(argv[optind + 1]));
	name = argv[optind];
	if (name[0] == '\0')
		return usage_error(&cmd_lock, "NAME is empty");
	if (lockopts_finish(&cmd_lock, &o) < 0)
		return EXIT_USAGE;

	parent_cmd(cmdline, sizeof(cmdline));
	meta.host = self_host();
	meta.pid = (long)getppid();
	meta.user = self_user();
	meta.cmd = cmdline;
	if ((rc = client_open(g, &status)) == NULL)
		return status;
	status = lock_acquire(rc, name, &o, &meta, &a);
	if (a.acquired) {
		printf("%s\n", o.owner);
		if ((status = flush_stdout()) != 0) {
			/* Nobody learnt the token: do not leave NAME held. */
			enum rl_release rel;
			int64_t holds;

			rl_release(rc, name, o.owner, &rel, &holds, &a);
		}
	}
	rl_client_free(rc);
	return status;
}
