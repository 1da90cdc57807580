/* urls.c: the URLs of the masters, from the options, the environment
 * and the configuration file, and their passwords. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

/* Whether the comma-separated word at S starts with a scheme. */
static int
has_scheme(const char *s)
{
	const char *p = strstr(s, "://");

	return p != NULL && (size_t)(p - s) < strcspn(s, ",");
}

/* Parse S, one URL or several separated by commas, into g->url. FROM
 * names where S came from, for messages. */
int
add_urls(struct globals *g, const char *from, const char *s)
{
	char err[256], *copy, *word, *next;
	int status = 0;

	if ((copy = strdup(s)) == NULL) {
		msg("out of memory");
		return EXIT_SOFTWARE;
	}
	for (word = copy; word != NULL; word = next) {
		if ((next = strchr(word, ',')) != NULL)
			*next++ = '\0';
		/* redis+sentinel://h1,h2/m: the commas between sentinels
		 * are the URL's own, up to a word with a scheme. */
		while (strncmp(word, "redis+sentinel://", 17) == 0 &&
		    next != NULL && next[0] != ',' && next[0] != '\0' &&
		    !has_scheme(next)) {
			next[-1] = ',';
			if ((next = strchr(next, ',')) != NULL)
				*next++ = '\0';
		}
		if (word[0] == '\0') {
			status = s[0] == '\0' ? usage_error(NULL, "%s is empty: "
			    "give redis://HOST[:PORT] or unix:///PATH", from) :
			    usage_error(NULL, "%s: empty URL in '%s': separate "
			    "URLs by single commas", from, esc(s));
			break;
		}
		if (g->nurl == MAX_URLS) {
			msg("at most %d URLs (masters)", MAX_URLS);
			status = EXIT_USAGE;
			break;
		}
		if (rl_url_parse(word, &g->url[g->nurl], err, sizeof(err)) < 0) {
			msg("bad URL: %s", err);
			status = EXIT_USAGE;
			break;
		}
		g->nurl++;
	}
	free(copy);
	return status;
}

/* Overwrite, in place, the passwords of the URLs in S, a word of the
 * command line, with 'x' (as MySQL's client does): ps shows it from now
 * on without them. Credentials end at the last '@' before the first '/'
 * or ',' after the scheme; the password after their first ':'. */
void
hide_passwords(char *s)
{
	char *p, *at, *colon, *q;

	while ((p = strstr(s, "://")) != NULL) {
		s = p += 3;
		at = NULL;
		for (q = p; *q != '\0' && *q != '/' && *q != ','; q++)
			if (*q == '@')
				at = q;
		if (at == NULL || (colon = memchr(p, ':', (size_t)(at - p))) ==
		    NULL)
			continue;
		for (q = colon + 1; q < at; q++)
			*q = 'x';
		s = at;
	}
}

/* Whether A and B name one server as written (run_id tells the rest). */
static int
same_server(const struct rl_url *a, const struct rl_url *b)
{
	if (a->db != b->db)
		return 0;
	if (a->master != NULL || b->master != NULL)
		return a->master != NULL && b->master != NULL &&
		    strcmp(a->master, b->master) == 0 &&
		    strcmp(a->sentinels[0].host, b->sentinels[0].host) == 0 &&
		    a->sentinels[0].port == b->sentinels[0].port;
	return a->port == b->port && (a->host && b->host ?
	    strcmp(a->host, b->host) == 0 :
	    a->path && b->path && strcmp(a->path, b->path) == 0);
}

/* The sentinels' credentials: the options, else REDLOCK_SENTINEL_PASSWORD,
 * on every redis+sentinel:// URL; -1 (reported). */
static int
sentinel_auth(struct globals *g)
{
	const char *pw = g->sentinel_password;
	size_t i, n = 0;

	if (pw == NULL && (pw = getenv("REDLOCK_SENTINEL_PASSWORD")) != NULL &&
	    pw[0] == '\0')
		pw = NULL;
	for (i = 0; i < g->nurl; i++) {
		struct rl_url *u = &g->url[i];

		if (u->master == NULL)
			continue;
		n++;
		if ((g->sentinel_user != NULL && (u->sentinel_user =
		    strdup(g->sentinel_user)) == NULL) || (pw != NULL &&
		    (u->sentinel_password = strdup(pw)) == NULL)) {
			msg("out of memory");
			return EXIT_SOFTWARE;
		}
	}
	if (n == 0 && (g->sentinel_user != NULL ||
	    g->sentinel_password != NULL))
		return usage_error(NULL, "--sentinel-%s is for redis+sentinel:// "
		    "URLs only", g->sentinel_user != NULL ? "user" : "password");
	return 0;
}

/* The password read from --password-file's file. */
static char *file_password;

/* The password of the URLs without one into *PW (NULL: none): that of
 * --password-file on the command line, else REDLOCK_PASSWORD, else that
 * of the file's password-file; 0, or EXIT_USAGE (said). */
static int
password(struct globals *g, const char **pw)
{
	const char *env = getenv("REDLOCK_PASSWORD");

	if (env != NULL && env[0] == '\0')
		env = NULL;
	*pw = env;
	g->password_from = env != NULL ? "REDLOCK_PASSWORD" : NULL;
	if (g->password_file == NULL || (env != NULL &&
	    g->password_file_where != NULL))
		return 0;
	if (config_password(g->password_file, g->password_file_where,
	    &file_password) < 0)
		return EXIT_USAGE;
	*pw = file_password;
	g->password_from = g->password_file_where != NULL ?
	    g->password_file_where : "--password-file";
	return 0;
}

int
settle_urls(struct globals *g)
{
	const char *pw;
	size_t i, n = 0;
	int status;

	if ((status = password(g, &pw)) != 0)
		return status;
	if (g->nurl == 0) {
		msg("no URL given; see redlock --help");
		return EXIT_USAGE;
	}
	if ((status = sentinel_auth(g)) != 0)
		return status;
	for (i = 0; i < g->nurl; i++) {
		for (size_t j = 0; j < i; j++) {
			const struct rl_url *a = &g->url[i], *b = &g->url[j];

			if (same_server(a, b)) {
				char u[512];

				rl_url_format(b, u, sizeof(u));
				msg("%s is given twice: each master counts once "
				    "towards the quorum", esc(u));
				return EXIT_USAGE;
			}
		}
		g->url_password |= g->url[i].password != NULL;
		if (g->url[i].password == NULL && pw != NULL && pw[0] != '\0' &&
		    (g->url[i].password = strdup(pw)) == NULL) {
			msg("out of memory");
			return EXIT_SOFTWARE;
		}
		if (i > 0 && n + 1 < sizeof(g->url_text))
			g->url_text[n++] = ',';
		rl_url_format(&g->url[i], g->url_text + n,
		    sizeof(g->url_text) - n);
		n = strlen(g->url_text);
	}
	return 0;
}

/* No --url: $REDLOCK_URL, else the file's url lines, else the default. */
int
default_urls(struct globals *g)
{
	const char *env = getenv("REDLOCK_URL"), *v, *where;
	size_t n;
	int status = 0;

	/* Set and empty, it is a mistake (a crontab's REDLOCK_URL=$X with
	 * X unset), not the default server. */
	if (env != NULL && env[0] == '\0')
		return usage_error(NULL, "REDLOCK_URL is set but empty: give it "
		    "a URL, or unset it");
	if (env != NULL)
		return add_urls(g, "REDLOCK_URL", env);
	for (n = 0; status == 0 && (v = config_get("url", n, &where)) !=
	    NULL; n++)
		status = add_urls(g, where, v);
	if (n > 0 || status != 0)
		return status;
	return add_urls(g, "the default URL", RL_DEFAULT_URL);
}

void
urls_clear(void)
{
	if (file_password != NULL)
		memset(file_password, 0, strlen(file_password));
	free(file_password);
	file_password = NULL;
}
