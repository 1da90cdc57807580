/* cmd.h: what the subcommands share: exit codes, messages, options. */
#ifndef RL_CMD_H
#define RL_CMD_H

#include <stdarg.h>
#include <stdint.h>
#include <getopt.h>
#include <signal.h>
#include <sys/types.h>
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
	EXIT_LOST = 79,
	EXIT_SUPERSEDED = 80,	/* --supersede: a newer waiter came */
	EXIT_MAX_HOLD = 124	/* exec --max-hold, as timeout(1) */
};

/*
 * What cmd/'s functions return. A command's run, and a helper whose
 * every outcome ends the command, return an exit status (the enum
 * above). A helper with one way to fail returns 0, or -1 once it has
 * said what failed. A helper after which the command may carry on (the
 * command-line parsers among them: each command's parse, main.c's
 * global options, the lock options) returns an enum step, with the exit
 * status in *STATUS when it is STEP_EXIT, so that no int means both "go
 * on" and an exit status.
 */
enum step {
	STEP_GO_ON,		/* done: the command carries on */
	STEP_EXIT,		/* the command ends with *STATUS (reported) */
	STEP_INTERRUPTED	/* a signal ended a wait; nothing said yet */
};

/* STEP_EXIT, with CODE into *STATUS: return step_exit(status,
 * usage_error(...)). */
static inline enum step
step_exit(int *status, int code)
{
	*status = code;
	return STEP_EXIT;
}

#define MAX_URLS 16
/* The longest owner token, from --owner or REDLOCK_HELD. */
#define OWNER_MAX_LEN 256
/* The lease whose node timeout commands without --ttl use. */
#define DEFAULT_TTL_FOR_TIMEOUT 30000

struct globals {
	struct rl_url url[MAX_URLS];	/* several: Redlock across masters */
	size_t nurl;
	char url_text[4096];	/* comma-separated, without passwords */
	int64_t connect_timeout_ms;
	int64_t timeout_ms;
	int timeout_given;	/* --reply-timeout */
	const char *wait_arg;	/* --timeout given before COMMAND: its -w */
	const char *sentinel_user;	/* --sentinel-user */
	const char *sentinel_password;	/* --sentinel-password */
	int stdout_closed;	/* at start: /dev/null was put in its place */
	int url_given;		/* -u: the URLs are not $REDLOCK_URL's */
	int url_password;	/* a URL has a password of its own */
	const char *password_from;	/* where the others' is from, as
					 * redlock config says; or NULL */
	const char *password_file;	/* --password-file */
	const char *password_file_where;	/* its "FILE:LINE", or NULL:
						 * the command line */
	struct rl_tls_opts tls;
};

/* Option tables (opts.c): one array of struct opt per option set drives
 * getopt_long's arguments, the option list of --help, and the listing
 * that redlock --complete prints for the shell completions. */
enum opt_arg {
	ARG_NONE,
	ARG_DURATION,
	ARG_N,
	ARG_TEXT,
	ARG_FILE,
	ARG_DIR,
	ARG_URL,
	ARG_HOST,
	ARG_PID,
	ARG_CHOICE,		/* one of CHOICES */
	ARG_OPT_DURATION	/* optional, given as --NAME=DURATION */
};
/* Who takes an option: a command's bit, or the global options'. */
enum {
	CMD_EXEC = 1 << 0,
	CMD_LOCK = 1 << 1,
	CMD_UNLOCK = 1 << 2,
	CMD_STATUS = 1 << 3,
	CMD_QUEUE = 1 << 4,
	CMD_LOG = 1 << 5,
	CMD_GLOBAL = 1 << 6,
	CMD_CONFIG = 1 << 7
};
/* struct opt's flags. */
#define OPT_NOCOMPLETE 1	/* shown by --help, not offered to complete */
#define OPT_HEADING 2		/* no option: HELP is a heading line */
#define OPT_CONFIG 4		/* may be set in the configuration file, as
				 * KEY = VALUE with its long name as KEY */
struct lockopts;
struct cmd;
struct opt {
	const char *name;	/* long name; NULL: a short option only */
	int letter;		/* short option; 0: none */
	int val;		/* getopt_long's value; 0: LETTER */
	enum opt_arg arg;
	const char *metavar;	/* its value in --help: "DURATION" */
	const char *choices;	/* ARG_CHOICE: "term|kill|ignore" */
	unsigned cmds;		/* the commands (CMD_*) that take it */
	unsigned refused;	/* those that parse it only to refuse it */
	unsigned flags;
	const char *env;	/* OPT_CONFIG: the variable that stands for
				 * it (between option and file), or NULL */
	const char *dflt;	/* OPT_CONFIG: its default, as redlock config
				 * shows it; NULL: none */
	const char *left;	/* --help's left column, when not the usual
				 * "  -x, --name METAVAR" */
	const char *help;	/* --help's lines, '\n' between them (a
				 * first '\n': below the left column); NULL:
				 * none (an alias said in another's lines) */
	/* lock_opts: what lockopts_parse does with it (CH: getopt_long's
	 * value, ARG: its argument): 0, or -1 after a usage error. NULL:
	 * the command's own, parsed by its file. */
	int (*parse)(const struct cmd *c, struct lockopts *o, int ch,
	    const char *arg);
};
/* A table's end. */
#define OPT_END { .name = NULL }
/* The column where --help's texts start, after the options and commands. */
#define HELP_COLUMN 26
/* The width --help keeps within: a terminal's 80 columns. */
#define HELP_WIDTH 80
/* getopt_long's arguments for one command. */
#define OPTS_MAX 48
struct getopts {
	char shortopts[2 * OPTS_MAX];
	struct option longopts[OPTS_MAX + 1];
};

/* What a command takes after its options, as main checks it. */
enum operands {
	OPERANDS_OWN,		/* the command checks them itself */
	OPERANDS_NONE,
	OPERANDS_NAME		/* one NAME, into parse's name */
};

/* One command line being parsed (opts_parse): the words, what the
 * options go into, and what is left. */
struct parse {
	const struct cmd *c;	/* NULL: the global options before COMMAND */
	void *job;		/* the command's, for its option function */
	int argc;		/* the words to read, argv[0] the command's name
				 * (CMD_DASHDASH: up to "--") */
	char **argv;
	int dd;			/* CMD_DASHDASH: the place of "--" (argc
				 * when none); COMMAND follows it */
	int full_argc;		/* every word, COMMAND's included */
	/* A global option, by its getopt value, with its ARG. */
	enum step (*global)(int ch, char *arg, int *status);
	/* Out: the operands, in order, moved to argv[1] .. argv[nops]. */
	int nops;
	int next;		/* c NULL: the place of COMMAND (argc: none) */
	const char *name;	/* OPERANDS_NAME: the NAME, as a key name */
	const struct getopts *go;	/* the options of the word being
					 * read, for its messages */
};

struct cmd {
	const char *name;
	const char *usage;	/* after "redlock [GLOBAL OPTIONS] " */
	const char *help;	/* what --help prints before the options */
	/* Its options: those of OPTS that BIT is in. */
	const struct opt *opts;
	unsigned bit;
	const char *brief;	/* one line, for redlock --help and
				 * --complete */
	const char *examples;	/* --help's, a line each, indented */
	const char *exits;	/* --help's exit statuses, after "Exit
				 * status: " (lines of at most 80 columns) */
	unsigned flags;		/* CMD_DASHDASH */
	enum operands operands;	/* checked before run */
	size_t job_size;	/* what its options are read into */
	void (*init)(void *job);
	/* Option CH (its getopt value: VAL, else LETTER) with ARG. */
	enum step (*option)(void *job, const struct parse *p, int ch,
	    const char *arg, int *status);
	/* An unknown option, or one without its value (optopt, the word
	 * before optind); NULL: the usual message. */
	enum step (*unknown)(void *job, const struct parse *p, int *status);
	/* The command, once its options are read and the globals settled:
	 * the operands are p->argv[1] .. p->argv[p->nops]. */
	int (*run)(struct globals *g, void *job, const struct parse *p);
};
/* struct cmd's flags: its words end at "--", COMMAND's begin after. */
#define CMD_DASHDASH 1

/* P's command line in one pass: the command's options (P->c; the global
 * ones too until the first operand, where the command has none of that
 * spelling), or the global ones before COMMAND (P->c NULL, up to the
 * first word that is no option). --help is the command's. STEP_GO_ON,
 * or STEP_EXIT with *STATUS. */
enum step opts_parse(struct parse *p, int *status);
/* TABLE's option list for BIT, as --help prints it, on F. */
void opts_help(const struct opt *table, unsigned bit, FILE *f);
/* TABLE's options for BIT, for the completions, on F, one spelling a
 * line: "--ttl<TAB>DURATION<TAB>lease". The value's kind is empty
 * (none), DURATION, N, TEXT, FILE, DIR, URL, HOST, PID, the choices
 * ("term|kill|ignore"), or [DURATION] (optional, after "="). The last
 * field, a description, is empty for an option not to offer
 * (OPT_NOCOMPLETE): known, so that its value is not taken for NAME. */
void opts_complete(const struct opt *table, unsigned bit, FILE *f);

/* The whole command line; main() calls it (and so can a fuzzer). */
int redlock_main(int argc, char **argv);

extern const struct cmd cmd_lock;
extern const struct cmd cmd_unlock;
extern const struct cmd cmd_status;
extern const struct cmd cmd_exec;
extern const struct cmd cmd_queue;
extern const struct cmd cmd_log;
extern const struct cmd cmd_config;

/* config.c: the configuration file (redlock(1) FILES). */
/* One setting as redlock config shows it. */
struct setting {
	const struct opt *opt;
	char origin[1100];	/* "--url", "REDLOCK_URL", "FILE:LINE",
				 * "default" */
	const char *value;	/* NULL: not set */
};
/* The file ($REDLOCK_CONFIG, else $XDG_CONFIG_HOME/redlock/config or
 * ~/.config/redlock/config, else /etc/redlock.conf) read and checked
 * against TABLES (NULL-ended: the tables whose OPT_CONFIG options it may
 * set): 0 (also when there is none at the default places), or
 * EXIT_USAGE once said (FILE:LINE). Once per process run. */
int config_load(const struct opt *const *tables);
/* The file's lines for option KEY, in order: the N-th value (from 0)
 * and its "FILE:LINE" into *WHERE; NULL past the last. */
const char *config_get(const char *key, size_t n, const char **where);
/* The password in FILE (its first line) into *PW, malloc'd; WHERE
 * ("FILE:LINE" of the password-file line, NULL: the option) for the
 * messages: 0, or -1 (said) when it cannot be read, is empty, or others
 * than its owner may read it. */
int config_password(const char *file, const char *where, char **pw);
/* The path of the file read, or NULL when there was none. */
const char *config_path(void);
/* The file's last value for KEY and its "FILE:LINE" into *WHERE, or
 * NULL when it has none. */
const char *config_last(const char *key, const char **where);
/* urls.c: S, one URL or several separated by commas, parsed into g->url
 * (FROM: where S came from, for messages): 0, or the exit status. */
int add_urls(struct globals *g, const char *from, const char *s);
/* The passwords of the URLs in S, a word of the command line, overwritten
 * in place with 'x': ps shows it from now on without them. */
void hide_passwords(char *s);
/* No --url: $REDLOCK_URL, else the file's url lines, else the default. */
int default_urls(struct globals *g);
/* The URLs checked, given their passwords and sentinels' credentials,
 * and written into g->url_text: 0, or the exit status (said). */
int settle_urls(struct globals *g);
/* The password read from a file wiped and freed. */
void urls_clear(void);
/* The global options (global.c): their own getopt_long values, their
 * table, and what the command line gave them. */
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
extern const struct opt global_opts[];
/* Whether global option VAL (getopt_long's value) was on the command
 * line, and its last value there (the URLs: each -u, comma-joined). */
const char *global_given(int val);
/* Global option VAL given on the command line, with ARG (NULL: none). */
void global_note(int val, const char *arg);
/* None given any more: a fresh start. */
void global_forget(void);

/* --prefix (REDLOCK_PREFIX, prefix in the file): every key of NAME is
 * made from PREFIX + NAME, as Redisson's NameMapper maps names. The name
 * the library is given for NAME (NAME itself without a prefix; kept for
 * the run). */
const char *name_key(const char *name);
/* The other way: KEY without the prefix, for what redlock shows; KEY
 * when it does not start with it. */
const char *name_shown(const char *key);
/* Whether KEY is under the prefix (always, without one). */
int name_under(const char *key);
/* The prefix in force ("" for none). */
extern const char *key_prefix;

/* text.c: what redlock writes: messages and -v events, escapes, JSON
 * values, times, held-by lines, shell words, terminal columns. */
/* "redlock: " and the message, one line on stderr. */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* HEAD, then FMT's message and a newline, on stderr in one write (cut at
 * 4 KiB). */
void vline(const char *head, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* While not NULL ("FILE:LINE"), msg and usage_error say it after
 * "redlock: ": the configuration file's value being applied. */
extern const char *msg_where;
/* S for terminals and logs (rl_escape): control characters and bytes
 * that are not UTF-8 escaped (\xNN), other UTF-8 as it is; a backslash
 * stays one, so that a holder's command, stored shell-quoted ($'...' for
 * a control character), is shown as it can be copied. "-" for NULL. Up
 * to four results stay valid at once. */
const char *esc(const char *s);
/* The columns of terminal FD, asked each time (a resized window is
 * followed); 80 when it does not say. */
size_t columns(int fd);
/* How many bytes of S fit in W columns; how many columns S takes. */
size_t fit_columns(const char *s, size_t w);
size_t text_columns(const char *s);
/* S as a JSON string, on F: quotes and backslashes escaped, control
 * characters (C0, DEL, C1) as \u00XX, each byte that is not part of
 * valid UTF-8 as \ufffd, other UTF-8 as it is; null for NULL. */
void json_str(FILE *f, const char *s);
/* "KEY":S on F, then, when S is not UTF-8 throughout (S shows U+FFFD for
 * each byte that is not), ,"KEY_b64":S's bytes in base64, so that a name
 * or an owner token can be had back whole from the JSON. */
void json_bytes(FILE *f, const char *key, const char *s);
/* ,"KEY":V on F, or ,"KEY":null when not KNOWN. */
void json_int(FILE *f, const char *key, int64_t v, int known);
/* ,"KEY":N on F for a stored decimal S (a fencing token, up to 2^63-1,
 * beyond a double's integers: digits, never a double), ,"KEY":null when S
 * is empty or not a decimal integer from 0 to 2^63-1 (rl_decimal). */
void json_decimal(FILE *f, const char *key, const char *s);
/* "owner":..,"host":..,"pid":..,"user":..,"cmd":.. on F (the owner as
 * json_bytes writes it). */
void json_who(FILE *f, const char *owner, const char *host, long pid,
    const char *user, const char *cmd);
/* ,"host":..,"pid":..,"user":..,"cmd":.. on F. */
void json_meta(FILE *f, const char *host, long pid, const char *user,
    const char *cmd);
/* "2026-11-22T04:30:00.123Z" for event lines and status. */
void format_time(int64_t epoch_ms, char *buf, size_t len);
/* Write stdout out; on failure say so and return EXIT_SOFTWARE. */
int flush_stdout(void);
/* "finished, held until 2026-11-22T04:30:00.123Z (--min-hold)" into
 * BUF: what a finished hold is, held until UNTIL_MS (server clock). */
void say_finished(int64_t until_ms, char *buf, size_t len);
/* With -v (O NULL: always), a timestamped line on stderr. */
void event(const struct lockopts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* ,"running":true, false or null (R as hold_running's) on stdout. */
void json_running(int r);
/* ,"finished":..,"held_until_ms":.. on stdout: a hold given back before
 * its minimum hold ended (--min-hold) stays until UNTIL_MS (<= 0: it is
 * not finished). */
void json_finished(int64_t until_ms);
/* ", finished, held until T (--min-hold)" into BUF, or "" when UNTIL_MS
 * is not above 0. */
const char *finished_text(int64_t until_ms, char *buf, size_t len);
/* Who holds a lock, as the messages name it (held_by). */
struct holder {
	const char *owner;	/* named when HOST is NULL */
	const char *host;	/* NULL: known by its owner token only */
	long pid;
	int not_running;	/* " (not running)" after the pid */
	const char *cmd;	/* the command line (NULL: "-") */
	const char *held;	/* " for HELD" after it; NULL: not said */
	int upto_pid;		/* stop after the pid: the caller cuts the
				 * command line to a width itself */
};
/* "held by web1 pid 4242 (pg_dump) for 1m12s", or "held by owner TOKEN"
 * when H has no host, into BUF, every word escaped; returns BUF. The one
 * spelling of a holder in messages, status and queue. */
const char *held_by(const struct holder *h, char *buf, size_t len);
/* Whether C needs no quoting in a shell word. */
int shell_plain(unsigned char c);
/* S on F as one shell word, quoted only when it needs it. */
void shell_word(FILE *f, const char *s);
/* The command that frees NAME (unlock --force) on F, one line, with the
 * global options that reach the same servers (passwords left out: they
 * come from the environment). */
void force_line(FILE *f, const struct globals *g, const char *name);

/* opts.c: usage errors and help from the tables, and the typed value
 * readers. */
/* A usage error: the message, the command's usage line, EXIT_USAGE. */
int usage_error(const struct cmd *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int print_help(const struct cmd *c);
/* getopt returned '?': name the word it stopped at; EXIT_USAGE. */
int bad_option(const struct cmd *c, char **argv, const char *shortopts,
    const struct option *longopts);
/* ARG as a duration of option OPT into *MS: 0, or -1 after a usage
 * error that names the forms taken (DURATION_FORMS) or the limit. */
int parse_duration(const struct cmd *c, const char *opt, const char *arg,
    int64_t *ms);
#define DURATION_FORMS "250ms, 30s, 1h30m, 2d, 1.5h (units d, h, m, s, " \
    "ms, largest first, each once) or seconds"
/* ARG as a number from MIN to MAX into *V: 0, or -1 unless it is decimal
 * digits and nothing else (no blank, sign or fraction, as in durations),
 * in range. The caller says what was wrong. */
int parse_number(const char *arg, long min, long max, long *v);

/* common.c: the clients the commands open, library errors as exit
 * statuses, --pubsub, and the NAME operand. */
/* The one NAME operand of P into *NAME: 0, or a usage error when it is
 * missing, empty or followed by more. */
int one_name(const struct cmd *c, const struct parse *p, const char **name);
/* The server refused this user PUBLISH on CHANNEL (ACL): waiters of NAME
 * were not woken by a release (DONE), or will not be by the coming one. */
void warn_nopub(rl_client *c, const char *name, const char *channel,
    int done);
/* The exit status for a library error, after printing its message. */
int fail(rl_client *c, enum rl_err e, const char *name);
/* A connected client for the global URL(s), or NULL with *STATUS set.
 * With several masters, TTL_MS sets the node timeout unless
 * --reply-timeout was given. */
rl_client *client_open(const struct globals *g, int64_t ttl_ms, int *status);
/* The same for pub/sub as MODE (rl_set_pubsub): --pubsub, else
 * REDLOCK_PUBSUB, for the commands that publish or subscribe. */
rl_client *client_open_pubsub(const struct globals *g, int64_t ttl_ms,
    enum rl_pubsub mode, int *status);
/* The same for the commands that acquire (exec, lock): its connections
 * also ask whether the server may evict a lock, for warn_eviction; with
 * WAIT_MS > 0 (-w) the connecting, handshake included, ends within it. */
rl_client *client_open_acquire(const struct globals *g, int64_t ttl_ms,
    enum rl_pubsub mode, int64_t wait_ms, int *status);
/* After C's acquisition: "warning: URL has maxmemory-policy P: ..." for
 * each of its servers that may evict a held lock, once per process
 * whatever the client, even under -q (a server that can break the lock
 * is no routine line); C's connections stop asking. */
void warn_eviction(rl_client *c);
#define PUBSUB_VAR "REDLOCK_PUBSUB"
/* --pubsub's values, as redlock --complete lists them. */
#define PUBSUB_CHOICES "auto|sharded|classic"
/* --pubsub ARG into *MODE: 0, or -1 after a usage error. */
int parse_pubsub(const struct cmd *c, const char *arg, enum rl_pubsub *mode);
/* No --pubsub: REDLOCK_PUBSUB into *MODE (unset or empty: auto); 0, or
 * -1 after a usage error naming the variable. */
int pubsub_default(const struct cmd *c, enum rl_pubsub *mode);
/* "auto", "sharded" or "classic". */
const char *pubsub_name(enum rl_pubsub mode);
/* Fair queues live on one server: with several masters, a usage error
 * (EXIT_USAGE) saying "WHAT not available ...", then FIX; else 0. */
int one_master(const struct cmd *c, const struct globals *g,
    const char *what, const char *fix);

/* The longest label stored; a longer one is cut, ending in "...". */
#define LABEL_MAX 256

/* Options of the commands that acquire (lock, exec): lockopt.c. */
struct lockopts {
	int64_t wait_ms;	/* < 0: forever */
	int64_t ttl_ms;
	int conflict;		/* exit status when not acquired */
	const char *owner;	/* --owner, NAME's in REDLOCK_HELD, else new */
	int quiet;
	int verbose;
	int fair;
	int supersede;		/* --supersede */
	int exclusive;		/* -x: flock's spelling of the default */
	int64_t waiter_timeout_ms;
	int waiter_timeout_given;
	int replicas;		/* --replicas: WAIT for this many; 0: not;
				 * RL_REPLICAS_DEFAULT: the Sentinel default */
	enum rl_lock_kind kind;	/* --shared, --write, --limit; a nested
				 * call: the kind it re-enters as */
	enum rl_lock_kind held_kind;	/* how the exec chain holds NAME
					 * once this call does (REDLOCK_HELD) */
	long limit;
	enum rl_pubsub pubsub;	/* --pubsub, else REDLOCK_PUBSUB */
	int pubsub_given;
	int64_t min_hold_ms;	/* --min-hold; 0: none */
	int any;		/* --any: NAME... is a pool */
	int reenter;		/* the owner is NAME's in REDLOCK_HELD: only
				 * that hold is re-entered, never NAME taken
				 * afresh */
	int busy;		/* lock_acquire_pool: not acquired, busy */
	int64_t wait_start_ms;	/* lock_acquire_pool: when it began */
	int64_t call_start_ms;	/* pool_open: before connecting, where
				 * -w starts (0: not yet) */
	const char *label;	/* --label, else REDLOCK_LABEL; or NULL */
	char label_buf[LABEL_MAX + 1];
	char owner_buf[RL_OWNER_MAX];
};

/* The values opts_parse gives the options of lock_opts (the option
 * functions' CH) that have no letter of their own: one enum, so that no
 * two are alike. */
enum {
	OPT_FAIR = 0x100,
	OPT_WAITER_TIMEOUT,
	OPT_REPLICAS,
	OPT_WRITE,
	OPT_LIMIT,
	OPT_PUBSUB,
	OPT_MIN_HOLD,
	OPT_LABEL,
	OPT_EXCLUSIVE,
	OPT_FLOCK_UNLOCK,
	OPT_FLOCK_FCNTL,
	OPT_SUPERSEDE,
	OPT_ANY,
	OPT_TIMEOUT,		/* flock's spelling of -w */
	OPT_OWNER,
	/* exec's own (lock refuses the first two). */
	OPT_MAX_HOLD,
	OPT_METRICS_FILE,
	OPT_ON_LOST,
	OPT_KILL_AFTER,
	/* lock's own. */
	OPT_EXTEND,
	OPT_KEEPALIVE,
	OPT_PID
};
/* The options of lock and exec, those they share and their own, in the
 * order of their --help (lockopt.c). */
extern const struct opt lock_opts[];

void lockopts_init(struct lockopts *o);
/* Option CH of getopt_long, with ARG, by the handler lock_opts gives
 * it: STEP_GO_ON once taken, else STEP_EXIT with *STATUS EXIT_USAGE
 * after a bad value, or after CH, which is no lock option here, was
 * reported as unknown. */
enum step lockopts_parse(const struct cmd *c, struct lockopts *o, int ch,
    const char *arg, int *status);
/* Once every option is parsed, the preconditions lock and exec share: a
 * --ttl long enough to renew when RENEWER (what renews the lease, as the
 * message names it) is not NULL, an option that needs another, --fair on
 * one master only, and REDLOCK_PUBSUB when --pubsub was not given; -1
 * (reported). */
int lockopts_check(const struct cmd *c, struct lockopts *o,
    const struct globals *g, const char *renewer);
/* Settle the owner token of NAME: --owner, else the one REDLOCK_HELD
 * gives for NAME, else a new one. A call that re-enters a hold listed
 * there nests as the manual's table says: the kind it takes may change
 * to the hold's; -1 (reported) when it would wait for that hold, when
 * REDLOCK_HELD is malformed, or when no token can be made. */
int lockopts_finish(const char *name, struct lockopts *o);
/* The names of a pool (--any): those given, in order, each once. */
struct pool_names {
	const char *name[RL_ANY_MAX];
	size_t n;
	char label[1024];	/* "a, b or c", for messages */
};
/* The N words W as NAME... of C, for --any when ANY (else one NAME): 0,
 * or the status of a usage error (none, an empty one, more than
 * RL_ANY_MAX). */
int pool_parse(const struct cmd *c, int any, char **w, int n,
    struct pool_names *p);
/* lockopts_finish for a pool: a name of P that an exec above holds (in
 * REDLOCK_HELD) is the whole pool, re-entered; -1 (reported). */
int lockopts_finish_pool(struct pool_names *p, struct lockopts *o);
/* The hold O asks for at NAME: its owner, kind and permits. */
struct rl_lock lockopts_lock(const struct lockopts *o, const char *name);
/* REDLOCK_HELD, the locks held by the exec chain above (held.c). The
 * owner it gives for NAME into BUF and, unless KIND is NULL, the kind
 * into *KIND (an enum rl_lock_kind, or HELD_UNKNOWN for an entry that
 * names none): 1, or 0 when it has none, or -1 (reported) when the
 * variable is malformed. */
#define HELD_UNKNOWN (-1)
int held_owner(const char *name, char *buf, size_t len, int *kind);
/* Its value for COMMAND of an exec that holds NAME as OWNER, the chain
 * holding it as KIND: the inherited entries, NAME's set to OWNER and
 * KIND or added last; malloc'd, NULL when out of memory. */
char *held_with(const char *name, const char *owner,
    enum rl_lock_kind kind);

/* lock --extend: lengthen O's owner's hold of NAME to at least MS from
 * now (extend.c): 0, EXIT_NOT_HELD (said), or an error's status. */
int lock_extend(struct globals *g, const char *name, struct lockopts *o,
    int64_t ms);

/* acquire.c: the acquisition lock and exec share, and what it shows
 * while it waits. */
/* One acquisition of a pool (NAME, or --any's NAME...): a client per
 * name, what the last attempt on each found, and the name taken (or,
 * when none was, the one the messages describe). */
struct pool_take {
	rl_client *rc[RL_ANY_MAX];
	struct rl_attempt a[RL_ANY_MAX];
	size_t which;
};
/* Acquire any one of the names of pool P as O says, each on its own
 * client of T: STEP_GO_ON when held (T->which), STEP_INTERRUPTED when a
 * signal ended the wait, else STEP_EXIT with *STATUS (reported; when
 * every name was busy, O's conflict status). */
enum step lock_acquire_pool(struct pool_take *t, const struct pool_names *p,
    struct lockopts *o, const struct rl_meta *meta, int *status);
/* A client for each name of pool P into T (client_open_pubsub), each
 * interrupted by SIG_FD, and the call's start into O: 0, or -1 with
 * *STATUS set (none left open). */
int pool_open(const struct globals *g, struct lockopts *o,
    const struct pool_names *p, int sig_fd, struct pool_take *t, int *status);
/* Free the first N clients of T but the one of the name taken. */
void pool_close(struct pool_take *t, size_t n);
/* A wait for NAME that signal SIG ended (0: unknown, SIGINT): says so
 * unless -q, with how long it waited; 128 + the signal. */
int wait_interrupted(const struct lockopts *o, const char *name, int sig);

/* proc.c: this process and the others of this host. */
/* The watchdog's name in ps -e, top and pgrep (15 bytes at most). */
#define PROC_COMM "redlock-wd"
/* This host's name and the effective user, for the holder metadata. */
const char *self_host(void);
const char *self_user(void);
/* This host's boot id and pid namespace, as a holder record keeps them
 * ("" when they cannot be read). */
const char *self_boot(void);
const char *self_pidns(void);
/* META's host, user and where this process runs (RENEWED: a process of
 * ours renews the lease: exec's watchdog, lock --keepalive). */
void meta_self(struct rl_meta *meta, int renewed);
/* Whether the process of a hold runs: PROC as its record says, PID, the
 * hold taken HELD_MS ago (-1: not known). 1 when that process runs, 0
 * when it does not (gone, a zombie, or PID is now a process started
 * since), -1 when this cannot be told here: the record's boot id and
 * pid namespace are not this host's (another host, another container,
 * whatever the host name), or not recorded (Redisson's, an older
 * redlock's), or no pid; HOLD_UNRENEWED when no process renews it; and
 * -1 for a hold given back before UNTIL_MS (> 0, --min-hold), which
 * stays with nothing meant to run. */
int hold_running(const struct rl_proc *proc, long pid, int64_t held_ms,
    int64_t until_ms);
/* hold_running's answer for a hold whose record names no process that
 * renews it (lock without --keepalive): nothing is meant to run. */
#define HOLD_UNRENEWED (-2)
/* The process that called redlock, for the holder record of lock: its
 * parent, or, when that is a subshell (a fork of a shell that did not
 * exec: a command substitution of more than one command, a function),
 * the shell it was forked from, which outlives it. */
pid_t caller_pid(void);
/* Whether a process of group PG runs (zombies do not count). */
int group_runs(pid_t pg);
/* SIG to process group PG (COMMAND's), or to PG alone when it leads
 * no group (any more); nothing when PG is not above 0. */
void signal_group(pid_t pg, int sig);
/* Room for NEED open files: the soft limit raised up to the hard one
 * when it is lower. 0, or the most this process may open. */
long files_enough(unsigned long need);
/* The limit redlock started with back (COMMAND's, in vfork's child: a
 * system call only). */
void files_restore(void);
/* Move the words of the command line ARGC, ARGV to the heap (ARGV made
 * to point there), keeping the kernel's area for proc_title. */
void proc_args_save(int argc, char **argv);
/* Copy the words back to that area after a change (hidden passwords). */
void proc_args_sync(void);
/* TITLE as this process's command line in ps (its words no longer), and
 * PROC_COMM as its name. */
void proc_title(const char *title);

/* The size of a stored command line, its NUL included. */
#define CMDLINE_MAX 512
/* ARGV (up to a NULL) into BUF as holder metadata: each word quoted for a
 * shell where it needs it, joined by blanks, the values that look like
 * secrets replaced by "***", as the manual's HOLDER METADATA says, and a
 * cut marked with "\u2026" (secret.c). */
void cmdline_masked(char *const *argv, char *buf, size_t len);

/* Signals as bytes on a self-pipe (sig.c). */
extern const int relayed_signals[6];	/* INT TERM HUP QUIT USR1 USR2 */
/* Catch SIGS (N of them) into a fresh self-pipe, in place of the last
 * one; returns its read end, non-blocking and close-on-exec, or -1. */
int sig_catch(const int *sigs, int n);
/* Close the self-pipe, both ends: never close() its read end, whose
 * number another file may have by the time the pipe is replaced. */
void sig_drop(void);
/* The next caught signal, 0 when none is pending. */
int sig_next(int fd);
/* Default dispositions and the mask redlock started with: for COMMAND. */
void sig_restore(void);
void sig_block_all(sigset_t *old);
void sig_unblock(const sigset_t *old);

/* spawn.c: COMMAND's environment and start, for exec's watchdog. */
/* COMMAND's start, made ready before the lock is held so that little
 * but one vfork and one exec comes between acquisition and COMMAND. */
struct spawn {
	char **argv;
	char **envp;		/* the environment, with REDLOCK_* set */
	char *set[16];		/* the "K=V" strings of envp we made */
	size_t nset;
	int tty;		/* COMMAND gets the terminal */
	pid_t watchdog;		/* its parent */
	int err_fd;		/* the child writes exec's errno here */
};
/* COMMAND's environment into S, for NAME held by O with FENCE: 0, or -1
 * (out of memory). */
int spawn_env(struct spawn *s, const struct globals *g, const char *name,
    const struct lockopts *o, int64_t fence);
/* Start COMMAND as S says, in a process group of its own: its pid, or -1
 * (errno set; said when exec failed). All signals blocked by the caller. */
pid_t spawn(struct spawn *s);
/* What spawn_env made, freed. */
void spawn_free(struct spawn *s);

/* metrics.c: exec --metrics-file, node_exporter's textfile format. What
 * one exec of a name did, for its series. */
struct metrics_run {
	int64_t start_ms;	/* wall clock, when exec started */
	int64_t end_ms;		/* wall clock, when it ended */
	int64_t wait_ms;	/* from its start to the acquisition */
	int64_t hold_ms;	/* from the acquisition to its end */
	int busy;		/* not acquired: NAME was busy */
	int ran;		/* COMMAND was started */
	int lost;		/* the lease was lost */
	int status;		/* redlock's exit status */
};
/* FILE as --metrics-file takes it: 0, or -1 after a usage error (empty,
 * a directory, or in a directory that does not exist). */
int metrics_check(const struct cmd *c, const char *file);
/* Add R, of NAME, to FILE: read it, update NAME's series, write it to a
 * temporary file beside it and rename that over it, all under an flock
 * of FILE.lock. A failure is one warning line, nothing more. */
void metrics_record(const char *file, const char *name,
    const struct metrics_run *r);

/* watchdog.c: keep a held lease alive while COMMAND or a watched process
 * runs, and act on its loss. */
enum on_lost { ON_LOST_TERM, ON_LOST_KILL, ON_LOST_IGNORE };
/* How the lease was lost: a renewal (or, after LOST_LATE, the release)
 * found it gone, as lost_how says; renewals kept failing; or the watchdog
 * reached its local deadline without having sent a renewal before it
 * (it was stopped or starved of CPU), and the server then neither said
 * it was gone nor answered: it may even have been held still. */
enum lost { LOST_NO, LOST_GONE, LOST_UNREACHABLE, LOST_LATE };
/* What a renewal or the release found when the hold was not there: its
 * lease had run out by the local deadline, it was removed before that
 * (unlock --force, a deletion), or another owner holds the name; or the
 * release, past the local deadline (the watchdog found COMMAND ended
 * only then), was not confirmed by a quorum of masters. */
enum gone { GONE_NO, GONE_EXPIRED, GONE_REMOVED, GONE_TAKEN,
    GONE_UNCONFIRMED };
/* "its lease had expired", "it was removed while held (...)", "it was
 * taken by another owner", for messages. */
const char *gone_why(int gone);
/* A lease lost: as found (enum lost), how a renewal found it gone (enum
 * gone), whether the server answered late, renewals short of replicas,
 * and who removed it ("" when not known). */
struct loss {
	int why;
	int how;
	int slow;
	int unacked;
	const char *removed_by;
};
/* Why L's lease was lost, for messages: the -v event and COMMAND's line,
 * or TERSE, for the line that says what --on-lost does. */
const char *lost_why(const struct loss *l, int terse);

struct watch {
	rl_client *rc;		/* the watchdog's own connection */
	const char *name;
	const char *owner;
	const struct lockopts *lo;
	int64_t sent_ms;	/* when the acquisition was sent */
	int64_t answered_ms;	/* when its answer came; 0: not known */
	enum on_lost on_lost;
	int64_t kill_after_ms;
	int64_t max_hold_ms;	/* exec --max-hold: stop COMMAND this long
				 * after sent_ms; 0: never */
	pid_t child;		/* COMMAND, leading its process group; or 0 */
	int parent_fd;		/* EOF when redlock died; or -1 */
	int pid_fd;		/* pidfd of the watched process; or -1 */
	int sig_fd;		/* SIGCHLD (and, with no child, TERM...) */
	/* What happened. */
	int child_status;	/* wait status of COMMAND */
	enum lost lost;
	int lost_how;		/* enum gone: how LOST_GONE found it */
	char removed_by[400];	/* GONE_REMOVED by unlock --force, as its
				 * history tells: who did it; or "" */
	int max_held;		/* COMMAND was stopped at --max-hold */
	int64_t lost_after_ms;	/* since the last confirmation, at loss */
	int lost_signal;	/* what the loss sent COMMAND: SIGTERM,
				 * SIGKILL, or 0 (ignored, or it had
				 * ended) */
	int unacked;		/* the last renewal failed for want of
				 * replicas (--replicas) */
	int orphaned;		/* redlock died first */
	const char *what;	/* COMMAND's name, for -v; or NULL */
	int released;
	int64_t held_until_ms;	/* the release kept the hold, finished,
				 * until then (--min-hold, server clock);
				 * or 0 */
	int64_t kill_deadline;	/* lose() moved the SIGKILL to the local
				 * lease deadline, before --kill-after; or 0 */
	int killed_at_deadline;	/* the SIGKILL came then */
	int slow;		/* LOST_LATE for want of the server: its
				 * answer to the acquisition came too late
				 * to renew in time */
	int gone_at_release;	/* enum gone: what the release found */
};

/* COMMAND's exit status from its wait status STATUS: 128+N for signal N. */
int child_exit(int status);
/* What became of COMMAND at a loss, for its line, into BUF: its wait
 * status ST, the signal the loss sent it (0: none), and AT_DEADLINE when
 * the SIGKILL came at the local lease deadline, before --kill-after. */
const char *lost_fate(int st, int lost_signal, int at_deadline, char *buf,
    size_t len);
/* What became of the lock after COMMAND, for the line of --max-hold (into
 * BUF): "" when not RELEASED, released, or kept until HELD_UNTIL_MS
 * (server clock; --min-hold). */
const char *kept_text(int released, int64_t held_until_ms, char *buf,
    size_t len);

/* Renew until the child exits (or the watched process, or a signal with
 * no child), acting on loss; release the hold unless lost. */
void watch_run(struct watch *w);

#endif
