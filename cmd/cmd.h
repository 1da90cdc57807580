/* cmd.h: what the subcommands share: exit codes, messages, options. */
#ifndef RL_CMD_H
#define RL_CMD_H

#include <stdint.h>
#include <getopt.h>
#include <stdio.h>

#include "../lib/redlock.h"

/* Exit status, as in the manual's EXIT STATUS. */
enum {
	EXIT_HELD = 0,
	EXIT_NOT_HELD = 1,
	EXIT_USAGE = 64,
	EXIT_WRONGTYPE = 65,
	EXIT_UNAVAILABLE = 69,
	EXIT_SOFTWARE = 70,
	EXIT_BUSY = 75,
	EXIT_LOST = 79
};

struct globals {
	struct rl_url url;
	char url_text[512];	/* without the password */
	int64_t connect_timeout_ms;
	int64_t timeout_ms;
};

struct cmd {
	const char *name;
	const char *usage;	/* after "redlock [GLOBAL OPTIONS] " */
	const char *help;	/* the option list printed by --help */
	int (*run)(struct globals *g, int argc, char **argv);
};

extern const struct cmd cmd_lock;
extern const struct cmd cmd_unlock;
extern const struct cmd cmd_status;

/* "redlock: " and the message, one line on stderr. */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: the message, the command's usage line, EXIT_USAGE. */
int usage_error(const struct cmd *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int print_help(const struct cmd *c);
/* getopt returned '?': name the word it stopped at; EXIT_USAGE. */
int bad_option(const struct cmd *c, char **argv, const char *shortopts,
    const struct option *longopts);
/* S with control characters escaped, for terminals and logs; up to four
 * results stay valid at once. */
const char *esc(const char *s);
/* S as a JSON string, on F. */
void json_str(FILE *f, const char *s);
/* The exit status for a library error, after printing its message. */
int fail(rl_client *c, enum rl_err e, const char *name);
/* A connected client for the global URL, or NULL with *STATUS set. */
rl_client *client_open(const struct globals *g, int *status);
int parse_duration(const struct cmd *c, const char *opt, const char *arg,
    int64_t *ms);
/* "2026-11-22T04:30:00.123Z" for event lines and status. */
void format_time(int64_t epoch_ms, char *buf, size_t len);
/* Write stdout out; on failure say so and return EXIT_SOFTWARE. */
int flush_stdout(void);

/* Options of the commands that acquire (lock, exec): lockopt.c. */
struct lockopts {
	int64_t wait_ms;	/* < 0: forever */
	int64_t ttl_ms;
	int conflict;		/* exit status when not acquired */
	const char *owner;	/* --owner or REDLOCK_OWNER, else generated */
	int quiet;
	int verbose;
	char owner_buf[RL_OWNER_MAX];
};

#define LOCKOPTS_SHORT "w:nt:E:qv"
#define LOCKOPTS_LONG \
	{ "wait", required_argument, NULL, 'w' }, \
	{ "no-wait", no_argument, NULL, 'n' }, \
	{ "ttl", required_argument, NULL, 't' }, \
	{ "conflict-exit-code", required_argument, NULL, 'E' }, \
	{ "owner", required_argument, NULL, 'O' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "verbose", no_argument, NULL, 'v' }
#define LOCKOPTS_HELP \
	"  -w, --wait DURATION     wait at most DURATION for NAME (default: forever)\n" \
	"  -n, --no-wait           give up at once if NAME is held\n" \
	"  -t, --ttl DURATION      lease (default: 30s)\n" \
	"  -E, --conflict-exit-code N\n" \
	"                          exit N, not 75, when NAME was not acquired\n" \
	"      --owner TOKEN       re-enter a hold taken with TOKEN\n" \
	"                          (default: $REDLOCK_OWNER, else a new token)\n" \
	"  -q, --quiet             no message when NAME is busy\n" \
	"  -v, --verbose           timestamped events on standard error\n"

void lockopts_init(struct lockopts *o);
/* 1: CH was a lock option; 0: it was not; -1: bad value (reported). */
int lockopts_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg);
/* Settle the owner token; -1 (reported) when none can be made. */
int lockopts_finish(const struct cmd *c, struct lockopts *o);
/* Acquire NAME as O says; 0 when held, else the exit status (reported). */
int lock_acquire(rl_client *rc, const char *name, struct lockopts *o,
    const struct rl_meta *meta, struct rl_attempt *a);
/* With -v: a timestamped line on stderr. */
void event(const struct lockopts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* This host's name and the effective user, for the holder metadata. */
const char *self_host(void);
const char *self_user(void);

#endif
