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
	char *ismask;		/* per byte of buf: written by the mask */
	size_t len, n;
	int next;		/* the next word is a secret */
	int rest;		/* so is the rest of this word */
	const struct tool *tool;	/* the last program named */
};

static void
put(struct mask *m, const char *s, size_t n)
{
	while (n-- > 0 && m->n + 1 < m->len) {
		m->ismask[m->n] = 0;
		m->buf[m->n++] = *s++;
	}
	m->buf[m->n] = '\0';
}

/* The mask, marked as such: quoting leaves it bare where the rest of
 * its word needs none (--token=***, not '--token=***'). */
static void
put_mask(struct mask *m)
{
	size_t from = m->n;

	put(m, MASK, strlen(MASK));
	memset(m->ismask + from, 1, m->n - from);
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
		put_mask(m);
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
			put_mask(m);
			continue;
		}
		k = token_keep(m, t, n);
		put_urls(m, t, k);
		if (m->rest) {
			/* The header's value: this word's rest, else the
			 * next word. */
			m->rest = 0;
			w += k < n ? 0 : strspn(w, " \t\n");
			if (k < n || w < e) {
				put(m, " ", k == n);
				put_mask(m);
			} else
				m->next = 1;
			return;
		}
		if (k < n)
			put_mask(m);
		else if ((tl = find_tool(t, n)) != NULL)
			m->tool = tl;
	}
}

/* The quoted command line being built: all of a piece or nothing of it,
 * CUT set at the first that does not fit (room kept for the mark). */
struct out {
	char *buf;
	size_t len, n;
	int cut;
};

#define CUT_MARK "\xe2\x80\xa6"	/* U+2026 HORIZONTAL ELLIPSIS */

static void
out_put(struct out *o, const char *s, size_t n)
{
	if (o->cut || o->n + n + strlen(CUT_MARK) + 1 > o->len) {
		o->cut = 1;
		return;
	}
	memcpy(o->buf + o->n, s, n);
	o->n += n;
	o->buf[o->n] = '\0';
}

/* The masked word W (ISMASK marking the mask's bytes) on O, quoted for a
 * shell so that the line can be copied: bare when it needs no quotes,
 * else in '...', or $'...' when it holds a control character (the
 * line stays one line). */
static void
quote_word(struct out *o, const char *w, const char *ismask, size_t n)
{
	const unsigned char *p = (const unsigned char *)w;
	int quote = n == 0, ctl = 0;
	char esc[8];
	size_t i;

	for (i = 0; i < n; i++) {
		quote |= !ismask[i] && !shell_plain(p[i]);
		ctl |= p[i] < 0x20 || p[i] == 0x7f;
	}
	if (!quote) {
		/* Bytewise: a long word is cut where the line ends. */
		for (i = 0; i < n; i++)
			out_put(o, w + i, 1);
		return;
	}
	out_put(o, ctl ? "$'" : "'", ctl ? 2 : 1);
	for (i = 0; i < n; i++)
		if (ctl && (p[i] < 0x20 || p[i] == 0x7f)) {
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
			out_put(o, esc, 4);
		} else if (ctl && (p[i] == '\\' || p[i] == '\''))
			out_put(o, p[i] == '\\' ? "\\\\" : "\\'", 2);
		else if (p[i] == '\'')
			out_put(o, "'\\''", 4);
		else
			out_put(o, w + i, 1);
	out_put(o, "'", 1);
}

/* Where O was cut: no partial UTF-8 character before the mark. */
static void
out_cut(struct out *o)
{
	if (!o->cut)
		return;
	while (o->n > 0 && ((unsigned char)o->buf[o->n - 1] & 0xc0) == 0x80)
		o->n--;
	if (o->n > 0 && (unsigned char)o->buf[o->n - 1] >= 0xc0)
		o->n--;
	memcpy(o->buf + o->n, CUT_MARK, strlen(CUT_MARK) + 1);
}

/* Each word is masked on its own (the mask's state, such as "the next
 * word is a secret", carried over), then quoted: masking sees the words
 * as given, and the quotes cannot hide a secret from it. */
void
cmdline_masked(char *const *argv, char *buf, size_t len)
{
	char word[CMDLINE_MAX], ismask[CMDLINE_MAX];
	struct mask m = { word, ismask, sizeof(word), 0, 0, 0, NULL };
	struct out o = { buf, len, 0, 0 };
	int i;

	buf[0] = '\0';
	for (i = 0; argv[i] != NULL && !o.cut; i++) {
		m.n = 0;
		word[0] = '\0';
		if (i > 0)
			out_put(&o, " ", 1);
		if (m.next) {
			/* The value of --token VALUE, whole. */
			m.next = 0;
			put_mask(&m);
		} else
			mask_word(&m, argv[i]);
		quote_word(&o, word, ismask, m.n);
		/* A word longer than the masking buffer was cut there. */
		o.cut |= m.n + 1 == sizeof(word);
	}
	out_cut(&o);
}
