/* config.c: the configuration file, the key prefix, and redlock config. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

#define SYSTEM_CONFIG "/etc/redlock.conf"
/* A configuration file is a few lines; more is not one. */
#define CONFIG_MAX (64 * 1024)
#define ENTRIES_MAX 256
#define PASSWORD_MAX 1024

static int run(struct globals *, void *, const struct parse *);

static const struct opt config_opts[] = {
	{ .name = "help", .letter = 'h', .cmds = CMD_CONFIG,
	  .help = "show this help" },
	OPT_END
};

const struct cmd cmd_config = {
	.name = "config", .usage = "config",
	.help =
	"Show the settings in force, one a line: where each comes from (the\n"
	"option, the variable, FILE:LINE of the configuration file, or the\n"
	"default), a tab, and KEY=VALUE, passwords masked. The file is\n"
	"$REDLOCK_CONFIG, else $XDG_CONFIG_HOME/redlock/config\n"
	"(~/.config/redlock/config), else " SYSTEM_CONFIG ".\n\n",
	.opts = config_opts, .bit = CMD_CONFIG,
	.brief = "the settings in force, and where each is from",
	.examples =
	"  redlock config\n"
	"  REDLOCK_CONFIG=/etc/redlock.conf redlock config\n",
	.exits =
	"0, 64 usage or a bad configuration file\n",
	.operands = OPERANDS_NONE, .run = run
};

/* One KEY = VALUE line of the file. */
struct entry {
	const struct opt *opt;
	char *value;
	char where[4120];
};

static struct {
	int loaded;
	char path[4096];	/* "": no file */
	const struct opt *const *tables;
	struct entry e[ENTRIES_MAX];
	size_t n;
	char *text;
} cf;

/* The option of TABLES that the file may set as KEY, or NULL. */
static const struct opt *
config_opt(const struct opt *const *tables, const char *key)
{
	const struct opt *o;

	for (; *tables != NULL; tables++)
		for (o = *tables; o->name != NULL || o->letter != 0 ||
		    o->help != NULL; o++)
			if ((o->flags & OPT_CONFIG) != 0 && o->name != NULL &&
			    strcmp(o->name, key) == 0)
				return o;
	return NULL;
}

/* The keys the file may have, for the message of an unknown one. */
static void
config_keys(const struct opt *const *tables, char *buf, size_t len)
{
	const struct opt *o;
	size_t n = 0;

	buf[0] = '\0';
	for (; *tables != NULL; tables++)
		for (o = *tables; o->name != NULL || o->letter != 0 ||
		    o->help != NULL; o++)
			if ((o->flags & OPT_CONFIG) != 0 && n < len)
				n += (size_t)snprintf(buf + n, len - n, "%s%s",
				    n ? ", " : "", o->name);
}

/* VALUE of O checked as its kind of value says, as said at WHERE: 0, or
 * EXIT_USAGE (said). URLs and files are checked when used. */
static int
check_value(const struct opt *o, const char *value)
{
	const char *p, *c = o->choices;
	size_t n = strlen(value);
	int64_t ms;
	long v;
	char flag[80];

	snprintf(flag, sizeof(flag), "%s", o->name);
	if (o->arg == ARG_DURATION)
		return parse_duration(NULL, flag, value, &ms) < 0 ? EXIT_USAGE : 0;
	if (o->arg == ARG_N && parse_number(value, 0, 1000000, &v) < 0)
		return usage_error(NULL, "%s: '%s' is not a number", o->name,
		    esc(value));
	if (o->arg != ARG_CHOICE)
		return 0;
	for (p = c; (p = strstr(p, value)) != NULL; p++)
		if ((p == c || p[-1] == '|') && (p[n] == '|' || p[n] == '\0'))
			return 0;
	return usage_error(NULL, "%s: '%s' is not one of %s", o->name,
	    esc(value), c);
}

/* S without the blanks around it, in place. */
static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Line LINE (number NO) of the file into cf.e: 0, or EXIT_USAGE. */
static int
parse_line(char *line, size_t no)
{
	char where[sizeof(cf.path) + 24], keys[512], *key, *eq, *value;
	const struct opt *o;
	int status;

	snprintf(where, sizeof(where), "%s:%zu", cf.path, no);
	key = trim(line);
	if (key[0] == '\0' || key[0] == '#')
		return 0;
	msg_where = where;
	if ((eq = strchr(key, '=')) == NULL) {
		status = usage_error(NULL, "'%s' is not KEY = VALUE", esc(key));
		goto out;
	}
	*eq = '\0';
	key = trim(key);
	value = trim(eq + 1);
	if ((o = config_opt(cf.tables, key)) == NULL) {
		config_keys(cf.tables, keys, sizeof(keys));
		status = usage_error(NULL, "unknown key '%s'; the keys are %s",
		    esc(key), keys);
		goto out;
	}
	if (value[0] == '\0' && strcmp(key, "prefix") != 0) {
		status = usage_error(NULL, "%s has no value", key);
		goto out;
	}
	if (cf.n == ENTRIES_MAX) {
		status = usage_error(NULL, "more than %d settings",
		    ENTRIES_MAX);
		goto out;
	}
	if ((status = check_value(o, value)) != 0)
		goto out;
	cf.e[cf.n].opt = o;
	cf.e[cf.n].value = value;
	snprintf(cf.e[cf.n].where, sizeof(cf.e[cf.n].where), "%s", where);
	cf.n++;
out:
	msg_where = NULL;
	return status;
}

/* Which file: into cf.path ("" for none); REQUIRED when named by
 * $REDLOCK_CONFIG, which must exist. 0, or EXIT_USAGE (said). */
static int
config_find(int *required)
{
	const char *env = getenv("REDLOCK_CONFIG"), *xdg, *home;
	char user[sizeof(cf.path)];

	*required = env != NULL;
	if (env != NULL) {
		if (env[0] == '\0')
			return usage_error(NULL, "REDLOCK_CONFIG is set but "
			    "empty: give it a file, or unset it");
		snprintf(cf.path, sizeof(cf.path), "%s", env);
		return 0;
	}
	xdg = getenv("XDG_CONFIG_HOME");
	home = getenv("HOME");
	user[0] = '\0';
	if (xdg != NULL && xdg[0] == '/')
		snprintf(user, sizeof(user), "%s/redlock/config", xdg);
	else if (home != NULL && home[0] == '/')
		snprintf(user, sizeof(user), "%s/.config/redlock/config", home);
	if (user[0] != '\0' && access(user, F_OK) == 0)
		snprintf(cf.path, sizeof(cf.path), "%s", user);
	else if (access(SYSTEM_CONFIG, F_OK) == 0)
		snprintf(cf.path, sizeof(cf.path), "%s", SYSTEM_CONFIG);
	else
		cf.path[0] = '\0';
	return 0;
}

/* The whole of cf.path into cf.text: 0, or EXIT_USAGE (said). */
static int
config_read(void)
{
	int fd = open(cf.path, O_RDONLY | O_CLOEXEC);
	ssize_t r = 0;
	size_t n = 0;

	if (fd < 0)
		return usage_error(NULL, "cannot read the configuration file "
		    "%s: %s; %s", esc(cf.path), strerror(errno),
		    getenv("REDLOCK_CONFIG") != NULL ? "fix REDLOCK_CONFIG or "
		    "unset it" : "fix its permissions");
	if ((cf.text = malloc(CONFIG_MAX + 1)) == NULL) {
		close(fd);
		msg("out of memory");
		return EXIT_SOFTWARE;
	}
	while (n < CONFIG_MAX + 1 && ((r = read(fd, cf.text + n,
	    CONFIG_MAX + 1 - n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	close(fd);
	if (r < 0 || n > CONFIG_MAX)
		return usage_error(NULL, "cannot read the configuration file "
		    "%s: %s", esc(cf.path), r < 0 ? strerror(errno) :
		    "larger than 64 KiB");
	cf.text[n] = '\0';
	if (strlen(cf.text) != n)
		return usage_error(NULL, "%s has a NUL byte: it is no "
		    "configuration file", esc(cf.path));
	return 0;
}

int
config_load(const struct opt *const *tables)
{
	char *line, *next;
	size_t no = 1;
	int required, status;

	/* Field by field: zeroing the whole of cf (its entries are a
	 * megabyte) would touch every page of it in every run. */
	free(cf.text);
	cf.text = NULL;
	cf.n = 0;
	cf.path[0] = '\0';
	cf.tables = tables;
	cf.loaded = 1;
	if ((status = config_find(&required)) != 0 || cf.path[0] == '\0')
		return status;
	if ((status = config_read()) != 0)
		return status;
	for (line = cf.text; line != NULL; line = next, no++) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((status = parse_line(line, no)) != 0)
			return status;
	}
	return 0;
}

const char *
config_get(const char *key, size_t n, const char **where)
{
	size_t i;

	for (i = 0; i < cf.n; i++)
		if (strcmp(cf.e[i].opt->name, key) == 0 && n-- == 0) {
			*where = cf.e[i].where;
			return cf.e[i].value;
		}
	return NULL;
}

const char *
config_last(const char *key, const char **where)
{
	const char *v = NULL, *w;
	size_t n;

	for (n = 0; config_get(key, n, &w) != NULL; n++)
		v = config_get(key, n, where);
	return v;
}

const char *
config_path(void)
{
	return cf.path[0] != '\0' ? cf.path : NULL;
}

/* "FILE" or "FILE (from FILE:LINE)" for the messages of password-file. */
static const char *
pw_name(const char *file, const char *where, char *buf, size_t len)
{
	if (where == NULL)
		snprintf(buf, len, "--password-file %s", esc(file));
	else
		snprintf(buf, len, "%s: password-file %s", where, esc(file));
	return buf;
}

int
config_password(const char *file, const char *where, char **pw)
{
	char buf[PASSWORD_MAX + 1], name[8192];
	struct stat st;
	ssize_t r;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	pw_name(file, where, name, sizeof(name));
	if (fd < 0 || fstat(fd, &st) < 0) {
		msg("%s cannot be read: %s; give a file that holds the "
		    "password", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
		close(fd);
		msg("%s can be read by others (mode %04o): chmod 600 it",
		    name, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	while ((r = read(fd, buf, PASSWORD_MAX)) < 0 && errno == EINTR)
		;
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (r < 0 || buf[0] == '\0') {
		msg("%s: %s; its first line is the password", name,
		    r < 0 ? strerror(errno) : "no password in it");
		return -1;
	}
	*pw = strdup(buf);
	memset(buf, 0, sizeof(buf));
	if (*pw == NULL) {
		msg("out of memory");
		return -1;
	}
	return 0;
}

/* The key prefix. */

const char *
name_key(const char *name)
{
	/* Kept for the run, reachable from here. */
	static struct made {
		struct made *next;
		char s[];
	} *made;
	struct made *m;
	size_t len;

	if (key_prefix[0] == '\0' || name == NULL)
		return name;
	len = strlen(key_prefix) + strlen(name) + 1;
	if ((m = malloc(sizeof(*m) + len)) == NULL)
		return NULL;
	snprintf(m->s, len, "%s%s", key_prefix, name);
	m->next = made;
	made = m;
	return m->s;
}

int
name_under(const char *key)
{
	return strncmp(key, key_prefix, strlen(key_prefix)) == 0;
}

const char *
name_shown(const char *key)
{
	if (key == NULL || !name_under(key) || key[strlen(key_prefix)] ==
	    '\0')
		return key;
	return key + strlen(key_prefix);
}

/* redlock config. */

/* S, a URL or several, on stdout with each password as "***". */
static void
put_masked(const char *s)
{
	const char *p, *at, *colon, *q;

	while ((p = strstr(s, "://")) != NULL) {
		p += 3;
		fwrite(s, 1, (size_t)(p - s), stdout);
		at = NULL;
		for (q = p; *q != '\0' && *q != '/' && *q != ','; q++)
			if (*q == '@')
				at = q;
		colon = at != NULL ? memchr(p, ':', (size_t)(at - p)) : NULL;
		if (colon != NULL) {
			fwrite(p, 1, (size_t)(colon + 1 - p), stdout);
			fputs("***", stdout);
			p = at;
		}
		s = p;
	}
	fputs(s, stdout);
}

static void
put_setting(const char *origin, const char *key, const char *value)
{
	printf("%s\t%s=", esc(origin), key);
	if (strcmp(key, "url") == 0)
		put_masked(esc(value));
	else
		fputs(esc(value), stdout);
	putchar('\n');
}

/* The URLs in force: -u's, REDLOCK_URL's, the file's lines, or the
 * default. */
static void
show_urls(const struct globals *g)
{
	const char *env = getenv("REDLOCK_URL"), *v, *where;
	size_t n;

	if (g->url_given || env != NULL) {
		put_setting(g->url_given ? "--url" : "REDLOCK_URL", "url",
		    g->url_text);
		return;
	}
	for (n = 0; (v = config_get("url", n, &where)) != NULL; n++)
		put_setting(where, "url", v);
	if (n == 0)
		put_setting("default", "url", RL_DEFAULT_URL);
}

/* Option O's setting: its option, its variable, the file, the default. */
static void
show(const struct globals *g, const struct opt *o, int global)
{
	const char *env = o->env != NULL ? getenv(o->env) : NULL, *v, *where;
	int val = o->val != 0 ? o->val : o->letter;
	char flag[80];

	if (strcmp(o->name, "url") == 0) {
		show_urls(g);
		return;
	}
	snprintf(flag, sizeof(flag), "--%s", o->name);
	if (global && (v = global_given(val)) != NULL)
		put_setting(flag, o->name, v);
	else if (env != NULL && env[0] != '\0')
		put_setting(o->env, o->name, env);
	else if ((v = config_last(o->name, &where)) != NULL)
		put_setting(where, o->name, v);
	else
		put_setting("default", o->name, o->dflt != NULL ? o->dflt : "");
}

static int
run(struct globals *g, void *job, const struct parse *p)
{
	const struct opt *const *t;
	const struct opt *o;

	(void)job;
	(void)p;
	for (t = cf.tables; t != NULL && *t != NULL; t++)
		for (o = *t; o->name != NULL || o->letter != 0 ||
		    o->help != NULL; o++)
			if ((o->flags & OPT_CONFIG) != 0)
				show(g, o, t == cf.tables);
	if (g->url_password)
		put_setting("url", "password", "***");
	else if (g->password_from != NULL)
		put_setting(g->password_from, "password", "***");
	else
		put_setting("default", "password", "");
	return flush_stdout();
}
