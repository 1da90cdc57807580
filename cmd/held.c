/* held.c: REDLOCK_HELD, the locks that COMMAND's exec chain holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

/*
 * The variable is "NAME=OWNER=KIND NAME=OWNER=KIND ...": one entry per
 * lock that an exec above the caller holds, outermost first, with the
 * kind the chain holds it as (exclusive, shared, write, limit). NAME and
 * OWNER are %-encoded: '%', '=', ' ', the bytes below 0x21 and 0x7f
 * become %XX (uppercase hex), so any name survives, spaces only separate
 * entries and '=' only fields. An entry without KIND ("NAME=OWNER", as
 * older redlocks wrote them, or one made by hand) is of no known kind:
 * a nested call takes the kind it asks for with its token.
 */
#define HELD_VAR "REDLOCK_HELD"

/* The KIND words, by enum rl_lock_kind. */
static const char *const kind_word[] = {
	[RL_EXCLUSIVE] = "exclusive",
	[RL_SHARED] = "shared",
	[RL_WRITE] = "write",
	[RL_PERMIT] = "limit"
};
#define NKIND (sizeof(kind_word) / sizeof(kind_word[0]))

struct held_entry {
	char *name;
	char *owner;
	int kind;		/* enum rl_lock_kind, or HELD_UNKNOWN */
};

struct held {
	char *text;		/* a decoded copy of the variable */
	struct held_entry *e;
	size_t n;
};

static void
held_free(struct held *h)
{
	free(h->text);
	free(h->e);
}

/* What is wrong with the entry at P (decoded in place), or NULL. */
static const char *
entry_parse(char *p, struct held_entry *e)
{
	const unsigned char *u;
	char *eq;
	size_t k;

	if ((eq = strchr(p, '=')) == NULL)
		return "is not NAME=OWNER";
	*eq = '\0';
	e->name = p;
	e->owner = eq + 1;
	e->kind = HELD_UNKNOWN;
	if ((eq = strchr(e->owner, '=')) != NULL) {
		*eq++ = '\0';
		for (k = 0; k < NKIND; k++)
			if (strcmp(eq, kind_word[k]) == 0)
				e->kind = (int)k;
		if (e->kind == HELD_UNKNOWN)
			return "has a KIND that is not exclusive, shared, "
			    "write or limit";
	}
	if (rl_unescape(e->name) < 0 || rl_unescape(e->owner) < 0)
		return "has a bad %-escape";
	if (e->name[0] == '\0' || e->owner[0] == '\0')
		return "has an empty NAME or OWNER";
	for (u = (const unsigned char *)e->owner; *u != '\0'; u++)
		if (*u < 0x20 || *u == 0x7f)
			return "has a control character in OWNER";
	if (strlen(e->owner) > OWNER_MAX_LEN)
		return "has an OWNER longer than the --owner limit";
	return NULL;
}

/* The entries of REDLOCK_HELD into H; -1 (reported) when malformed. */
static int
held_parse(struct held *h)
{
	const char *env = getenv(HELD_VAR), *why;
	char *p, *next;
	size_t i, n = 1;

	memset(h, 0, sizeof(*h));
	if (env == NULL || env[0] == '\0')
		return 0;
	for (p = strchr(env, ' '); p != NULL; p = strchr(p + 1, ' '))
		n++;
	if ((h->text = strdup(env)) == NULL ||
	    (h->e = calloc(n, sizeof(*h->e))) == NULL) {
		msg("cannot read %s: %s", HELD_VAR, strerror(errno));
		held_free(h);
		return -1;
	}
	for (i = 0, p = h->text; i < n; i++, p = next) {
		/* The same entry, undecoded, for the message. */
		const char *raw = env + (p - h->text);

		if ((next = strchr(p, ' ')) != NULL)
			*next++ = '\0';
		if ((why = entry_parse(p, &h->e[i])) != NULL) {
			char entry[512];

			snprintf(entry, sizeof(entry), "%.*s",
			    (int)strcspn(raw, " "), raw);
			msg("%s is malformed: entry %zu ('%s') %s; redlock "
			    "exec sets it for COMMAND: unset it rather than "
			    "edit it", HELD_VAR, i + 1, esc(entry), why);
			held_free(h);
			return -1;
		}
	}
	h->n = n;
	return 0;
}

int
held_owner(const char *name, char *buf, size_t len, int *kind)
{
	struct held h;
	size_t i;

	if (held_parse(&h) < 0)
		return -1;
	/* The nearest exec's entry, should a hand-made list name it twice. */
	for (i = h.n; i > 0; i--)
		if (strcmp(h.e[i - 1].name, name) == 0) {
			snprintf(buf, len, "%s", h.e[i - 1].owner);
			if (kind != NULL)
				*kind = h.e[i - 1].kind;
			break;
		}
	held_free(&h);
	return i > 0;
}

static void
put(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++)
		if (*p == '%' || *p == '=' || *p < 0x21 || *p == 0x7f)
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
}

/* One entry on F; KIND HELD_UNKNOWN writes none, as it was read. */
static void
put_entry(FILE *f, const char *name, const char *owner, int kind)
{
	put(f, name);
	fputc('=', f);
	put(f, owner);
	if (kind >= 0 && (size_t)kind < NKIND)
		fprintf(f, "=%s", kind_word[kind]);
}

char *
held_with(const char *name, const char *owner, enum rl_lock_kind kind)
{
	struct held h;
	char *out = NULL;
	size_t i, len;
	int seen = 0;
	FILE *f;

	if (held_parse(&h) < 0)
		return NULL;
	if ((f = open_memstream(&out, &len)) == NULL) {
		held_free(&h);
		return NULL;
	}
	for (i = 0; i < h.n; i++) {
		int mine = strcmp(h.e[i].name, name) == 0;

		/* This exec holds NAME now: its owner is the one to re-enter
		 * (the same as the entry's unless --owner said otherwise),
		 * as KIND (the entry's, when this exec re-entered it). */
		seen |= mine;
		if (i > 0)
			fputc(' ', f);
		if (mine)
			put_entry(f, name, owner, (int)kind);
		else
			put_entry(f, h.e[i].name, h.e[i].owner, h.e[i].kind);
	}
	if (!seen) {
		if (h.n > 0)
			fputc(' ', f);
		put_entry(f, name, owner, (int)kind);
	}
	held_free(&h);
	if (ferror(f)) {
		fclose(f);
		free(out);
		return NULL;
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}
