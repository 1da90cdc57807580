/* text.c: what redlock writes: its messages and -v events with their
 * stamps, escapes, JSON values, times, the held-by lines, shell words
 * and terminal columns. */
#include <sys/ioctl.h>
#include <sys/time.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

const char *msg_where;

void
msg(const char *fmt, ...)
{
	va_list ap;

	char head[4200];

	snprintf(head, sizeof(head), "redlock: %s%s", msg_where ? msg_where :
	    "", msg_where ? ": " : "");
	va_start(ap, fmt);
	vline(head, fmt, ap);
	va_end(ap);
}

void
vline(const char *head, const char *fmt, va_list ap)
{
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s", head), m;
	ssize_t w;
	size_t len, off = 0;

	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		n = 0;
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	len = (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	/* One write: lines of processes sharing a log (a pipe keeps writes
	 * of up to PIPE_BUF whole) do not interleave. */
	fflush(stderr);
	while (off < len && ((w = write(STDERR_FILENO, buf + off,
	    len - off)) > 0 || (w < 0 && errno == EINTR)))
		off += w > 0 ? (size_t)w : 0;
}

const char *
esc(const char *s)
{
	static char bufs[4][1024];
	static unsigned next;	/* wraps: 2^32 is a multiple of 4 */

	if (s == NULL)
		return "-";
	next = (next + 1) % 4;
	return rl_escape(s, bufs[next], sizeof(bufs[0]));
}

void
json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (s == NULL) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*p != '\0') {
		if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else if ((n = rl_utf8_len(p)) == 0) {
			fputs("\\ufffd", f);
			p++;
		} else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			fprintf(f, "\\u%04x", p[1]);	/* C1 control */
			p += 2;
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('"', f);
}

/* Whether S is UTF-8 throughout. */
static int
utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	for (; *p != '\0'; p += n)
		if ((n = rl_utf8_len(p)) == 0)
			return 0;
	return 1;
}

/* S's bytes in base64 (RFC 4648, padded) on F. */
static void
base64_out(FILE *f, const char *s)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i;
	unsigned long v;

	for (i = 0; i < n; i += 3) {
		v = (unsigned long)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned long)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		fputc(abc[v >> 18 & 63], f);
		fputc(abc[v >> 12 & 63], f);
		fputc(i + 1 < n ? abc[v >> 6 & 63] : '=', f);
		fputc(i + 2 < n ? abc[v & 63] : '=', f);
	}
}

void
json_bytes(FILE *f, const char *key, const char *s)
{
	fprintf(f, "\"%s\":", key);
	json_str(f, s);
	if (s == NULL || utf8_valid(s))
		return;
	fprintf(f, ",\"%s_b64\":\"", key);
	base64_out(f, s);
	fputc('"', f);
}

void
json_int(FILE *f, const char *key, int64_t v, int known)
{
	fprintf(f, ",\"%s\":", key);
	if (known)
		fprintf(f, "%lld", (long long)v);
	else
		fputs("null", f);
}

void
json_decimal(FILE *f, const char *key, const char *s)
{
	int64_t v = 0;
	int ok = rl_decimal(s, &v) == 0;

	json_int(f, key, v, ok);
}

void
json_who(FILE *f, const char *owner, const char *host, long pid,
    const char *user, const char *cmd)
{
	json_bytes(f, "owner", owner);
	json_meta(f, host, pid, user, cmd);
}

void
json_meta(FILE *f, const char *host, long pid, const char *user,
    const char *cmd)
{
	fputs(",\"host\":", f);
	json_str(f, host);
	json_int(f, "pid", pid, pid > 0);
	fputs(",\"user\":", f);
	json_str(f, user);
	fputs(",\"cmd\":", f);
	json_str(f, cmd);
}

void
format_time(int64_t epoch_ms, char *buf, size_t len)
{
	time_t t = (time_t)(epoch_ms / 1000);
	struct tm tm;
	char s[80];

	/* Not strftime, which reads the time zone's file first. A time
	 * beyond gmtime's years (a stream entry's id can be made up): the
	 * epoch's fields, never uninitialised ones. */
	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	snprintf(s, sizeof(s), "%04d-%02d-%02dT%02d:%02d:%02d",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec);
	snprintf(buf, len, "%s.%03dZ", s, (int)(epoch_ms % 1000));
}

int
flush_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		msg("cannot write to standard output: %s", strerror(errno));
		return EXIT_SOFTWARE;
	}
	return 0;
}

size_t
columns(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* The columns of the character at P, its bytes in *N: one, or two from
 * U+1100 on (taken as CJK, so that a cut never wraps). */
static size_t
char_columns(const unsigned char *p, size_t *n)
{
	if ((*n = rl_utf8_len(p)) == 0)
		*n = 1;
	return *n >= 3 && (*n > 3 || p[0] > 0xe1 || (p[0] == 0xe1 &&
	    p[1] >= 0x84)) ? 2 : 1;
}

size_t
fit_columns(const char *s, size_t w)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, n, cw;

	while (*p != '\0') {
		cw = char_columns(p, &n);
		if (used + cw > w)
			break;
		used += cw;
		p += n;
	}
	return (size_t)(p - (const unsigned char *)s);
}

size_t
text_columns(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, n;

	for (; *p != '\0'; p += n)
		used += char_columns(p, &n);
	return used;
}

void
say_finished(int64_t until_ms, char *buf, size_t len)
{
	char when[40];

	format_time(until_ms, when, sizeof(when));
	snprintf(buf, len, "finished, held until %s (--min-hold)", when);
}

/* "redlock: 2026-11-27T15:00:00.123456Z " into HEAD, now. */
static void
stamp(char *head, size_t len)
{
	struct timeval tv;
	char when[40];

	/* Microseconds: handoffs between processes take less than one. */
	gettimeofday(&tv, NULL);
	format_time((int64_t)tv.tv_sec * 1000, when, sizeof(when));
	when[strlen(when) - 5] = '\0';		/* drop ".000Z" */
	snprintf(head, len, "redlock: %s.%06ldZ ", when, (long)tv.tv_usec);
}

void
event(const struct lockopts *o, const char *fmt, ...)
{
	char head[64];
	va_list ap;

	if (o != NULL && !o->verbose)
		return;
	stamp(head, sizeof(head));
	va_start(ap, fmt);
	vline(head, fmt, ap);
	va_end(ap);
}

void
json_running(int r)
{
	printf(",\"running\":%s", r > 0 ? "true" : r == 0 ? "false" : "null");
}

void
json_finished(int64_t until_ms)
{
	printf(",\"finished\":%s", until_ms > 0 ? "true" : "false");
	json_int(stdout, "held_until_ms", until_ms, until_ms > 0);
}

const char *
finished_text(int64_t until_ms, char *buf, size_t len)
{
	buf[0] = '\0';
	if (until_ms > 0 && len > 2) {
		buf[0] = ',';
		buf[1] = ' ';
		say_finished(until_ms, buf + 2, len - 2);
	}
	return buf;
}

const char *
held_by(const struct holder *h, char *buf, size_t len)
{
	char held[48] = "";

	if (h->host == NULL) {
		snprintf(buf, len, "held by owner %s", esc(h->owner));
		return buf;
	}
	if (h->held != NULL)
		snprintf(held, sizeof(held), " for %s", h->held);
	if (h->upto_pid)
		snprintf(buf, len, "held by %s pid %ld%s", esc(h->host),
		    h->pid, h->not_running ? " (not running)" : "");
	else
		snprintf(buf, len, "held by %s pid %ld%s (%s)%s", esc(h->host),
		    h->pid, h->not_running ? " (not running)" : "",
		    esc(h->cmd), held);
	return buf;
}

int
shell_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("@%+=:,./_-", c) != NULL;
}

void
shell_word(FILE *f, const char *s)
{
	const unsigned char *p;
	int quote = s[0] == '\0', ctl = 0;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		quote |= !shell_plain(*p);
		ctl |= *p < 0x20 || *p == 0x7f;
	}
	if (!quote) {
		fputs(s, f);
		return;
	}
	/* $'...' (bash, zsh, ksh, POSIX 2024) keeps the line one line. */
	fputs(ctl ? "$'" : "'", f);
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (ctl && (*p < 0x20 || *p == 0x7f))
			fprintf(f, "\\x%02x", *p);
		else if (ctl && (*p == '\\' || *p == '\''))
			fprintf(f, "\\%c", *p);
		else if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	fputc('\'', f);
}

void
force_line(FILE *f, const struct globals *g, const char *name)
{
	static const char *const opt[] = { "--cacert", "--cacertdir",
	    "--cert", "--key", "--sni", "--sentinel-user" };
	const char *val[] = { g->tls.cacert, g->tls.cacertdir, g->tls.cert,
	    g->tls.key, g->tls.sni, g->sentinel_user };
	size_t i;

	fputs("redlock", f);
	/* The servers as -u named them, without passwords; from
	 * $REDLOCK_URL or the default, the same next time. */
	if (g->url_given) {
		fputs(" -u ", f);
		shell_word(f, g->url_text);
	}
	for (i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (val[i] != NULL) {
			fprintf(f, " %s ", opt[i]);
			shell_word(f, val[i]);
		}
	if (g->tls.insecure)
		fputs(" --insecure", f);
	fputs(name[0] == '-' ? " unlock --force -- " : " unlock --force ", f);
	shell_word(f, name);
	fputc('\n', f);
}
