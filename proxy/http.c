/*
 * Recording over HTTP: a reverse proxy for Streamable HTTP and the legacy
 * HTTP+SSE transport.
 *
 *   client --> hconn.cbev --[request head rewritten: target, Host]--> ubev
 *   client <-- hconn.cbev <--[response head as sent, body re-framed]-- ubev
 *
 * Each client connection gets its own upstream connection, so connection
 * semantics (keep-alive, close, a client that goes away) carry over one to
 * one: a client closing a stream closes the upstream request at once,
 * which is how 2026-07-28 cancels.  One exchange is in flight per
 * connection; pipelined requests wait in the client's buffer.
 *
 * Bodies are decoded as they arrive and forwarded at once in the framing
 * they came in (chunked stays chunked, chunk by chunk), so an SSE event
 * reaches the client as soon as the server sent it.  Request bodies and
 * JSON response bodies are recorded as one message each; each SSE event's
 * data is one message with its event id.  Bodies are never changed, with
 * one exception: a legacy `endpoint` event naming the upstream by absolute
 * URL (or under the upstream's path prefix) is rewritten to name us, or
 * the client would bypass the proxy.
 *
 * This file holds the proxy and its connections; an exchange's request
 * side is in hexch.c, its response side in hresp.c.
 */

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/thread.h>

#include <jansson.h>

#include "http_int.h"

/*
 * The JSON-RPC error code of our own error replies: the implementation-
 * defined server error the MCP SDKs use for transport errors too.
 */
#define HTTP_RPC_ERROR		-32000

static void	conn_client_read_cb(struct bufferevent *, void *);
static void	conn_client_write_cb(struct bufferevent *, void *);
static void	conn_client_event_cb(struct bufferevent *, short, void *);
static void	conn_up_read_cb(struct bufferevent *, void *);
static void	conn_up_write_cb(struct bufferevent *, void *);
static void	conn_up_event_cb(struct bufferevent *, short, void *);
static void	conn_up_read(struct hconn *, int);

void
conn_pause(struct bufferevent *bev, int *bits, int why, int on)
{
	int	before = *bits;

	if (on)
		*bits |= why;
	else
		*bits &= ~why;
	if (bev == NULL)
		return;
	if (before == 0 && *bits != 0)
		bufferevent_disable(bev, EV_READ);
	else if (before != 0 && *bits == 0)
		bufferevent_enable(bev, EV_READ);
}

/* A JSON-RPC error answering request id with why; NULL if why is no UTF-8. */
static char *
conn_error_json(const char *id, const char *why)
{
	json_t	*j;
	char	*text, *s;

	xasprintf(&text, "mcpreel: %s", why);
	j = json_string(text);
	free(text);
	if (j == NULL)
		return NULL;
	text = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	if (text == NULL)
		return NULL;
	xasprintf(&s, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,"
	    "\"message\":%s}}", id, HTTP_RPC_ERROR, text);
	free(text);
	return s;
}

/*
 * Answer the client ourselves, when the upstream could not: a JSON-RPC
 * error for a JSON-RPC request (its client can match it to the request),
 * else a short plain reason; the connection closes after it.
 */
void
conn_reply_error(struct hconn *c, int status, const char *reason,
    const char *why)
{
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	struct hexch	*x = c->x;
	const char	*ctype = "application/json";
	char		*body = NULL;

	if (x != NULL && x->sent_resp) {
		/* Too late for a status: all we can do is close. */
		conn_close(c, why);
		return;
	}
	if (x != NULL && x->rpc_id != NULL)
		body = conn_error_json(x->rpc_id, why);
	if (body == NULL) {
		ctype = "text/plain; charset=utf-8";
		xasprintf(&body, "mcpreel: %s\n", why);
	}
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", status,
	    reason, ctype, strlen(body), body);
	free(body);
	if (x != NULL) {
		x->sent_resp = 1;
		hexch_note(x, "answered %d: %s", status, why);
		free(x->outcome);
		xasprintf(&x->outcome, "%d from mcpreel: %s", status, why);
	}
	conn_close_after_output(c);
}

static void
conn_free_cb(evutil_socket_t fd, short events, void *arg)
{
	free(arg);
}

/*
 * Close a connection now, both sides, ending any exchange with why.  The
 * struct itself is freed on the next loop pass, so a caller further up
 * may still look at c->dead.
 */
void
conn_close(struct hconn *c, const char *why)
{
	struct hproxy	*p = c->p;

	if (c->dead)
		return;
	log_debug("connection %llu closed: %s", (unsigned long long)c->id, why);
	c->dead = 1;
	hwait_stop(c);
	if (c->x != NULL)
		hexch_end(c, why);
	if (c->ubev != NULL)
		bufferevent_free(c->ubev);
	bufferevent_free(c->cbev);
	hretry_free(c);
	c->ubev = c->cbev = NULL;
	listener_closed(p->listener);
	TAILQ_REMOVE(&p->conns, c, entry);
	if (c->stalled)
		TAILQ_REMOVE(&p->stalled, c, sentry);
	if (event_base_once(p->base, -1, EV_TIMEOUT, conn_free_cb, c,
	    NULL) != 0)
		fatalx("cannot schedule freeing a connection");
}

/* Close once what we hold for the client is sent. */
void
conn_close_after_output(struct hconn *c)
{
	if (c->dead)
		return;
	if (c->x != NULL)
		hexch_end(c, c->x->outcome != NULL ? c->x->outcome : "closed");
	c->closing = 1;
	if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	conn_pause(c->cbev, &c->cpause, PAUSE_CLOSING, 1);
	if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
		conn_close(c, "done");
	else
		hwait_set(c);
}

/* Open the upstream connection for c if it has none. */
int
conn_connect(struct hconn *c, char **cause)
{
	struct timeval	tv = { HTTP_CONNECT_TIMEOUT, 0 };

	/*
	 * A kept-alive connection the server closed while it was idle (its
	 * FIN not read yet) would fail the request: a fresh one instead.
	 */
	if (c->ubev != NULL && c->connected &&
	    !hretry_alive(bufferevent_getfd(c->ubev))) {
		log_debug("connection %llu: the upstream closed the idle "
		    "connection: a new one", (unsigned long long)c->id);
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	if (c->ubev != NULL) {
		/* Reused: it may still be closed under the request. */
		hretry_start(c);
		return 0;
	}
	c->ubev = net_upstream_connect(c->p->base, &c->p->up, cause);
	if (c->ubev == NULL)
		return -1;
	hretry_attach(c);
	c->connected = 0;
	c->uscanned = 0;
	c->upause = 0;
	if (tap_paused(c->p->tap)) {
		c->upause |= PAUSE_STORE;
		hstall_add(c);
	}
	bufferevent_setcb(c->ubev, conn_up_read_cb, conn_up_write_cb,
	    conn_up_event_cb, c);
	/* The write timeout bounds the connect; cleared once connected. */
	bufferevent_set_timeouts(c->ubev, NULL, &tv);
	bufferevent_enable(c->ubev, EV_WRITE);
	if (c->upause == 0)
		bufferevent_enable(c->ubev, EV_READ);
	return 0;
}

/* Read requests off the client's buffer while no exchange is in flight. */
static void
conn_read_requests(struct hconn *c)
{
	struct evbuffer		*in = bufferevent_get_input(c->cbev);
	struct http_head	 h;
	char			*cause = NULL;
	int			 rc;

	if (evbuffer_get_length(in) > 0)
		c->flushed = 0;
	for (;;) {
		if (c->dead || c->closing)
			return;
		if (c->x == NULL) {
			if (evbuffer_get_length(in) == 0)
				return;
			memset(&h, 0, sizeof h);
			rc = http_head_parse(in, 1, &c->scanned, &h, &cause);
			if (rc == 0)
				return;
			if (rc == -1) {
				log_info("connection %llu: bad request: %s",
				    (unsigned long long)c->id, cause);
				conn_reply_error(c, 400, "Bad Request", cause);
				free(cause);
				return;
			}
			if (hexch_start(c, &h) != 0)
				return;
			continue;
		}
		if (!c->x->req_done) {
			if (hexch_request_body(c) != 0)
				return;
			/* A fault answered it in the upstream's place. */
			if (c->x == NULL)
				continue;
			if (!c->x->req_done)
				return;
		}
		/*
		 * One exchange at a time: what follows waits, unless there
		 * is much of it (then we stop reading until this is done).
		 */
		conn_pause(c->cbev, &c->cpause, PAUSE_BUSY,
		    evbuffer_get_length(in) > HTTP_HEAD_MAX);
		return;
	}
}

/*
 * Backpressure after anything was written toward either side: a side's
 * output over HTTP_MAX_OUTPUT stops reading from the other side until it
 * drains to half (the write callbacks resume).  Every path that writes
 * (heads, interim heads, bodies, SSE, what --durable held) ends here, so
 * no peer can make us hold more than that for one that does not read.
 */
void
conn_watch_output(struct hconn *c)
{
	if (c->dead)
		return;
	hretry_keep(c);
	if (!c->closing && !(c->upause & PAUSE_PEER) &&
	    c->flushed < HTTP_FLUSH_MAX)
		c->flushed += hflush_write(c->cbev);
	if (c->ubev != NULL && c->connected && c->p->up.ssl == NULL &&
	    !(c->cpause & PAUSE_PEER) && c->flushed < HTTP_FLUSH_MAX)
		c->flushed += hflush_write(c->ubev);
	if (c->ubev != NULL && !(c->upause & PAUSE_PEER) &&
	    evbuffer_get_length(bufferevent_get_output(c->cbev)) >=
	    HTTP_MAX_OUTPUT) {
		conn_pause(c->ubev, &c->upause, PAUSE_PEER, 1);
		bufferevent_setwatermark(c->cbev, EV_WRITE, HTTP_MAX_OUTPUT / 2,
		    0);
	}
	if (c->ubev != NULL && !(c->cpause & PAUSE_PEER) &&
	    evbuffer_get_length(bufferevent_get_output(c->ubev)) >=
	    HTTP_MAX_OUTPUT) {
		conn_pause(c->cbev, &c->cpause, PAUSE_PEER, 1);
		bufferevent_setwatermark(c->ubev, EV_WRITE, HTTP_MAX_OUTPUT / 2,
		    0);
	}
}

/* Take what the client sent, then start the time limit that now runs. */
void
conn_process_requests(struct hconn *c)
{
	conn_read_requests(c);
	conn_watch_output(c);
	hwait_set(c);
}

static void
conn_client_read_cb(struct bufferevent *bev, void *arg)
{
	conn_process_requests(arg);
}

/* The client's output drained: the upstream may be read again. */
static void
conn_client_write_cb(struct bufferevent *bev, void *arg)
{
	struct hconn	*c = arg;

	if (c->upause & PAUSE_PEER) {
		bufferevent_setwatermark(c->cbev, EV_WRITE, 0, 0);
		conn_pause(c->ubev, &c->upause, PAUSE_PEER, 0);
		if (c->ubev != NULL &&
		    evbuffer_get_length(bufferevent_get_input(c->ubev)) > 0)
			conn_up_read(c, 0);
		if (c->dead)
			return;
	}
	if (c->closing && evbuffer_get_length(bufferevent_get_output(bev)) ==
	    0)
		conn_close(c, "done");
}

/*
 * The client closed its connection (or it broke).  The upstream connection
 * closes at once, as the client's did; an exchange still in flight either
 * ended normally (a stream that owed the client nothing) or is cancelled
 * (hexch_client_left).
 */
static void
conn_client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct hconn	*c = arg;
	struct hexch	*x = c->x;

	if (x != NULL && !x->resp_done)
		hexch_client_left(x);
	conn_close(c, (what & BEV_EVENT_EOF) ? "client closed" :
	    "client connection failed");
}

static void
conn_up_write_cb(struct bufferevent *bev, void *arg)
{
	struct hconn	*c = arg;

	if (c->cpause & PAUSE_PEER) {
		bufferevent_setwatermark(c->ubev, EV_WRITE, 0, 0);
		conn_pause(c->cbev, &c->cpause, PAUSE_PEER, 0);
		conn_process_requests(c);
	}
}

static void	conn_up_read_1(struct hconn *, int);

/* Response bytes from the upstream; eof when it has closed. */
static void
conn_up_read(struct hconn *c, int eof)
{
	conn_up_read_1(c, eof);
	if (!c->dead && c->x != NULL)
		hfault_account(c->x);
	conn_watch_output(c);
}

static void
conn_up_read_1(struct hconn *c, int eof)
{
	struct evbuffer		*in = bufferevent_get_input(c->ubev);
	struct http_head	 h;
	char			*cause = NULL;
	int			 rc;

	/* The answer began: its request will not be sent again. */
	if (evbuffer_get_length(in) > 0)
		hretry_stop(c);
	if (c->x != NULL && c->x->fhold) {
		/* --fault: x's request has not gone on yet; not its answer. */
		log_info("connection %llu: %zu bytes from the upstream before "
		    "the request was sent: dropped", (unsigned long long)c->id,
		    evbuffer_get_length(in));
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	while (c->x != NULL && !c->x->have_resp) {
		memset(&h, 0, sizeof h);
		rc = http_head_parse(in, 0, &c->uscanned, &h, &cause);
		if (rc == 0)
			return;
		if (rc == -1) {
			hexch_note(c->x, "bad response head from the upstream: "
			    "%s", cause);
			conn_reply_error(c, 502, "Bad Gateway", cause);
			free(cause);
			return;
		}
		if (h.status == 101) {
			http_head_clear(&h);
			conn_reply_error(c, 502, "Bad Gateway", "the upstream "
			    "switched protocols, which mcpreel does not relay");
			return;
		}
		if (h.status < 200) {
			/* Interim (100, 103): pass it on and wait on. */
			evbuffer_remove_buffer(in,
			    bufferevent_get_output(c->cbev), h.len);
			http_head_clear(&h);
			/* A client that does not read stops the upstream. */
			if (evbuffer_get_length(bufferevent_get_output(
			    c->cbev)) >= HTTP_MAX_OUTPUT)
				return;
			continue;
		}
		hresp_head(c, &h);
		if (c->dead || c->closing)
			return;
	}
	if (c->x == NULL) {
		/* Bytes with no request to answer: nothing to do with them. */
		if (evbuffer_get_length(in) > 0) {
			log_info("connection %llu: %zu bytes from the upstream "
			    "with no request to answer: dropped",
			    (unsigned long long)c->id,
			    evbuffer_get_length(in));
			evbuffer_drain(in, evbuffer_get_length(in));
		}
		return;
	}
	if (hresp_body(c, eof) == 1)
		hresp_done(c);
}

static void
conn_up_read_cb(struct bufferevent *bev, void *arg)
{
	conn_up_read(arg, 0);
}

/* The upstream connection connected, closed or failed. */
static void
conn_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct hconn	*c = arg;
	struct hexch	*x = c->x;
	char		*why;
	int		 err;

	if (what & BEV_EVENT_CONNECTED) {
		c->connected = 1;
		bufferevent_set_timeouts(bev, NULL, NULL);
		return;
	}
	if (x != NULL && hfresp_upstream_gone(c))
		return;
	if ((what & BEV_EVENT_EOF) && c->connected) {
		/* What is still buffered may complete the response. */
		if (x != NULL && x->have_resp) {
			conn_up_read(c, 1);
			/*
			 * Ended, or a request that followed went on a fresh
			 * connection (conn_connect): the end was this one's.
			 */
			if (c->dead || c->closing || c->x == NULL ||
			    c->ubev != bev)
				return;
			x = c->x;
			/* The end completed a body a fault now holds. */
			if (hfresp_upstream_gone(c))
				return;
		}
		if (x == NULL) {
			/* An idle keep-alive connection: reconnect later. */
			bufferevent_free(c->ubev);
			c->ubev = NULL;
			return;
		}
		if (!x->have_resp) {
			if (hretry_again(c, "closed"))
				return;
			conn_reply_error(c, 502, "Bad Gateway", "the upstream "
			    "closed the connection without a response");
			return;
		}
		hexch_note(x, "the upstream closed the connection in the "
		    "middle of the response");
		if (hfresp_cut(x))
			return;
		free(x->outcome);
		x->outcome = xstrdup("the upstream closed mid-response");
		conn_close_after_output(c);
		return;
	}
	err = EVUTIL_SOCKET_ERROR();
	if (c->connected && !(what & BEV_EVENT_TIMEOUT) &&
	    hretry_again(c, "failed"))
		return;
	if (what & BEV_EVENT_TIMEOUT)
		xasprintf(&why, "no connection to %s within %d s",
		    c->p->up.url.origin, HTTP_CONNECT_TIMEOUT);
	else if (c->connected && c->p->up.ssl == NULL && err != 0)
		xasprintf(&why, "the connection to %s broke: %s",
		    c->p->up.url.origin, evutil_socket_error_to_string(err));
	else
		why = net_upstream_error(bev, &c->p->up);
	/* A JSON response a fault holds has its head, not sent yet. */
	if (x != NULL && !x->sent_resp && !x->fresp) {
		log_warnx("connection %llu: %s", (unsigned long long)c->id,
		    why);
		conn_reply_error(c, 502, "Bad Gateway", why);
	} else if (x != NULL) {
		hexch_note(x, "the upstream connection failed mid-response: "
		    "%s", why);
		if (hfresp_cut(x)) {
			free(why);
			return;
		}
		free(x->outcome);
		xasprintf(&x->outcome, "upstream failed: %s", why);
		conn_close_after_output(c);
	} else {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	free(why);
}

/*
 * Bytes left the client's output for its socket: count them, so that an
 * exchange can tell whether an answer has gone (hexch_delivered).
 */
static void
conn_out_sent_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct hconn	*c = arg;

	c->out_sent += info->n_deleted;
}

/* A client connected: a connection of its own (0), or closed (-1). */
static int
proxy_accept_cb(int fd, void *arg)
{
	struct hproxy	*p = arg;
	struct hconn	*c;
	int		 one = 1;

	if (p->stop_reason != NULL) {
		evutil_closesocket(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c = xcalloc(1, sizeof *c);
	c->p = p;
	c->id = ++p->nconns;
	c->cbev = bufferevent_socket_new(p->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->cbev == NULL) {
		evutil_closesocket(fd);
		free(c);
		return -1;
	}
	bufferevent_setcb(c->cbev, conn_client_read_cb, conn_client_write_cb,
	    conn_client_event_cb, c);
	evbuffer_add_cb(bufferevent_get_output(c->cbev), conn_out_sent_cb, c);
	hwait_start(c);
	TAILQ_INSERT_TAIL(&p->conns, c, entry);
	if (tap_paused(p->tap)) {
		c->cpause |= PAUSE_STORE;
		hstall_add(c);
	}
	bufferevent_enable(c->cbev, EV_WRITE);
	if (c->cpause == 0)
		bufferevent_enable(c->cbev, EV_READ);
	log_debug("connection %llu accepted", (unsigned long long)c->id);
	return 0;
}

/* SIGHUP with --faults: the rules are read again. */
static void
proxy_sighup_cb(evutil_socket_t sig, short events, void *arg)
{
	hfault_reload(arg);
}

/* SIGINT, SIGTERM or SIGHUP: stop recording, closing what is in flight. */
static void
proxy_signal_cb(evutil_socket_t sig, short events, void *arg)
{
	struct hproxy	*p = arg;

	if (p->stop_reason == NULL)
		xasprintf(&p->stop_reason, "recording stopped (%s)",
		    strsignal((int)sig));
	log_info("%s", p->stop_reason);
	event_base_loopbreak(p->base);
}

/*
 * Listen for clients and record their traffic with the upstream until
 * SIGINT, SIGTERM or SIGHUP (but SIGHUP re-reads --faults, and stays
 * ignored when it was at start).  Returns -1 (res says why) when it
 * cannot start.
 */
int
record_http(struct writer *w, const struct http_options *opt,
    struct record_result *res)
{
	struct hproxy		 p;
	struct sockaddr_storage	 ss, ups;
	socklen_t		 sslen;
	struct hconn		*c;
	char			*cause = NULL;
	static const int	 sigs[] = { SIGINT, SIGTERM };
	struct sigaction	 oldhup;
	int			 i;

	memset(res, 0, sizeof *res);
	res->exit_status = -1;
	if (opt->durable && opt->faults != NULL) {
		res->exit_code = 2;
		res->reason = xstrdup("--durable and --fault cannot be given "
		    "together over HTTP (a fault holds back what --durable "
		    "holds until it is committed)");
		return -1;
	}
	memset(&p, 0, sizeof p);
	TAILQ_INIT(&p.conns);
	TAILQ_INIT(&p.stalled);
	p.w = w;
	p.opt = opt;

	if (net_parse_listen(opt->listen, &ss, &sslen, &cause) != 0 ||
	    net_upstream_init(&p.up, opt->upstream, opt->cacert,
	    opt->insecure, &cause) != 0) {
		res->exit_code = 2;
		res->reason = cause;
		return -1;
	}
	evthread_use_pthreads();
	if ((p.base = hflush_base_new()) == NULL)
		fatalx("cannot create an event loop");
	/* A client takes two descriptors: its own and the upstream's. */
	p.listener = listener_new(p.base, &ss, sslen,
	    opt->lim.max_connections != 0 ? opt->lim.max_connections :
	    listener_default_max(2), proxy_accept_cb, &p, &p.origin, &cause);
	if (p.listener == NULL) {
		res->exit_code = 2;
		res->reason = cause;
		net_upstream_clear(&p.up);
		event_base_free(p.base);
		return -1;
	}
	p.tap = tap_new(p.base, w, hstall_resume_cb, &p);
	hretire_init(&p);
	for (i = 0; i < 2; i++) {
		p.sigs[i] = evsignal_new(p.base, sigs[i], proxy_signal_cb, &p);
		evsignal_add(p.sigs[i], NULL);
	}
	/*
	 * SIGHUP re-reads --faults; else it is a hangup (the terminal
	 * closed), and stops the recording as SIGTERM does, so that its
	 * sessions end and their cassettes are written.  Started ignoring
	 * it (nohup), mcpreel keeps ignoring it.
	 */
	if (opt->faults != NULL && opt->faults->reload != NULL)
		p.sighup = evsignal_new(p.base, SIGHUP, proxy_sighup_cb, &p);
	else if (sigaction(SIGHUP, NULL, &oldhup) == 0 &&
	    oldhup.sa_handler == SIG_IGN)
		log_debug("SIGHUP was ignored at start: it stays ignored");
	else
		p.sighup = evsignal_new(p.base, SIGHUP, proxy_signal_cb, &p);
	if (p.sighup != NULL)
		evsignal_add(p.sighup, NULL);
	/* Said at any log level, alone on its line: scripts wait for it. */
	log_warnx("listening on %s", p.origin);
	{
		char	*shown = hsession_redact_path(opt->upstream);

		log_info("forwarding to %s", shown);
		free(shown);
	}
	memset(&ups, 0, sizeof ups);
	memcpy(&ups, p.up.ai->ai_addr, p.up.ai->ai_addrlen);
	if (!opt->rewrite_host && !net_addr_is_loopback(&ups))
		log_info("the Host header reaches %s as the client sent it; "
		    "give --rewrite-host if the server wants its own name "
		    "(404 or 421 answers)", p.up.url.origin);
	if (!net_addr_is_loopback(&ss))
		log_warnx("note: %s is not a loopback address: other machines "
		    "may reach this proxy", opt->listen);

	event_base_dispatch(p.base);

	listener_stop(p.listener);
	while ((c = TAILQ_FIRST(&p.conns)) != NULL)
		conn_close(c, p.stop_reason != NULL ? p.stop_reason :
		    "recording stopped");
	listener_free(p.listener);
	p.listener = NULL;
	/* One more pass frees what the closes deferred. */
	event_base_loop(p.base, EVLOOP_NONBLOCK);
	hretire_free(&p);
	hsession_end_all(&p, p.stop_reason != NULL ? p.stop_reason :
	    "recording stopped");
	res->exit_code = 0;
	res->reason = p.stop_reason != NULL ? p.stop_reason :
	    xstrdup("recording stopped");
	/* As record_stdio() does: the caller unblocks them, or holds. */
	record_stop_mask(SIG_BLOCK);
	for (i = 0; i < 2; i++)
		event_free(p.sigs[i]);
	if (p.sighup != NULL)
		event_free(p.sighup);
	tap_free(p.tap);
	free(p.origin);
	net_upstream_clear(&p.up);
	event_base_free(p.base);
	/* The sessions outlive the loop: the caller stops the writer. */
	res->sessions = p.sessions;
	res->retired = p.retired;
	free(p.by_key);
	return 0;
}

/*
 * The ids of the sessions record_http() recorded, once the writer has
 * stopped (a session never written has none and is left out), those
 * retired during the run included when opt->keep_ids was set; *n gets
 * their number.  Free the array.
 */
int64_t *
record_http_ids(const struct record_result *res, size_t *n)
{
	struct hsession	*hs;
	int64_t		*ids = NULL;
	size_t		 count = 0, i;

	for (hs = res->sessions; hs != NULL; hs = hs->next)
		count++;
	if (res->retired != NULL)
		count += res->retired->n;
	*n = 0;
	if (count == 0)
		return NULL;
	ids = xreallocarray(NULL, count, sizeof *ids);
	for (i = 0; res->retired != NULL && i < res->retired->n; i++)
		ids[(*n)++] = res->retired->ids[i];
	for (hs = res->sessions; hs != NULL; hs = hs->next) {
		if (writer_session_id(hs->ws) > 0)
			ids[(*n)++] = writer_session_id(hs->ws);
	}
	return ids;
}

/* Free what record_http() left, once the writer has stopped. */
void
record_http_free(struct record_result *res)
{
	hsession_free_all(res->sessions);
	res->sessions = NULL;
	if (res->retired != NULL)
		free(res->retired->ids);
	free(res->retired);
	res->retired = NULL;
}
