/* opts.c: the option tables at work: the one parser of every command
 * line, --help's option lists, the listing of redlock --complete, the
 * usage errors, and the typed value readers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"


static int
takes(const struct opt *o, unsigned bit)
{
	return (o->flags & OPT_HEADING) == 0 && ((o->cmds | o->refused) &
	    bit) != 0;
}

/* "  -t, --ttl DURATION" into BUF. */
static void
left_column(const struct opt *o, char *buf, size_t len)
{
	size_t n;

	if (o->left != NULL) {
		snprintf(buf, len, "%s", o->left);
		return;
	}
	if (o->letter != 0 && o->name != NULL)
		snprintf(buf, len, "  -%c, --%s", o->letter, o->name);
	else if (o->name != NULL)
		snprintf(buf, len, "      --%s", o->name);
	else
		snprintf(buf, len, "  -%c", o->letter);
	n = strlen(buf);
	if (o->arg == ARG_OPT_DURATION)
		snprintf(buf + n, len - n, "[=%s]", o->metavar);
	else if (o->arg != ARG_NONE)
		snprintf(buf + n, len - n, " %s", o->metavar);
}

void
opts_help(const struct opt *table, unsigned bit, FILE *f)
{
	const struct opt *o;
	const char *h;
	char left[80];
	size_t n;

	for (o = table; o->name != NULL || o->letter != 0 || o->help != NULL;
	    o++) {
		if ((o->cmds & bit) == 0 || o->help == NULL)
			continue;
		if (o->flags & OPT_HEADING) {
			fprintf(f, "%s\n", o->help);
			continue;
		}
		/* A command's --help leaves -h to redlock --help. */
		if (bit != CMD_GLOBAL && o->name != NULL &&
		    strcmp(o->name, "help") == 0)
			continue;
		left_column(o, left, sizeof(left));
		h = o->help;
		n = strlen(left);
		if (h[0] != '\n' && n >= HELP_COLUMN && strchr(h, '\n') == NULL &&
		    n + 2 + strlen(h) <= HELP_WIDTH)
			fprintf(f, "%s  ", left);	/* one line still */
		else if (h[0] == '\n' || n >= HELP_COLUMN) {
			fprintf(f, "%s\n%*s", left, HELP_COLUMN, "");
			h += h[0] == '\n';
		} else
			fprintf(f, "%-*s", HELP_COLUMN, left);
		for (; *h != '\0'; h++) {
			fputc(*h, f);
			if (*h == '\n')
				fprintf(f, "%*s", HELP_COLUMN, "");
		}
		fputc('\n', f);
	}
}

/* The kind of O's value, as the completion listing says it. */
static const char *
arg_kind(const struct opt *o)
{
	static const char *const kinds[] = { "", "DURATION", "N", "TEXT",
	    "FILE", "DIR", "URL", "HOST", "PID", NULL, "[DURATION]" };

	return o->arg == ARG_CHOICE ? o->choices : kinds[o->arg];
}

/* The first line of the help of O (or of the option above it that it
 * is an alias of), up to ": ", "; ", or " (" not closed on that line,
 * on F. */
static void
brief(const struct opt *table, const struct opt *o, FILE *f)
{
	static const char *const ends[] = { ": ", "; ", " (" };
	const char *h, *end, *p;
	size_t i;

	while (o->help == NULL && o > table)
		o--;
	if ((h = o->help) == NULL)
		return;
	h += h[0] == '\n';
	end = h + strcspn(h, "\n");
	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if ((p = strstr(h, ends[i])) != NULL && p < end && (i < 2 ||
		    memchr(p, ')', (size_t)(end - p)) == NULL))
			end = p;
	fprintf(f, "%.*s", (int)(end - h), h);
}

void
opts_complete(const struct opt *table, unsigned bit, FILE *f)
{
	const struct opt *o;
	int hide;

	for (o = table; o->name != NULL || o->letter != 0 || o->help != NULL;
	    o++) {
		if ((o->cmds & bit) == 0 || (o->flags & OPT_HEADING) != 0)
			continue;
		/* Not offered, but known: its value is not NAME. */
		hide = (o->flags & OPT_NOCOMPLETE) != 0;
		if (o->name != NULL) {
			fprintf(f, "--%s\t%s\t", o->name, arg_kind(o));
			if (!hide)
				brief(table, o, f);
			fputc('\n', f);
		}
		if (o->letter != 0 && o->arg != ARG_OPT_DURATION) {
			fprintf(f, "-%c\t%s\t", o->letter, arg_kind(o));
			if (!hide)
				brief(table, o, f);
			fputc('\n', f);
		}
	}
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
print_help(const struct cmd *c)
{
	printf("usage: redlock [GLOBAL OPTIONS] %s\n\n%s", c->usage, c->help);
	opts_help(c->opts, c->bit, stdout);
	if (c->examples != NULL)
		printf("\nExamples:\n%s", c->examples);
	if (c->exits != NULL)
		printf("\nExit status: %s", c->exits);
	return flush_stdout();
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

/*
 * One command line's options, read in one pass (opts_parse). Long
 * options are told apart by their place in ENT (getopt_long's value is
 * PLACE_BASE + the place), so that a command's option and a global one
 * may share a value; a short option is found by its letter, the
 * command's first.
 */
#define PLACE_BASE 0x1000
struct optset {
	const struct opt *ent[2 * OPTS_MAX];
	size_t n;
	struct getopts go;
};

/* Whether SET has, among its first N entries, one spelled NAME or
 * LETTER. */
static int
spelled(const struct optset *set, size_t n, const char *name, int letter)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((name != NULL && set->ent[i]->name != NULL &&
		    strcmp(set->ent[i]->name, name) == 0) ||
		    (letter != 0 && set->ent[i]->letter == letter))
			return 1;
	return 0;
}

/* TABLE's options for BIT into SET, but a spelling SET has already (its
 * first entries: the command's own). */
static void
set_add(struct optset *set, const struct opt *table, unsigned bit)
{
	const struct opt *o;
	size_t own = set->n, m = strlen(set->go.shortopts), k;
	struct option *lo;

	for (k = 0; set->go.longopts[k].name != NULL; k++)
		;
	for (o = table; o->name != NULL || o->letter != 0 || o->help != NULL;
	    o++) {
		if (!takes(o, bit) || set->n == sizeof(set->ent) /
		    sizeof(set->ent[0]))
			continue;
		if (o->letter != 0 && !spelled(set, own, NULL, o->letter) &&
		    m + 3 < sizeof(set->go.shortopts)) {
			set->go.shortopts[m++] = (char)o->letter;
			if (o->arg != ARG_NONE)
				set->go.shortopts[m++] = ':';
			set->go.shortopts[m] = '\0';
		}
		if (o->name != NULL && !spelled(set, own, o->name, 0) &&
		    k < OPTS_MAX) {
			lo = &set->go.longopts[k++];
			lo->name = o->name;
			lo->has_arg = o->arg == ARG_NONE ? no_argument :
			    o->arg == ARG_OPT_DURATION ? optional_argument :
			    required_argument;
			lo->flag = NULL;
			lo->val = PLACE_BASE + (int)set->n;
		}
		set->ent[set->n++] = o;
	}
	memset(&set->go.longopts[k], 0, sizeof(set->go.longopts[k]));
}

/* The place in SET of what getopt_long returned, CH (a letter: the
 * first entry spelled so); -1 for '?'. */
static int
place(const struct optset *set, int ch)
{
	size_t i;

	if (ch >= PLACE_BASE && (size_t)(ch - PLACE_BASE) < set->n)
		return ch - PLACE_BASE;
	for (i = 0; ch > 1 && ch < 256 && i < set->n; i++)
		if (set->ent[i]->letter == ch)
			return (int)i;
	return -1;
}

/* Whether WORD, a cluster of short options ("-nV"), holds one of the
 * command's options (the first OWN places of SET) and a global one:
 * such a word is the command's, which refuses the global one. */
static int
mixed(const struct optset *set, size_t own, const char *word)
{
	int kinds = 0, i;

	if (word[0] != '-' || word[1] == '-' || word[1] == '\0' ||
	    word[2] == '\0')
		return 0;
	for (word++; *word != '\0'; word++) {
		if ((i = place(set, (unsigned char)*word)) < 0)
			break;
		kinds |= (size_t)i < own ? 1 : 2;
		if (set->ent[i]->arg != ARG_NONE)
			break;	/* the rest is its value */
	}
	return kinds == 3;
}

/* Unknown to the command, or a value missing: the command's refusal,
 * else the usual message. */
static enum step
unknown(const struct parse *p, int *status)
{
	if (p->c != NULL && p->c->unknown != NULL)
		return p->c->unknown(p->job, p, status);
	return step_exit(status, bad_option(p->c, p->argv, p->go->shortopts,
	    p->go->longopts));
}

/* Option O of P's command line, with ARG; GLOBAL: one of the global
 * table, which P->global applies. */
static enum step
apply(struct parse *p, const struct opt *o, int global, char *arg,
    int *status)
{
	int code = o->val != 0 ? o->val : o->letter;

	if (global)
		return p->global(code, arg, status);
	if (o->name != NULL && strcmp(o->name, "help") == 0)
		return step_exit(status, print_help(p->c));
	return p->c->option(p->job, p, code, arg, status);
}

enum step
opts_parse(struct parse *p, int *status)
{
	struct optset own = { .n = 0 }, all;
	const struct optset *set;
	int ch, i, word;

	snprintf(own.go.shortopts, sizeof(own.go.shortopts), "%s",
	    p->c != NULL ? "-" : "+");
	set_add(&own, p->c != NULL ? p->c->opts : global_opts, p->c != NULL ?
	    p->c->bit : CMD_GLOBAL);
	all = own;
	if (p->c != NULL)
		set_add(&all, global_opts, CMD_GLOBAL);
	/* The global options count until NAME, the command's throughout. */
	set = &all;
	p->go = &set->go;
	p->nops = 0;
	optind = 0;
	opterr = 0;
	for (;;) {
		word = optind > 0 ? optind : 1;
		if ((ch = getopt_long(p->argc, p->argv, set->go.shortopts,
		    set->go.longopts, NULL)) == -1)
			break;
		if (ch == 1) {
			/* In place: every word before this one is read. */
			p->argv[1 + p->nops++] = optarg;
			set = &own;
			p->go = &set->go;
			continue;
		}
		/* A long option that is ambiguous among both tables and not
		 * among the command's (--rep: --replicas, --reply-timeout) is
		 * the command's. */
		if (ch == '?' && set == &all && optopt == 0 &&
		    strncmp(p->argv[word], "--", 2) == 0) {
			optind = word;
			ch = getopt_long(p->argc, p->argv, own.go.shortopts,
			    own.go.longopts, NULL);
			p->go = &own.go;
		}
		if ((i = place(set, ch)) < 0)
			return unknown(p, status);
		p->go = &set->go;
		/* A global option in a cluster of the command's: unknown to
		 * the command, as if alone after NAME. */
		if (p->c != NULL && (size_t)i >= own.n &&
		    mixed(set, own.n, p->argv[word])) {
			optopt = ch;
			p->go = &own.go;
			return unknown(p, status);
		}
		if (apply(p, set->ent[i], p->c == NULL || (size_t)i >= own.n,
		    optarg, status) == STEP_EXIT)
			return STEP_EXIT;
	}
	p->next = optind;
	/* After "--": operands, whatever they look like. */
	while (p->c != NULL && optind < p->argc)
		p->argv[1 + p->nops++] = p->argv[optind++];
	return STEP_GO_ON;
}
