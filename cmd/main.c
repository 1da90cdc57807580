/* main.c: global options, the command table, and exit codes. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

#define DEFAULT_CONNECT_TIMEOUT_MS 2000
#define DEFAULT_TIMEOUT_MS 5000

static const struct cmd *commands[] = {
	&cmd_exec,
	&cmd_lock,
	&cmd_unlock,
	&cmd_status,
	&cmd_queue,
	&cmd_log,
	&cmd_config,
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
    "  status [--json] [-v] [NAME...]\n"
    "                          who holds NAME, or every lock\n"
    "  queue [--json] [--watch[=INTERVAL]] NAME\n"
    "                          the holder and the fair waiters of NAME\n"
    "  log [--json] [-n N] [--follow] NAME\n"
    "                          NAME's history: holds, releases, losses\n"
    "  config                  the settings in force, and where each is from\n"
    "\n"
    "Global options:\n";

static const char global_tail[] =
    "Global options may also come after COMMAND, before NAME; where COMMAND\n"
    "has an option of the same name (-h), it is COMMAND's.\n"
    "\n"
    "Durations: 250ms, 30s, 5m, 1h30m, 2d, 1.5h, or seconds (1.5). See\n"
    "redlock(1).\n";

enum {
	OPT_CACERT = 0x200,
	OPT_CACERTDIR,
	OPT_CERT,
	OPT_KEY,
	OPT_SNI,
	OPT_INSECURE,
	OPT_PASSWORD_FILE,
	OPT_PREFIX
};

/* The global options, in the order of --help; those with OPT_CONFIG may
 * be set in the configuration file too (config.c). */
const struct opt global_opts[] = {
	{ .name = "url", .letter = 'u', .arg = ARG_URL, .metavar = "URL",
	  .cmds = CMD_GLOBAL, .flags = OPT_CONFIG, .env = "REDLOCK_URL",
	  .dflt = RL_DEFAULT_URL,
	  .help = "redis://[[user]:password@]host[:port][/db] or\n"
	  "unix:///path/to.sock[?db=N]; several (repeated\n"
	  "or comma-separated): Redlock across masters\n"
	  "(default: $REDLOCK_URL, else " RL_DEFAULT_URL ");\n"
	  "redis+sentinel://[[user]:password@]host[:port]\n"
	  "[,host[:port]...]/MASTER[/db]: the master that\n"
	  "the sentinels name, asked at every connect" },
	{ .name = "password-file", .val = OPT_PASSWORD_FILE, .arg = ARG_FILE,
	  .metavar = "FILE", .cmds = CMD_GLOBAL, .flags = OPT_CONFIG,
	  .help = "the password, the first line of FILE, which only\n"
	  "its owner may read (a password in the URL wins;\n"
	  "default: $REDLOCK_PASSWORD)" },
	{ .name = "prefix", .val = OPT_PREFIX, .arg = ARG_TEXT,
	  .metavar = "P", .cmds = CMD_GLOBAL, .flags = OPT_CONFIG,
	  .env = "REDLOCK_PREFIX",
	  .help = "every key of NAME made from P + NAME, as a\n"
	  "Redisson NameMapper does (default: $REDLOCK_PREFIX)" },
	{ .name = "connect-timeout", .val = 'C', .arg = ARG_DURATION,
	  .metavar = "DURATION", .cmds = CMD_GLOBAL, .flags = OPT_CONFIG,
	  .dflt = "2s",
	  .help = "give up connecting after DURATION (default: 2s)" },
	{ .name = "reply-timeout", .val = 'T', .arg = ARG_DURATION,
	  .metavar = "DURATION", .cmds = CMD_GLOBAL, .flags = OPT_CONFIG,
	  .dflt = "5s",
	  .help = "give up on a reply after DURATION (default: 5s;\n"
	  "with several masters ttl/100, 5ms to 50ms)" },
	{ .name = "timeout", .val = OPT_TIMEOUT, .arg = ARG_DURATION,
	  .metavar = "DURATION", .cmds = CMD_GLOBAL,
	  .help = "wait at most DURATION for NAME, as -w (exec\n"
	  "and lock; flock(1)'s spelling), wherever it stands" },
	{ .name = "sentinel-user", .val = 'S', .arg = ARG_TEXT,
	  .metavar = "USER", .cmds = CMD_GLOBAL,
	  .help = "the ACL user to AUTH to the sentinels as" },
	{ .name = "sentinel-password", .val = 'P', .arg = ARG_TEXT,
	  .metavar = "PASSWORD", .cmds = CMD_GLOBAL,
	  .help = "the sentinels' password (default:\n"
	  "$REDLOCK_SENTINEL_PASSWORD, which ps does not show)" },
	{ .cmds = CMD_GLOBAL, .flags = OPT_HEADING,
	  .help = "TLS (rediss:// URLs):" },
	{ .name = "cacert", .val = OPT_CACERT, .arg = ARG_FILE,
	  .metavar = "FILE", .cmds = CMD_GLOBAL, .flags = OPT_CONFIG,
	  .env = "REDLOCK_CACERT",
	  .help = "CA certificates to verify the server with\n"
	  "(default: $REDLOCK_CACERT, else the system's)" },
	{ .name = "cacertdir", .val = OPT_CACERTDIR, .arg = ARG_DIR,
	  .metavar = "DIR", .cmds = CMD_GLOBAL, .flags = OPT_CONFIG,
	  .help = "a directory of hashed CA certificates" },
	{ .name = "cert", .val = OPT_CERT, .arg = ARG_FILE, .metavar = "FILE",
	  .cmds = CMD_GLOBAL, .flags = OPT_CONFIG, .env = "REDLOCK_CERT",
	  .help = "client certificate, for mutual TLS\n"
	  "(default: $REDLOCK_CERT)" },
	{ .name = "key", .val = OPT_KEY, .arg = ARG_FILE, .metavar = "FILE",
	  .cmds = CMD_GLOBAL, .flags = OPT_CONFIG, .env = "REDLOCK_KEY",
	  .help = "its private key (default: $REDLOCK_KEY)" },
	{ .name = "sni", .val = OPT_SNI, .arg = ARG_HOST, .metavar = "NAME",
	  .cmds = CMD_GLOBAL, .flags = OPT_CONFIG,
	  .help = "server name to send and to verify" },
	{ .name = "insecure", .val = OPT_INSECURE, .cmds = CMD_GLOBAL,
	  .help = "verify neither the certificate nor the name" },
	{ .name = "help", .letter = 'h', .cmds = CMD_GLOBAL,
	  .help = "show this help; COMMAND --help for a command" },
	{ .name = "version", .letter = 'V', .cmds = CMD_GLOBAL,
	  .help = "print the version, and those of hiredis and\n"
	  "of OpenSSL (loaded for rediss://)" },
	OPT_END
};

static const struct cmd *
find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static struct globals g;
/* --sentinel-password, copied before its word is overwritten. */
static char *sentinel_password;
/* The global options given on the command line: the last value of each
 * (by its place in global_opts), or NULL. */
#define NGLOBAL 32
static const char *given[NGLOBAL];
/* global_option is applying the configuration file's values. */
static int from_file;
const char *key_prefix = "";

/* Global option VAL's place in global_opts, or -1. */
static int
global_index(int val)
{
	int i;

	for (i = 0; i < NGLOBAL && global_opts[i].name != NULL; i++)
		if ((global_opts[i].val != 0 ? global_opts[i].val :
		    global_opts[i].letter) == val)
			return i;
	return -1;
}

const char *
global_given(int val)
{
	int i = global_index(val);

	return i < 0 ? NULL : given[i];
}

/* Open /dev/null on each of descriptors 0, 1 and 2 that is closed; a bit
 * set per descriptor that was, or -1 (reported) when one cannot be. */
static int
fill_std_fds(void)
{
	int fd, null, closed = 0;

	for (fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		null = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY :
		    O_WRONLY);
		if (null >= 0 && null != fd) {
			/* Not the lowest free descriptor after all. */
			int e = dup2(null, fd) < 0 ? errno : 0;

			close(null);
			null = e != 0 ? -1 : fd;
			errno = e;
		}
		if (null < 0) {
			msg("a standard descriptor is closed and /dev/null "
			    "cannot be opened in its place: %s; start redlock "
			    "with standard input, output and error open",
			    strerror(errno));
			return -1;
		}
		closed |= 1 << fd;
	}
	return closed;
}

/* The words of the command after timeout_first, and its --timeout=D. */
static char **timeout_argv;
static char *timeout_word;

static void
clear_globals(void)
{
	size_t i;

	free(timeout_argv);
	free(timeout_word);
	timeout_argv = NULL;
	timeout_word = NULL;

	for (i = 0; i < g.nurl; i++)
		rl_url_clear(&g.url[i]);
	g.nurl = 0;
	free(sentinel_password);
	sentinel_password = NULL;
	g.sentinel_password = NULL;
	memset(given, 0, sizeof(given));
	g.password_file = g.password_file_where = NULL;
	urls_clear();
	key_prefix = "";
}

/* Fresh globals and process state: redlock_main may run more than once
 * in a process (the fuzzer); -1 (reported) when a standard descriptor
 * cannot be filled. */
static int
start_afresh(void)
{
	static int registered;
	int closed;

	/* Before any descriptor is opened: one that lands on a closed
	 * 0, 1 or 2 would get messages or the token meant for them. */
	if ((closed = fill_std_fds()) < 0)
		return -1;
	if (!registered && atexit(clear_globals) == 0)
		registered = 1;
	clear_globals();
	memset(&g, 0, sizeof(g));
	g.stdout_closed = (closed & (1 << STDOUT_FILENO)) != 0;
	optind = 0;
	g.connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
	g.timeout_ms = DEFAULT_TIMEOUT_MS;
	/* hiredis writes with write(2): a dead server must be an error
	 * reply, not a silent death by SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	opterr = 0;	/* one line per error: bad_option() says it */
	return 0;
}

/* --connect-timeout and --reply-timeout: a duration, and no zero. */
static int
nonzero_duration(const char *opt, const char *arg, int64_t *ms)
{
	if (parse_duration(NULL, opt, arg, ms) < 0)
		return EXIT_USAGE;
	if (*ms == 0)
		return usage_error(NULL, "%s must be more than 0", opt);
	return 0;
}


/* A TLS option into g.tls: 0, or a usage error for an empty value. */
static int
tls_option(int ch, const char *arg)
{
	static const char *const names[] = { "--cacert", "--cacertdir",
	    "--cert", "--key", "--sni" };
	const char **slot[] = { &g.tls.cacert, &g.tls.cacertdir, &g.tls.cert,
	    &g.tls.key, &g.tls.sni };

	if (ch == OPT_INSECURE) {
		g.tls.insecure = 1;
		return 0;
	}
	if (arg[0] == '\0')
		return usage_error(NULL, "%s needs a value", names[ch -
		    OPT_CACERT]);
	*slot[ch - OPT_CACERT] = arg;
	return 0;
}

/* With a rediss:// URL: TLS set up from the options, or from
 * $REDLOCK_CACERT, $REDLOCK_CERT and $REDLOCK_KEY where none was given. */
static int
setup_tls(void)
{
	const char *env[] = { "REDLOCK_CACERT", "REDLOCK_CERT",
	    "REDLOCK_KEY" };
	const char **slot[] = { &g.tls.cacert, &g.tls.cert, &g.tls.key };
	char err[512];
	size_t i;
	int tls = 0, rc;

	for (i = 0; i < g.nurl; i++)
		tls |= g.url[i].tls;
	if (!tls)
		return 0;
	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		const char *v = getenv(env[i]);

		if (*slot[i] == NULL && v != NULL && v[0] != '\0')
			*slot[i] = v;
	}
	if ((rc = rl_tls_setup(&g.tls, err, sizeof(err))) == 0)
		return 0;
	msg("%s", esc(err));
	return rc == RL_TLS_NOLIB ? EXIT_UNAVAILABLE : EXIT_USAGE;
}

/* --version: redlock's, and the libraries' it runs on. */
static int
print_version(void)
{
	const char *tls = rl_tls_version();

	printf("redlock %s\n", RL_VERSION);
	printf("hiredis %s\n", rl_hiredis_version());
	if (tls != NULL)
		printf("%s (libssl, loaded for rediss://)\n", tls);
	else
		printf("OpenSSL: libssl.so.3 cannot be loaded (rediss:// "
		    "unavailable; Debian: libssl3)\n");
	return flush_stdout();
}

/* The global options' getopt_long arguments, shortopts after "+". */
static const struct getopts *
global_getopt(void)
{
	static struct getopts go;

	if (go.longopts[0].name == NULL)
		opts_getopt(global_opts, CMD_GLOBAL, "+", &go);
	return &go;
}

/* --reply-timeout: 0, or the exit status. */
static int
reply_timeout(const char *arg)
{
	int status;

	if ((status = nonzero_duration("--reply-timeout", arg,
	    &g.timeout_ms)) != 0)
		return status;
	g.timeout_given = 1;
	return 0;
}

/* Global option CH with ARG: STEP_GO_ON, or STEP_EXIT with *STATUS
 * (after --help and --version too). */
static enum step
global_option(int ch, char *arg, int *status)
{
	int i = global_index(ch);

	*status = 0;
	if (!from_file && i >= 0 && arg != NULL)
		given[i] = arg;
	else if (!from_file && i >= 0)
		given[i] = "";
	switch (ch) {
	case OPT_PASSWORD_FILE:
		g.password_file = arg;
		g.password_file_where = from_file ? msg_where : NULL;
		break;
	case OPT_PREFIX:
		key_prefix = arg;
		break;
	case 'u':
		*status = add_urls(&g, "--url", arg);
		hide_passwords(arg);
		/* ARG is the heap copy (proc_args_save): ps reads the
		 * original. */
		proc_args_sync();
		g.url_given = 1;
		break;
	case 'C':
		*status = nonzero_duration("--connect-timeout", arg,
		    &g.connect_timeout_ms);
		break;
	case 'T':
		*status = reply_timeout(arg);
		break;
	case OPT_TIMEOUT:
		/* flock's -w: the command's own -w once it is known
		 * (timeout_first). */
		g.wait_arg = arg;
		break;
	case 'S':
		g.sentinel_user = arg;
		break;
	case 'P':
		free(sentinel_password);
		if ((sentinel_password = strdup(arg)) == NULL) {
			msg("out of memory");
			return step_exit(status, EXIT_SOFTWARE);
		}
		/* Out of ps, as the passwords of -u. */
		memset(arg, 'x', strlen(arg));
		proc_args_sync();
		g.sentinel_password = sentinel_password;
		break;
	case 'h':
		fputs(global_help, stdout);
		opts_help(global_opts, CMD_GLOBAL, stdout);
		fputs(global_tail, stdout);
		return step_exit(status, flush_stdout());
	case 'V':
		return step_exit(status, print_version());
	default:
		*status = tls_option(ch, arg);
		break;
	}
	return *status != 0 ? STEP_EXIT : STEP_GO_ON;
}

/* The global options, up to COMMAND: STEP_GO_ON, or STEP_EXIT with
 * *STATUS. */
static enum step
parse_globals(int argc, char **argv, int *status)
{
	const struct getopts *go = global_getopt();
	int ch;

	while ((ch = getopt_long(argc, argv, go->shortopts, go->longopts,
	    NULL)) != -1) {
		if (ch == '?')
			return step_exit(status, bad_option(NULL, argv,
			    go->shortopts, go->longopts));
		if (global_option(ch, optarg, status) == STEP_EXIT)
			return STEP_EXIT;
	}
	return STEP_GO_ON;
}

/* C's options, then the global ones it has no option of the same
 * spelling as, into LONGOPTS (N entries, NULL-ended) and SHORTOPTS (LEN
 * bytes), "-" first: getopt_long then returns the words that are not
 * options in order. The number of C's own long options. */
static size_t
merge_options(const struct cmd *c, struct option *longopts, size_t n,
    char *shortopts, size_t len)
{
	const struct getopts *cg = cmd_getopt(c), *gg = global_getopt();
	const struct option *o;
	size_t k = 0, nc;
	const char *p;
	size_t m;

	for (o = cg->longopts; o->name != NULL && k + 1 < n; o++)
		longopts[k++] = *o;
	nc = k;
	for (o = gg->longopts; o->name != NULL && k + 1 < n; o++) {
		size_t i;

		for (i = 0; i < nc && strcmp(longopts[i].name, o->name) != 0;
		    i++)
			;
		if (i == nc)
			longopts[k++] = *o;
	}
	memset(&longopts[k], 0, sizeof(longopts[k]));
	snprintf(shortopts, len, "-%s", cg->shortopts);
	for (p = gg->shortopts + 1; *p != '\0'; p++)
		if (*p != ':' && strchr(cg->shortopts, *p) == NULL &&
		    (m = strlen(shortopts)) + 3 < len) {
			shortopts[m++] = *p;
			if (p[1] == ':')
				shortopts[m++] = ':';
			shortopts[m] = '\0';
		}
	return nc;
}

/*
 * The global options given after COMMAND C, before NAME (redlock exec -u
 * URL x -- true), as docker and kubectl take them: applied, and taken
 * out of ARGV (*ARGC words, C's name first), which keeps C's own words
 * in order. An option C has too (-h, --help) is C's. The first word
 * that is not an option (NAME), "--", and a word C will refuse end the
 * search: the rest is C's, even a -u among COMMAND's words. A cluster
 * mixing C's options with a global one is left to C to refuse.
 * STEP_GO_ON, or STEP_EXIT with *STATUS.
 */
static enum step
globals_after(const struct cmd *c, int *argc, char **argv, int *status)
{
	struct option longopts[2 * OPTS_MAX];
	char shortopts[4 * OPTS_MAX];
	size_t nc = merge_options(c, longopts, 2 * OPTS_MAX, shortopts,
	    sizeof(shortopts));
	int ch, li, w = 1, out = 1, kinds = 0;

	optind = 0;
	for (;;) {
		li = -1;
		ch = getopt_long(*argc, argv, shortopts, longopts, &li);
		if (ch == -1 || ch == 1 || ch == '?')
			break;
		if (li >= 0 ? (size_t)li < nc :
		    strchr(cmd_getopt(c)->shortopts, ch) != NULL) {
			kinds |= 1;
		} else {
			kinds |= 2;
			if (kinds == 2 && global_option(li >= 0 ?
			    longopts[li].val : ch, optarg, status) == STEP_EXIT)
				return STEP_EXIT;
		}
		if (optind <= w)
			continue;	/* more options in this word */
		/* Words W to OPTIND are done: C's are kept. */
		while (kinds != 2 && w < optind)
			argv[out++] = argv[w++];
		w = optind;
		kinds = 0;
	}
	/* Back to W: the words from NAME (or "--", or what C refuses) on. */
	memmove(argv + out, argv + w, (size_t)(*argc - w) * sizeof(*argv));
	*argc = out + *argc - w;
	argv[*argc] = NULL;
	optind = 0;
	return STEP_GO_ON;
}

/*
 * --timeout D before COMMAND C (redlock --timeout 10 exec NAME ...), as
 * flock's: C's own --timeout, which is -w, as if given first after C
 * (its -w or -n later in the line then wins, as a later -w does). Only
 * exec and lock wait: any other C refuses it. *ARGV (*ARGC words, C's
 * name first) becomes a copy with the word added; 0, or the status.
 */
static int
timeout_first(const struct cmd *c, int *argc, char ***argv)
{
	size_t len;

	if (g.wait_arg == NULL)
		return 0;
	if (c != &cmd_exec && c != &cmd_lock)
		return usage_error(c, "--timeout bounds the wait for NAME, as "
		    "-w, and only exec and lock wait: drop it (each reply is "
		    "bounded by --reply-timeout)");
	len = strlen(g.wait_arg) + sizeof("--timeout=");
	if ((timeout_word = malloc(len)) == NULL ||
	    (timeout_argv = calloc((size_t)*argc + 2, sizeof(char *))) ==
	    NULL) {
		msg("out of memory");
		return EXIT_SOFTWARE;
	}
	snprintf(timeout_word, len, "--timeout=%s", g.wait_arg);
	timeout_argv[0] = (*argv)[0];
	timeout_argv[1] = timeout_word;
	memcpy(timeout_argv + 2, *argv + 1, (size_t)(*argc - 1) *
	    sizeof(char *));
	(*argc)++;
	*argv = timeout_argv;
	return 0;
}

/* redlock --complete [COMMAND], for the shell completions: the global
 * options and the commands, or COMMAND's options (opts_complete). */
static int
complete_list(int argc, char **argv)
{
	const struct cmd *c;
	size_t i;

	if (argc > 1)
		return usage_error(NULL, "--complete takes one COMMAND at most");
	if (argc == 1) {
		if ((c = find(argv[0])) == NULL)
			return usage_error(NULL, "unknown command '%s'",
			    esc(argv[0]));
		opts_complete(c->opts, c->bit, stdout);
		return flush_stdout();
	}
	opts_complete(global_opts, CMD_GLOBAL, stdout);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		printf("%s\t\t%s\n", commands[i]->name, commands[i]->brief);
	return flush_stdout();
}

/* The file's values of the global options given neither on the command
 * line nor by their variable (url: default_urls): 0, or the status. */
static int
apply_file(void)
{
	const struct opt *o;
	const char *v, *env;
	size_t n;
	int status = 0;

	from_file = 1;
	for (o = global_opts; o->name != NULL && status == 0; o++) {
		env = o->env != NULL ? getenv(o->env) : NULL;
		if ((o->flags & OPT_CONFIG) == 0 || strcmp(o->name, "url") == 0 ||
		    given[o - global_opts] != NULL || (env != NULL &&
		    env[0] != '\0'))
			continue;
		for (n = 0; status == 0 && (v = config_get(o->name, n,
		    &msg_where)) != NULL; n++)
			global_option(o->val != 0 ? o->val : o->letter,
			    (char *)v, &status);
		msg_where = NULL;
	}
	from_file = 0;
	return status;
}

/* --prefix, else REDLOCK_PREFIX (the file's: apply_file). */
static void
settle_prefix(void)
{
	const char *env = getenv("REDLOCK_PREFIX");

	if (given[global_index(OPT_PREFIX)] == NULL && env != NULL &&
	    env[0] != '\0')
		key_prefix = env;
}

/* The tables whose OPT_CONFIG options the file may set. */
static const struct opt *const config_tables[] = { global_opts, lock_opts,
    NULL };

int
redlock_main(int argc, char **argv)
{
	const struct cmd *c;
	int status;

	if (start_afresh() < 0)
		return EXIT_SOFTWARE;
	/* Hidden from --help: the completions' question. */
	if (argc > 1 && strcmp(argv[1], "--complete") == 0)
		return complete_list(argc - 2, argv + 2);
	proc_args_save(argc, argv);
	if (parse_globals(argc, argv, &status) == STEP_EXIT)
		return status;
	if (optind >= argc)
		return usage_error(NULL, "missing COMMAND");
	if ((c = find(argv[optind])) == NULL)
		return usage_error(NULL, "unknown command '%s'",
		    esc(argv[optind]));
	argc -= optind;
	argv += optind;
	if (globals_after(c, &argc, argv, &status) == STEP_EXIT)
		return status;
	if ((status = timeout_first(c, &argc, &argv)) != 0)
		return status;
	if ((status = config_load(config_tables)) != 0 ||
	    (status = apply_file()) != 0)
		return status;
	settle_prefix();
	if (g.nurl == 0 && (status = default_urls(&g)) != 0)
		return status;
	if ((status = settle_urls(&g)) != 0 || (status = setup_tls()) != 0)
		return status;
	/* globals_after left optind 0: GNU getopt starts afresh on the
	 * command's words. */
	return c->run(&g, argc, argv);
}

#ifndef REDLOCK_NO_MAIN
int
main(int argc, char **argv)
{
	return redlock_main(argc, argv);
}
#endif
