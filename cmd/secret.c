/* secret.c: the command line stored as holder metadata, secrets masked. */
#include <string.h>
#include <strings.h>

#include "cmd.h"

#define MASK "***"

/* Names that suggest a secret, as the manual's HOLDER METADATA lists
 * them: a name containing one of these, in any case. */
static const char *const secret_words[] = {
	"pass", "pwd", "token", "secret", "key", "credential", "bearer",
	"authorization"
};

/* Programs that take a secret in a short option (and its long name):
 * "mysql" and "mariadb" are prefixes (mysqldump, mariadb-admin). */
static const struct tool {
	const char *name;
	int prefix;
	char opt;		/* -OVALUE */
	int next;		/* -O VALUE too (mysql's -p alone prompts) */
	const char *longopt;	/* --LONG VALUE, --LONG=VALUE; or NULL */
} tools[] = {
	{ "mysql", 1, 'p', 0, NULL },
	{ "mariadb", 1, 'p', 0, NULL },
	{ "sshpass", 0, 'p', 1, NULL },
	{ "redis-cli", 0, 'a', 1, NULL },
	{ "valkey-cli", 0, 'a', 1, NULL },
	{ "curl", 0, 'u', 1, "user" },
};

struct mask {
	char *buf;
	size_t len, n;
	int next;		/* the next word is a secret */
	int rest;		/* so is the rest of this word */
	const struct tool *tool;	/* the last program named */
};

static void
put(struct mask *m, const char *s, size_t n)
{
	while (n-- > 0 && m->n + 1 < m->len)
		m->buf[m->n++] = *s++;
	m->buf[m->n] = '\0';
}

static int
secret_name(const char *s, size_t n)
{
	size_t i, j, w;

	for (i = 0; i < sizeof(secret_words) / sizeof(secret_words[0]); i++) {
		w = strlen(secret_words[i]);
		for (j = 0; j + w <= n; j++)
			if (strncasecmp(s + j, secret_words[i], w) == 0)
				return 1;
	}
	return 0;
}

/* S, N on M with the userinfo of every URL in it (scheme://USER:PW@)
 * replaced by the mask. */
static void
put_urls(struct mask *m, const char *s, size_t n)
{
	const char *e = s + n, *p, *q, *at;

	while ((p = memmem(s, (size_t)(e - s), "://", 3)) != NULL) {
		p += 3;
		at = NULL;
		for (q = p; q < e && strchr("/?#", *q) == NULL; q++)
			if (*q == '@')
				at = q;
		if (at == NULL) {
			put(m, s, (size_t)(p - s));
			s = p;
			continue;
		}
		put(m, s, (size_t)(p - s));
		put(m, MASK, strlen(MASK));
		s = at;
	}
	put(m, s, (size_t)(e - s));
}

/* T, N names a program: the tool it is, or NULL. */
static const struct tool *
find_tool(const char *t, size_t n)
{
	const char *slash = memrchr(t, '/', n);
	size_t i, w;

	if (slash != NULL) {
		n -= (size_t)(slash + 1 - t);
		t = slash + 1;
	}
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		w = strlen(tools[i].name);
		if (n >= w && strncmp(t, tools[i].name, w) == 0 &&
		    (n == w || tools[i].prefix))
			return &tools[i];
	}
	return NULL;
}

/* The secret option of the last program named: the length of T to keep
 * before the mask (-p of -pVALUE), 0 when T is not that option; *NEXT
 * set when its value is the next word. */
static size_t
tool_option(const struct tool *tl, const char *t, size_t n, int *next)
{
	size_t w;

	if (tl == NULL || n < 2 || t[0] != '-')
		return 0;
	if (t[1] == tl->opt) {
		if (n > 2)
			return 2;
		*next = tl->next;
		return n;
	}
	if (tl->longopt == NULL || t[1] != '-')
		return 0;
	w = strlen(tl->longopt) + 2;
	if (n < w || strncmp(t + 2, tl->longopt, w - 2) != 0)
		return 0;
	if (n == w) {
		*next = 1;
		return n;
	}
	return t[w] == '=' ? w + 1 : 0;
}

/* How much of the word T, N (no blank in it) to keep before the mask:
 * N to keep it whole. Sets m->next when the next word is the secret,
 * m->rest when the rest of the command line's word is. */
static size_t
token_keep(struct mask *m, const char *t, size_t n)
{
	const char *eq = memchr(t, '=', n), *colon = memchr(t, ':', n);
	size_t k, d;

	if ((k = tool_option(m->tool, t, n, &m->next)) > 0)
		return k;
	if (n > 1 && t[0] == '-') {
		/* --token=VALUE, --token VALUE */
		for (d = 0; d < n && t[d] == '-'; d++)
			;
		k = eq != NULL ? (size_t)(eq - t) : n;
		if (k > d && secret_name(t + d, k - d)) {
			m->next = eq == NULL;
			return eq != NULL ? k + 1 : n;
		}
		return n;
	}
	if (colon != NULL && (eq == NULL || colon < eq) && colon > t &&
	    strncmp(colon, "://", 3) != 0 &&
	    secret_name(t, (size_t)(colon - t))) {
		/* A header: "Authorization: Bearer x", "PRIVATE-TOKEN:x" */
		m->rest = 1;
		return (size_t)(colon - t) + 1;
	}
	/* TOKEN=VALUE */
	if (eq != NULL && eq > t && secret_name(t, (size_t)(eq - t)))
		return (size_t)(eq - t) + 1;
	return n;
}

/* One word of the command line, its blank-separated parts masked. */
static void
mask_word(struct mask *m, const char *w)
{
	const char *e = w + strlen(w), *t;
	const struct tool *tl;
	size_t n, k;

	while (w < e) {
		n = strspn(w, " \t\n");
		put(m, w, n);
		if ((w += n) == e)
			break;
		t = w;
		n = strcspn(t, " \t\n");
		w += n;
		if (m->next) {
			m->next = 0;
			put(m, MASK, strlen(MASK));
			continue;
		}
		k = token_keep(m, t, n);
		put_urls(m, t, k);
		if (m->rest) {
			/* The header's value: this word's rest, else the
			 * next word. */
			m->rest = 0;
			w += k < n ? 0 : strspn(w, " \t\n");
			if (k < n || w < e)
				put(m, k < n ? MASK : " " MASK,
				    strlen(MASK) + (k == n));
			else
				m->next = 1;
			return;
		}
		if (k < n)
			put(m, MASK, strlen(MASK));
		else if ((tl = find_tool(t, n)) != NULL)
			m->tool = tl;
	}
}

void
cmdline_masked(char *const *argv, char *buf, size_t len)
{
	struct mask m = { buf, len, 0, 0, 0, NULL };
	int i;

	buf[0] = '\0';
	for (i = 0; argv[i] != NULL && m.n + 1 < len; i++) {
		if (i > 0)
			put(&m, " ", 1);
		if (m.next) {
			/* The value of --token VALUE, whole. */
			m.next = 0;
			put(&m, MASK, strlen(MASK));
		} else
			mask_word(&m, argv[i]);
	}
}
