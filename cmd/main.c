/* main.c: global options, the command table, and exit codes. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

#define DEFAULT_CONNECT_TIMEOUT_MS 2000
#define DEFAULT_TIMEOUT_MS 5000

static const struct cmd *commands[] = {
	&cmd_exec,
	&cmd_lock,
	&cmd_unlock,
	&cmd_status,
	&cmd_queue,
};

static const char global_help[] =
    "usage: redlock [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARG...]\n"
    "\n"
    "Distributed locks on Redis for shell scripts, cron and CI.\n"
    "\n"
    "Commands:\n"
    "  exec [OPTIONS] NAME -- COMMAND [ARG...]\n"
    "                          run COMMAND holding NAME, renewing its lease\n"
    "  lock [OPTIONS] NAME     acquire NAME and print the owner token\n"
    "  unlock [--owner TOKEN | --force] NAME\n"
    "                          release one hold of NAME\n"
    "  status [--json] [NAME]  who holds NAME, or every lock\n"
    "  queue [--json] [--watch[=INTERVAL]] NAME\n"
    "                          the holder and the fair waiters of NAME\n"
    "\n"
    "Global options:\n"
    "  -u, --url URL           redis://[[user]:password@]host[:port][/db] or\n"
    "                          unix:///path/to.sock[?db=N]\n"
    "                          (default: $REDLOCK_URL, else " RL_DEFAULT_URL ")\n"
    "      --connect-timeout DURATION\n"
    "                          give up connecting after DURATION (default: 2s)\n"
    "      --timeout DURATION  give up on a reply after DURATION (default: 5s)\n"
    "  -h, --help              show this help; COMMAND --help for a command\n"
    "      --version           print the version\n"
    "\n"
    "Durations: 250ms, 30s, 5m, 2h, or seconds (1.5). See redlock(1).\n";

static const struct cmd *
find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static int
set_url(struct globals *g, const char *s)
{
	char err[256];
	const char *pw;

	if (strchr(s, ',') != NULL) {
		msg("several URLs (Redlock across masters) are not supported "
		    "yet; give one URL");
		return EXIT_USAGE;
	}
	if (rl_url_parse(s, &g->url, err, sizeof(err)) < 0) {
		msg("bad URL: %s", err);
		return EXIT_USAGE;
	}
	pw = getenv("REDLOCK_PASSWORD");
	if (g->url.password == NULL && pw != NULL && pw[0] != '\0' &&
	    (g->url.password = strdup(pw)) == NULL) {
		msg("out of memory");
		return EXIT_SOFTWARE;
	}
	rl_url_format(&g->url, g->url_text, sizeof(g->url_text));
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "connect-timeout", required_argument, NULL, 'C' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct globals g;
	const struct cmd *c;
	const char *url = NULL;
	int ch, status;

	memset(&g, 0, sizeof(g));
	g.connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
	g.timeout_ms = DEFAULT_TIMEOUT_MS;
	/* hiredis writes with write(2): a dead server must be an error
	 * reply, not a silent death by SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	opterr = 0;	/* one line per error: bad_option() says it */

	while ((ch = getopt_long(argc, argv, "+u:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			if (url != NULL) {
				msg("several --url (Redlock across masters) are "
				    "not supported yet; give one");
				return EXIT_USAGE;
			}
			url = optarg;
			break;
		case 'C':
			if (parse_duration(NULL, "--connect-timeout", optarg,
			    &g.connect_timeout_ms) < 0)
				return EXIT_USAGE;
			if (g.connect_timeout_ms == 0)
				return usage_error(NULL,
				    "--connect-timeout must be more than 0");
			break;
		case 'T':
			if (parse_duration(NULL, "--timeout", optarg,
			    &g.timeout_ms) < 0)
				return EXIT_USAGE;
			if (g.timeout_ms == 0)
				return usage_error(NULL,
				    "--timeout must be more than 0");
			break;
		case 'h':
			fputs(global_help, stdout);
			return flush_stdout();
		case 'V':
			printf("redlock %s\n", RL_VERSION);
			return flush_stdout();
		default:
			return bad_option(NULL, argv, "+u:h", longopts);
		}
	}
	if (optind >= argc)
		return usage_error(NULL, "missing COMMAND");
	if ((c = find(argv[optind])) == NULL)
		return usage_error(NULL, "unknown command '%s'",
		    esc(argv[optind]));
	if (url == NULL)
		url = getenv("REDLOCK_URL");
	if (url == NULL || url[0] == '\0')
		url = RL_DEFAULT_URL;
	if ((status = set_url(&g, url)) != 0)
		return status;

	argc -= optind;
	argv += optind;
	optind = 0;	/* GNU getopt: start afresh on the command's words */
	status = c->run(&g, argc, argv);
	rl_url_clear(&g.url);
	return status;
}
