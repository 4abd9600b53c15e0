/*
 * Sending a request once more when the upstream closed a kept-alive
 * connection under it.  A server may close an idle connection (its
 * keep-alive timeout) at the moment our next request on it is on its
 * way; the request then meets EOF, or ECONNRESET or EPIPE, before any of
 * an answer came back, and the server never read it.  So while a request
 * goes out on a connection that already served one, a copy of its bytes
 * is kept until the first byte of the answer; if the connection ends
 * before that byte, the copy goes once more on a fresh connection.  Only
 * once, only from a reused connection: a fresh one that fails says the upstream is down, and the
 * client gets its 502.  Nothing is recorded again: the record taps the
 * request as it came from the client (hexch.c), not these bytes.
 *
 * Only for a method RFC 9110 9.2.2 calls idempotent (GET, HEAD, OPTIONS,
 * TRACE, PUT, DELETE): RFC 9112 9.3.1 says a proxy MUST NOT retry a
 * non-idempotent request on its own, as a server that read it and died
 * before its first answer byte would get it twice; an MCP POST (a
 * tools/call) may do something, so it is never sent again, and meets the
 * close with a 502 as before.  What keeps that rare is hretry_alive():
 * before a kept-alive connection takes a request, a peek at its socket
 * tells whether the server has closed it already, and a fresh one is
 * opened in its place (conn_connect).  What retry is left serves an MCP
 * GET (an SSE stream opened) and a DELETE (a session ended).
 *
 * Over TLS, libevent's filter may write what is appended at once, from
 * its own output callback (some versions do), before hretry_keep can copy
 * it; hretry_added_cb then sees bytes leave uncopied and stops keeping,
 * and that request gets the 502 as before, never a partial retry.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "http_int.h"

/*
 * The most of a request kept to send again: ordinary requests are far
 * smaller; a bigger body streams on unkept, and a reused connection that
 * fails under it gives a 502 as it would without this.
 */
#define HRETRY_KEEP_MAX		(1024u * 1024)
/* The pieces of an output looked at in one go (evbuffer_peek). */
#define HRETRY_IOVECS		8

/*
 * The methods RFC 9110 9.2.2 defines as idempotent: the only ones sent
 * again (RFC 9112 9.3.1: never a non-idempotent one, such as a POST).
 */
static const char *const hretry_methods[] = {
	"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"
};

static void	hretry_added_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);

/*
 * Whether a kept-alive upstream connection's socket fd may take another
 * request: not when the server has closed it (its FIN waits: a peek reads
 * 0) or it broke (an error other than nothing to read).  Bytes waiting
 * stay for the loop to read.  One recv per reused exchange.
 */
int
hretry_alive(int fd)
{
	char	ch;
	ssize_t	n;

	n = recv(fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n >= 0)
		return n > 0;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Whether method may be sent again on its own (hretry_methods). */
static int
hretry_idempotent(const char *method)
{
	size_t	i;

	if (method == NULL)
		return 0;
	for (i = 0; i < sizeof hretry_methods / sizeof hretry_methods[0]; i++) {
		if (strcmp(method, hretry_methods[i]) == 0)
			return 1;
	}
	return 0;
}

/*
 * c's upstream connection was just made: the callback that keeps a
 * request's bytes goes on its output, off until a request goes out on it
 * again (one allocation per connection, none per request).
 */
void
hretry_attach(struct hconn *c)
{
	c->keeping = 0;
	if (c->resend != NULL)
		evbuffer_drain(c->resend, evbuffer_get_length(c->resend));
	c->resend_cb = evbuffer_add_cb(bufferevent_get_output(c->ubev),
	    hretry_added_cb, c);
	if (c->resend_cb != NULL)
		evbuffer_cb_clear_flags(bufferevent_get_output(c->ubev),
		    c->resend_cb, EVBUFFER_CB_ENABLED);
}

/*
 * A request is about to go out on c's upstream connection, which served
 * one before: keep what is written to it from now on, if its method may
 * be sent again.
 */
void
hretry_start(struct hconn *c)
{
	if (c->keeping || c->ubev == NULL || c->resend_cb == NULL ||
	    c->x == NULL || !hretry_idempotent(c->x->req.method))
		return;
	/* An answer already begun is not this request's to retry. */
	if (evbuffer_get_length(bufferevent_get_input(c->ubev)) > 0)
		return;
	if (c->resend == NULL && (c->resend = evbuffer_new()) == NULL)
		return;
	evbuffer_cb_set_flags(bufferevent_get_output(c->ubev), c->resend_cb,
	    EVBUFFER_CB_ENABLED);
	c->keeping = 1;
	c->unkept = 0;
}

/* Keep nothing more: an answer began, or the exchange is over. */
void
hretry_stop(struct hconn *c)
{
	if (!c->keeping)
		return;
	c->keeping = 0;
	evbuffer_drain(c->resend, evbuffer_get_length(c->resend));
	if (c->ubev != NULL)
		evbuffer_cb_clear_flags(bufferevent_get_output(c->ubev),
		    c->resend_cb, EVBUFFER_CB_ENABLED);
}

/* c is freed: so is what it kept. */
void
hretry_free(struct hconn *c)
{
	if (c->resend != NULL)
		evbuffer_free(c->resend);
	c->resend = NULL;
	c->keeping = 0;
}

/*
 * The upstream's output changed: count what was added (only appends
 * happen there, so those are its last bytes; hretry_keep copies them
 * before they can be written).  Bytes written before they were copied (a
 * path that wrote without conn_watch_output) end the keeping: no retry
 * then, rather than a partial request.
 */
static void
hretry_added_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct hconn	*c = arg;

	if (!c->keeping)
		return;
	c->unkept += info->n_added;
	if (info->n_deleted > 0 && c->unkept > evbuffer_get_length(buf))
		hretry_stop(c);
}

/*
 * Copy what was added to the upstream's output since the last call into
 * the kept request; called before anything is written to its socket
 * (conn_watch_output).  Copied in one go per call rather than per append:
 * a request head is a dozen appends.
 */
void
hretry_keep(struct hconn *c)
{
	struct evbuffer		*buf;
	struct evbuffer_ptr	 at;
	struct evbuffer_iovec	 v[HRETRY_IOVECS];
	size_t			 len, left;
	int			 i, n;

	if (!c->keeping || c->unkept == 0 || c->ubev == NULL)
		return;
	buf = bufferevent_get_output(c->ubev);
	len = evbuffer_get_length(buf);
	if (c->unkept > len || evbuffer_get_length(c->resend) + c->unkept >
	    HRETRY_KEEP_MAX || evbuffer_ptr_set(buf, &at, len - c->unkept,
	    EVBUFFER_PTR_SET) != 0) {
		hretry_stop(c);
		return;
	}
	/*
	 * Peeked, not copied out: a socket bufferevent keeps its output's
	 * front frozen, which copying out refuses.
	 */
	for (left = c->unkept; left > 0; ) {
		n = evbuffer_peek(buf, (ev_ssize_t)left, &at, v, HRETRY_IOVECS);
		if (n <= 0) {
			hretry_stop(c);
			return;
		}
		if (n > HRETRY_IOVECS)
			n = HRETRY_IOVECS;
		for (i = 0; i < n && left > 0; i++) {
			if (v[i].iov_len > left)
				v[i].iov_len = left;
			/* Out of memory: no retry rather than a partial one. */
			if (evbuffer_add(c->resend, v[i].iov_base,
			    v[i].iov_len) != 0) {
				hretry_stop(c);
				return;
			}
			left -= v[i].iov_len;
			if (left > 0 && evbuffer_ptr_set(buf, &at, v[i].iov_len,
			    EVBUFFER_PTR_ADD) != 0) {
				hretry_stop(c);
				return;
			}
		}
	}
	c->unkept = 0;
}

/*
 * c's upstream connection ended (EOF or an error) while its exchange
 * waits for the answer's first byte: send the request again on a fresh
 * connection when it was kept for that.  Returns 1 when it was sent
 * again, 0 when the caller reports the failure as before.
 */
int
hretry_again(struct hconn *c, const char *why)
{
	struct evbuffer	*req;
	char		*cause = NULL;

	hretry_keep(c);
	/* Nothing kept (bytes left uncounted): never send an empty request. */
	if (!c->keeping || evbuffer_get_length(c->resend) == 0 ||
	    c->x == NULL || c->x->have_resp ||
	    c->uscanned != 0 || c->ubev == NULL ||
	    evbuffer_get_length(bufferevent_get_input(c->ubev)) > 0)
		return 0;
	/* Taken out, so that the fresh connection does not keep it again. */
	req = c->resend;
	c->resend = NULL;
	c->keeping = 0;
	log_info("connection %llu: the upstream's kept-alive connection %s "
	    "before answering: the request goes again on a new connection",
	    (unsigned long long)c->id, why);
	bufferevent_free(c->ubev);
	c->ubev = NULL;
	if (conn_connect(c, &cause) != 0) {
		evbuffer_free(req);
		conn_reply_error(c, 502, "Bad Gateway", cause);
		free(cause);
		return 1;
	}
	evbuffer_add_buffer(bufferevent_get_output(c->ubev), req);
	/* Kept for the next request, which may keep its bytes in it. */
	c->resend = req;
	conn_watch_output(c);
	return 1;
}
