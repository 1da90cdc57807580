/* alive.c: whether processes still run: a holder recorded on this host
 * and the command that frees its name (status), what is left of
 * COMMAND's group (the watchdog), who called lock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

/* A process younger than its hold by more than this is another one that
 * was given the holder's pid since. The hold's age is the server's
 * (now - since, both its clock), the process's this host's (boot clock),
 * so no clock is compared with another's; the slack covers a step of
 * the server's clock and the 10 ms ticks of /proc. */
#define REUSED_SLACK_MS 2000

/* PID's state letter, process group and start (ms after boot) from
 * /proc/PID/stat: 0, -1 when it cannot be read. */
static int
proc_stat(long pid, char *state, long *pgrp, int64_t *start_ms)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the command name, which may hold anything, ")". */
	if ((p = strrchr(buf, ')')) == NULL || hz <= 0 ||
	    sscanf(p + 1, " %c %*d %ld %*d %*d %*d %*u %*u %*u %*u %*u %*u "
	    "%*u %*d %*d %*d %*d %*d %*d %llu", state, pgrp, &ticks) != 3)
		return -1;
	*start_ms = (int64_t)(ticks * 1000 / (unsigned long long)hz);
	return 0;
}

/* Whether a process of group PG has not exited: zombies, which kill(2)
 * still finds until they are reaped (by init, for orphans, when it gets
 * to it), do not count. */
int
group_runs(pid_t pg)
{
	struct dirent *e;
	int64_t start;
	long pgrp;
	char state;
	DIR *d;
	int found = 0;

	if (kill(-pg, 0) < 0 && errno == ESRCH)
		return 0;
	if ((d = opendir("/proc")) == NULL)
		return 1;
	while (!found && (e = readdir(d)) != NULL)
		found = e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
		    proc_stat(strtol(e->d_name, NULL, 10), &state, &pgrp,
		    &start) == 0 && pgrp == (long)pg && state != 'Z' &&
		    state != 'X';
	closedir(d);
	return found;
}

static int64_t
boot_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first line of FILE (a /proc or /sys file), into BUF. */
static const char *
first_line(const char *file, char *buf, size_t len, int link)
{
	ssize_t n = -1;
	FILE *f;

	buf[0] = '\0';
	if (link)
		n = readlink(file, buf, len - 1);
	else if ((f = fopen(file, "re")) != NULL) {
		n = fgets(buf, (int)len, f) != NULL ? (ssize_t)strcspn(buf,
		    "\n") : -1;
		fclose(f);
	}
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

const char *
self_boot(void)
{
	static char boot[64];

	if (boot[0] == '\0')
		first_line("/proc/sys/kernel/random/boot_id", boot,
		    sizeof(boot), 0);
	return boot;
}

const char *
self_pidns(void)
{
	static char ns[64];

	if (ns[0] == '\0')
		first_line("/proc/self/ns/pid", ns, sizeof(ns), 1);
	return ns;
}

void
meta_self(struct rl_meta *meta, int renewed)
{
	meta->host = self_host();
	meta->user = self_user();
	meta->proc.boot = self_boot()[0] != '\0' ? self_boot() : NULL;
	meta->proc.pidns = self_pidns()[0] != '\0' ? self_pidns() : NULL;
	meta->proc.renewed = renewed;
}

static int holder_running(long pid, int64_t held_ms);

int
hold_running(const struct rl_proc *proc, long pid, int64_t held_ms,
    int64_t until_ms)
{
	if (until_ms > 0 || proc == NULL || proc->boot == NULL ||
	    proc->pidns == NULL)
		return -1;
	if (!proc->renewed)
		return HOLD_UNRENEWED;
	if (strcmp(proc->boot, self_boot()) != 0 ||
	    strcmp(proc->pidns, self_pidns()) != 0)
		return -1;
	return holder_running(pid, held_ms);
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

/* hold_running of a process of this host and pid namespace. */
static int
holder_running(long pid, int64_t held_ms)
{
	int64_t start, now;
	long pgrp;
	char state;

	if (pid <= 0)
		return -1;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0;
	if (proc_stat(pid, &state, &pgrp, &start) < 0)
		return errno == ENOENT ? 0 : 1;
	if (state == 'Z' || state == 'X')
		return 0;	/* exited, not yet reaped */
	if (held_ms >= 0 && (now = boot_ms()) >= 0 &&
	    now - start + REUSED_SLACK_MS < held_ms)
		return 0;	/* started after the hold was taken */
	return 1;
}

/* Characters that need no quoting in a shell word. */
static int
plain(unsigned char c)
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
		quote |= !plain(*p);
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

/* /proc/PID/NAME's bytes into BUF (LEN at most): how many, -1. */
static ssize_t
proc_file(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, len);
	close(fd);
	return n;
}

/* Whether A and B run one program with one command line: B forked A (a
 * subshell) and neither has exec'd since. */
static int
same_program(pid_t a, pid_t b)
{
	char x[4096], y[4096], pa[64], pb[64];
	ssize_t n, m;

	snprintf(pa, sizeof(pa), "/proc/%ld/exe", (long)a);
	snprintf(pb, sizeof(pb), "/proc/%ld/exe", (long)b);
	if ((n = readlink(pa, x, sizeof(x))) <= 0 ||
	    (m = readlink(pb, y, sizeof(y))) <= 0 || n != m ||
	    memcmp(x, y, (size_t)n) != 0)
		return 0;
	n = proc_file(a, "cmdline", x, sizeof(x));
	m = proc_file(b, "cmdline", y, sizeof(y));
	return n > 0 && n == m && memcmp(x, y, (size_t)n) == 0;
}

static pid_t
parent_of(pid_t pid)
{
	char buf[1024], *p;
	ssize_t n = proc_file(pid, "stat", buf, sizeof(buf) - 1);
	long ppid;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %*c %ld",
	    &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

pid_t
caller_pid(void)
{
	pid_t p = getppid(), up;
	int i;

	for (i = 0; i < 32 && (up = parent_of(p)) > 1 && same_program(p, up);
	    i++)
		p = up;
	return p;
}
