/*
 * tcp_relay: the least a proxy can do, as a yardstick for mcpreel's HTTP
 * recorder.  It accepts on 127.0.0.1 and relays each connection's bytes
 * to --upstream PORT and back, on one thread with epoll, like mcpreel's
 * event loop, but parsing, copying out and recording nothing: one read
 * and one write per segment.  What it costs per exchange is the cost of
 * the hop itself (two more sockets' system calls and loopback delivery),
 * which no proxy in user space avoids.
 *
 *   tcp_relay --upstream PORT [--port P]
 */

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* One read's size: an exchange of the bench is well under it. */
#define RELAY_BUF_SIZE		(64 * 1024)
/* Events taken from one epoll_wait. */
#define RELAY_EVENTS		64

/* One side of a relayed connection: its socket and its peer's. */
struct relay_side {
	int			 fd;
	struct relay_side	*peer;
};

/* Pairs closed in this epoll batch: freed after it, when no event of it is left. */
static struct relay_side	*relay_dead[RELAY_EVENTS];
static int			 relay_ndead;

static __dead void	usage(void);
static int		relay_connect(int);
static void		relay_close(int, struct relay_side *);
static void		relay_pump(int, struct relay_side *, char *);

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr, "usage: tcp_relay --upstream PORT [--port P]\n"
	    "Relay each connection on 127.0.0.1:P to 127.0.0.1:PORT, "
	    "parsing nothing.\n");
	exit(2);
}

/* A blocking connect to 127.0.0.1:port, then non-blocking, no Nagle. */
static int
relay_connect(int port)
{
	struct sockaddr_in	sin;
	int			fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		util_fatal("socket");
	util_loopback(&sin, port);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0)
		util_fatal("connecting to 127.0.0.1:%d", port);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (util_set_nonblock(fd, 1) != 0)
		util_fatal("non-blocking");
	return fd;
}

/* Close both sides of a connection; the pair is freed after the batch. */
static void
relay_close(int ep, struct relay_side *s)
{
	struct relay_side	*p = s->peer;

	epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
	epoll_ctl(ep, EPOLL_CTL_DEL, p->fd, NULL);
	close(s->fd);
	close(p->fd);
	s->fd = p->fd = -1;
	relay_dead[relay_ndead++] = s < p ? s : p;	/* one allocation */
}

/*
 * Move what s has to read to its peer.  The peer's socket buffer takes a
 * bench exchange whole, so a full one is waited out here in poll()
 * (blocking the relay, not spinning on EAGAIN, which would count as its
 * CPU) rather than queued: a yardstick, not a proxy to deploy.
 */
static void
relay_pump(int ep, struct relay_side *s, char *buf)
{
	struct pollfd	pfd;
	ssize_t		n, w, off;

	if (s->fd == -1)	/* closed earlier in this batch */
		return;
	n = read(s->fd, buf, RELAY_BUF_SIZE);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		relay_close(ep, s);
		return;
	}
	for (off = 0; off < n; off += w) {
		w = write(s->peer->fd, buf + off, (size_t)(n - off));
		if (w == -1 && (errno == EAGAIN || errno == EINTR)) {
			pfd.fd = s->peer->fd;
			pfd.events = POLLOUT;
			poll(&pfd, 1, -1);
			w = 0;
			continue;
		}
		if (w == -1) {
			relay_close(ep, s);
			return;
		}
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port",	required_argument,	NULL, 'p' },
		{ "upstream",	required_argument,	NULL, 'u' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct epoll_event	 ev, evs[RELAY_EVENTS];
	struct relay_side	*pair;
	char			*buf;
	int			 ch, lfd, ep, fd, i, n, port = 0, up = 0, one = 1;

	util_setprogname(argv[0]);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			port = util_parse_port("--port", optarg);
			break;
		case 'u':
			up = util_parse_port("--upstream", optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || up == 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	buf = util_xmalloc(RELAY_BUF_SIZE);
	lfd = util_listen(port, 128, 1, &port);
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		util_fatal("epoll_create1");
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;		/* the listener */
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	printf("tcp_relay: listening on http://127.0.0.1:%d\n", port);
	fflush(stdout);

	for (;;) {
		if ((n = epoll_wait(ep, evs, RELAY_EVENTS, -1)) == -1) {
			if (errno == EINTR)
				continue;
			util_fatal("epoll_wait");
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr != NULL) {
				relay_pump(ep, evs[i].data.ptr, buf);
				continue;
			}
			fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC |
			    SOCK_NONBLOCK);
			if (fd == -1)
				continue;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof one);
			pair = util_xmalloc(2 * sizeof *pair);
			pair[0].fd = fd;
			pair[1].fd = relay_connect(up);
			pair[0].peer = &pair[1];
			pair[1].peer = &pair[0];
			ev.events = EPOLLIN;
			ev.data.ptr = &pair[0];
			epoll_ctl(ep, EPOLL_CTL_ADD, pair[0].fd, &ev);
			ev.data.ptr = &pair[1];
			epoll_ctl(ep, EPOLL_CTL_ADD, pair[1].fd, &ev);
		}
		while (relay_ndead > 0)
			free(relay_dead[--relay_ndead]);
	}
}
