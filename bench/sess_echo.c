/*
 * sess_echo: a Streamable HTTP MCP server with sessions, for the many
 * sessions benchmark (bench/scen_sessions.sh).  At the wire level it
 * behaves like an SDK server:
 *
 *   POST initialize         200 JSON answer and a fresh Mcp-Session-Id
 *   POST a request          200 JSON answer, the id copied; and one
 *                           notifications/message event (data: the id)
 *                           pushed on the session's GET stream, if open
 *   POST a notification     202
 *   GET text/event-stream   200 text/event-stream (chunked), kept open
 *   DELETE                  200; the session and its stream end
 *
 * An unknown session id gets 404, none 400.  One thread, epoll,
 * non-blocking sockets; an idle connection holds no buffer, so the
 * server's own memory per idle stream is a reference for a proxy's.
 *
 * It listens on 127.0.0.1, port 0 unless --port says otherwise, prints
 * "sess_echo: listening on http://127.0.0.1:PORT" when ready and runs
 * until killed.
 */

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "sess.h"

/* Descriptors we ask for: 10 000 sessions are 20 000 connections. */
#define SECHO_NOFILE		(256 * 1024)
/* Events taken from epoll at a time. */
#define SECHO_EVENTS		256

/* One connection; buffers exist only while they hold something. */
struct sconn {
	char		*in;
	size_t		 inlen;
	char		*out;
	size_t		 outlen;
	size_t		 outoff;
	uint32_t	 stream;	/* the session + 1 whose GET this is */
	int		 open;
	int		 closing;	/* close once the output is out */
};

/* One MCP session. */
struct ssess {
	int		 live;
	int		 stream_fd;	/* its GET stream, or -1 */
	uint32_t	 tag;		/* random part of its id */
};

static struct sconn	*conns;
static size_t		 nconns;
static struct ssess	*sessions;
static uint32_t		 nsessions;
static int		 epfd;

static __dead void	usage(void);
static void		sconn_close(int);
static void		sconn_flush(int);
static void		sconn_send(int, const char *, size_t);
static void		sconn_reply(int, const char *, const char *, size_t,
			    const char *);
static struct ssess	*ssess_find(const char *, size_t, uint32_t *);
static void		ssess_push(struct ssess *, const char *, size_t);
static void		sconn_request(int, const char *, size_t, const char *,
			    size_t);
static void		sconn_read(int);

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr, "usage: sess_echo [--port PORT]\n"
	    "Serve Streamable HTTP MCP sessions with GET streams on "
	    "127.0.0.1; print the address on stdout.\n");
	exit(2);
}

/* Close a connection, ending the stream it carried. */
static void
sconn_close(int fd)
{
	struct sconn	*c = &conns[fd];

	if (c->stream != 0 && sessions[c->stream - 1].stream_fd == fd)
		sessions[c->stream - 1].stream_fd = -1;
	free(c->in);
	free(c->out);
	memset(c, 0, sizeof *c);
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

/* Write what is queued; wait for EPOLLOUT for the rest. */
static void
sconn_flush(int fd)
{
	struct sconn		*c = &conns[fd];
	struct epoll_event	 ev = { .data.fd = fd };
	ssize_t			 n;

	while (c->outoff < c->outlen) {
		n = write(fd, c->out + c->outoff, c->outlen - c->outoff);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			ev.events = EPOLLIN | EPOLLOUT;
			epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
			return;
		}
		if (n <= 0) {
			sconn_close(fd);
			return;
		}
		c->outoff += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->outlen = c->outoff = 0;
	ev.events = EPOLLIN;
	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
	if (c->closing)
		sconn_close(fd);
}

/* Queue bytes on a connection and try to write them. */
static void
sconn_send(int fd, const char *p, size_t len)
{
	struct sconn	*c = &conns[fd];
	int		 idle = c->outlen == 0;

	c->out = util_xrealloc(c->out, c->outlen + len);
	memcpy(c->out + c->outlen, p, len);
	c->outlen += len;
	if (idle)
		sconn_flush(fd);
}

/* Answer with a status, extra header lines and a JSON body (or none). */
static void
sconn_reply(int fd, const char *status, const char *body, size_t blen,
    const char *extra)
{
	char	buf[1024];
	int	n;

	n = snprintf(buf, sizeof buf, "HTTP/1.1 %s\r\n%sContent-Length: %zu"
	    "\r\n%s\r\n", status, blen > 0 ? "Content-Type: application/json"
	    "\r\n" : "", blen, extra != NULL ? extra : "");
	if (n < 0 || (size_t)n + blen > sizeof buf)
		util_fatalx("an answer of %zu bytes is too long", blen);
	memcpy(buf + n, body, blen);
	sconn_send(fd, buf, (size_t)n + blen);
}

/* The session an Mcp-Session-Id names, its index in *idx; NULL if none. */
static struct ssess *
ssess_find(const char *v, size_t vlen, uint32_t *idx)
{
	char		 tmp[32];
	unsigned	 i, tag;

	if (vlen >= sizeof tmp)
		return NULL;
	memcpy(tmp, v, vlen);
	tmp[vlen] = '\0';
	if (sscanf(tmp, "s%u-%8x", &i, &tag) != 2 || i >= nsessions ||
	    !sessions[i].live || sessions[i].tag != tag)
		return NULL;
	*idx = i;
	return &sessions[i];
}

/* Push one SSE event, as one chunk, on a session's stream if it has one. */
static void
ssess_push(struct ssess *s, const char *data, size_t len)
{
	char	buf[1024];
	int	n;

	if (s->stream_fd == -1)
		return;
	n = snprintf(buf, sizeof buf, "%zx\r\nevent: message\ndata: %.*s\n\n"
	    "\r\n", len + 23, (int)len, data);
	if (n > 0 && (size_t)n < sizeof buf)
		sconn_send(s->stream_fd, buf, (size_t)n);
}

/* Serve one whole request: its head and body. */
static void
sconn_request(int fd, const char *head, size_t hlen, const char *body,
    size_t blen)
{
	struct ssess	*s = NULL;
	const char	*v;
	size_t		 vlen, off, idlen;
	uint32_t	 idx = 0;
	char		 msg[512], extra[128];
	int		 n, has_sid;

	has_sid = sess_header(head, hlen, "Mcp-Session-Id", &v, &vlen) == 0;
	if (has_sid)
		s = ssess_find(v, vlen, &idx);

	if (strncmp(head, "POST ", 5) == 0 && memmem(body, blen,
	    "\"method\":\"initialize\"", 21) != NULL) {
		if (nsessions == SESS_MAX) {
			sconn_reply(fd, "503 Service Unavailable", NULL, 0, NULL);
			return;
		}
		if (util_find_id(body, blen, &off, &idlen) != 0) {
			sconn_reply(fd, "400 Bad Request", NULL, 0, NULL);
			return;
		}
		idx = nsessions++;
		sessions[idx].live = 1;
		sessions[idx].stream_fd = -1;
		sessions[idx].tag = (uint32_t)random();
		n = snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%.*s,"
		    "\"result\":{\"protocolVersion\":\"2025-06-18\","
		    "\"capabilities\":{\"logging\":{}},\"serverInfo\":"
		    "{\"name\":\"sess_echo\",\"version\":\"1.0\"}}}",
		    (int)idlen, body + off);
		snprintf(extra, sizeof extra, "Mcp-Session-Id: s%u-%08x\r\n",
		    idx, sessions[idx].tag);
		sconn_reply(fd, "200 OK", msg, (size_t)n, extra);
		return;
	}
	if (!has_sid) {
		sconn_reply(fd, "400 Bad Request", NULL, 0, NULL);
		return;
	}
	if (s == NULL) {
		sconn_reply(fd, "404 Not Found", NULL, 0, NULL);
		return;
	}
	if (strncmp(head, "POST ", 5) == 0) {
		if (util_find_id(body, blen, &off, &idlen) != 0) {
			sconn_reply(fd, "202 Accepted", NULL, 0, NULL);
			return;
		}
		n = snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/message\",\"params\":{\"level\":\"info\","
		    "\"data\":%.*s}}", (int)idlen, body + off);
		ssess_push(s, msg, (size_t)n);
		n = snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%.*s,"
		    "\"result\":{}}", (int)idlen, body + off);
		sconn_reply(fd, "200 OK", msg, (size_t)n, NULL);
	} else if (strncmp(head, "GET ", 4) == 0) {
		if (s->stream_fd != -1) {
			sconn_reply(fd, "409 Conflict", NULL, 0, NULL);
			return;
		}
		s->stream_fd = fd;
		conns[fd].stream = idx + 1;
		v = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
		    "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
		sconn_send(fd, v, strlen(v));
	} else if (strncmp(head, "DELETE ", 7) == 0) {
		if (s->stream_fd != -1) {
			conns[s->stream_fd].closing = 1;
			sconn_send(s->stream_fd, "0\r\n\r\n", 5);
		}
		s->live = 0;
		sconn_reply(fd, "200 OK", NULL, 0, NULL);
	} else
		sconn_reply(fd, "405 Method Not Allowed", NULL, 0,
		    "Allow: GET, POST, DELETE\r\n");
}

/* Read what a connection sent and serve each whole request in it. */
static void
sconn_read(int fd)
{
	struct sconn	*c = &conns[fd];
	char		*p;
	size_t		 len, hlen, blen, used;

	if (sess_read(fd, &c->in, &c->inlen) <= 0) {
		sconn_close(fd);	/* its end, an error, or too long */
		return;
	}
	if (c->stream != 0) {
		/* Nothing more is expected on a GET. */
		sess_keep(&c->in, &c->inlen, NULL, 0);
		return;
	}
	p = c->in;
	len = c->inlen;
	while (len > 0 && conns[fd].open) {
		if ((hlen = sess_head_len(p, len)) == 0)
			break;
		blen = sess_header_num(p, hlen, "Content-Length", 0);
		if (blen > SESS_BODY_MAX) {
			sconn_close(fd);
			return;
		}
		if (len < hlen + blen)
			break;
		sconn_request(fd, p, hlen, p + hlen, blen);
		used = hlen + blen;
		p += used;
		len -= used;
	}
	if (!conns[fd].open)
		return;
	sess_keep(&c->in, &c->inlen, p, len);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port",	required_argument,	NULL, 'p' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct epoll_event	 ev, evs[SECHO_EVENTS];
	int			 ch, lfd, fd, i, n, one = 1, port = 0;

	util_setprogname(argv[0]);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			port = util_parse_port("--port", optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	signal(SIGPIPE, SIG_IGN);
	srandom((unsigned)getpid());
	nconns = sess_raise_nofile(SECHO_NOFILE);
	conns = calloc(nconns, sizeof *conns);
	sessions = calloc(SESS_MAX, sizeof *sessions);
	if (conns == NULL || sessions == NULL)
		util_fatal("allocating the tables");

	lfd = util_listen(port, 4096, 1, &port);
	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		util_fatal("epoll_create1");
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
	printf("sess_echo: listening on http://127.0.0.1:%d\n", port);
	fflush(stdout);

	for (;;) {
		n = epoll_wait(epfd, evs, SECHO_EVENTS, -1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			util_fatal("epoll_wait");
		for (i = 0; i < n; i++) {
			fd = evs[i].data.fd;
			if (fd == lfd) {
				while ((fd = accept4(lfd, NULL, NULL,
				    SOCK_CLOEXEC | SOCK_NONBLOCK)) != -1) {
					if ((size_t)fd >= nconns) {
						close(fd);
						continue;
					}
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY,
					    &one, sizeof one);
					conns[fd].open = 1;
					ev.events = EPOLLIN;
					ev.data.fd = fd;
					epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
				}
				continue;
			}
			if (!conns[fd].open)
				continue;
			if (evs[i].events & EPOLLOUT)
				sconn_flush(fd);
			if (conns[fd].open && (evs[i].events &
			    (EPOLLIN | EPOLLHUP | EPOLLERR)))
				sconn_read(fd);
		}
	}
}
