/* test_cmd.c: pieces of cmd/ that no command line can reach alone: the
 * self-pipe of signals. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* Before cmocka.h, whose fail() macro would rename cmd.h's fail. */
#include "../../cmd/cmd.h"

#include <cmocka.h>

static int
is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

/* A pipe replaced after it was dropped: the file that took the old read
 * end's number since stays open (a second close of that number closed
 * it: the watchdog's pipe, opened after the waiter's pipe went). */
static void
test_sig_catch_again_spares_a_reused_number(void **state)
{
	int sigs[] = { SIGUSR1 };
	int fd, other, fd2;

	(void)state;
	assert_true((fd = sig_catch(sigs, 1)) >= 0);
	sig_drop();
	assert_false(is_open(fd));
	/* The lowest free number: the old read end's, as a real file. */
	assert_true((other = open("/dev/null", O_RDONLY)) >= 0);
	assert_true((fd2 = sig_catch(sigs, 1)) >= 0);
	assert_true(is_open(other));
	assert_int_not_equal(fd2, other);
	close(other);
	sig_drop();
	assert_false(is_open(fd2));
}

/* Signals still arrive on the new pipe, none on the old. */
static void
test_sig_catch_again_delivers_to_the_new_pipe(void **state)
{
	int sigs[] = { SIGUSR2 };
	int fd;

	(void)state;
	assert_true(sig_catch(sigs, 1) >= 0);
	assert_true((fd = sig_catch(sigs, 1)) >= 0);
	assert_int_equal(sig_next(fd), 0);
	raise(SIGUSR2);
	assert_int_equal(sig_next(fd), SIGUSR2);
	assert_int_equal(sig_next(fd), 0);
	sig_drop();
	sig_restore();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sig_catch_again_spares_a_reused_number),
		cmocka_unit_test(test_sig_catch_again_delivers_to_the_new_pipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
