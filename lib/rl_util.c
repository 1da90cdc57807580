/* rl_util.c: durations, clocks, owner tokens, the user's name and
 * Redisson's key names. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

#define RL_STR(x) #x
#define RL_XSTR(x) RL_STR(x)

const char *
rl_hiredis_version(void)
{
	return RL_XSTR(HIREDIS_MAJOR) "." RL_XSTR(HIREDIS_MINOR) "."
	    RL_XSTR(HIREDIS_PATCH);
}

/* The units of a duration, largest first, and their lengths in ms. */
static const struct {
	const char *unit;
	double ms;
} duration_units[] = {
	{ "d", 24 * 3600 * 1000 },
	{ "h", 3600 * 1000 },
	{ "m", 60 * 1000 },
	{ "s", 1000 },
	{ "ms", 1 },
};
#define NUNITS (sizeof(duration_units) / sizeof(duration_units[0]))

/* The digits at P, with a fraction or not: their end, or NULL when
 * there are none. */
static const char *
duration_number(const char *p)
{
	size_t digits = 0;

	while (isdigit((unsigned char)*p)) {
		p++;
		digits++;
	}
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	return digits > 0 ? p : NULL;
}

/* The unit at P, after FROM (the index past the last one taken: units
 * come largest first, each once): its index, or -1. */
static int
duration_unit(const char *p, size_t from, const char **end)
{
	size_t i, n;

	for (i = NUNITS; i-- > from;) {
		n = strlen(duration_units[i].unit);
		if (strncmp(p, duration_units[i].unit, n) == 0 &&
		    !isalpha((unsigned char)p[n])) {
			*end = p + n;
			return (int)i;
		}
	}
	return -1;
}

/* NUMBER (ending at END) times MULT, rounded up to a millisecond: 0 into
 * *MS, or RL_DURATION_TOO_LONG. */
static int
duration_part(const char *number, const char *end, double mult,
    int64_t *ms)
{
	char *e;
	double v;

	errno = 0;
	v = strtod(number, &e);
	if (e != end)
		return -1;
	/* Only digits and a point got here: out of range is too large, or
	 * so small that it rounds up to 1ms like any fraction of one. */
	if (!isfinite(v))
		return RL_DURATION_TOO_LONG;
	v = errno == ERANGE ? 1 : ceil(v * mult);
	if (v > (double)RL_DURATION_MAX)
		return RL_DURATION_TOO_LONG;
	*ms = (int64_t)v;
	return 0;
}

/*
 * A bare number of seconds, or parts NUMBER UNIT, units largest first
 * and each once (d, h, m, s, ms), a fraction in the last part only:
 * "1h30m", "1d12h", "1.5h", "2m0.5s". Read to the end before anything
 * is added up, so that a bad word is bad however large its numbers.
 */
int
rl_duration_parse(const char *s, int64_t *ms)
{
	const char *p, *num[NUNITS], *end[NUNITS];
	int unit[NUNITS], r;
	size_t n = 0, from = 0, i;
	int64_t sum = 0, part;

	if (s == NULL || (p = duration_number(s)) == NULL)
		return -1;
	if (*p == '\0')
		return duration_part(s, p, 1000, ms);
	for (p = s; *p != '\0'; n++) {
		/* After a unit, digits: "1d.5h" is a slip for "1.5d". */
		if (n == NUNITS || (n > 0 && !isdigit((unsigned char)*p)))
			return -1;
		num[n] = p;
		if ((end[n] = duration_number(p)) == NULL ||
		    (unit[n] = duration_unit(end[n], from, &p)) < 0)
			return -1;
		from = (size_t)unit[n] + 1;
		/* A fraction only in the last part. */
		if (*p != '\0' && memchr(num[n], '.', (size_t)(end[n] -
		    num[n])) != NULL)
			return -1;
	}
	for (i = 0; i < n; i++) {
		if ((r = duration_part(num[i], end[i],
		    duration_units[unit[i]].ms, &part)) != 0)
			return r;
		if ((sum += part) > RL_DURATION_MAX)
			return RL_DURATION_TOO_LONG;
	}
	*ms = sum;
	return 0;
}

void
rl_duration_format(int64_t ms, char *buf, size_t len)
{
	if (ms < 0)
		snprintf(buf, len, "-");
	else if (ms < 1000)
		snprintf(buf, len, "%lldms", (long long)ms);
	else if (ms < 60 * 1000)
		snprintf(buf, len, "%lld.%llds", (long long)(ms / 1000),
		    (long long)(ms % 1000 / 100));
	else if (ms < 3600 * 1000)
		snprintf(buf, len, "%lldm%02llds", (long long)(ms / 60000),
		    (long long)(ms / 1000 % 60));
	else if (ms < 24 * 3600 * 1000)
		snprintf(buf, len, "%lldh%02lldm", (long long)(ms / 3600000),
		    (long long)(ms / 60000 % 60));
	else
		snprintf(buf, len, "%lldd%02lldh", (long long)(ms / 86400000),
		    (long long)(ms / 3600000 % 24));
}

int64_t
rl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
rl_owner_new(char *buf, size_t len)
{
	unsigned char r[16];
	size_t got = 0;
	ssize_t n;
	int w;

	while (got < sizeof(r)) {
		n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);	/* version 4 */
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);	/* variant 1 */
	w = snprintf(buf, len,
	    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x:%ld",
	    r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
	    r[10], r[11], r[12], r[13], r[14], r[15], (long)getpid());
	if (w < 0 || (size_t)w >= len)
		return -1;
	return 0;
}

/* The next line of TEXT (LEN bytes) from *AT, without its newline, into
 * *LINE and *N; *AT moves past it. 0 at the end. */
static int
next_line(const char *text, size_t len, size_t *at, const char **line,
    size_t *n)
{
	const char *nl;

	if (*at >= len)
		return 0;
	*line = text + *at;
	nl = memchr(*line, '\n', len - *at);
	*n = nl != NULL ? (size_t)(nl - *line) : len - *at;
	*at += *n + 1;
	return 1;
}

/* Whether the text from P to E is a number of 1 to 10 digits, into *U. */
static int
digits(const char *p, const char *e, unsigned long long *u)
{
	if (e - p < 1 || e - p > 10)
		return 0;
	for (*u = 0; p < e; p++) {
		if (!isdigit((unsigned char)*p))
			return 0;
		*u = *u * 10 + (unsigned long long)(*p - '0');
	}
	return 1;
}

int
rl_passwd_name(const char *text, size_t len, unsigned long uid, char *buf,
    size_t buflen)
{
	const char *l, *colon[6];
	unsigned long long u, gid;
	size_t at = 0, n, i, k;

	while (next_line(text, len, &at, &l, &n)) {
		/* As glibc's files backend reads it: blanks before an entry
		 * skipped, empty and comment lines too; compat mode's "+"
		 * and "-" entries never match a uid. */
		for (; n > 0 && isspace((unsigned char)*l); l++, n--)
			;
		if (n == 0 || l[0] == '#' || l[0] == '+' || l[0] == '-')
			continue;
		/* name:password:uid:gid:gecos:home:shell. An entry read
		 * otherwise than glibc would (fields missing, no name, a uid
		 * or gid that is not 1 to 10 digits): NSS is asked. */
		for (i = 0, k = 0; i < n && k < 6; i++)
			if (l[i] == ':')
				colon[k++] = l + i;
		if (k < 6 || colon[0] == l ||
		    !digits(colon[1] + 1, colon[2], &u) ||
		    !digits(colon[2] + 1, colon[3], &gid))
			return -1;
		if (u != uid)
			continue;
		/* The first entry is getpwuid's answer, whatever follows. */
		if ((size_t)(colon[0] - l) >= buflen)
			return -1;
		memcpy(buf, l, (size_t)(colon[0] - l));
		buf[colon[0] - l] = '\0';
		return 0;
	}
	return -1;
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

int
rl_nss_files_first(const char *text, size_t len)
{
	const char *l, *hash;
	size_t at = 0, n;

	/* Every passwd line must start with files (glibc reads one; which
	 * one is not this function's to guess). */
	while (next_line(text, len, &at, &l, &n)) {
		if ((hash = memchr(l, '#', n)) != NULL)
			n = (size_t)(hash - l);
		for (; n > 0 && is_blank(*l); l++, n--)
			;
		if (n < 6 || strncasecmp(l, "passwd", 6) != 0)
			continue;
		for (l += 6, n -= 6; n > 0 && is_blank(*l); l++, n--)
			;
		if (n == 0 || *l != ':')
			continue;
		for (l++, n--; n > 0 && is_blank(*l); l++, n--)
			;
		if (n < 5 || memcmp(l, "files", 5) != 0 ||
		    (n > 5 && !is_blank(l[5])))
			return 0;
		/* Files first, and its answer final: no action may send a
		 * found entry on to the next source ([SUCCESS=continue]). */
		for (l += 5, n -= 5; n > 0 && is_blank(*l); l++, n--)
			;
		if (n > 0 && *l == '[')
			return 0;
	}
	return 1;
}

char *
rl_key(const char *prefix, const char *name)
{
	size_t n = strlen(prefix) + strlen(name) + 4;
	char *k = malloc(n);

	if (k == NULL)
		return NULL;
	if (strchr(name, '{') != NULL)
		snprintf(k, n, "%s:%s", prefix, name);
	else
		snprintf(k, n, "%s:{%s}", prefix, name);
	return k;
}

char *
rl_key_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name) + (suffix ? strlen(suffix) : 0) + 4;
	char *k = malloc(n);
	int brace = strchr(name, '{') != NULL;

	if (k == NULL)
		return NULL;
	snprintf(k, n, "%s%s%s%s%s", brace ? "" : "{", name, brace ? "" : "}",
	    suffix ? ":" : "", suffix ? suffix : "");
	return k;
}

/* A copy of the N bytes at S, or NULL (out of memory, or a NUL in it:
 * no name has one). */
static char *
name_dup(const char *s, size_t n, int *nomem)
{
	char *name;

	if (memchr(s, '\0', n) != NULL)
		return NULL;
	if ((name = malloc(n + 1)) == NULL) {
		*nomem = 1;
		return NULL;
	}
	memcpy(name, s, n);
	name[n] = '\0';
	return name;
}

int
rl_key_names(const char *prefix, const char *key, size_t keylen,
    char *names[2])
{
	size_t plen = strlen(prefix), n;
	const char *s;
	int count = 0, nomem = 0;

	if (keylen < plen + 2 || memcmp(key, prefix, plen) != 0 ||
	    key[plen] != ':')
		return 0;
	s = key + plen + 1;
	n = keylen - plen - 1;
	/* "PREFIX:{NAME}" for a NAME without a brace... */
	if (n >= 2 && s[0] == '{' && s[n - 1] == '}' &&
	    memchr(s + 1, '{', n - 2) == NULL &&
	    (names[count] = name_dup(s + 1, n - 2, &nomem)) != NULL)
		count++;
	/* ...and "PREFIX:NAME" for one with a brace: "{x}" is both. */
	if (!nomem && memchr(s, '{', n) != NULL &&
	    (names[count] = name_dup(s, n, &nomem)) != NULL)
		count++;
	if (nomem) {
		while (count > 0)
			free(names[--count]);
		return -1;
	}
	return count;
}
