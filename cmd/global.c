/* global.c: the global options: their table, the values the command
 * line gave them, and the key prefix they set. */
#include <string.h>

#include "cmd.h"

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

/* The global options given on the command line: the last value of each
 * (by its place in global_opts), or NULL. */
#define NGLOBAL 32
static const char *given[NGLOBAL];
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

void
global_note(int val, const char *arg)
{
	int i = global_index(val);

	if (i >= 0)
		given[i] = arg != NULL ? arg : "";
}

void
global_forget(void)
{
	memset(given, 0, sizeof(given));
}
