/* common.c: messages, escaping and option helpers shared by commands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <getopt.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

#include "cmd.h"

void
msg(const char *fmt, ...)
{
	va_list ap;

	char head[4200];

	snprintf(head, sizeof(head), "redlock: %s%s", msg_where ? msg_where :
	    "", msg_where ? ": " : "");
	va_start(ap, fmt);
	vline(head, fmt, ap);
	va_end(ap);
}

void
vline(const char *head, const char *fmt, va_list ap)
{
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s", head), m;
	ssize_t w;
	size_t len, off = 0;

	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		n = 0;
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	len = (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	/* One write: lines of processes sharing a log (a pipe keeps writes
	 * of up to PIPE_BUF whole) do not interleave. */
	fflush(stderr);
	while (off < len && ((w = write(STDERR_FILENO, buf + off,
	    len - off)) > 0 || (w < 0 && errno == EINTR)))
		off += w > 0 ? (size_t)w : 0;
}

int
usage_error(const struct cmd *c, const char *fmt, ...)
{
	va_list ap;

	fputs("redlock: ", stderr);
	if (msg_where != NULL)
		fprintf(stderr, "%s: ", msg_where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (c != NULL)
		fprintf(stderr, "; usage: redlock %s (see redlock %s --help)\n",
		    c->usage, c->name);
	else
		fputs("; see redlock --help\n", stderr);
	return EXIT_USAGE;
}

int
bad_option(const struct cmd *c, char **argv, const char *shortopts,
    const struct option *longopts)
{
	const char *word = optind > 0 ? argv[optind - 1] : "?";
	const char *p;
	size_t n;

	if (strncmp(word, "--", 2) == 0) {
		n = strcspn(word + 2, "=");
		for (; longopts->name != NULL; longopts++)
			if (strlen(longopts->name) == n &&
			    strncmp(longopts->name, word + 2, n) == 0 &&
			    longopts->has_arg == required_argument)
				return usage_error(c, "option '%s' needs a value",
				    esc(word));
	} else if (optopt != 0 && (p = strchr(shortopts, optopt)) != NULL &&
	    p[1] == ':')
		return usage_error(c, "option '-%c' needs a value", optopt);
	else if (optopt != 0)
		return usage_error(c, "unknown option '-%c'", optopt);
	return usage_error(c, "unknown option '%s'", esc(word));
}

int
one_name(const struct cmd *c, int argc, char **argv, const char **name)
{
	if (optind >= argc)
		return usage_error(c, "missing NAME");
	if (optind + 1 < argc)
		return usage_error(c, "one NAME only, got '%s' too",
		    esc(argv[optind + 1]));
	if (argv[optind][0] == '\0')
		return usage_error(c, "NAME is empty");
	if ((*name = name_key(argv[optind])) == NULL) {
		msg("out of memory");
		return EXIT_SOFTWARE;
	}
	return 0;
}

int
print_help(const struct cmd *c)
{
	printf("usage: redlock [GLOBAL OPTIONS] %s\n\n%s", c->usage, c->help);
	opts_help(c->opts, c->bit, stdout);
	return flush_stdout();
}

const char *
esc(const char *s)
{
	static char bufs[4][1024];
	static int next;

	if (s == NULL)
		return "-";
	return rl_escape(s, bufs[next++ % 4], sizeof(bufs[0]));
}

void
json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (s == NULL) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*p != '\0') {
		if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else if ((n = rl_utf8_len(p)) == 0) {
			fputs("\\ufffd", f);
			p++;
		} else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			fprintf(f, "\\u%04x", p[1]);	/* C1 control */
			p += 2;
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('"', f);
}

/* Whether S is UTF-8 throughout. */
static int
utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	for (; *p != '\0'; p += n)
		if ((n = rl_utf8_len(p)) == 0)
			return 0;
	return 1;
}

/* S's bytes in base64 (RFC 4648, padded) on F. */
static void
base64_out(FILE *f, const char *s)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i;
	unsigned long v;

	for (i = 0; i < n; i += 3) {
		v = (unsigned long)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned long)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		fputc(abc[v >> 18 & 63], f);
		fputc(abc[v >> 12 & 63], f);
		fputc(i + 1 < n ? abc[v >> 6 & 63] : '=', f);
		fputc(i + 2 < n ? abc[v & 63] : '=', f);
	}
}

void
json_bytes(FILE *f, const char *key, const char *s)
{
	fprintf(f, "\"%s\":", key);
	json_str(f, s);
	if (s == NULL || utf8_valid(s))
		return;
	fprintf(f, ",\"%s_b64\":\"", key);
	base64_out(f, s);
	fputc('"', f);
}

void
json_int(FILE *f, const char *key, int64_t v, int known)
{
	fprintf(f, ",\"%s\":", key);
	if (known)
		fprintf(f, "%lld", (long long)v);
	else
		fputs("null", f);
}

void
json_decimal(FILE *f, const char *key, const char *s)
{
	int64_t v = 0;
	int ok = rl_decimal(s, &v) == 0;

	json_int(f, key, v, ok);
}

void
json_who(FILE *f, const char *owner, const char *host, long pid,
    const char *user, const char *cmd)
{
	json_bytes(f, "owner", owner);
	json_meta(f, host, pid, user, cmd);
}

void
json_meta(FILE *f, const char *host, long pid, const char *user,
    const char *cmd)
{
	fputs(",\"host\":", f);
	json_str(f, host);
	json_int(f, "pid", pid, pid > 0);
	fputs(",\"user\":", f);
	json_str(f, user);
	fputs(",\"cmd\":", f);
	json_str(f, cmd);
}

/* Set by client_open: the URL is RL_DEFAULT_URL because neither -u nor
 * REDLOCK_URL named one, which an operator may not know. */
static int default_url;

/* A server out of reach: ERR's line, where the default URL (when it was
 * not chosen) says so and how to choose another. */
static void
unreachable(const char *err)
{
	const char *s = esc(err), *p = strstr(s, RL_DEFAULT_URL);
	int n;

	if (!default_url || p == NULL) {
		msg("%s; check --url and that the server is up", s);
		return;
	}
	n = (int)(p - s + strlen(RL_DEFAULT_URL));
	msg("%.*s (the default: set REDLOCK_URL or give -u URL)%s; check "
	    "that the server is up", n, s, s + n);
}

int
fail(rl_client *c, enum rl_err e, const char *name)
{
	switch (e) {
	case RL_OK:
		return 0;
	case RL_EWRONGTYPE:
		msg("%s is not a lock: %s; nothing was changed, choose another "
		    "name", esc(name), esc(rl_errstr(c)));
		return EXIT_WRONGTYPE;
	case RL_EKIND:
		msg("%s; nothing was changed", esc(rl_errstr(c)));
		return EXIT_WRONGTYPE;
	case RL_ECONNECT:
		if (rl_err_refused(c))
			msg("%s", esc(rl_errstr(c)));
		else
			unreachable(rl_errstr(c));
		return EXIT_UNAVAILABLE;
	case RL_EAUTH:
	case RL_ESERVER:
	case RL_EREPLICAS:
		msg("%s", esc(rl_errstr(c)));
		return EXIT_UNAVAILABLE;
	case RL_EUSAGE:
		msg("%s", esc(rl_errstr(c)));
		return EXIT_USAGE;
	case RL_ENOMEM:
		msg("out of memory");
		return EXIT_SOFTWARE;
	case RL_EINTR:
	case RL_EPROTO:
	default:
		msg("%s; please report this", esc(rl_errstr(c)));
		return EXIT_SOFTWARE;
	}
}

void
warn_nopub(rl_client *c, const char *name, const char *channel, int done)
{
	const char *user = rl_user(c);
	char rule[64];
	size_t n = strcspn(channel, ":");

	/* The rule for every channel of this kind, "&PREFIX:*": channels
	 * begin with one of redlock's prefixes, no control characters. */
	if (n >= sizeof(rule) - 4)
		snprintf(rule, sizeof(rule), "%s", RL_ACL_CHANNELS);
	else
		snprintf(rule, sizeof(rule), "&%.*s:*", (int)n, channel);
	if (done)
		msg("warning: %s was released, but its waiters were not woken: "
		    "the server refused PUBLISH on %s to user %s (they wait out "
		    "the lease); grant it with ACL SETUSER %s %s", esc(name),
		    esc(channel), esc(user), esc(user), rule);
	else
		msg("warning: user %s may not PUBLISH on %s, so releasing %s "
		    "will not wake its waiters (they wait out the lease); grant "
		    "it with ACL SETUSER %s %s", esc(user), esc(channel),
		    esc(name), esc(user), rule);
}

rl_client *
client_open(const struct globals *g, int64_t ttl_ms, int *status)
{
	return client_open_pubsub(g, ttl_ms, RL_PUBSUB_AUTO, status);
}

/* The history's bounds from REDLOCK_HISTORY (events kept per name, 0:
 * none) and REDLOCK_HISTORY_TTL (how long an unused name's history
 * stays, 0: for ever); set and empty, each counts as unset. 0, or -1
 * when one is bad (said). */
static int
history_env(rl_client *c)
{
	const char *max = getenv("REDLOCK_HISTORY");
	const char *ttl = getenv("REDLOCK_HISTORY_TTL");
	long n = RL_HISTORY_MAX;
	int64_t ms = RL_HISTORY_TTL_MS;

	if (max != NULL && max[0] != '\0' &&
	    parse_number(max, 0, RL_HISTORY_MAX_MAX, &n) < 0) {
		msg("REDLOCK_HISTORY: '%s' is not a number of events from 0 "
		    "to %d; fix it or unset it", esc(max), RL_HISTORY_MAX_MAX);
		return -1;
	}
	if (ttl != NULL && ttl[0] != '\0' && rl_duration_parse(ttl, &ms) != 0) {
		msg("REDLOCK_HISTORY_TTL: '%s' is not a duration (250ms, 30s, "
		    "5m, 7d, 1d12h; 0: for ever); fix it or unset it",
		    esc(ttl));
		return -1;
	}
	return rl_set_history(c, n, ms) == RL_OK ? 0 : -1;
}

#define WARNED_MAX 64

/* Each server that may evict a held lock, once per process (a pool's
 * clients and several masters may name one server twice). */
void
warn_eviction(rl_client *c)
{
	static char said[WARNED_MAX][256];
	static size_t nsaid;
	const char *policy;
	char url[256];
	size_t i, j;

	for (i = 0; i < rl_nodes(c); i++) {
		if ((policy = rl_node_eviction(c, i, url, sizeof(url))) == NULL)
			continue;
		for (j = 0; j < nsaid && strcmp(said[j], url) != 0; j++)
			;
		if (j < nsaid)
			continue;
		if (nsaid < WARNED_MAX)
			memcpy(said[nsaid++], url, sizeof(url));
		msg("warning: %s has maxmemory-policy %s: it may evict a held "
		    "lock (another holder then runs beside this one); set "
		    "maxmemory-policy noeviction", esc(url), esc(policy));
	}
	/* Said: reconnections (the watchdog's, the keeper's) need not
	 * ask again. */
	rl_set_eviction_check(c, 0);
}

/* A client of G's masters, connected; EVICTIONS: for acquiring (the
 * eviction check); WAIT_MS > 0: the connecting ends within it (-w). */
static rl_client *
open_client(const struct globals *g, int64_t ttl_ms, enum rl_pubsub pubsub,
    int evictions, int64_t wait_ms, int *status)
{
	rl_client *c = rl_client_new_multi(g->url, g->nurl,
	    g->connect_timeout_ms, g->timeout_ms);
	enum rl_err e;
	const char *env = getenv("REDLOCK_URL");

	/* An empty REDLOCK_URL is as good as unset (main.c). */
	default_url = !g->url_given && (env == NULL || env[0] == '\0');

	if (c == NULL) {
		msg("out of memory");
		*status = EXIT_SOFTWARE;
		return NULL;
	}
	if (history_env(c) < 0) {
		rl_client_free(c);
		*status = EXIT_USAGE;
		return NULL;
	}
	rl_set_node_timeout(c, g->timeout_given ? g->timeout_ms :
	    rl_node_timeout_for(ttl_ms));
	rl_set_pubsub(c, pubsub);
	rl_set_eviction_check(c, evictions);
	if (wait_ms > 0)
		rl_set_connect_until(c, rl_now_ms() + wait_ms);
	if ((e = rl_connect(c)) != RL_OK) {
		*status = fail(c, e, "");
		rl_client_free(c);
		return NULL;
	}
	return c;
}

rl_client *
client_open_pubsub(const struct globals *g, int64_t ttl_ms,
    enum rl_pubsub pubsub, int *status)
{
	return open_client(g, ttl_ms, pubsub, 0, -1, status);
}

rl_client *
client_open_acquire(const struct globals *g, int64_t ttl_ms,
    enum rl_pubsub pubsub, int64_t wait_ms, int *status)
{
	return open_client(g, ttl_ms, pubsub, 1, wait_ms, status);
}

static const char *const pubsub_names[] = {
	[RL_PUBSUB_AUTO] = "auto",
	[RL_PUBSUB_SHARDED] = "sharded",
	[RL_PUBSUB_CLASSIC] = "classic"
};

/* S as a pub/sub mode: 0, or -1 when it names none. */
static int
pubsub_lookup(const char *s, enum rl_pubsub *mode)
{
	size_t i;

	for (i = 0; i < sizeof(pubsub_names) / sizeof(pubsub_names[0]); i++)
		if (strcmp(s, pubsub_names[i]) == 0) {
			*mode = (enum rl_pubsub)i;
			return 0;
		}
	return -1;
}

int
parse_pubsub(const struct cmd *c, const char *arg, enum rl_pubsub *mode)
{
	if (pubsub_lookup(arg, mode) == 0)
		return 0;
	usage_error(c, "--pubsub: '%s' is not auto, sharded or classic",
	    esc(arg));
	return -1;
}

int
pubsub_default(const struct cmd *c, enum rl_pubsub *mode)
{
	const char *env = getenv(PUBSUB_VAR), *v;
	int r;

	*mode = RL_PUBSUB_AUTO;
	/* Set and empty, it counts as unset; then the file's. */
	if ((env == NULL || env[0] == '\0') && (v = config_last("pubsub",
	    &msg_where)) != NULL) {
		r = parse_pubsub(c, v, mode);
		msg_where = NULL;
		return r;
	}
	if (env == NULL || env[0] == '\0' || pubsub_lookup(env, mode) == 0)
		return 0;
	usage_error(c, "%s: '%s' is not auto, sharded or classic; fix it, "
	    "or give --pubsub", PUBSUB_VAR, esc(env));
	return -1;
}

const char *
pubsub_name(enum rl_pubsub mode)
{
	return pubsub_names[mode];
}

int
one_master(const struct cmd *c, const struct globals *g, const char *what,
    const char *fix)
{
	if (g->nurl <= 1)
		return 0;
	return usage_error(c, "%s not available with several masters "
	    "(Redlock): give one URL%s", what, fix);
}

int
parse_duration(const struct cmd *c, const char *opt, const char *arg,
    int64_t *ms)
{
	switch (rl_duration_parse(arg, ms)) {
	case 0:
		return 0;
	case RL_DURATION_TOO_LONG:
		usage_error(c, "%s: '%s' is longer than the limit of %lldh "
		    "(%lld years)", opt, esc(arg),
		    RL_DURATION_MAX / (3600 * 1000),
		    RL_DURATION_MAX / (366LL * 24 * 3600 * 1000));
		return -1;
	default:
		usage_error(c, "%s: bad duration '%s': use " DURATION_FORMS,
		    opt, esc(arg));
		return -1;
	}
}

int
parse_number(const char *arg, long min, long max, long *v)
{
	const char *p;
	long n;

	/* strtol alone would also take leading blanks and a sign. */
	for (p = arg; *p >= '0' && *p <= '9'; p++)
		;
	if (p == arg || *p != '\0')
		return -1;
	errno = 0;
	n = strtol(arg, NULL, 10);
	if (errno != 0 || n < min || n > max)
		return -1;
	*v = n;
	return 0;
}

void
format_time(int64_t epoch_ms, char *buf, size_t len)
{
	time_t t = (time_t)(epoch_ms / 1000);
	struct tm tm;
	char s[80];

	/* Not strftime, which reads the time zone's file first. A time
	 * beyond gmtime's years (a stream entry's id can be made up): the
	 * epoch's fields, never uninitialised ones. */
	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	snprintf(s, sizeof(s), "%04d-%02d-%02dT%02d:%02d:%02d",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec);
	snprintf(buf, len, "%s.%03dZ", s, (int)(epoch_ms % 1000));
}

int
flush_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		msg("cannot write to standard output: %s", strerror(errno));
		return EXIT_SOFTWARE;
	}
	return 0;
}

/* The process's own argument area, which ps reads (/proc/PID/cmdline):
 * its words are moved to the heap at start, so that it can be rewritten
 * (proc_title) without pulling strings from under anyone. */
static struct {
	char *start;		/* argv[0] as the kernel laid it out */
	size_t len;		/* through the last word's NUL */
	char *copy;		/* the words everyone else reads */
} args;

void
proc_args_save(int argc, char **argv)
{
	size_t n;
	int i;

	free(args.copy);
	args.copy = NULL;
	args.start = argc > 0 ? argv[0] : NULL;
	args.len = 0;
	for (i = 0; i < argc; i++) {
		/* Only a contiguous area, as the kernel makes it. */
		if (argv[i] != args.start + args.len)
			break;
		args.len += strlen(argv[i]) + 1;
	}
	if (i < argc || args.len == 0 ||
	    (args.copy = malloc(args.len)) == NULL) {
		args.len = 0;
		return;
	}
	memcpy(args.copy, args.start, args.len);
	for (i = 0, n = 0; i < argc; i++) {
		argv[i] = args.copy + n;
		n += strlen(argv[i]) + 1;
	}
}

void
proc_args_sync(void)
{
	if (args.len > 0)
		memcpy(args.start, args.copy, args.len);
}

void
proc_title(const char *title)
{
	char **e;
	size_t n = strlen(title);

	(void)prctl(PR_SET_NAME, PROC_COMM);
	if (args.len == 0)
		return;
	/* Too long for the words: the environment's strings, when they
	 * follow, are moved to the heap to make room (nginx's way). */
	for (e = environ; n >= args.len && *e != NULL; e++) {
		if (*e != args.start + args.len)
			break;
		args.len += strlen(*e) + 1;
		if ((*e = strdup(*e)) == NULL)
			_exit(EXIT_SOFTWARE);
	}
	if (n >= args.len)
		n = args.len - 1;
	memset(args.start, 0, args.len);
	memcpy(args.start, title, n);
}

size_t
columns(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* The columns of the character at P, its bytes in *N: one, or two from
 * U+1100 on (taken as CJK, so that a cut never wraps). */
static size_t
char_columns(const unsigned char *p, size_t *n)
{
	if ((*n = rl_utf8_len(p)) == 0)
		*n = 1;
	return *n >= 3 && (*n > 3 || p[0] > 0xe1 || (p[0] == 0xe1 &&
	    p[1] >= 0x84)) ? 2 : 1;
}

size_t
fit_columns(const char *s, size_t w)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, n, cw;

	while (*p != '\0') {
		cw = char_columns(p, &n);
		if (used + cw > w)
			break;
		used += cw;
		p += n;
	}
	return (size_t)(p - (const unsigned char *)s);
}

size_t
text_columns(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, n;

	for (; *p != '\0'; p += n)
		used += char_columns(p, &n);
	return used;
}
