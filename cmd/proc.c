/* proc.c: this process and the others of this host: the host and user
 * names, the boot id and pid namespace a hold records, /proc lookups
 * (whether a holder still runs, what is left of COMMAND's group, who
 * called lock) and the process title that ps shows. */
#include <sys/prctl.h>
#include <sys/resource.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
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

const char *
self_host(void)
{
	static char host[256];

	if (host[0] == '\0' && gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "unknown");
	return host;
}

/* The whole of file PATH into BUF (LEN bytes at most): its length, or
 * -1 when it cannot be read or does not fit. */
static ssize_t
slurp(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = -1;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while (got < len && ((n = read(fd, buf + got, len - got)) > 0 ||
	    (n < 0 && errno == EINTR)))
		got += n > 0 ? (size_t)n : 0;
	close(fd);
	return got < len && n == 0 ? (ssize_t)got : -1;
}

const char *
self_user(void)
{
	static char user[64], text[65536];
	struct passwd *pw;
	ssize_t n;

	if (user[0] != '\0')
		return user;
	/* Where NSS reads /etc/passwd first, its first entry for the uid is
	 * getpwuid's answer: read it here, at a tenth of the cost. */
	if ((n = slurp("/etc/nsswitch.conf", text, sizeof(text))) >= 0 &&
	    rl_nss_files_first(text, (size_t)n) &&
	    (n = slurp("/etc/passwd", text, sizeof(text))) >= 0 &&
	    rl_passwd_name(text, (size_t)n, (unsigned long)geteuid(), user,
	    sizeof(user)) == 0)
		return user;
	if ((pw = getpwuid(geteuid())) != NULL)
		snprintf(user, sizeof(user), "%s", pw->pw_name);
	else
		snprintf(user, sizeof(user), "%ld", (long)geteuid());
	return user;
}

/* The process's own argument area, which ps reads (/proc/PID/cmdline):
 * its words are moved to the heap at start, so that it can be rewritten
 * (proc_title) without pulling strings from under anyone. */
static struct {
	char *start;		/* argv[0] as the kernel laid it out */
	size_t len;		/* through the last word's NUL */
	char *copy;		/* the words everyone else reads */
} args;

void
proc_args_save(int argc, char **argv)
{
	size_t n;
	int i;

	free(args.copy);
	args.copy = NULL;
	args.start = argc > 0 ? argv[0] : NULL;
	args.len = 0;
	for (i = 0; i < argc; i++) {
		/* Only a contiguous area, as the kernel makes it. */
		if (argv[i] != args.start + args.len)
			break;
		args.len += strlen(argv[i]) + 1;
	}
	if (i < argc || args.len == 0 ||
	    (args.copy = malloc(args.len)) == NULL) {
		args.len = 0;
		return;
	}
	memcpy(args.copy, args.start, args.len);
	for (i = 0, n = 0; i < argc; i++) {
		argv[i] = args.copy + n;
		n += strlen(argv[i]) + 1;
	}
}

void
proc_args_sync(void)
{
	if (args.len > 0)
		memcpy(args.start, args.copy, args.len);
}

void
proc_title(const char *title)
{
	char **e;
	size_t n = strlen(title);

	(void)prctl(PR_SET_NAME, PROC_COMM);
	if (args.len == 0)
		return;
	/* Too long for the words: the environment's strings, when they
	 * follow, are moved to the heap to make room (nginx's way). */
	for (e = environ; n >= args.len && *e != NULL; e++) {
		if (*e != args.start + args.len)
			break;
		args.len += strlen(*e) + 1;
		if ((*e = strdup(*e)) == NULL)
			_exit(EXIT_SOFTWARE);
	}
	if (n >= args.len)
		n = args.len - 1;
	memset(args.start, 0, args.len);
	memcpy(args.start, title, n);
}

void
signal_group(pid_t pg, int sig)
{
	if (pg <= 0)
		return;
	if (kill(-pg, sig) < 0 && errno == ESRCH)
		kill(pg, sig);
}

/* The limit on open files that redlock started with, when files_enough
 * raised it: COMMAND gets it back. */
static struct rlimit files_start;
static int files_raised;

long
files_enough(unsigned long need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
		return (long)rl.rlim_max;
	if (!files_raised) {
		files_start = rl;
		files_raised = 1;
	}
	rl.rlim_cur = need;
	return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? (long)files_start.rlim_cur :
	    0;
}

void
files_restore(void)
{
	if (files_raised)
		(void)setrlimit(RLIMIT_NOFILE, &files_start);
}
