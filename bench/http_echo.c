/*
 * http_echo: a Streamable HTTP MCP server for benchmarks.  Each POST with
 * a JSON-RPC request body gets 200 application/json with the same answer
 * as the stdio echo_server (the id copied, a pad making it as long as the
 * request); a POST without an id (a notification or a response) gets 202.
 * Other methods get 405: there is no GET stream.  HTTP/1.1 keep-alive,
 * one thread per connection.
 *
 * --answer says how the echo is framed, as real servers do: json (the
 * default: application/json with Content-Length), chunked (application/json
 * in one chunk and the last chunk) or sse (text/event-stream, chunked, the
 * echo as one `event: message` event, as the MCP SDKs answer a POST with a
 * stream).  --split writes the head, each chunk and the last chunk with
 * write() calls of their own (a Node server flushes its head first, then
 * each res.write(), then res.end()), so they leave as separate segments.
 *
 * It listens on 127.0.0.1, port 0 unless --port says otherwise, and prints
 * "http_echo: listening on http://127.0.0.1:PORT" on stdout when ready.
 * It runs until killed.
 */

#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench.h"

/* The longest request head; a longer one is refused with 431. */
#define HECHO_HEAD_MAX		(64 * 1024)
/* Connections served at once; more are closed at once with a warning. */
#define HECHO_CONNS_MAX		1024
/* The read buffer's first size; it grows to hold one whole request. */
#define HECHO_BUF_INITIAL	(64 * 1024)
/* Room for the head, a chunk size line, the SSE framing and the end. */
#define HECHO_FRAMING_MAX	512

/* An SSE answer's event: its type line and the data field's name. */
#define HECHO_SSE_HEAD		"event: message\ndata: "

/* How an answer is framed (--answer). */
enum hecho_answer {
	HECHO_JSON,
	HECHO_CHUNKED,
	HECHO_SSE
};

static enum hecho_answer	hecho_answer = HECHO_JSON;
static int			hecho_split;

/* One client connection, owned by its thread. */
struct hconn {
	int	 fd;
	char	*buf;
	size_t	 len;
	size_t	 cap;
	char	*out;
	size_t	 out_cap;
};

/* What the head of a request said that matters to us. */
struct hreq {
	char	 method[16];
	size_t	 head_len;	/* through the blank line */
	size_t	 body_len;
	int	 close;		/* Connection: close */
	int	 chunked;
};

static atomic_int	hecho_conns;

static __dead void	usage(void);
static int		hconn_fill(struct hconn *);
static int		hconn_write(struct hconn *, const char *, size_t);
static int		hconn_head(struct hconn *, struct hreq *);
static int		hconn_simple(struct hconn *, const char *, int);
static int		hconn_answer(struct hconn *, const struct hreq *);
static void		*hconn_main(void *);

/* Say how to run us. */
static __dead void
usage(void)
{
	fprintf(stderr, "usage: http_echo [--port PORT] "
	    "[--answer json|chunked|sse] [--split]\n"
	    "Serve POST (any path) with a JSON-RPC echo on 127.0.0.1; print the "
	    "address on stdout.\n");
	exit(2);
}

/* Read more of the connection into its buffer; 0 at end, -1 on error. */
static int
hconn_fill(struct hconn *c)
{
	ssize_t	n;

	if (c->len == c->cap) {
		c->cap *= 2;
		c->buf = util_xrealloc(c->buf, c->cap);
	}
	do
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
	while (n == -1 && errno == EINTR);
	if (n <= 0)
		return (int)n;
	c->len += (size_t)n;
	return 1;
}

/* Write all of a buffer to the connection; -1 if the client went away. */
static int
hconn_write(struct hconn *c, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = write(c->fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Parse the request head at the start of the buffer, reading until it is
 * whole.  Returns 1 with req filled, 0 at a clean end of the connection,
 * -1 on a head we refuse (answered) or an error.
 */
static int
hconn_head(struct hconn *c, struct hreq *req)
{
	char	*end, *line, *next, *colon, *v;
	int	 r;

	memset(req, 0, sizeof *req);
	while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4)) == NULL) {
		if (c->len > HECHO_HEAD_MAX) {
			hconn_simple(c, "431 Request Header Fields Too Large", 1);
			return -1;
		}
		if ((r = hconn_fill(c)) <= 0)
			return (r == 0 && c->len == 0) ? 0 : -1;
	}
	req->head_len = (size_t)(end - c->buf) + 4;
	*end = '\0';
	if (sscanf(c->buf, "%15s", req->method) != 1) {
		hconn_simple(c, "400 Bad Request", 1);
		return -1;
	}
	line = strstr(c->buf, "\r\n");
	while (line != NULL) {
		line += 2;
		next = strstr(line, "\r\n");
		if (next != NULL)
			*next = '\0';
		if ((colon = strchr(line, ':')) != NULL) {
			*colon = '\0';
			v = colon + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			if (strcasecmp(line, "Content-Length") == 0)
				req->body_len = strtoull(v, NULL, 10);
			else if (strcasecmp(line, "Connection") == 0 &&
			    strcasecmp(v, "close") == 0)
				req->close = 1;
			else if (strcasecmp(line, "Transfer-Encoding") == 0)
				req->chunked = 1;
		}
		line = next;
	}
	if (req->chunked) {
		hconn_simple(c, "501 Not Implemented", 1);
		return -1;
	}
	if (req->body_len > BENCH_MSG_MAX) {
		hconn_simple(c, "413 Content Too Large", 1);
		return -1;
	}
	while (c->len < req->head_len + req->body_len) {
		if (c->cap < req->head_len + req->body_len) {
			c->cap = req->head_len + req->body_len;
			c->buf = util_xrealloc(c->buf, c->cap);
		}
		if (hconn_fill(c) <= 0)
			return -1;
	}
	return 1;
}

/* Answer with a status and no body. */
static int
hconn_simple(struct hconn *c, const char *status, int close)
{
	char	head[256];
	int	n;

	n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Length: 0\r\n"
	    "%s%s\r\n", status, close ? "Connection: close\r\n" : "",
	    strncmp(status, "405", 3) == 0 ? "Allow: POST\r\n" : "");
	return hconn_write(c, head, (size_t)n);
}

/* Answer one whole request: the echo for a POST with an id. */
static int
hconn_answer(struct hconn *c, const struct hreq *req)
{
	const char	*body = c->buf + req->head_len;
	size_t		 off, idlen, pad, blen, need, chunk;
	char		*p, *start;
	int		 hl;

	if (strcmp(req->method, "POST") != 0)
		return hconn_simple(c, "405 Method Not Allowed", req->close);
	if (util_find_id(body, req->body_len, &off, &idlen) != 0)
		return hconn_simple(c, "202 Accepted", req->close);

	pad = util_echo_pad(req->body_len, idlen);
	blen = sizeof BENCH_RESP_HEAD - 1 + idlen + sizeof BENCH_RESP_MID - 1 +
	    pad + sizeof BENCH_RESP_TAIL - 1;
	need = HECHO_FRAMING_MAX + blen;
	if (c->out_cap < need) {
		c->out = util_xrealloc(c->out, need);
		c->out_cap = need;
	}
	if (hecho_answer == HECHO_JSON)
		hl = snprintf(c->out, HECHO_FRAMING_MAX / 2, "HTTP/1.1 200 OK\r\n"
		    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		    "%s\r\n", blen, req->close ? "Connection: close\r\n" : "");
	else
		hl = snprintf(c->out, HECHO_FRAMING_MAX / 2, "HTTP/1.1 200 OK\r\n"
		    "Content-Type: %s\r\nTransfer-Encoding: chunked\r\n%s\r\n",
		    hecho_answer == HECHO_SSE ? "text/event-stream" :
		    "application/json",
		    req->close ? "Connection: close\r\n" : "");
	if (hecho_split && hconn_write(c, c->out, (size_t)hl) != 0)
		return -1;
	/* Split, the head has gone: the body starts the buffer again. */
	start = c->out;
	p = c->out + (hecho_split ? 0 : hl);
	if (hecho_answer != HECHO_JSON) {
		chunk = blen + (hecho_answer == HECHO_SSE ?
		    sizeof HECHO_SSE_HEAD - 1 + 2 : 0);
		p += snprintf(p, 32, "%zx\r\n", chunk);
	}
	if (hecho_answer == HECHO_SSE) {
		memcpy(p, HECHO_SSE_HEAD, sizeof HECHO_SSE_HEAD - 1);
		p += sizeof HECHO_SSE_HEAD - 1;
	}
	memcpy(p, BENCH_RESP_HEAD, sizeof BENCH_RESP_HEAD - 1);
	p += sizeof BENCH_RESP_HEAD - 1;
	memcpy(p, body + off, idlen);
	p += idlen;
	memcpy(p, BENCH_RESP_MID, sizeof BENCH_RESP_MID - 1);
	p += sizeof BENCH_RESP_MID - 1;
	memset(p, 'x', pad);
	p += pad;
	memcpy(p, BENCH_RESP_TAIL, sizeof BENCH_RESP_TAIL - 1);
	p += sizeof BENCH_RESP_TAIL - 1;
	if (hecho_answer == HECHO_SSE) {
		memcpy(p, "\n\n", 2);
		p += 2;
	}
	if (hecho_answer != HECHO_JSON) {
		memcpy(p, "\r\n", 2);
		p += 2;
		if (hecho_split) {
			if (hconn_write(c, start, (size_t)(p - start)) != 0)
				return -1;
			p = start;
		}
		memcpy(p, "0\r\n\r\n", 5);
		p += 5;
	}
	return hconn_write(c, start, (size_t)(p - start));
}

/* Serve one connection until the client closes it. */
static void *
hconn_main(void *arg)
{
	struct hconn	*c = arg;
	struct hreq	 req;
	size_t		 used;

	c->cap = HECHO_BUF_INITIAL;
	c->buf = util_xmalloc(c->cap);
	for (;;) {
		if (hconn_head(c, &req) <= 0)
			break;
		if (hconn_answer(c, &req) != 0 || req.close)
			break;
		/* Keep what the client pipelined behind this request. */
		used = req.head_len + req.body_len;
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
	close(c->fd);
	free(c->buf);
	free(c->out);
	free(c);
	atomic_fetch_sub(&hecho_conns, 1);
	return NULL;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port",	required_argument,	NULL, 'p' },
		{ "answer",	required_argument,	NULL, 'a' },
		{ "split",	no_argument,		NULL, 's' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct hconn		*c;
	pthread_attr_t		 attr;
	pthread_t		 t;
	int			 ch, lfd, fd, one = 1, port = 0;

	util_setprogname(argv[0]);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			if (strcmp(optarg, "json") == 0)
				hecho_answer = HECHO_JSON;
			else if (strcmp(optarg, "chunked") == 0)
				hecho_answer = HECHO_CHUNKED;
			else if (strcmp(optarg, "sse") == 0)
				hecho_answer = HECHO_SSE;
			else
				util_fatalx("--answer %s: json, chunked or sse",
				    optarg);
			break;
		case 's':
			hecho_split = 1;
			break;
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

	lfd = util_listen(port, 128, 0, &port);
	printf("http_echo: listening on http://127.0.0.1:%d\n", port);
	fflush(stdout);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE)
				continue;
			util_fatal("accept");
		}
		if (atomic_load(&hecho_conns) >= HECHO_CONNS_MAX) {
			util_warnx("over %d connections: closing a new one",
			    HECHO_CONNS_MAX);
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		c = util_xmalloc(sizeof *c);
		memset(c, 0, sizeof *c);
		c->fd = fd;
		atomic_fetch_add(&hecho_conns, 1);
		if (pthread_create(&t, &attr, hconn_main, c) != 0) {
			util_warnx("cannot start a thread for a connection");
			atomic_fetch_sub(&hecho_conns, 1);
			close(fd);
			free(c);
		}
	}
}
