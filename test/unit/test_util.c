/* test_util.c: durations, URLs, owner tokens, user names, key names,
 * quoting, stored bytes made safe to show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "redlock.h"
#include "rl_error.h"

static int64_t
dur(const char *s)
{
	int64_t ms = -12345;

	if (rl_duration_parse(s, &ms) < 0)
		return -1;
	return ms;
}

static void
test_duration_units(void **state)
{
	(void)state;
	assert_int_equal(dur("250ms"), 250);
	assert_int_equal(dur("30s"), 30000);
	assert_int_equal(dur("5m"), 300000);
	assert_int_equal(dur("2h"), 7200000);
	assert_int_equal(dur("10"), 10000);
	assert_int_equal(dur("0"), 0);
	assert_int_equal(dur("0ms"), 0);
}

static void
test_duration_fractions(void **state)
{
	(void)state;
	assert_int_equal(dur("1.5"), 1500);
	assert_int_equal(dur(".5"), 500);
	assert_int_equal(dur("2."), 2000);
	assert_int_equal(dur("0.25s"), 250);
	assert_int_equal(dur("1.5m"), 90000);
	/* Below a millisecond rounds up: a wait is never shortened to 0. */
	assert_int_equal(dur("0.0001"), 1);
	assert_int_equal(dur("0.5ms"), 1);
}

static void
test_duration_rejects(void **state)
{
	static const char *bad[] = {
		"", "s", "ms", ".", "-1", "+1", " 1", "1 ", "1x", "1S", "1sec",
		"1e3", "0x10", "inf", "nan", "1.2.3", "1..", "5s5",
		/* Compound forms: largest unit first, each once, every part
		 * a number and a unit, a fraction in the last part only. */
		"1m1h", "1h1h", "30s1m", "1ms1s", "1h30", "1hm", "h1", "1h-5m",
		"1h 30m", "1h+30m", "1.5h30m", "1d.5h", "1mss", "1dd", "1D",
		"1h30m.", "2d1", "1s1ms1", "-1h", "1m-1s", "1d2h3m4s5ms6",
		NULL
	};
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		int64_t ms = 7;

		assert_int_equal(rl_duration_parse(bad[i], &ms), -1);
		assert_int_equal(ms, 7);	/* untouched on error */
	}
	assert_int_equal(rl_duration_parse(NULL, NULL), -1);
}

static void
test_duration_compound(void **state)
{
	(void)state;
	assert_int_equal(dur("1h30m"), 5400000);
	assert_int_equal(dur("2d"), 172800000);
	assert_int_equal(dur("1d12h"), 129600000);
	assert_int_equal(dur("90s"), 90000);
	assert_int_equal(dur("1.5h"), 5400000);
	assert_int_equal(dur("1.5d"), 129600000);
	assert_int_equal(dur("1m30s"), 90000);
	assert_int_equal(dur("1s500ms"), 1500);
	assert_int_equal(dur("1d2h3m4s5ms"), 93784005);
	assert_int_equal(dur("2m0.5s"), 120500);
	assert_int_equal(dur("1h05m"), 3900000);
	assert_int_equal(dur("0h0m"), 0);
	/* The formatter's output reads back. */
	assert_int_equal(dur("2h03m"), 7380000);
	assert_int_equal(dur("3d04h"), 273600000);
	assert_int_equal(dur("4m05s"), 245000);
}

static void
test_duration_limit(void **state)
{
	static const char *toolong[] = {
		"87840.001h", "87841h", "5270401m", "316224000.001", "99999999999h",
		"316224000001ms", "3661d", "3660d1ms", "3659d24h1ms",
		"99999999999999999999d1h", NULL
	};
	char huge[400];
	int64_t ms = 7;
	size_t i;

	(void)state;
	/* Up to ten years of 366 days, to the millisecond. */
	assert_int_equal(dur("87840h"), RL_DURATION_MAX);
	assert_int_equal(dur("316224000"), RL_DURATION_MAX);
	assert_int_equal(dur("316224000000ms"), 87840LL * 3600 * 1000);
	assert_int_equal(dur("3660d"), RL_DURATION_MAX);
	assert_int_equal(dur("3659d24h"), RL_DURATION_MAX);
	/* A bad word is bad, however large its numbers. */
	assert_int_equal(rl_duration_parse("99999999999h1x", &ms), -1);
	assert_int_equal(rl_duration_parse("1m99999999999h", &ms), -1);
	for (i = 0; toolong[i] != NULL; i++) {
		assert_int_equal(rl_duration_parse(toolong[i], &ms),
		    RL_DURATION_TOO_LONG);
		assert_int_equal(ms, 7);
	}
	/* Beyond a double: still too long, not "bad". */
	memset(huge, '9', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	assert_int_equal(rl_duration_parse(huge, &ms), RL_DURATION_TOO_LONG);
	/* Below a double's smallest: a fraction of a millisecond, so 1. */
	huge[0] = '0';
	huge[1] = '.';
	memset(huge + 2, '0', sizeof(huge) - 4);
	huge[sizeof(huge) - 2] = '1';
	assert_int_equal(dur(huge), 1);
}

static void
test_duration_format(void **state)
{
	char b[32];

	(void)state;
	rl_duration_format(850, b, sizeof(b));
	assert_string_equal(b, "850ms");
	rl_duration_format(12345, b, sizeof(b));
	assert_string_equal(b, "12.3s");
	rl_duration_format(245000, b, sizeof(b));
	assert_string_equal(b, "4m05s");
	rl_duration_format(7380000, b, sizeof(b));
	assert_string_equal(b, "2h03m");
	rl_duration_format(24LL * 3600000 - 1, b, sizeof(b));
	assert_string_equal(b, "23h59m");
	rl_duration_format(24LL * 3600000, b, sizeof(b));
	assert_string_equal(b, "1d00h");
	rl_duration_format(3 * 86400000LL + 4 * 3600000 + 59 * 60000, b,
	    sizeof(b));
	assert_string_equal(b, "3d04h");
	rl_duration_format(RL_DURATION_MAX, b, sizeof(b));
	assert_string_equal(b, "3660d00h");
	rl_duration_format(-1, b, sizeof(b));
	assert_string_equal(b, "-");
}

static void
url_ok(const char *s, const char *host, int port, const char *path,
    const char *user, const char *pass, int db, const char *shown)
{
	struct rl_url u;
	char err[256], out[256];

	assert_int_equal(rl_url_parse(s, &u, err, sizeof(err)), 0);
	if (host)
		assert_string_equal(u.host, host);
	else
		assert_null(u.host);
	assert_int_equal(u.port, port);
	if (path)
		assert_string_equal(u.path, path);
	else
		assert_null(u.path);
	if (user)
		assert_string_equal(u.user, user);
	else
		assert_null(u.user);
	if (pass)
		assert_string_equal(u.password, pass);
	else
		assert_null(u.password);
	assert_int_equal(u.db, db);
	assert_int_equal(rl_url_format(&u, out, sizeof(out)), 0);
	assert_string_equal(out, shown);
	rl_url_clear(&u);
}

static void
test_url_parse(void **state)
{
	(void)state;
	url_ok("redis://127.0.0.1:6379", "127.0.0.1", 6379, NULL, NULL, NULL,
	    0, "redis://127.0.0.1:6379");
	url_ok("redis://db.example", "db.example", 6379, NULL, NULL, NULL, 0,
	    "redis://db.example:6379");
	url_ok("redis://h:7000/3", "h", 7000, NULL, NULL, NULL, 3,
	    "redis://h:7000/3");
	url_ok("redis://h/", "h", 6379, NULL, NULL, NULL, 0,
	    "redis://h:6379");
	url_ok("redis://:s3cret@h:1", "h", 1, NULL, NULL, "s3cret", 0,
	    "redis://h:1");
	url_ok("redis://alice:pw@h:2/5", "h", 2, NULL, "alice", "pw", 5,
	    "redis://alice@h:2/5");
	url_ok("redis://alice@h", "h", 6379, NULL, "alice", NULL, 0,
	    "redis://alice@h:6379");
	url_ok("redis://:p%40ss%3Aw@h", "h", 6379, NULL, NULL, "p@ss:w", 0,
	    "redis://h:6379");
	url_ok("redis://:a@b@h", "h", 6379, NULL, NULL, "a@b", 0,
	    "redis://h:6379");
	url_ok("redis://[::1]:6380", "::1", 6380, NULL, NULL, NULL, 0,
	    "redis://[::1]:6380");
	url_ok("redis://", "127.0.0.1", 6379, NULL, NULL, NULL, 0,
	    "redis://127.0.0.1:6379");
	url_ok("rediss://u:pw@h:6380/1", "h", 6380, NULL, "u", "pw", 1,
	    "rediss://u@h:6380/1");
	url_ok("unix:///run/redis.sock", NULL, 0, "/run/redis.sock", NULL,
	    NULL, 0, "unix:///run/redis.sock");
	url_ok("unix:///tmp/r.sock?db=2", NULL, 0, "/tmp/r.sock", NULL, NULL,
	    2, "unix:///tmp/r.sock?db=2");
}

static void
sentinel_ok(const char *s, const char *master, size_t n, const char *h0,
    int p0, const char *pass, int db, const char *shown)
{
	struct rl_url u, d;
	char err[256], out[256];

	assert_int_equal(rl_url_parse(s, &u, err, sizeof(err)), 0);
	assert_string_equal(u.master, master);
	assert_int_equal(u.nsentinels, n);
	assert_string_equal(u.sentinels[0].host, h0);
	assert_int_equal(u.sentinels[0].port, p0);
	assert_null(u.host);
	assert_null(u.path);
	if (pass)
		assert_string_equal(u.password, pass);
	else
		assert_null(u.password);
	assert_int_equal(u.db, db);
	assert_int_equal(rl_url_format(&u, out, sizeof(out)), 0);
	assert_string_equal(out, shown);
	/* A deep copy formats the same, sentinel credentials included. */
	u.sentinel_user = strdup("sen");
	u.sentinel_password = strdup("sp");
	assert_int_equal(rl_url_copy(&d, &u), 0);
	rl_url_clear(&u);
	assert_int_equal(rl_url_format(&d, out, sizeof(out)), 0);
	assert_string_equal(out, shown);
	assert_string_equal(d.sentinel_user, "sen");
	assert_string_equal(d.sentinel_password, "sp");
	rl_url_clear(&d);
	assert_null(d.master);
}

static void
test_url_sentinel(void **state)
{
	char small[20];
	struct rl_url u;
	char err[256];

	(void)state;
	sentinel_ok("redis+sentinel://h1/mymaster", "mymaster", 1, "h1",
	    26379, NULL, 0, "redis+sentinel://h1:26379/mymaster");
	sentinel_ok("redis+sentinel://user:pw@h1:26379,h2:26380/mymaster/2",
	    "mymaster", 2, "h1", 26379, "pw", 2,
	    "redis+sentinel://user@h1:26379,h2:26380/mymaster/2");
	sentinel_ok("redis+sentinel://:p%2Fw@[::1]:5000,h/m%2Fx", "m/x", 2,
	    "::1", 5000, "p/w", 0,
	    "redis+sentinel://[::1]:5000,h:26379/m%2Fx");
	sentinel_ok("redis+sentinel:///m/0", "m", 1, "127.0.0.1", 26379,
	    NULL, 0, "redis+sentinel://127.0.0.1:26379/m");
	/* Too small a buffer is an error, never a cut URL taken for whole. */
	assert_int_equal(rl_url_parse("redis+sentinel://h1,h2/mymaster", &u,
	    err, sizeof(err)), 0);
	assert_int_equal(rl_url_format(&u, small, sizeof(small)), -1);
	rl_url_clear(&u);
}

static void
url_bad(const char *s, const char *why)
{
	struct rl_url u;
	char err[256] = "";

	assert_int_equal(rl_url_parse(s, &u, err, sizeof(err)), -1);
	assert_non_null(strstr(err, why));
	assert_null(u.host);
	assert_null(u.password);
}

static void
test_url_rejects(void **state)
{
	(void)state;
	url_bad("rediss+sentinel://h:26379/m", "TLS through Sentinel");
	url_bad("redis+sentinel://h:26379", "names the master");
	url_bad("redis+sentinel://h:26379/", "names the master");
	url_bad("redis+sentinel://h1,,h2/m", "empty sentinel");
	url_bad("redis+sentinel://h1,/m", "empty sentinel");
	url_bad("redis+sentinel://h1:0/m", "port");
	url_bad("redis+sentinel://h1/m/x", "database number");
	url_bad("redis+sentinel://h1/m%zz", "master name");
	url_bad("http://h", "redis+sentinel:// or unix://");
	url_bad("h:6379", "redis+sentinel:// or unix://");
	url_bad("rediss://h:0", "port");
	url_bad("redis://h:0", "port");
	url_bad("redis://h:65536", "port");
	url_bad("redis://h:80x", "port");
	url_bad("redis://h:", "port");
	url_bad("redis://h/db", "database number");
	url_bad("redis://h/-1", "database number");
	url_bad("redis://[::1", "unclosed");
	url_bad("redis://:%zz@h", "password");
	url_bad("redis://:%00@h", "password");
	url_bad("unix://relative.sock", "absolute path");
	url_bad("unix:///s.sock?database=1", "?db=N");
}

static void
test_owner_token(void **state)
{
	char a[RL_OWNER_MAX], b[RL_OWNER_MAX], pid[32], small[10];
	const char *colon;
	size_t i;

	(void)state;
	assert_int_equal(rl_owner_new(a, sizeof(a)), 0);
	assert_int_equal(rl_owner_new(b, sizeof(b)), 0);
	assert_string_not_equal(a, b);
	/* xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx:PID */
	assert_int_equal(a[8], '-');
	assert_int_equal(a[13], '-');
	assert_int_equal(a[14], '4');
	assert_non_null(strchr("89ab", a[19]));
	assert_int_equal(a[23], '-');
	for (i = 0; i < 36; i++)
		if (i != 8 && i != 13 && i != 18 && i != 23)
			assert_non_null(strchr("0123456789abcdef", a[i]));
	colon = strchr(a, ':');
	assert_ptr_equal(colon, a + 36);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	assert_string_equal(colon + 1, pid);
	assert_int_equal(rl_owner_new(small, sizeof(small)), -1);
}

static int
names(const char *key, size_t len, char *n[2])
{
	n[0] = n[1] = NULL;
	return rl_key_names("redlock_holder", key, len, n);
}

static void
test_keys(void **state)
{
	char *k, *n[2];

	(void)state;
	k = rl_key("redisson_lock__channel", "deploy");
	assert_string_equal(k, "redisson_lock__channel:{deploy}");
	free(k);
	/* A name with a brace is its own hash tag, as in Redisson. */
	k = rl_key("redisson_lock_token", "a{b}");
	assert_string_equal(k, "redisson_lock_token:a{b}");
	free(k);
	/* Redisson's suffixName, and the bare hash tag. */
	k = rl_key_suffix("sem", "timeout");
	assert_string_equal(k, "{sem}:timeout");
	free(k);
	k = rl_key_suffix("a{b}", "timeout");
	assert_string_equal(k, "a{b}:timeout");
	free(k);
	k = rl_key_suffix("rw", NULL);
	assert_string_equal(k, "{rw}");
	free(k);
	k = rl_key_suffix("a{b}", NULL);
	assert_string_equal(k, "a{b}");
	free(k);
	/* "x" and "{x}" both have the key "redlock_holder:{x}". */
	assert_int_equal(names("redlock_holder:{deploy}", 23, n), 2);
	assert_string_equal(n[0], "deploy");
	assert_string_equal(n[1], "{deploy}");
	free(n[0]);
	free(n[1]);
	assert_int_equal(names("redlock_holder:a{b}", 19, n), 1);
	assert_string_equal(n[0], "a{b}");
	free(n[0]);
	assert_int_equal(names("redlock_holder:{a}{b}", 21, n), 1);
	assert_string_equal(n[0], "{a}{b}");
	free(n[0]);
	assert_int_equal(names("redlock_holder:{}", 17, n), 2);
	assert_string_equal(n[0], "");
	assert_string_equal(n[1], "{}");
	free(n[0]);
	free(n[1]);
	/* No name has the key "PREFIX:x": "x" has "PREFIX:{x}". */
	assert_int_equal(names("redlock_holder:x", 16, n), 0);
	assert_int_equal(names("other:{x}", 9, n), 0);
	assert_int_equal(names("redlock_holder:", 15, n), 0);
	assert_int_equal(names("redlock_holder:a\0b", 18, n), 0);
	assert_int_equal(names("redlock_holder:{a\0b}", 20, n), 0);
}

/* S clipped to MAX bytes, as rl_clip does it. */
static const char *
clip(const char *s, size_t max)
{
	static char buf[256];

	rl_clip(s, strlen(s), max, buf, sizeof(buf));
	return buf;
}

static void
test_clip(void **state)
{
	const char *auth = "ERR AUTH <password> called without any password "
	    "configured for the default user. Are you sure your "
	    "configuration is correct?";
	char buf[32];

	(void)state;
	/* What fits is whole, however close to the limit. */
	assert_string_equal(clip(auth, 160), auth);
	assert_string_equal(clip(auth, strlen(auth)), auth);
	/* Cut after the last whole word, never inside one; the blank or
	 * punctuation before the cut goes. */
	assert_string_equal(clip(auth, 120), "ERR AUTH <password> called "
	    "without any password configured for the default user. Are you "
	    "sure your configuration is\u2026");
	assert_string_equal(clip(auth, 72), "ERR AUTH <password> called "
	    "without any password configured for the\u2026");
	assert_string_equal(clip("one two, three", 12), "one two\u2026");
	/* A blank right at the limit: the word before it is whole. */
	assert_string_equal(clip("abc def", 3), "abc\u2026");
	/* Only the first N bytes of S count. */
	rl_clip(auth, 8, 160, buf, sizeof(buf));
	assert_string_equal(buf, "ERR AUTH");
	rl_clip(auth, 8, 5, buf, sizeof(buf));
	assert_string_equal(buf, "ERR\u2026");
	/* One word longer than the limit is cut, but not inside a UTF-8
	 * sequence (\xc3\xa9 is one character). */
	assert_string_equal(clip("abcdefgh", 4), "abcd\u2026");
	assert_string_equal(clip("ab\xc3\xa9" "cd", 3), "ab\u2026");
}

/* rl_passwd_name on TEXT for UID: the name, or "-" when there is none. */
static const char *
pw(const char *text, unsigned long uid, size_t buflen)
{
	static char buf[64];

	assert_true(buflen <= sizeof(buf));
	if (rl_passwd_name(text, strlen(text), uid, buf, buflen) < 0)
		return "-";
	return buf;
}

static void
test_passwd_name(void **state)
{
	const char *etc = "root:x:0:0:root:/root:/bin/bash\n"
	    "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
	    "# a comment:x:1000:1000::/:/bin/sh\n"
	    "+nis:x:1001:1001::/:/bin/sh\n"
	    "-gone:x:1002:1002::/:/bin/sh\n"
	    "+\n"
	    "\n"
	    "\t \n"
	    "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n"
	    "alias:x:1000:1000:again:/home/alice:/bin/bash\n"
	    "  bob:x:1005:1005::/home/bob:/bin/sh\n"
	    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin";

	(void)state;
	assert_string_equal(pw(etc, 0, 64), "root");
	assert_string_equal(pw(etc, 1, 64), "daemon");
	/* The first entry, as getpwuid; comments and compat entries are
	 * not entries; blanks before one are not part of its name. */
	assert_string_equal(pw(etc, 1000, 64), "alice");
	assert_string_equal(pw(etc, 1001, 64), "-");
	assert_string_equal(pw(etc, 1002, 64), "-");
	assert_string_equal(pw(etc, 1005, 64), "bob");
	assert_string_equal(pw(etc, 10, 64), "-");
	/* The last line needs no newline; a uid is not a prefix. */
	assert_string_equal(pw(etc, 65534, 64), "nobody");
	assert_string_equal(pw(etc, 6553, 64), "-");
	assert_string_equal(pw(etc, 655340, 64), "-");
	/* A name longer than the buffer: none, not a cut one. */
	assert_string_equal(pw(etc, 65534, 7), "nobody");
	assert_string_equal(pw(etc, 65534, 6), "-");
	/* Only the first LEN bytes count. */
	assert_int_equal(rl_passwd_name("root:x:0:0::/:/bin/sh", 5, 0,
	    (char[8]){ 0 }, 8), -1);
	assert_string_equal(pw("", 0, 64), "-");
	/* An entry glibc may read otherwise, before the one looked for:
	 * NSS decides. */
	assert_string_equal(pw(":x:7:7::/:/bin/sh\nroot:x:0:0::/:/bin/sh",
	    0, 64), "-");
	assert_string_equal(pw("a:x: 7:7::/:/bin/sh\nroot:x:0:0::/:/bin/sh",
	    0, 64), "-");
	assert_string_equal(pw("a:x:+7:7::/:/bin/sh\nroot:x:0:0::/:/bin/sh",
	    0, 64), "-");
	assert_string_equal(pw("a:x:7::/:/bin/sh\nroot:x:0:0::/:/bin/sh",
	    0, 64), "-");
	assert_string_equal(pw("a:x:7:7\nroot:x:0:0::/:/bin/sh", 0, 64), "-");
	assert_string_equal(pw("a:x:12345678901:7::/:/bin/sh\n"
	    "root:x:0:0::/:/bin/sh", 0, 64), "-");
	/* After it, nothing counts. */
	assert_string_equal(pw("root:x:0:0::/:/bin/sh\n:x: 7::", 0, 64),
	    "root");
}

static int
files_first(const char *text)
{
	return rl_nss_files_first(text, strlen(text));
}

static void
test_nss_files_first(void **state)
{
	(void)state;
	assert_true(files_first("passwd: files\n"));
	assert_true(files_first("passwd:files systemd\r\n"));
	assert_true(files_first("# passwd: sss\n  passwd:\tfiles  sss # x\n"
	    "group: sss files\n"));
	/* An action after files: its answer may not be the last word. */
	assert_false(files_first("passwd: files [NOTFOUND=return] sss\n"));
	assert_false(files_first("passwd: files [SUCCESS=continue] ldap\n"));
	assert_true(files_first("passwd: files sss [NOTFOUND=return] ldap\n"));
	/* No passwd line: glibc's default, files. */
	assert_true(files_first("group: files\nhosts: files dns\n"));
	assert_true(files_first(""));
	assert_false(files_first("passwd: sss files\n"));
	assert_false(files_first("passwd: compat\n"));
	assert_false(files_first("passwd: [SUCCESS=merge] files\n"));
	assert_false(files_first("passwd: filesystem\n"));
	assert_false(files_first("passwd:\n"));
	assert_false(files_first("PASSWD: ldap\n"));
	/* Two passwd lines: both must start with files. */
	assert_false(files_first("passwd: files\npasswd: ldap files\n"));
	/* Not the passwd database. */
	assert_true(files_first("passwd_compat: nis\nshadow: ldap\n"));
}

/* rl_escape of S into a buffer of LEN bytes. */
static const char *
escape(const char *s, size_t len)
{
	static char buf[64];

	assert_true(len <= sizeof(buf));
	return rl_escape(s, buf, len);
}

static void
test_utf8_len(void **state)
{
	(void)state;
	assert_int_equal(rl_utf8_len((const unsigned char *)"a"), 1);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xc3\xa9"), 2);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xe9\x83\xa8"), 3);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xf0\x9f\x94\x92"),
	    4);
	/* Not UTF-8: a stray continuation byte, bytes UTF-8 never has, an
	 * overlong '/', an overlong NUL, a surrogate, beyond U+10FFFF, a
	 * sequence cut short by the end or by another character. */
	assert_int_equal(rl_utf8_len((const unsigned char *)"\x80"), 0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xff"), 0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xfe"), 0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xc0\xaf"), 0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xe0\x80\xaf"), 0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xc0\x80"), 0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xed\xa0\x80"), 0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xf4\x90\x80\x80"),
	    0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xe9\x83"), 0);
	assert_int_equal(rl_utf8_len((const unsigned char *)"\xe9\x83z"), 0);
}

static void
test_escape(void **state)
{
	char buf[1024], big[2000];

	(void)state;
	/* UTF-8 as it is, a backslash as itself. */
	assert_string_equal(escape("d\xc3\xa9ploiement \xe9\x83\xa8\xe7\xbd\xb2",
	    64), "d\xc3\xa9ploiement \xe9\x83\xa8\xe7\xbd\xb2");
	assert_string_equal(escape("a\\b", 64), "a\\b");
	/* Control characters: C0, DEL, and C1 (U+009B, a terminal's CSI),
	 * each of its bytes; U+00A0 is no control. */
	assert_string_equal(escape("a\x1b[2Jb\n\x7f", 64),
	    "a\\x1b[2Jb\\x0a\\x7f");
	assert_string_equal(escape("\xc2\x9b" "1m\xc2\xa0", 64),
	    "\\xc2\\x9b1m\xc2\xa0");
	/* Bytes that are not UTF-8, each one escaped, what follows kept. */
	assert_string_equal(escape("\xff\xfe" "caf\xe9!", 64),
	    "\\xff\\xfecaf\\xe9!");
	assert_string_equal(escape("\xc0\xaf" "x", 64), "\\xc0\\xafx");
	assert_string_equal(escape("\xed\xa0\x80", 64), "\\xed\\xa0\\x80");
	assert_string_equal(escape("\xe9\x83", 64), "\\xe9\\x83");
	/* Too long: cut at a character, never inside one or an escape. */
	assert_string_equal(escape("abcdefghijklmnopqrstuvwxyz", 16),
	    "abcde...");
	assert_string_equal(escape("abc\xe9\x83\xa8xyzxyzxyz", 16),
	    "abc\xe9\x83\xa8...");
	assert_string_equal(escape("abc\xff\xff\xff\xff", 16), "abc\\xff...");
	assert_string_equal(escape("abc", 16), "abc");
	assert_string_equal(escape("abc", 15), "");
	memset(big, 0xff, sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rl_escape(big, buf, sizeof(buf));
	assert_true(strlen(buf) < sizeof(buf));
	assert_string_equal(buf + strlen(buf) - 7, "\\xff...");
}

static void
test_decimal(void **state)
{
	static const char *bad[] = {
		"", "-1", "+1", " 1", "1 ", "1,\"owner\":\"evil\"", "abc", "1e3",
		"0x10", "1.0", "9223372036854775808", "99999999999999999999",
		NULL
	};
	int64_t v = 0;
	size_t i;

	(void)state;
	assert_int_equal(rl_decimal("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(rl_decimal("42", &v), 0);
	assert_int_equal(v, 42);
	/* 2^63-1, beyond a double's whole numbers. */
	assert_int_equal(rl_decimal("9223372036854775807", &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(rl_decimal("007", &v), 0);
	assert_int_equal(v, 7);
	for (i = 0; bad[i] != NULL; i++) {
		v = 5;
		assert_int_equal(rl_decimal(bad[i], &v), -1);
		assert_int_equal(v, 5);
	}
	assert_int_equal(rl_decimal(NULL, &v), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_fractions),
		cmocka_unit_test(test_duration_rejects),
		cmocka_unit_test(test_duration_compound),
		cmocka_unit_test(test_duration_limit),
		cmocka_unit_test(test_duration_format),
		cmocka_unit_test(test_url_parse),
		cmocka_unit_test(test_url_rejects),
		cmocka_unit_test(test_url_sentinel),
		cmocka_unit_test(test_owner_token),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_clip),
		cmocka_unit_test(test_passwd_name),
		cmocka_unit_test(test_nss_files_first),
		cmocka_unit_test(test_utf8_len),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_decimal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
