/* sig.c: signals delivered as bytes on a self-pipe, for poll loops. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

const int relayed_signals[6] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2
};

static int pipefd[2] = { -1, -1 };
static sigset_t start_mask;
static struct sigaction start_ttou;	/* the watchdog of exec ignores it */
static int have_start_mask;

static void
on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	if (write(pipefd[1], &b, 1) < 0) {
		/* Full pipe: enough signals are already pending. */
	}
	errno = saved;
}

int
sig_catch(const int *sigs, int n)
{
	struct sigaction sa;
	sigset_t set;
	int i;

	if (!have_start_mask) {
		sigprocmask(SIG_SETMASK, NULL, &start_mask);
		sigaction(SIGTTOU, NULL, &start_ttou);
		have_start_mask = 1;
	}
	/* Caught means delivered: a mask inherited from whoever started
	 * redlock (COMMAND gets it back, sig_restore) must not hold them
	 * back. With SIGCHLD blocked, the end of COMMAND went unnoticed, and
	 * the watchdog renewed for ever, even after redlock was killed. */
	sigemptyset(&set);
	for (i = 0; i < n; i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	/* A pipe of an earlier call that nobody dropped (a child's copy). */
	sig_drop();
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < n; i++)
		sigaction(sigs[i], &sa, NULL);
	return pipefd[0];
}

void
sig_drop(void)
{
	if (pipefd[0] < 0)
		return;
	close(pipefd[0]);
	close(pipefd[1]);
	pipefd[0] = pipefd[1] = -1;
}

int
sig_next(int fd)
{
	unsigned char b;

	if (read(fd, &b, 1) == 1)
		return b;
	return 0;
}

void
sig_restore(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(relayed_signals) / sizeof(relayed_signals[0]);
	    i++)
		sigaction(relayed_signals[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	if (have_start_mask) {
		sigaction(SIGTTOU, &start_ttou, NULL);
		sigprocmask(SIG_SETMASK, &start_mask, NULL);
	}
}

void
sig_block_all(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, old);
}

void
sig_unblock(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}
