/*
 * hretry_alive: a kept-alive upstream connection that its server closed
 * while idle is seen before a request goes on it; one that is open, with
 * or without bytes waiting, may be reused, and the bytes stay unread.
 */

#include <sys/socket.h>

#include <unistd.h>

#include <criterion/criterion.h>

#include "http_int.h"
#include "unit.h"

/* A connected pair of stream sockets: the first plays the upstream connection. */
static void
hretry_test_pair(int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

Test(hretry, alive_when_open_and_idle)
{
	int	sv[2];

	hretry_test_pair(sv);
	cr_assert_eq(hretry_alive(sv[0]), 1);
	close(sv[0]);
	close(sv[1]);
}

Test(hretry, alive_with_bytes_waiting_which_stay)
{
	int	sv[2];
	char	c = 0;

	hretry_test_pair(sv);
	cr_assert_eq(write(sv[1], "x", 1), 1);
	cr_assert_eq(hretry_alive(sv[0]), 1);
	cr_assert_eq(read(sv[0], &c, 1), 1, "the peeked byte is still there");
	cr_assert_eq(c, 'x');
	close(sv[0]);
	close(sv[1]);
}

Test(hretry, closed_when_the_peer_closed)
{
	int	sv[2];

	hretry_test_pair(sv);
	close(sv[1]);
	cr_assert_eq(hretry_alive(sv[0]), 0);
	close(sv[0]);
}

Test(hretry, closed_when_the_peer_shut_down_writing)
{
	int	sv[2];

	hretry_test_pair(sv);
	cr_assert_eq(shutdown(sv[1], SHUT_WR), 0);
	cr_assert_eq(hretry_alive(sv[0]), 0);
	close(sv[0]);
	close(sv[1]);
}

Test(hretry, closed_when_the_descriptor_is_bad)
{
	cr_assert_eq(hretry_alive(-1), 0);
}
