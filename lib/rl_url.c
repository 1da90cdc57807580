/* rl_url.c: redis://, rediss://, redis+sentinel:// and unix:// URLs, and
 * printing them without secrets. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

static int
fail(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	return -1;
}

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int
rl_unescape(char *s)
{
	char *o = s;
	int hi, lo;

	for (; *s != '\0'; s++) {
		if (*s != '%') {
			*o++ = *s;
			continue;
		}
		hi = hexval((unsigned char)s[1]);
		lo = hi < 0 ? -1 : hexval((unsigned char)s[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			return -1;
		*o++ = (char)(hi * 16 + lo);
		s += 2;
	}
	*o = '\0';
	return 0;
}

/* Copy N bytes of S, decoding %XX; NULL on a bad escape or a NUL byte. */
static char *
decode(const char *s, size_t n)
{
	char *out = strndup(s, n);

	if (out != NULL && rl_unescape(out) < 0) {
		free(out);
		return NULL;
	}
	return out;
}

static int
number(const char *s, size_t n, long min, long max, long *out)
{
	char buf[32], *end;
	long v;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int
parse_unix(const char *s, struct rl_url *u, char *err, size_t errlen)
{
	const char *q = strchr(s, '?');
	size_t n = q ? (size_t)(q - s) : strlen(s);
	long db;

	if (n == 0 || s[0] != '/')
		return fail(err, errlen,
		    "a unix socket URL needs an absolute path: unix:///path/to.sock");
	if (q != NULL) {
		if (strncmp(q + 1, "db=", 3) != 0 ||
		    number(q + 4, strlen(q + 4), 0, INT_MAX, &db) < 0)
			return fail(err, errlen,
			    "the only query a unix URL takes is ?db=N");
		u->db = (int)db;
	}
	if ((u->path = decode(s, n)) == NULL)
		return fail(err, errlen, "bad %-escape in the socket path");
	return 0;
}

/* The credentials before AT, from S. */
static int
parse_creds(const char *s, const char *at, struct rl_url *u, char *err,
    size_t errlen)
{
	const char *colon = memchr(s, ':', (size_t)(at - s));

	if (colon != NULL) {
		if (colon > s &&
		    (u->user = decode(s, (size_t)(colon - s))) == NULL)
			return fail(err, errlen, "bad %-escape in the user");
		if ((u->password = decode(colon + 1,
		    (size_t)(at - colon - 1))) == NULL)
			return fail(err, errlen, "bad %-escape in the password");
	} else if (at > s && (u->user = decode(s, (size_t)(at - s))) == NULL)
		return fail(err, errlen, "bad %-escape in the user");
	return 0;
}

/* HOST[:PORT] from P to E (IPv6 in brackets; empty: 127.0.0.1). */
static int
parse_hostport(const char *p, const char *e, char **host, int *port,
    char *err, size_t errlen)
{
	const char *hoste, *portp = NULL;
	long v;

	if (*p == '[') {
		hoste = memchr(p, ']', (size_t)(e - p));
		if (hoste == NULL)
			return fail(err, errlen, "unclosed [ in the host");
		p++;
		if (hoste[1] == ':')
			portp = hoste + 2;
		else if (hoste + 1 != e)
			return fail(err, errlen, "junk after ] in the host");
	} else {
		hoste = memchr(p, ':', (size_t)(e - p));
		if (hoste != NULL)
			portp = hoste + 1;
		else
			hoste = e;
	}
	if (hoste == p)
		*host = strdup("127.0.0.1");
	else if ((*host = decode(p, (size_t)(hoste - p))) == NULL)
		return fail(err, errlen, "bad %-escape in the host");
	if (*host == NULL)
		return fail(err, errlen, "out of memory");
	if (portp != NULL) {
		if (number(portp, (size_t)(e - portp), 1, 65535, &v) < 0)
			return fail(err, errlen,
			    "the port must be a number from 1 to 65535");
		*port = (int)v;
	}
	return 0;
}

/* Where the host part of S begins, after credentials that end before
 * the first '/' (the last '@' there ends them); SLASH: that '/'. */
static const char *
after_creds(const char *s, struct rl_url *u, const char **slash, char *err,
    size_t errlen)
{
	const char *at = NULL;

	if ((*slash = strchr(s, '/')) == NULL)
		*slash = s + strlen(s);
	for (const char *p = s; p < *slash; p++)
		if (*p == '@')
			at = p;
	if (at == NULL)
		return s;
	return parse_creds(s, at, u, err, errlen) < 0 ? NULL : at + 1;
}

static int
parse_tcp(const char *s, struct rl_url *u, char *err, size_t errlen)
{
	const char *hostp, *slash;
	long v;

	if ((hostp = after_creds(s, u, &slash, err, errlen)) == NULL)
		return -1;
	u->port = 6379;
	if (parse_hostport(hostp, slash, &u->host, &u->port, err, errlen) < 0)
		return -1;
	if (*slash == '/' && slash[1] != '\0') {
		if (number(slash + 1, strlen(slash + 1), 0, INT_MAX, &v) < 0)
			return fail(err, errlen,
			    "the path of a redis URL is a database number: redis://host:port/2");
		u->db = (int)v;
	}
	return 0;
}

/* The sentinels, comma-separated from P to E. */
static int
parse_sentinels(const char *p, const char *e, struct rl_url *u, char *err,
    size_t errlen)
{
	const char *q, *comma;
	size_t n = 1;

	for (q = p; q < e; q++)
		n += *q == ',';
	if ((u->sentinels = calloc(n, sizeof(*u->sentinels))) == NULL)
		return fail(err, errlen, "out of memory");
	for (q = p; u->nsentinels < n; q = comma + 1) {
		struct rl_hostport *h = &u->sentinels[u->nsentinels];

		if ((comma = memchr(q, ',', (size_t)(e - q))) == NULL)
			comma = e;
		if (comma == q && n > 1)
			return fail(err, errlen, "empty sentinel address "
			    "between commas: redis+sentinel://h1:26379,h2:26379/MASTER");
		h->port = RL_SENTINEL_PORT;
		u->nsentinels++;
		if (parse_hostport(q, comma, &h->host, &h->port, err,
		    errlen) < 0)
			return -1;
	}
	return 0;
}

/* redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[/db] */
static int
parse_sentinel(const char *s, struct rl_url *u, char *err, size_t errlen)
{
	const char *hostp, *slash, *name, *namee;
	long v;

	if ((hostp = after_creds(s, u, &slash, err, errlen)) == NULL ||
	    parse_sentinels(hostp, slash, u, err, errlen) < 0)
		return -1;
	name = *slash == '/' ? slash + 1 : slash;
	if ((namee = strchr(name, '/')) == NULL)
		namee = name + strlen(name);
	if (namee == name)
		return fail(err, errlen, "a redis+sentinel URL names the "
		    "master after the sentinels: redis+sentinel://host:26379/mymaster");
	if ((u->master = decode(name, (size_t)(namee - name))) == NULL)
		return fail(err, errlen, "bad %-escape in the master name");
	if (*namee == '/' && namee[1] != '\0') {
		if (number(namee + 1, strlen(namee + 1), 0, INT_MAX, &v) < 0)
			return fail(err, errlen, "after the master's name comes "
			    "a database number: redis+sentinel://host/mymaster/2");
		u->db = (int)v;
	}
	return 0;
}

int
rl_url_parse(const char *s, struct rl_url *u, char *err, size_t errlen)
{
	int r;

	memset(u, 0, sizeof(*u));
	if (strncmp(s, "redis://", 8) == 0)
		r = parse_tcp(s + 8, u, err, errlen);
	else if (strncmp(s, "unix://", 7) == 0)
		r = parse_unix(s + 7, u, err, errlen);
	else if (strncmp(s, "rediss://", 9) == 0) {
		u->tls = 1;
		r = parse_tcp(s + 9, u, err, errlen);
	}
	else if (strncmp(s, "redis+sentinel://", 17) == 0)
		r = parse_sentinel(s + 17, u, err, errlen);
	else if (strncmp(s, "rediss+sentinel://", 18) == 0)
		return fail(err, errlen, "TLS through Sentinel is not "
		    "supported: give the master's rediss:// URL, or use "
		    "redis+sentinel:// on a trusted network");
	else
		return fail(err, errlen, "a URL starts with redis://, "
		    "rediss://, redis+sentinel:// or unix://");
	if (r < 0)
		rl_url_clear(u);
	return r;
}

/* Append to BUF at *AT what FMT says; -1 once it no longer fits. */
static int
put(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *at)
		return -1;
	*at += (size_t)n;
	return 0;
}

static int
put_hostport(char *buf, size_t len, size_t *at, const char *host, int port)
{
	const char *lb = strchr(host, ':') ? "[" : "";

	return put(buf, len, at, "%s%s%s:%d", lb, host, *lb ? "]" : "", port);
}

/* The master's name, %-escaping what would end it or look odd. */
static int
put_name(char *buf, size_t len, size_t *at, const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	for (; *p != '\0'; p++)
		if (put(buf, len, at, strchr("/,@%?#", *p) != NULL ||
		    *p <= ' ' || *p >= 0x7f ? "%%%02X" : "%c", *p) < 0)
			return -1;
	return 0;
}

static int
format_sentinel(const struct rl_url *u, char *buf, size_t len)
{
	size_t at = 0, i;

	if (put(buf, len, &at, "redis+sentinel://%s%s", u->user ? u->user : "",
	    u->user ? "@" : "") < 0)
		return -1;
	for (i = 0; i < u->nsentinels; i++)
		if ((i > 0 && put(buf, len, &at, ",") < 0) ||
		    put_hostport(buf, len, &at, u->sentinels[i].host,
		    u->sentinels[i].port) < 0)
			return -1;
	if (put(buf, len, &at, "/") < 0 || put_name(buf, len, &at,
	    u->master) < 0)
		return -1;
	return u->db != 0 ? put(buf, len, &at, "/%d", u->db) : 0;
}

int
rl_url_format(const struct rl_url *u, char *buf, size_t len)
{
	size_t at = 0;

	if (len > 0)
		buf[0] = '\0';
	if (u->master != NULL)
		return format_sentinel(u, buf, len);
	if (u->path != NULL)
		return u->db != 0 ?
		    put(buf, len, &at, "unix://%s?db=%d", u->path, u->db) :
		    put(buf, len, &at, "unix://%s", u->path);
	if (put(buf, len, &at, "%s://%s%s", u->tls ? "rediss" : "redis",
	    u->user ? u->user : "", u->user ? "@" : "") < 0 ||
	    put_hostport(buf, len, &at, u->host, u->port) < 0)
		return -1;
	return u->db != 0 ? put(buf, len, &at, "/%d", u->db) : 0;
}

static int
copy(char **dst, const char *src)
{
	if (src == NULL)
		return 0;
	return (*dst = strdup(src)) == NULL ? -1 : 0;
}

static int
copy_sentinels(struct rl_url *d, const struct rl_url *u)
{
	size_t i;

	if (u->nsentinels == 0)
		return 0;
	if ((d->sentinels = calloc(u->nsentinels, sizeof(*d->sentinels))) ==
	    NULL)
		return -1;
	for (; d->nsentinels < u->nsentinels; d->nsentinels++) {
		i = d->nsentinels;
		d->sentinels[i].port = u->sentinels[i].port;
		if (copy(&d->sentinels[i].host, u->sentinels[i].host) < 0)
			return -1;
	}
	return 0;
}

int
rl_url_copy(struct rl_url *d, const struct rl_url *u)
{
	memset(d, 0, sizeof(*d));
	d->port = u->port;
	d->db = u->db;
	d->tls = u->tls;
	if (copy(&d->host, u->host) < 0 || copy(&d->path, u->path) < 0 ||
	    copy(&d->user, u->user) < 0 ||
	    copy(&d->password, u->password) < 0 ||
	    copy(&d->master, u->master) < 0 || copy_sentinels(d, u) < 0 ||
	    copy(&d->sentinel_user, u->sentinel_user) < 0 ||
	    copy(&d->sentinel_password, u->sentinel_password) < 0) {
		rl_url_clear(d);
		return -1;
	}
	return 0;
}

static void
free_secret(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
}

void
rl_url_clear(struct rl_url *u)
{
	size_t i;

	free(u->host);
	free(u->path);
	free(u->user);
	free_secret(u->password);
	free(u->master);
	for (i = 0; i < u->nsentinels; i++)
		free(u->sentinels[i].host);
	free(u->sentinels);
	free(u->sentinel_user);
	free_secret(u->sentinel_password);
	memset(u, 0, sizeof(*u));
}
