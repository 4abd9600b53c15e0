/*
 * The client side of an HTTP/1.1 keep-alive connection for the bench's
 * load clients: a URL split and resolved once, a blocking connection
 * without Nagle, a request written whole, and an answer read whole
 * (framed by Content-Length or chunked) with its body decoded.  Any
 * failure is fatal: a load client that cannot talk has nothing to report.
 */

#include <sys/socket.h>
#include <sys/types.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench.h"

/* The longest answer head, or chunk-size or trailer line, we accept. */
#define HLINK_HEAD_MAX		(64 * 1024)
/* The read buffer's first size; it doubles for bigger answers. */
#define HLINK_BUF_SIZE		(64 * 1024)

static void	hlink_fill(struct hlink *);
static size_t	hlink_line(struct hlink *, size_t);
static void	hlink_body_put(struct hlink *, const char *, size_t);
static size_t	hlink_head(struct hlink *, size_t *, int *, hlink_header_cb,
		    void *);

/* Split http://HOST[:PORT][/PATH] into t and resolve HOST. */
void
hlink_target(struct htarget *t, const char *url)
{
	struct addrinfo	 hints;
	const char	*p, *slash, *colon;
	size_t		 hl, pl;
	int		 error;

	memset(t, 0, sizeof *t);
	if (strncmp(url, "http://", 7) != 0)
		util_fatalx("%s: only http:// URLs are supported", url);
	p = url + 7;
	if ((slash = strchr(p, '/')) == NULL)
		slash = p + strlen(p);
	colon = memchr(p, ':', (size_t)(slash - p));
	hl = (size_t)((colon != NULL ? colon : slash) - p);
	pl = colon != NULL ? (size_t)(slash - colon - 1) : 0;
	if (hl == 0 || hl >= sizeof t->host || (colon != NULL &&
	    (pl == 0 || pl >= sizeof t->port)) || strlen(slash) >=
	    sizeof t->path)
		util_fatalx("%s: a bad or too long host, port or path", url);
	memcpy(t->host, p, hl);
	if (colon != NULL)
		memcpy(t->port, colon + 1, pl);
	else
		snprintf(t->port, sizeof t->port, "80");
	snprintf(t->path, sizeof t->path, "%s", *slash == '\0' ? "/" : slash);

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((error = getaddrinfo(t->host, t->port, &hints, &t->ai)) != 0)
		util_fatalx("cannot resolve %s: %s", t->host,
		    gai_strerror(error));
}

/* Connect c to t, without Nagle: requests are small and sequential. */
void
hlink_open(struct hlink *c, const struct htarget *t)
{
	struct addrinfo	*ai;
	int		 one = 1;

	memset(c, 0, sizeof *c);
	c->t = t;
	c->cap = HLINK_BUF_SIZE;
	c->buf = util_xmalloc(c->cap);
	c->fd = -1;
	for (ai = t->ai; ai != NULL; ai = ai->ai_next) {
		c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (c->fd == -1)
			continue;
		if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(c->fd);
		c->fd = -1;
	}
	if (c->fd == -1)
		util_fatal("cannot connect to %s:%s", t->host, t->port);
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Close the connection and free its buffers. */
void
hlink_close(struct hlink *c)
{
	if (c->fd != -1)
		close(c->fd);
	free(c->buf);
	free(c->body);
	memset(c, 0, sizeof *c);
	c->fd = -1;
}

/* Write len bytes of p whole. */
void
hlink_write(struct hlink *c, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = write(c->fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			util_fatal("writing to %s:%s", c->t->host, c->t->port);
		p += n;
		len -= (size_t)n;
	}
	c->sent++;
}

/* Read more of the answer; the server closing is fatal. */
static void
hlink_fill(struct hlink *c)
{
	ssize_t	n;

	if (c->len == c->cap) {
		if (c->cap >= BENCH_MSG_MAX)
			util_fatalx("an answer over %zu bytes", BENCH_MSG_MAX);
		c->cap *= 2;
		c->buf = util_xrealloc(c->buf, c->cap);
	}
	do
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		util_fatal("reading from %s:%s", c->t->host, c->t->port);
	if (n == 0)
		util_fatalx("%s:%s closed the connection after %llu of %llu "
		    "answers", c->t->host, c->t->port,
		    (unsigned long long)c->received,
		    (unsigned long long)c->sent);
	c->len += (size_t)n;
}

/* Read until a CRLF-ended line starts at off; the offset past it. */
static size_t
hlink_line(struct hlink *c, size_t off)
{
	char	*nl;

	while ((nl = memmem(c->buf + off, c->len - off, "\r\n", 2)) == NULL) {
		if (c->len - off > HLINK_HEAD_MAX)
			util_fatalx("a line over %d bytes", HLINK_HEAD_MAX);
		hlink_fill(c);
	}
	return (size_t)(nl - c->buf) + 2;
}

/* Append to the decoded body, kept NUL-terminated for string checks. */
static void
hlink_body_put(struct hlink *c, const char *p, size_t len)
{
	if (c->blen + len + 1 > c->body_cap) {
		c->body_cap = (c->blen + len + 1) * 2;
		c->body = util_xrealloc(c->body, c->body_cap);
	}
	memcpy(c->body + c->blen, p, len);
	c->blen += len;
	c->body[c->blen] = '\0';
}

/*
 * Read an answer's head: its status in c->status, its framing in *clen
 * (Content-Length, or SIZE_MAX when none) and *chunked; every other
 * header to cb.  Returns the head's length.
 */
static size_t
hlink_head(struct hlink *c, size_t *clen, int *chunked, hlink_header_cb cb,
    void *arg)
{
	char	*end, *line, *next, *colon, *v;

	while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4)) == NULL) {
		if (c->len > HLINK_HEAD_MAX)
			util_fatalx("an answer head over %d bytes",
			    HLINK_HEAD_MAX);
		hlink_fill(c);
	}
	*end = '\0';		/* parsed in place: done with afterwards */
	if (sscanf(c->buf, "HTTP/1.%*d %d", &c->status) != 1)
		util_fatalx("not an HTTP answer: %.40s", c->buf);
	*clen = SIZE_MAX;
	*chunked = 0;
	for (line = strstr(c->buf, "\r\n"); line != NULL; line = next) {
		line += 2;
		if ((next = strstr(line, "\r\n")) != NULL)
			*next = '\0';
		if ((colon = strchr(line, ':')) == NULL)
			continue;
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		if (strcasecmp(line, "Content-Length") == 0)
			*clen = strtoull(v, NULL, 10);
		else if (strcasecmp(line, "Transfer-Encoding") == 0 &&
		    strcasestr(v, "chunked") != NULL)
			*chunked = 1;
		else if (cb != NULL)
			cb(arg, line, v);
	}
	return (size_t)(end - c->buf) + 4;
}

/*
 * Read one whole answer: its status in c->status, its body decoded in
 * c->body (c->blen bytes), the headers other than the framing to cb
 * (may be NULL); *head_ns (when not NULL) gets the time its head was in.
 */
void
hlink_response(struct hlink *c, hlink_header_cb cb, void *arg,
    int64_t *head_ns)
{
	size_t	 head_len, clen, off, start, chunk;
	int	 chunked;

	head_len = hlink_head(c, &clen, &chunked, cb, arg);
	if (head_ns != NULL)
		*head_ns = util_now_ns();
	c->blen = 0;
	hlink_body_put(c, "", 0);
	if (!chunked) {
		if (clen == SIZE_MAX)
			util_fatalx("an answer with neither Content-Length nor "
			    "chunked (status %d): cannot frame it", c->status);
		if (clen > BENCH_MSG_MAX)
			util_fatalx("an answer of %zu bytes", clen);
		while (c->len < head_len + clen)
			hlink_fill(c);
		hlink_body_put(c, c->buf + head_len, clen);
		off = head_len + clen;
	} else {
		for (off = head_len;;) {
			start = off;
			off = hlink_line(c, off);
			if ((chunk = strtoull(c->buf + start, NULL, 16)) == 0)
				break;
			if (chunk > BENCH_MSG_MAX)
				util_fatalx("a chunk of %zu bytes", chunk);
			while (c->len < off + chunk + 2)
				hlink_fill(c);
			hlink_body_put(c, c->buf + off, chunk);
			off += chunk + 2;
		}
		do {		/* trailers, up to the empty line */
			start = off;
			off = hlink_line(c, off);
		} while (off != start + 2);
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	c->received++;
}
