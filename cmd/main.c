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

static const char global_head[] =
    "usage: redlock [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARG...]\n"
    "\n"
    "Distributed locks on Redis for shell scripts, cron and CI.\n"
    "\n"
    "Commands:\n";

static const char global_tail[] =
    "Global options may also come after COMMAND, before NAME; where COMMAND\n"
    "has an option of the same name (-h), it is COMMAND's.\n"
    "\n"
    "Durations: 250ms, 30s, 5m, 1h30m, 2d, 1.5h, or seconds (1.5). See\n"
    "redlock(1).\n";



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
/* global_option is applying the configuration file's values. */
static int from_file;
/* --sentinel-password, copied before its word is overwritten. */
static char *sentinel_password;


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
	global_forget();
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

/* redlock --help: the commands and the global options, from their
 * tables. */
static int
global_help(void)
{
	size_t i, n;

	fputs(global_head, stdout);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		n = strlen(commands[i]->usage) + 2;
		printf("  %s", commands[i]->usage);
		if (n >= HELP_COLUMN)
			printf("\n%*s", HELP_COLUMN, "");
		else
			printf("%*s", (int)(HELP_COLUMN - n), "");
		printf("%s\n", commands[i]->brief);
	}
	fputs("\nGlobal options:\n", stdout);
	opts_help(global_opts, CMD_GLOBAL, stdout);
	fputs(global_tail, stdout);
	return flush_stdout();
}

/* Global option CH with ARG: STEP_GO_ON, or STEP_EXIT with *STATUS
 * (after --help and --version too). */
static enum step
global_option(int ch, char *arg, int *status)
{
	*status = 0;
	if (!from_file)
		global_note(ch, arg);
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
		return step_exit(status, global_help());
	case 'V':
		return step_exit(status, print_version());
	default:
		*status = tls_option(ch, arg);
		break;
	}
	return *status != 0 ? STEP_EXIT : STEP_GO_ON;
}

/* Whether C waits: it has a --timeout of its own (-w). */
static int
waits(const struct cmd *c)
{
	const struct opt *o;

	for (o = c->opts; o->name != NULL || o->letter != 0 ||
	    o->help != NULL; o++)
		if (o->name != NULL && strcmp(o->name, "timeout") == 0 &&
		    (o->cmds & c->bit) != 0)
			return 1;
	return 0;
}

/* The global --timeout given to a command that does not wait: a usage
 * error; else 0. */
static int
timeout_refused(const struct cmd *c)
{
	if (g.wait_arg == NULL || waits(c))
		return 0;
	return usage_error(c, "--timeout bounds the wait for NAME, as -w, "
	    "and only exec and lock wait: drop it (each reply is bounded by "
	    "--reply-timeout)");
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
	int status;

	if ((status = timeout_refused(c)) != 0 || g.wait_arg == NULL)
		return status;
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
		    global_given(o->val != 0 ? o->val :
		    o->letter) != NULL || (env != NULL &&
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

	if (global_given(OPT_PREFIX) == NULL && env != NULL &&
	    env[0] != '\0')
		key_prefix = env;
}

/* The tables whose OPT_CONFIG options the file may set. */
static const struct opt *const config_tables[] = { global_opts, lock_opts,
    NULL };

/* The words of command C (ARGV[0] its name, ARGC of them) into P, and
 * its job allocated and read: STEP_GO_ON, or STEP_EXIT with *STATUS. */
static enum step
parse_command(const struct cmd *c, int argc, char **argv, struct parse *p,
    int *status)
{
	memset(p, 0, sizeof(*p));
	p->c = c;
	p->argv = argv;
	p->full_argc = p->argc = p->dd = argc;
	p->global = global_option;
	/* Our words end at "--"; COMMAND's begin after it. */
	if (c->flags & CMD_DASHDASH) {
		for (p->dd = 1; p->dd < argc && strcmp(argv[p->dd], "--") != 0;
		    p->dd++)
			;
		p->argc = p->dd;
	}
	if ((p->job = calloc(1, c->job_size > 0 ? c->job_size : 1)) == NULL) {
		msg("out of memory");
		return step_exit(status, EXIT_SOFTWARE);
	}
	if (c->init != NULL)
		c->init(p->job);
	if (opts_parse(p, status) == STEP_EXIT)
		return STEP_EXIT;
	if (c->operands == OPERANDS_NONE && p->nops > 0)
		return step_exit(status, usage_error(c, "no operand expected, "
		    "got '%s'", esc(p->argv[1])));
	/* The global --timeout after a command that does not wait. */
	return (*status = timeout_refused(c)) != 0 ? STEP_EXIT : STEP_GO_ON;
}

/* The global options into g, once the command line is read: the
 * configuration file's, the prefix, the URLs and TLS; 0, or the status. */
static int
settle_globals(void)
{
	int status;

	if ((status = config_load(config_tables)) != 0 ||
	    (status = apply_file()) != 0)
		return status;
	settle_prefix();
	if (g.nurl == 0 && (status = default_urls(&g)) != 0)
		return status;
	if ((status = settle_urls(&g)) != 0 || (status = setup_tls()) != 0)
		return status;
	return 0;
}

int
redlock_main(int argc, char **argv)
{
	struct parse top = { .c = NULL }, p = { .c = NULL };
	const struct cmd *c;
	int status;

	if (start_afresh() < 0)
		return EXIT_SOFTWARE;
	/* Hidden from --help: the completions' question. */
	if (argc > 1 && strcmp(argv[1], "--complete") == 0)
		return complete_list(argc - 2, argv + 2);
	proc_args_save(argc, argv);
	top.argc = top.full_argc = argc;
	top.argv = argv;
	top.global = global_option;
	if (opts_parse(&top, &status) == STEP_EXIT)
		return status;
	if (top.next >= argc)
		return usage_error(NULL, "missing COMMAND");
	if ((c = find(argv[top.next])) == NULL)
		return usage_error(NULL, "unknown command '%s'",
		    esc(argv[top.next]));
	argc -= top.next;
	argv += top.next;
	if ((status = timeout_first(c, &argc, &argv)) != 0)
		return status;
	/* NAME after the globals: --prefix makes its key name. */
	if (parse_command(c, argc, argv, &p, &status) == STEP_GO_ON &&
	    (status = settle_globals()) == 0 &&
	    (c->operands != OPERANDS_NAME ||
	    (status = one_name(c, &p, &p.name)) == 0))
		status = c->run(&g, p.job, &p);
	free(p.job);
	return status;
}

#ifndef REDLOCK_NO_MAIN
int
main(int argc, char **argv)
{
	return redlock_main(argc, argv);
}
#endif
