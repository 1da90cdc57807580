/* rl_text.c: stored bytes made safe to show: UTF-8, escapes, decimal
 * numbers. Anyone who can write the database writes these bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

size_t
rl_utf8_len(const unsigned char *p)
{
	size_t n, i;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* How many bytes at P rl_escape writes escaped (\xNN each): a control
 * character's (C0, DEL, or C1, which UTF-8 spells 0xc2 0x80-0x9f) or
 * one byte that starts no valid UTF-8 sequence; 0 for a character shown
 * as it is, whose length is then *N. */
static size_t
escaped(const unsigned char *p, size_t *n)
{
	*n = rl_utf8_len(p);
	if (*n == 0 || (*n == 1 && (*p < 0x20 || *p == 0x7f)))
		return 1;
	if (*n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 2;
	return 0;
}

char *
rl_escape(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char *o = buf, *end = buf + len;
	size_t bad, n, i;

	/* Room for one step (a C1 character escaped: 8 bytes), "..." and
	 * the NUL. */
	if (len < 16) {
		if (len > 0)
			buf[0] = '\0';
		return buf;
	}
	while (*p != '\0' && o + 8 + 4 <= end) {
		if ((bad = escaped(p, &n)) > 0) {
			for (i = 0; i < bad; i++)
				o += snprintf(o, (size_t)(end - o), "\\x%02x",
				    p[i]);
			p += bad;
		} else {
			memcpy(o, p, n);
			o += n;
			p += n;
		}
	}
	if (*p != '\0') {
		memcpy(o, "...", 3);
		o += 3;
	}
	*o = '\0';
	return buf;
}

int
rl_decimal(const char *s, int64_t *v)
{
	long long x;
	const char *p;
	char *end;

	if (s == NULL || *s == '\0')
		return -1;
	for (p = s; *p != '\0'; p++)
		if (*p < '0' || *p > '9')
			return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*v = x;
	return 0;
}
