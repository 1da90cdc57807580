/* metrics.c: exec --metrics-file, node_exporter's textfile format. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

/* How long a writer waits for another one's flock of FILE.lock. */
#define LOCK_WAIT_MS 5000

/* The series of one name, in the order they are written. The last run's
 * are left out for a name that has only been skipped as busy. */
enum { M_STATUS, M_START, M_END, M_WAIT, M_HOLD, M_RUNS, M_BUSY, M_LOST,
	M_N };
static const struct family {
	const char *name, *type, *help;
} families[M_N] = {
	{ "redlock_last_exit_status", "gauge", "Exit status of the last "
	    "redlock exec of the lock that was not skipped as busy." },
	{ "redlock_last_run_start_timestamp_seconds", "gauge", "When that "
	    "exec started (before its wait), in seconds since the epoch." },
	{ "redlock_last_run_end_timestamp_seconds", "gauge", "When that "
	    "exec ended, in seconds since the epoch." },
	{ "redlock_wait_seconds", "gauge", "How long that exec waited for "
	    "the lock." },
	{ "redlock_hold_seconds", "gauge", "How long that exec held the "
	    "lock." },
	{ "redlock_runs_total", "counter", "Execs of the lock that started "
	    "COMMAND." },
	{ "redlock_busy_total", "counter", "Execs of the lock skipped "
	    "because it was busy (-n, or --wait ran out)." },
	{ "redlock_lost_total", "counter", "Execs of the lock whose lease was "
	    "lost." },
};

struct entry {
	char *label;		/* the name, escaped as in the file */
	double v[M_N];
	int has[M_N];
};

struct table {
	struct entry *e;
	size_t n, cap;
};

int
metrics_check(const struct cmd *c, const char *file)
{
	struct stat st;
	char *dir, *slash;
	int r;

	if (file[0] == '\0') {
		usage_error(c, "--metrics-file is empty: give a FILE in "
		    "node_exporter's textfile directory");
		return -1;
	}
	if (stat(file, &st) == 0 && S_ISDIR(st.st_mode)) {
		usage_error(c, "--metrics-file: '%s' is a directory: give a "
		    "FILE in it, such as redlock.prom", esc(file));
		return -1;
	}
	if ((dir = strdup(file)) == NULL) {
		usage_error(c, "--metrics-file: out of memory");
		return -1;
	}
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	r = stat(slash != NULL ? dir : ".", &st) == 0 && S_ISDIR(st.st_mode);
	if (!r)
		usage_error(c, "--metrics-file: the directory of '%s' does not "
		    "exist: create it, or give a FILE in one that does",
		    esc(file));
	free(dir);
	return r ? 0 : -1;
}

/* NAME as a label value: \, " and newline escaped, bytes that are not
 * UTF-8 made U+FFFD (the format is UTF-8); malloc'd, or NULL. */
static char *
label_of(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	char *out = malloc(strlen(name) * 3 + 1), *o = out;
	size_t n;

	if (out == NULL)
		return NULL;
	while (*p != '\0') {
		if (*p == '\\' || *p == '"' || *p == '\n') {
			*o++ = '\\';
			*o++ = *p == '\n' ? 'n' : (char)*p;
			p++;
		} else if ((n = rl_utf8_len(p)) == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		} else {
			memcpy(o, p, n);
			o += n;
			p += n;
		}
	}
	*o = '\0';
	return out;
}

/* The entry of LABEL in T, added when missing; NULL when out of memory. */
static struct entry *
entry_of(struct table *t, const char *label, size_t len)
{
	struct entry *e;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strlen(t->e[i].label) == len &&
		    memcmp(t->e[i].label, label, len) == 0)
			return &t->e[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;

		if ((e = realloc(t->e, cap * sizeof(*e))) == NULL)
			return NULL;
		t->e = e;
		t->cap = cap;
	}
	e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	if ((e->label = strndup(label, len)) == NULL)
		return NULL;
	t->n++;
	return e;
}

/* One sample line of ours into T: 0, or -1 when out of memory. Lines of
 * another shape are dropped. */
static int
parse_line(struct table *t, const char *line)
{
	const char *p, *q;
	struct entry *e;
	size_t i, len;
	char *end;
	double v;

	for (i = 0; i < M_N; i++) {
		len = strlen(families[i].name);
		if (strncmp(line, families[i].name, len) == 0 &&
		    strncmp(line + len, "{name=\"", 7) == 0)
			break;
	}
	if (i == M_N)
		return 0;
	p = line + len + 7;
	for (q = p; *q != '\0' && *q != '"'; q++)
		if (*q == '\\' && q[1] != '\0')
			q++;
	if (strncmp(q, "\"} ", 3) != 0)
		return 0;
	errno = 0;
	v = strtod(q + 3, &end);
	if (end == q + 3 || errno != 0 || (*end != '\n' && *end != '\0'))
		return 0;
	if ((e = entry_of(t, p, (size_t)(q - p))) == NULL)
		return -1;
	e->v[i] = v;
	e->has[i] = 1;
	return 0;
}

/* FILE's series into T: 0 (a missing FILE is empty), or -1 (errno). */
static int
read_table(const char *file, struct table *t)
{
	FILE *f = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	int r = 0;

	if (f == NULL)
		return errno == ENOENT ? 0 : -1;
	while (r == 0 && getline(&line, &cap, f) >= 0)
		r = parse_line(t, line);
	if (r == 0 && ferror(f))
		r = -1;
	free(line);
	fclose(f);
	return r;
}

/* R into E's series. */
static void
update(struct entry *e, const struct metrics_run *r)
{
	size_t i;

	for (i = M_RUNS; i < M_N; i++)
		e->has[i] = 1;
	e->v[M_RUNS] += r->ran;
	e->v[M_BUSY] += r->busy;
	e->v[M_LOST] += r->lost;
	if (r->busy)
		return;
	e->v[M_STATUS] = r->status;
	e->v[M_START] = (double)r->start_ms / 1000;
	e->v[M_END] = (double)r->end_ms / 1000;
	e->v[M_WAIT] = (double)r->wait_ms / 1000;
	e->v[M_HOLD] = (double)r->hold_ms / 1000;
	for (i = M_STATUS; i < M_RUNS; i++)
		e->has[i] = 1;
}

/* T on F, one family after another. */
static void
write_table(FILE *f, const struct table *t)
{
	size_t i, k;

	for (i = 0; i < M_N; i++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", families[i].name,
		    families[i].help, families[i].name, families[i].type);
		for (k = 0; k < t->n; k++) {
			if (!t->e[k].has[i])
				continue;
			fprintf(f, "%s{name=\"%s\"} ", families[i].name,
			    t->e[k].label);
			if (i == M_START || i == M_END || i == M_WAIT ||
			    i == M_HOLD)
				fprintf(f, "%.3f\n", t->e[k].v[i]);
			else
				fprintf(f, "%.0f\n", t->e[k].v[i]);
		}
	}
}

/* T into FILE through a temporary file beside it, renamed over it: a
 * reader sees the old FILE or the new one, never a part. 0, or -1 with
 * *WHAT the step that failed (errno). */
static int
replace(const char *file, const struct table *t, const char **what)
{
	char *tmp;
	FILE *f;
	int fd, e;

	if (asprintf(&tmp, "%s.XXXXXX", file) < 0) {
		*what = "out of memory";
		return -1;
	}
	*what = "cannot create a temporary file beside it";
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		free(tmp);
		return -1;
	}
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		goto fail;
	}
	*what = "cannot write a temporary file beside it";
	if (fchmod(fd, 0644) < 0)
		goto fail_f;
	write_table(f, t);
	if (fflush(f) != 0 || ferror(f) || fsync(fd) < 0)
		goto fail_f;
	if (fclose(f) != 0) {
		f = NULL;
		goto fail;
	}
	*what = "rename";
	if (rename(tmp, file) < 0)
		goto fail;
	free(tmp);
	return 0;
fail_f:
	e = errno;
	fclose(f);
	errno = e;
fail:
	e = errno;
	unlink(tmp);
	free(tmp);
	errno = e;
	return -1;
}

/* An flock of FILE.lock, waited for at most LOCK_WAIT_MS: its fd, or -1
 * with *WHAT (errno). The lock file stays: FILE is replaced by rename,
 * and a lock of it would be of an inode that the next writer no longer
 * opens. */
static int
lock_file(const char *file, const char **what)
{
	char *path;
	int fd, waited = 0;

	if (asprintf(&path, "%s.lock", file) < 0) {
		*what = "out of memory";
		return -1;
	}
	*what = "cannot open its lock file";
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	free(path);
	if (fd < 0)
		return -1;
	*what = "cannot lock its lock file";
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    waited >= LOCK_WAIT_MS) {
			if (errno == EWOULDBLOCK) {
				*what = "its lock file stayed locked for 5s";
				errno = 0;
			}
			close(fd);
			return -1;
		}
		poll(NULL, 0, 10);
		waited += 10;
	}
	return fd;
}

void
metrics_record(const char *file, const char *name,
    const struct metrics_run *r)
{
	struct table t = { NULL, 0, 0 };
	struct entry *e;
	const char *what = "out of memory";
	char *label;
	size_t i;
	int fd, ok = 0;

	if ((fd = lock_file(file, &what)) < 0)
		goto out;
	what = "out of memory";
	if ((label = label_of(name)) == NULL) {
		errno = 0;
		goto out;
	}
	if (read_table(file, &t) < 0)
		what = "cannot read it";
	else if ((e = entry_of(&t, label, strlen(label))) != NULL) {
		update(e, r);
		ok = replace(file, &t, &what) == 0;
	}
	free(label);
out:
	if (!ok)
		msg("--metrics-file %s: %s%s%s; the metrics of %s were not "
		    "written (the exit status is not changed)", esc(file), what,
		    errno != 0 ? ": " : "", errno != 0 ? strerror(errno) : "",
		    esc(name));
	if (fd >= 0)
		close(fd);
	for (i = 0; i < t.n; i++)
		free(t.e[i].label);
	free(t.e);
}
