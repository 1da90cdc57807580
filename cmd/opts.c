/* opts.c: option tables into getopt_long's arguments, --help's option
 * lists and the listing of redlock --complete. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

/* The column where --help's option texts start. */
#define HELP_COLUMN 26

static int
takes(const struct opt *o, unsigned bit)
{
	return (o->flags & OPT_HEADING) == 0 && ((o->cmds | o->refused) &
	    bit) != 0;
}

void
opts_getopt(const struct opt *table, unsigned bit, const char *prefix,
    struct getopts *g)
{
	const struct opt *o;
	size_t n = 0, m;

	snprintf(g->shortopts, sizeof(g->shortopts), "%s", prefix);
	m = strlen(g->shortopts);
	for (o = table; o->name != NULL || o->letter != 0 || o->help != NULL;
	    o++) {
		if (!takes(o, bit))
			continue;
		if (o->letter != 0 && m + 3 < sizeof(g->shortopts)) {
			g->shortopts[m++] = (char)o->letter;
			if (o->arg != ARG_NONE)
				g->shortopts[m++] = ':';
			g->shortopts[m] = '\0';
		}
		if (o->name == NULL || n == OPTS_MAX)
			continue;
		g->longopts[n].name = o->name;
		g->longopts[n].has_arg = o->arg == ARG_NONE ? no_argument :
		    o->arg == ARG_OPT_DURATION ? optional_argument :
		    required_argument;
		g->longopts[n].flag = NULL;
		g->longopts[n].val = o->val != 0 ? o->val : o->letter;
		n++;
	}
	memset(&g->longopts[n], 0, sizeof(g->longopts[n]));
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

	for (o = table; o->name != NULL || o->letter != 0 || o->help != NULL;
	    o++) {
		if ((o->cmds & bit) == 0 || o->help == NULL)
			continue;
		if (o->flags & OPT_HEADING) {
			fprintf(f, "%s\n", o->help);
			continue;
		}
		left_column(o, left, sizeof(left));
		h = o->help;
		if (h[0] == '\n' || strlen(left) >= HELP_COLUMN) {
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

const struct getopts *
cmd_getopt(const struct cmd *c)
{
	/* One per command, by its bit: built at its first use. */
	static struct getopts built[8];
	static unsigned done;
	int i = __builtin_ctz(c->bit);

	if ((done & c->bit) == 0) {
		opts_getopt(c->opts, c->bit, "", &built[i]);
		done |= c->bit;
	}
	return &built[i];
}
