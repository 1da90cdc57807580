/* rl_url.c: redis://, rediss:// and unix:// URLs, and printing them without secrets. */
#include <errno.h>
#include <limits.h>
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

static int
parse_tcp(const char *s, struct rl_url *u, char *err, size_t errlen)
{
	const char *at, *hostp, *hoste, *portp = NULL, *slash, *colon, *end;
	long v;

	end = s + strlen(s);
	slash = strchr(s, '/');
	if (slash == NULL)
		slash = end;
	/* The last '@' before the path ends the credentials. */
	at = NULL;
	for (const char *p = s; p < slash; p++)
		if (*p == '@')
			at = p;
	if (at != NULL) {
		colon = memchr(s, ':', (size_t)(at - s));
		if (colon != NULL) {
			if (colon > s &&
			    (u->user = decode(s, (size_t)(colon - s))) == NULL)
				return fail(err, errlen, "bad %-escape in the user");
			if ((u->password = decode(colon + 1,
			    (size_t)(at - colon - 1))) == NULL)
				return fail(err, errlen,
				    "bad %-escape in the password");
		} else if (at > s &&
		    (u->user = decode(s, (size_t)(at - s))) == NULL)
			return fail(err, errlen, "bad %-escape in the user");
		hostp = at + 1;
	} else
		hostp = s;
	if (*hostp == '[') {
		hoste = memchr(hostp, ']', (size_t)(slash - hostp));
		if (hoste == NULL)
			return fail(err, errlen, "unclosed [ in the host");
		hostp++;
		if (hoste[1] == ':')
			portp = hoste + 2;
		else if (hoste + 1 != slash)
			return fail(err, errlen, "junk after ] in the host");
	} else {
		hoste = memchr(hostp, ':', (size_t)(slash - hostp));
		if (hoste != NULL)
			portp = hoste + 1;
		else
			hoste = slash;
	}
	if (hoste == hostp)
		u->host = strdup("127.0.0.1");
	else if ((u->host = decode(hostp, (size_t)(hoste - hostp))) == NULL)
		return fail(err, errlen, "bad %-escape in the host");
	if (u->host == NULL)
		return fail(err, errlen, "out of memory");
	u->port = 6379;
	if (portp != NULL) {
		if (number(portp, (size_t)(slash - portp), 1, 65535, &v) < 0)
			return fail(err, errlen,
			    "the port must be a number from 1 to 65535");
		u->port = (int)v;
	}
	if (*slash == '/' && slash[1] != '\0') {
		if (number(slash + 1, strlen(slash + 1), 0, INT_MAX, &v) < 0)
			return fail(err, errlen,
			    "the path of a redis URL is a database number: redis://host:port/2");
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
		return fail(err, errlen,
		    "redis+sentinel:// is not supported yet; give the master's redis:// URL");
	else
		return fail(err, errlen,
		    "a URL starts with redis://, rediss:// or unix://");
	if (r < 0)
		rl_url_clear(u);
	return r;
}

int
rl_url_format(const struct rl_url *u, char *buf, size_t len)
{
	int n;
	const char *user = u->user ? u->user : "";
	const char *at = u->user ? "@" : "";
	const char *scheme = u->tls ? "rediss" : "redis";

	if (u->path != NULL) {
		if (u->db != 0)
			n = snprintf(buf, len, "unix://%s?db=%d", u->path, u->db);
		else
			n = snprintf(buf, len, "unix://%s", u->path);
	} else {
		const char *lb = strchr(u->host, ':') ? "[" : "";
		const char *rb = *lb ? "]" : "";

		if (u->db != 0)
			n = snprintf(buf, len, "%s://%s%s%s%s%s:%d/%d", scheme,
			    user, at, lb, u->host, rb, u->port, u->db);
		else
			n = snprintf(buf, len, "%s://%s%s%s%s%s:%d", scheme,
			    user, at, lb, u->host, rb, u->port);
	}
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

static int
copy(char **dst, const char *src)
{
	if (src == NULL)
		return 0;
	return (*dst = strdup(src)) == NULL ? -1 : 0;
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
	    copy(&d->password, u->password) < 0) {
		rl_url_clear(d);
		return -1;
	}
	return 0;
}

void
rl_url_clear(struct rl_url *u)
{
	free(u->host);
	free(u->path);
	free(u->user);
	if (u->password != NULL)
		explicit_bzero(u->password, strlen(u->password));
	free(u->password);
	memset(u, 0, sizeof(*u));
}
