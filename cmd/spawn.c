/* spawn.c: COMMAND's environment and its start, made ready before the
 * lock is held so that only one vfork and one exec come between the
 * acquisition and COMMAND. */
#include <sys/prctl.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cmd.h"

/* K=V into S's own strings; -1 when out of memory. */
static int
spawn_put(struct spawn *s, const char *k, const char *v)
{
	char *kv;

	if (s->nset >= sizeof(s->set) / sizeof(s->set[0]) ||
	    asprintf(&kv, "%s=%s", k, v) < 0)
		return -1;
	s->set[s->nset++] = kv;
	return 0;
}

/* Whether environment string E sets a variable S sets. */
static int
spawn_overrides(const struct spawn *s, const char *e)
{
	size_t i, n;

	for (i = 0; i < s->nset; i++) {
		n = strcspn(s->set[i], "=") + 1;
		if (strncmp(s->set[i], e, n) == 0)
			return 1;
	}
	return 0;
}

void
spawn_free(struct spawn *s)
{
	size_t i;

	for (i = 0; i < s->nset; i++)
		free(s->set[i]);
	free(s->envp);
	s->nset = 0;
	s->envp = NULL;
}

/* COMMAND's environment, for NAME held by O with FENCE: 0, or -1 (out
 * of memory). The TLS files given as options go as absolute paths,
 * since COMMAND may change directory; REDLOCK_HELD makes a nested exec
 * of NAME re-enter rather than wait for this one. */
int
spawn_env(struct spawn *s, const struct globals *g, const char *name,
    const struct lockopts *o, int64_t fence)
{
	const char *tk[] = { "REDLOCK_CACERT", "REDLOCK_CERT", "REDLOCK_KEY" };
	const char *tv[] = { g->tls.cacert, g->tls.cert, g->tls.key };
	char num[32], *held, *abs;
	size_t i, n, k;
	int bad = 0;

	s->nset = 0;
	bad |= spawn_put(s, "REDLOCK_NAME", name_shown(name));
	bad |= spawn_put(s, "REDLOCK_OWNER", o->owner);
	if ((held = held_with(name, o->owner, o->held_kind)) == NULL)
		bad = -1;
	else
		bad |= spawn_put(s, "REDLOCK_HELD", held);
	free(held);
	snprintf(num, sizeof(num), "%lld", (long long)fence);
	bad |= spawn_put(s, "REDLOCK_FENCE", num);
	snprintf(num, sizeof(num), "%lld", (long long)o->ttl_ms);
	bad |= spawn_put(s, "REDLOCK_TTL_MS", num);
	bad |= spawn_put(s, "REDLOCK_URL", g->url_text);
	/* Nested calls make the same keys of a NAME (REDLOCK_HELD's are
	 * the keys). */
	if (key_prefix[0] != '\0')
		bad |= spawn_put(s, "REDLOCK_PREFIX", key_prefix);
	for (i = 0; i < sizeof(tk) / sizeof(tk[0]); i++) {
		if (tv[i] == NULL)
			continue;
		abs = realpath(tv[i], NULL);
		bad |= spawn_put(s, tk[i], abs != NULL ? abs : tv[i]);
		free(abs);
	}
	/* A nested call wakes and is woken as this one. */
	if (o->pubsub_given)
		bad |= spawn_put(s, PUBSUB_VAR, pubsub_name(o->pubsub));
	for (n = 0; environ[n] != NULL; n++)
		;
	if (bad || (s->envp = calloc(n + s->nset + 1,
	    sizeof(*s->envp))) == NULL) {
		spawn_free(s);
		return -1;
	}
	for (i = 0, k = 0; i < n; i++)
		if (!spawn_overrides(s, environ[i]))
			s->envp[k++] = environ[i];
	for (i = 0; i < s->nset; i++)
		s->envp[k++] = s->set[i];
	s->envp[k] = NULL;
	return 0;
}

/* In the child of vfork: become COMMAND. It shares the watchdog's memory
 * until it execs, so it only makes system calls; exec's errno goes back
 * on S->err_fd. */
static void __attribute__((noreturn))
spawn_child(const struct spawn *s)
{
	int e;

	/* If the watchdog dies too, the kernel kills COMMAND. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != s->watchdog)
		_exit(EXIT_LOST);
	setpgid(0, 0);
	if (s->tty) {
		/* COMMAND gets the terminal, as a shell would give it. */
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(STDIN_FILENO, getpid());
	}
	sig_restore();
	files_restore();
	execvpe(s->argv[0], s->argv, s->envp);
	e = errno;
	if (write(s->err_fd, &e, sizeof(e)) < 0) {
		/* The parent then sees exec fail only in the status. */
	}
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

/* Why exec of COMMAND failed (errno E), in one line. */
static void
spawn_failed(char **cmd, int e)
{
	/* "./deploy.sh 1 0" quoted as one word: meant for a shell. */
	if (e == ENOENT && cmd[1] == NULL && strchr(cmd[0], ' ') != NULL)
		msg("cannot run %s: %s; to have /bin/sh split it into words, "
		    "give it as -c '%s' instead of after --", esc(cmd[0]),
		    strerror(e), esc(cmd[0]));
	else
		msg("cannot run %s: %s", esc(cmd[0]), strerror(e));
}

/* Start COMMAND as S says, in a process group of its own: its pid, or -1
 * (errno set). All signals are blocked in the caller. */
pid_t
spawn(struct spawn *s)
{
	int ep[2], e = 0;
	pid_t pid;

	if (pipe2(ep, O_CLOEXEC) < 0)
		return -1;
	s->err_fd = ep[1];
	pid = vfork();
	if (pid == 0)
		spawn_child(s);
	e = errno;
	close(ep[1]);
	if (pid < 0) {
		close(ep[0]);
		errno = e;
		return -1;
	}
	setpgid(pid, pid);
	/* EOF once the child has exec'd (the pipe closes on it); errno
	 * when it could not. */
	e = 0;
	while (read(ep[0], &e, sizeof(e)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (e != 0)
		spawn_failed(s->argv, e);
	return pid;
}
