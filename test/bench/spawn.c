/* spawn.c: what flock(1) does between its lock and COMMAND, timed: print
 * "spawn" and the wall clock in microseconds (as bash's EPOCHREALTIME
 * reads it), then fork and execvp COMMAND, and exit with its status. The
 * handoff benchmark gives it the COMMAND the handoffs run, to compare
 * redlock's step from the acquisition to COMMAND's start with a bare
 * fork and exec of the same COMMAND.
 * usage: bench-spawn COMMAND [ARG ...] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct timespec ts;
	pid_t pid;
	int st;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-spawn COMMAND [ARG ...]\n");
		return 64;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("spawn %lld.%06ld\n", (long long)ts.tv_sec, ts.tv_nsec / 1000);
	fflush(stdout);
	if ((pid = fork()) < 0) {
		perror("bench-spawn: fork");
		return 71;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror("bench-spawn: exec");
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
