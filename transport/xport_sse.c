/*
 * A server over the legacy HTTP+SSE transport (protocol 2024-11-05), as a
 * client uses it: one GET opens an event stream; its `endpoint` event names
 * the URL (same origin as the stream's) every client message is POSTed
 * to, on a connection of its own; every `message` event on the stream is
 * one message from the server.  Closing the stream ends the session.
 *
 * Requests sent are remembered (by their id's JSON text) until their
 * answer comes on the stream, so that when the stream breaks, each one
 * still waiting is handed to cbs.failed: the caller need not wait for
 * answers that cannot come.
 */

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "transport.h"

/* How long connecting (and the TLS handshake) may take, as xport_http. */
#define XSE_CONNECT_TIMEOUT_S	10
/*
 * How long the stream may stay open without its endpoint event: servers
 * send it at once; one that does not is not a legacy SSE server, and the
 * messages waiting for it must not wait forever.
 */
#define XSE_ENDPOINT_TIMEOUT_S	30
/*
 * How long a POST may wait for its answer's head: servers answer 202 at
 * once (the real answer comes on the stream).
 */
#define XSE_POST_TIMEOUT_S	30
/*
 * After xport_finish, how long POSTs still in flight get before the stream
 * is closed anyway.
 */
#define XSE_FINISH_TIMEOUT_S	5
/*
 * Messages held until the endpoint event comes: a client sends initialize
 * and waits for its answer, so a few at most are real.
 */
#define XSE_QUEUE_MAX		64
#define XSE_QUEUE_BYTES		(16 * 1024 * 1024)
/* Requests remembered until their answer: as the bridge's in-flight cap. */
#define XSE_PENDING_MAX		4096
/* Longest endpoint URL taken: real ones are a path and a session id. */
#define XSE_ENDPOINT_MAX	8192
/*
 * What the stream may hold of an unfinished event before the endpoint
 * event has come: the endpoint, its field names and some slack.
 */
#define XSE_WAITING_MAX		(XSE_ENDPOINT_MAX + 4096)
/* A POST's answer body ("Accepted") read at most; the rest is dropped. */
#define XSE_POST_BODY_MAX	(64 * 1024)

enum xse_state {
	XSE_CONNECTING,		/* GET sent, no answer head yet */
	XSE_WAITING,		/* the stream is open, no endpoint event yet */
	XSE_OPEN,		/* messages go to the endpoint */
	XSE_CLOSED,		/* cbs.closed called, or about to be */
	XSE_MAX
};

static const char *xse_state_names[XSE_MAX] = {
	"connecting", "waiting", "open", "closed"
};

struct xport_sse;
struct xse_post;

/* A message sent: queued, in a POST, or a request awaiting its answer. */
struct xse_msg {
	char			*body;
	size_t			 len;
	char			**headers;	/* queued: xport_send's, copied */
	char			*id;		/* requests: the id's JSON text */
	size_t			 id_len;
	int			 pending;	/* on xs->pending */
	int			 queued;	/* on xs->queue */
	struct xse_post		*post;		/* the POST carrying it */
	TAILQ_ENTRY(xse_msg)	 pentry;
	TAILQ_ENTRY(xse_msg)	 qentry;
};
TAILQ_HEAD(xse_msgs, xse_msg);

/* One POST in flight. */
struct xse_post {
	struct xport_sse	*xs;
	struct bufferevent	*bev;
	struct xse_msg		*m;		/* NULL once answered on the
						   stream */
	struct http_head	 resp;
	int			 have_head;
	size_t			 scanned;
	struct http_body	 body;
	struct evbuffer		*data;		/* its body, thrown away */
	TAILQ_ENTRY(xse_post)	 entry;
};

struct xport_sse {
	struct xport		 x;	/* first: a struct xport * is one */
	struct upstream		 up;
	char			*get_target;	/* the GET's path and query */
	char			*post_target;	/* the endpoint's */
	enum xse_state		 state;
	int			 finishing;
	size_t			 max_body;	/* of one event; 0: none */

	struct bufferevent	*stream;
	struct http_head	 resp;
	int			 have_head;
	size_t			 scanned;
	struct http_body	 body;
	struct sse_parser	 sp;
	struct evbuffer		*data;		/* decoded, not yet parsed */

	struct event		*timer;		/* endpoint, finish timeouts */
	struct event		*start_ev;	/* opens the stream */
	struct event		*done_ev;	/* cbs.closed, deferred */
	char			*done_why;

	struct xse_msgs		 queue;		/* before the endpoint event */
	size_t			 nqueued;
	size_t			 queued_bytes;
	struct xse_msgs		 pending;	/* requests awaiting answers */
	size_t			 npending;
	int			 pending_full_noted;
	int			 endpoint_again_noted;
	TAILQ_HEAD(, xse_post)	 posts;
};

static void	xse_close(struct xport_sse *, const char *);

/* Move to a new state, logging the change. */
static void
xse_set_state(struct xport_sse *xs, enum xse_state state)
{
	if (state >= XSE_MAX)
		fatalx("%s: bad state %d", __func__, state);
	log_debug("legacy SSE %s: %s -> %s", xs->x.target,
	    xse_state_names[xs->state], xse_state_names[state]);
	xs->state = state;
}

/* The length of the URL scheme ref starts with (before ':'), or 0. */
static size_t
xse_scheme_len(const char *ref)
{
	size_t	i;

	if (!((*ref >= 'a' && *ref <= 'z') || (*ref >= 'A' && *ref <= 'Z')))
		return 0;
	for (i = 1; ref[i] != '\0'; i++) {
		if (ref[i] == ':')
			return i;
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "0123456789+-.", ref[i]) == NULL)
			return 0;
	}
	return 0;
}

/*
 * Whether "scheme://authority" (scheme_len bytes of scheme, then the
 * authority up to end) is base's origin: scheme, host and port alike.
 */
static int
xse_same_origin(const struct url *base, const char *scheme, size_t scheme_len,
    const char *auth, size_t auth_len, char **cause)
{
	struct url	 u;
	char		*s, *why = NULL;
	size_t		 i;
	int		 same;

	xasprintf(&s, "%.*s://%.*s", (int)scheme_len, scheme, (int)auth_len,
	    auth);
	for (i = 0; i < scheme_len; i++)
		s[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
	if (net_parse_url(s, &u, &why) != 0) {
		xasprintf(cause, "the endpoint URL's origin is not one: %s",
		    why);
		free(why);
		free(s);
		return 0;
	}
	same = u.tls == base->tls && strcasecmp(u.host, base->host) == 0 &&
	    strcmp(u.port, base->port) == 0;
	if (!same)
		xasprintf(cause, "the endpoint event names another origin "
		    "(%s, not %s): refused, messages go only where the stream "
		    "came from", u.origin, base->origin);
	net_url_clear(&u);
	free(s);
	return same;
}

/*
 * Remove the dot segments of an absolute path (RFC 3986 5.2.4): a ".."
 * at the root stays at the root, as every URL parser has it.
 */
static char *
xse_remove_dots(const char *path)
{
	char		*out = xmalloc(strlen(path) + 2);
	const char	*p = path, *seg;
	size_t		 olen = 0, n;

	while (*p != '\0') {
		/* p is at a '/': the segment is what follows, to the next. */
		seg = p + 1;
		n = strcspn(seg, "/");
		if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' &&
		    seg[1] == '.')) {
			if (n == 2) {
				while (olen > 0 && out[olen - 1] != '/')
					olen--;
				if (olen > 0)
					olen--;
			}
			/* A dot segment at the end leaves a directory. */
			if (seg[n] == '\0')
				out[olen++] = '/';
		} else {
			out[olen++] = '/';
			memcpy(out + olen, seg, n);
			olen += n;
		}
		p = seg + n;
	}
	if (olen == 0)
		out[olen++] = '/';
	out[olen] = '\0';
	return out;
}

/*
 * Resolve an endpoint event's URL (ref) against the stream's URL (base),
 * as RFC 3986 5.2 does, into the request target to POST to ("/path?query",
 * dot segments removed, the fragment dropped).  Refused (-1, *cause): a
 * different origin (scheme, host or port), a scheme other than http(s),
 * bytes a request line cannot carry (controls, spaces, non-ASCII), more
 * than XSE_ENDPOINT_MAX bytes.  With ref
 * "" it gives the GET's own target.
 */
int
xport_sse_endpoint(const char *base, const char *ref, char **target,
    char **cause)
{
	struct url	 bu;
	const char	*bpath, *bq, *p, *auth, *q;
	char		*merged = NULL, *path = NULL, *query = NULL;
	size_t		 n, slen, blen;
	int		 rc = -1;

	*target = NULL;
	if (net_parse_url(base, &bu, cause) != 0)
		return -1;
	/* The base's own path and query, as written. */
	bpath = base + (bu.tls ? 8 : 7);
	bpath += strcspn(bpath, "/?");
	bq = strchr(bpath, '?');
	blen = bq != NULL ? (size_t)(bq - bpath) : strlen(bpath);

	n = strlen(ref);
	if (n > XSE_ENDPOINT_MAX) {
		xasprintf(cause, "the endpoint URL is too long (%zu bytes, at "
		    "most %d)", n, XSE_ENDPOINT_MAX);
		goto out;
	}
	for (p = ref; *p != '\0'; p++) {
		unsigned char	c = (unsigned char)*p;

		if (c <= 0x20 || c >= 0x7f) {
			xasprintf(cause, "the endpoint URL holds a byte a "
			    "request line cannot carry (0x%02x)", c);
			goto out;
		}
	}
	/* The fragment is the client's own: never sent. */
	n = strcspn(ref, "#");

	if ((slen = xse_scheme_len(ref)) != 0 || strncmp(ref, "//", 2) == 0) {
		if (slen != 0 && !((slen == 4 && strncasecmp(ref, "http",
		    4) == 0) || (slen == 5 && strncasecmp(ref, "https",
		    5) == 0))) {
			xasprintf(cause, "the endpoint URL's scheme is not "
			    "http or https");
			goto out;
		}
		auth = ref + slen + (slen != 0 ? 1 : 0);
		if (strncmp(auth, "//", 2) != 0) {
			xasprintf(cause, "the endpoint URL has a scheme but "
			    "no //host");
			goto out;
		}
		auth += 2;
		p = auth + strcspn(auth, "/?#");
		if (!xse_same_origin(&bu, slen != 0 ? ref : (bu.tls ?
		    "https" : "http"), slen != 0 ? slen : (bu.tls ? 5 : 4),
		    auth, (size_t)(p - auth), cause))
			goto out;
		n -= (size_t)(p - ref);
		ref = p;
		if (n == 0 || *ref == '?')
			merged = xstrdup("/");
	}
	q = memchr(ref, '?', n);
	if (q != NULL)
		query = xstrndup(q + 1, n - (size_t)(q - ref) - 1);
	n = q != NULL ? (size_t)(q - ref) : n;
	if (merged != NULL)
		;
	else if (n > 0 && *ref == '/')
		merged = xstrndup(ref, n);
	else if (n == 0) {
		/* Only a query, or nothing: the base's path (and query). */
		merged = blen > 0 ? xstrndup(bpath, blen) : xstrdup("/");
		if (q == NULL && bq != NULL)
			query = xstrdup(bq + 1);
	} else {
		/* A relative path replaces the base path's last segment. */
		for (p = bpath + blen; p > bpath && p[-1] != '/'; p--)
			;
		xasprintf(&merged, "%.*s%.*s", p > bpath ?
		    (int)(p - bpath) : 1, p > bpath ? bpath : "/", (int)n,
		    ref);
	}
	path = xse_remove_dots(merged);
	if (query != NULL)
		xasprintf(target, "%s?%s", path, query);
	else
		*target = xstrdup(path);
	/* The base URL's own path and query go in too: the same rule. */
	for (p = *target; *p != '\0'; p++) {
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
			xasprintf(cause, "the URL's path or query holds a byte "
			    "a request line cannot carry (0x%02x)",
			    (unsigned char)*p);
			free(*target);
			*target = NULL;
			goto out;
		}
	}
	rc = 0;
out:
	free(merged);
	free(path);
	free(query);
	net_url_clear(&bu);
	return rc;
}

static void
xse_msg_free(struct xse_msg *m)
{
	char	**h;

	if (m == NULL)
		return;
	for (h = m->headers; h != NULL && *h != NULL; h++)
		free(*h);
	free(m->headers);
	free(m->body);
	free(m->id);
	free(m);
}

/* Take the message off the lists it is on and free it. */
static void
xse_msg_drop(struct xport_sse *xs, struct xse_msg *m)
{
	if (m->pending) {
		TAILQ_REMOVE(&xs->pending, m, pentry);
		xs->npending--;
	}
	if (m->queued) {
		TAILQ_REMOVE(&xs->queue, m, qentry);
		xs->nqueued--;
		xs->queued_bytes -= m->len;
	}
	if (m->post != NULL)
		m->post->m = NULL;
	xse_msg_free(m);
}

/* The message will not be delivered or answered: say so, drop it. */
static void
xse_msg_fail(struct xport_sse *xs, struct xse_msg *m, const char *why)
{
	if (xs->x.cbs.failed != NULL)
		xs->x.cbs.failed(m->body, m->len, why, xs->x.arg);
	xse_msg_drop(xs, m);
}

static void
xse_post_free(struct xse_post *pp)
{
	struct xport_sse	*xs = pp->xs;

	TAILQ_REMOVE(&xs->posts, pp, entry);
	if (pp->bev != NULL)
		bufferevent_free(pp->bev);
	http_head_clear(&pp->resp);
	evbuffer_free(pp->data);
	free(pp);
	/* Finishing: the stream goes once nothing is in flight. */
	if (xs->finishing && TAILQ_EMPTY(&xs->posts) && xs->state !=
	    XSE_CLOSED)
		xse_close(xs, "finished");
}

/*
 * A POST is over: its message was delivered (why NULL) or was not.  A
 * delivered request stays on the pending list; anything else is done.
 */
static void
xse_post_done(struct xse_post *pp, const char *why)
{
	struct xport_sse	*xs = pp->xs;
	struct xse_msg		*m = pp->m;

	if (m != NULL) {
		m->post = NULL;
		pp->m = NULL;
		if (why != NULL) {
			xport_note(&xs->x, "%s", why);
			xse_msg_fail(xs, m, why);
		} else if (!m->pending)
			xse_msg_free(m);
	}
	xse_post_free(pp);
}

/* Parse a POST's answer; returns 1 when it is over (done or given up). */
static int
xse_post_read(struct xse_post *pp, int eof)
{
	struct xport_sse	*xs = pp->xs;
	struct evbuffer		*in = bufferevent_get_input(pp->bev);
	enum http_body_kind	 kind;
	uint64_t		 length;
	char			*cause = NULL, *why;
	int			 rc;

	while (!pp->have_head) {
		rc = http_head_parse(in, 0, &pp->scanned, &pp->resp, &cause);
		if (rc == 0)
			return eof;
		if (rc == -1) {
			xasprintf(&why, "bad answer from %s to a POST: %s",
			    xs->x.target, cause);
			free(cause);
			xse_post_done(pp, why);
			free(why);
			return -1;
		}
		evbuffer_drain(in, pp->resp.len);
		if (pp->resp.status < 200) {
			http_head_clear(&pp->resp);
			pp->scanned = 0;
			continue;
		}
		pp->have_head = 1;
		if (pp->resp.status >= 300) {
			xasprintf(&why, "the server at %s answered HTTP %d%s%s "
			    "to a POST: the message is lost", xs->x.target,
			    pp->resp.status, *pp->resp.reason != '\0' ? " " :
			    "", pp->resp.reason);
			xse_post_done(pp, why);
			free(why);
			return -1;
		}
		/* Delivered: what follows is only "Accepted". */
		if (pp->m != NULL) {
			pp->m->post = NULL;
			if (!pp->m->pending)
				xse_msg_free(pp->m);
			pp->m = NULL;
		}
		if (http_body_kind(&pp->resp, "POST", &kind, &length,
		    &cause) != 0) {
			free(cause);
			return 1;
		}
		http_body_init(&pp->body, kind, length);
	}
	rc = http_body_decode(&pp->body, in, pp->data, eof, &cause);
	free(cause);
	if (pp->body.total > XSE_POST_BODY_MAX)
		rc = -1;
	evbuffer_drain(pp->data, evbuffer_get_length(pp->data));
	return rc != 0 || eof;
}

static void
xse_post_read_cb(struct bufferevent *bev, void *arg)
{
	struct xse_post	*pp = arg;
	int		 rc;

	if ((rc = xse_post_read(pp, 0)) == 1)
		xse_post_done(pp, NULL);
}

static void
xse_post_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct xse_post		*pp = arg;
	struct xport_sse	*xs = pp->xs;
	char			*why, *err;

	if (what & BEV_EVENT_CONNECTED) {
		struct timeval	tv = { XSE_POST_TIMEOUT_S, 0 };

		bufferevent_set_timeouts(bev, &tv, NULL);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		xasprintf(&why, "a POST to %s got no answer within %d s: the "
		    "message may be lost", xs->x.target, (what &
		    BEV_EVENT_READING) ? XSE_POST_TIMEOUT_S :
		    XSE_CONNECT_TIMEOUT_S);
		xse_post_done(pp, why);
		free(why);
		return;
	}
	if (xse_post_read(pp, 1) == -1)
		return;
	if (pp->have_head) {
		xse_post_done(pp, NULL);
		return;
	}
	err = (what & BEV_EVENT_EOF) ? NULL : net_upstream_error(bev, &xs->up);
	xasprintf(&why, "a POST to %s failed before any answer: %s",
	    xs->x.target, err != NULL ? err : "the server closed the "
	    "connection");
	free(err);
	xse_post_done(pp, why);
	free(why);
}

/* POST one message to the endpoint, on a connection of its own. */
static void
xse_post_start(struct xport_sse *xs, struct xse_msg *m,
    const char *const *headers)
{
	struct xse_post	*pp = xcalloc(1, sizeof *pp);
	struct evbuffer	*out;
	struct timeval	 tv = { XSE_CONNECT_TIMEOUT_S, 0 };
	char		*cause = NULL, *why, **h;

	pp->xs = xs;
	pp->m = m;
	m->post = pp;
	pp->data = evbuffer_new();
	TAILQ_INSERT_TAIL(&xs->posts, pp, entry);
	if ((pp->bev = net_upstream_connect(xs->x.base, &xs->up, &cause)) ==
	    NULL) {
		xasprintf(&why, "a POST to %s failed: %s", xs->x.target,
		    cause);
		free(cause);
		xse_post_done(pp, why);
		free(why);
		return;
	}
	bufferevent_setcb(pp->bev, xse_post_read_cb, NULL, xse_post_event_cb,
	    pp);
	bufferevent_set_timeouts(pp->bev, NULL, &tv);
	out = bufferevent_get_output(pp->bev);
	evbuffer_add_printf(out, "POST %s HTTP/1.1\r\nHost: %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n",
	    xs->post_target, xs->up.url.hostport, m->len);
	for (h = xs->x.headers; h != NULL && *h != NULL; h++)
		evbuffer_add_printf(out, "%s\r\n", *h);
	for (; headers != NULL && *headers != NULL; headers++)
		evbuffer_add_printf(out, "%s\r\n", *headers);
	evbuffer_add_printf(out, "Connection: close\r\n\r\n");
	evbuffer_add(out, m->body, m->len);
	bufferevent_enable(pp->bev, xs->x.paused ? EV_WRITE : EV_READ |
	    EV_WRITE);
}

/* Where a member's value is (xse_member). */
struct xse_find {
	const char	*buf;
	const char	*name;
	size_t		 off;
	size_t		 len;
	int		 found;
};

/* scan_members callback: keep the value of the member called f->name. */
static int
xse_member_cb(const struct scan_member *mb, void *arg)
{
	struct xse_find	*f = arg;

	if (scan_key_is(f->buf, mb, f->name)) {
		f->off = mb->val_off;
		f->len = mb->val_len;
		f->found = 1;
	}
	return 0;
}

/*
 * Find the JSON text of member name of the object in buf; return 0 with
 * where it is, or -1.
 */
static int
xse_member(const char *buf, size_t len, const char *name, size_t *off,
    size_t *vlen)
{
	struct xse_find	f = { buf, name, 0, 0, 0 };

	if (scan_members(buf, len, xse_member_cb, &f) != 0 || !f.found)
		return -1;
	*off = f.off;
	*vlen = f.len;
	return 0;
}

/*
 * A notifications/cancelled being sent: the server should not answer the
 * request it names, so that request is no longer followed.
 */
static void
xse_cancelled(struct xport_sse *xs, const char *bytes, size_t len,
    const struct scan *sc)
{
	struct xse_msg	*m;
	size_t		 poff, plen, ioff, ilen;

	if (sc->kind != KIND_NOTIFICATION || sc->method_escaped ||
	    sc->method_len != 23 || memcmp(bytes + sc->method_off,
	    "notifications/cancelled", 23) != 0)
		return;
	if (xse_member(bytes, len, "params", &poff, &plen) != 0 ||
	    xse_member(bytes + poff, plen, "requestId", &ioff, &ilen) != 0)
		return;
	TAILQ_FOREACH(m, &xs->pending, pentry) {
		if (m->id_len == ilen && memcmp(m->id, bytes + poff + ioff,
		    ilen) == 0) {
			TAILQ_REMOVE(&xs->pending, m, pentry);
			xs->npending--;
			m->pending = 0;
			/* Delivered: nothing else holds it. */
			if (m->post == NULL && !m->queued)
				xse_msg_free(m);
			return;
		}
	}
}

/*
 * Copy a message; a request goes on the pending list (when it is full,
 * the oldest leaves it).
 */
static struct xse_msg *
xse_msg_new(struct xport_sse *xs, const char *bytes, size_t len)
{
	struct xse_msg	*m = xcalloc(1, sizeof *m), *old;
	struct scan	 sc;

	m->body = xmalloc(len > 0 ? len : 1);
	memcpy(m->body, bytes, len);
	m->len = len;
	scan_message(bytes, len, &sc);
	xse_cancelled(xs, bytes, len, &sc);
	if (sc.kind != KIND_REQUEST || !sc.has_id)
		return m;
	if (xs->npending >= XSE_PENDING_MAX) {
		if (!xs->pending_full_noted)
			xport_note(&xs->x, "over %d requests await answers from %s: "
			    "the oldest are no longer followed if the stream "
			    "breaks", XSE_PENDING_MAX, xs->x.target);
		xs->pending_full_noted = 1;
		old = TAILQ_FIRST(&xs->pending);
		TAILQ_REMOVE(&xs->pending, old, pentry);
		xs->npending--;
		old->pending = 0;
		if (old->post == NULL && !old->queued)
			xse_msg_free(old);
	}
	m->id = xstrndup(bytes + sc.id_off, sc.id_len);
	m->id_len = sc.id_len;
	m->pending = 1;
	TAILQ_INSERT_TAIL(&xs->pending, m, pentry);
	xs->npending++;
	return m;
}

/* A message came on the stream: the request it answers is done. */
static void
xse_answered(struct xport_sse *xs, const char *body, size_t len)
{
	struct xse_msg	*m;
	struct scan	 sc;

	scan_message(body, len, &sc);
	if ((sc.kind != KIND_RESPONSE && sc.kind != KIND_ERROR) || !sc.has_id)
		return;
	TAILQ_FOREACH(m, &xs->pending, pentry) {
		if (m->id_len == sc.id_len && memcmp(m->id, body + sc.id_off,
		    sc.id_len) == 0) {
			xse_msg_drop(xs, m);
			return;
		}
	}
}

/* The endpoint event: where messages go from now on. */
static void
xse_endpoint(struct xport_sse *xs, const char *data)
{
	struct xse_msg	*m;
	char		*cause = NULL, *why, **h, **p;

	if (xs->state != XSE_WAITING) {
		/* Said once: a server repeating it must not flood the notes. */
		if (!xs->endpoint_again_noted)
			xport_note(&xs->x, "%s sent another endpoint event: ignored, "
			    "messages still go to the first", xs->x.target);
		xs->endpoint_again_noted = 1;
		return;
	}
	if (xport_sse_endpoint(xs->x.target, data, &xs->post_target,
	    &cause) != 0) {
		xasprintf(&why, "%s: %s", xs->x.target, cause);
		free(cause);
		xse_close(xs, why);
		free(why);
		return;
	}
	evtimer_del(xs->timer);
	xse_set_state(xs, XSE_OPEN);
	log_debug("legacy SSE %s: messages go to %s", xs->x.target,
	    xs->post_target);
	while ((m = TAILQ_FIRST(&xs->queue)) != NULL) {
		TAILQ_REMOVE(&xs->queue, m, qentry);
		m->queued = 0;
		xs->nqueued--;
		xs->queued_bytes -= m->len;
		h = m->headers;
		m->headers = NULL;
		xse_post_start(xs, m, (const char *const *)h);
		for (p = h; p != NULL && *p != NULL; p++)
			free(*p);
		free(h);
		if (xs->state == XSE_CLOSED)
			return;
	}
}

/* One whole event from the stream. */
static void
xse_event(struct xport_sse *xs, struct sse_event *ev)
{
	if (ev->type != NULL && strcmp(ev->type, "endpoint") == 0) {
		if (ev->data == NULL || strlen(ev->data) != ev->data_len) {
			xse_close(xs, "the endpoint event holds a NUL byte: "
			    "refused");
			return;
		}
		xse_endpoint(xs, ev->data);
		return;
	}
	if (ev->type != NULL && strcmp(ev->type, "message") != 0) {
		log_debug("legacy SSE %s: a '%.32s' event ignored",
		    xs->x.target, ev->type);
		return;
	}
	if (ev->data_len == 0)
		return;
	xse_answered(xs, ev->data, ev->data_len);
	xs->x.cbs.message(ev->data, ev->data_len, xs->x.arg);
}

/* The GET's answer head is in: it must open an event stream. */
static int
xse_stream_head(struct xport_sse *xs)
{
	enum http_body_kind	 kind;
	uint64_t		 length;
	const char		*ctype;
	char			*why, *cause = NULL;

	ctype = http_head_get(&xs->resp, "Content-Type");
	if (xs->resp.status < 200 || xs->resp.status >= 300 || ctype == NULL ||
	    strncasecmp(ctype, "text/event-stream", 17) != 0) {
		xasprintf(&why, "the server at %s answered GET with HTTP %d%s%s"
		    "%s: not a legacy HTTP+SSE endpoint", xs->x.target,
		    xs->resp.status, *xs->resp.reason != '\0' ? " " : "",
		    xs->resp.reason, xs->resp.status < 300 ? ", not an event "
		    "stream" : "");
		xse_close(xs, why);
		free(why);
		return -1;
	}
	if (http_body_kind(&xs->resp, "GET", &kind, &length, &cause) != 0) {
		xasprintf(&why, "bad event stream from %s: %s", xs->x.target,
		    cause);
		free(cause);
		xse_close(xs, why);
		free(why);
		return -1;
	}
	http_body_init(&xs->body, kind, length);
	xse_set_state(xs, XSE_WAITING);
	return 0;
}

/* Parse what the stream has brought; closes the transport when it ends. */
static void
xse_stream_read(struct xport_sse *xs, int eof)
{
	struct evbuffer		*in = bufferevent_get_input(xs->stream);
	struct sse_event	 ev;
	char			*cause = NULL, *why;
	int			 rc, body_rc;

	while (!xs->have_head) {
		rc = http_head_parse(in, 0, &xs->scanned, &xs->resp, &cause);
		if (rc == 0) {
			if (eof) {
				xasprintf(&why, "%s closed the connection of "
				    "the GET before any answer", xs->x.target);
				xse_close(xs, why);
				free(why);
			}
			return;
		}
		if (rc == -1) {
			xasprintf(&why, "bad answer from %s to the GET: %s",
			    xs->x.target, cause);
			free(cause);
			xse_close(xs, why);
			free(why);
			return;
		}
		evbuffer_drain(in, xs->resp.len);
		if (xs->resp.status < 200) {
			http_head_clear(&xs->resp);
			xs->scanned = 0;
			continue;
		}
		xs->have_head = 1;
		if (xse_stream_head(xs) != 0)
			return;
	}
	body_rc = http_body_decode(&xs->body, in, xs->data, eof, &cause);
	if (body_rc == -1) {
		xasprintf(&why, "bad event stream from %s: %s", xs->x.target,
		    cause);
		free(cause);
		xse_close(xs, why);
		free(why);
		return;
	}
	for (;;) {
		if ((rc = sse_next(&xs->sp, xs->data, &ev)) == 0)
			break;
		if (rc == -1)
			xport_note(&xs->x, "an event from %s over %d bytes was "
			    "dropped", xs->x.target, SSE_LINE_MAX);
		else {
			xse_event(xs, &ev);
			sse_event_clear(&ev);
		}
		/* A callback may have finished or closed the transport. */
		if (xs->state == XSE_CLOSED)
			return;
	}
	/*
	 * Before the endpoint event, an unfinished event past what the
	 * endpoint may be ends it at once, not at the endpoint timeout with
	 * up to max_body held (and searched) meanwhile.
	 */
	if (xs->state == XSE_WAITING && evbuffer_get_length(xs->data) +
	    evbuffer_get_length(xs->sp.data) > XSE_WAITING_MAX) {
		xasprintf(&why, "%s sent over %d bytes before its endpoint "
		    "event was whole (an endpoint is at most %d): is it a "
		    "legacy HTTP+SSE endpoint?", xs->x.target, XSE_WAITING_MAX,
		    XSE_ENDPOINT_MAX);
		xse_close(xs, why);
		free(why);
		return;
	}
	if (xs->max_body != 0 && evbuffer_get_length(xs->data) +
	    evbuffer_get_length(xs->sp.data) > xs->max_body) {
		xasprintf(&why, "an event from %s is over %zu bytes "
		    "(--max-record-size): the stream was given up",
		    xs->x.target, xs->max_body);
		xse_close(xs, why);
		free(why);
		return;
	}
	if (body_rc == 1 || eof) {
		xasprintf(&why, "the server at %s ended the event stream",
		    xs->x.target);
		xse_close(xs, why);
		free(why);
	}
}

static void
xse_stream_read_cb(struct bufferevent *bev, void *arg)
{
	xse_stream_read(arg, 0);
}

static void
xse_stream_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct xport_sse	*xs = arg;
	char			*why;

	if (what & BEV_EVENT_CONNECTED) {
		bufferevent_set_timeouts(bev, NULL, NULL);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		xasprintf(&why, "cannot reach %s: no connection within %d s",
		    xs->up.url.origin, XSE_CONNECT_TIMEOUT_S);
		xse_close(xs, why);
		free(why);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		xse_stream_read(xs, 1);
		return;
	}
	why = net_upstream_error(bev, &xs->up);
	xse_close(xs, why);
	free(why);
}

/*
 * Close the stream (the session's end) and say so through cbs.closed on
 * the next loop pass.  Unless finishing, every message still queued or
 * awaiting its answer goes to cbs.failed first, with why.
 */
static void
xse_close(struct xport_sse *xs, const char *why)
{
	struct xse_msg	*m;
	struct xse_post	*pp;

	if (xs->state == XSE_CLOSED)
		return;
	xse_set_state(xs, XSE_CLOSED);
	if (xs->stream != NULL) {
		bufferevent_free(xs->stream);
		xs->stream = NULL;
	}
	evtimer_del(xs->timer);
	event_del(xs->start_ev);
	while ((m = TAILQ_FIRST(&xs->queue)) != NULL) {
		if (xs->finishing)
			xse_msg_drop(xs, m);
		else
			xse_msg_fail(xs, m, why);
	}
	while ((m = TAILQ_FIRST(&xs->pending)) != NULL) {
		if (xs->finishing)
			xse_msg_drop(xs, m);
		else
			xse_msg_fail(xs, m, why);
	}
	/*
	 * What POSTs still carry (notifications, responses, requests no
	 * longer followed) fails now too: nothing may fail after closed.
	 */
	TAILQ_FOREACH(pp, &xs->posts, entry) {
		if ((m = pp->m) == NULL)
			continue;
		pp->m = NULL;
		m->post = NULL;
		if (xs->finishing)
			xse_msg_drop(xs, m);
		else
			xse_msg_fail(xs, m, why);
	}
	xs->done_why = xstrdup(why);
	event_active(xs->done_ev, EV_TIMEOUT, 0);
}

static void
xse_done_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_sse	*xs = arg;

	if (xs->x.cbs.closed != NULL)
		xs->x.cbs.closed(xs->done_why, xs->x.arg);
}

/* No endpoint event in time, or POSTs outliving xport_finish. */
static void
xse_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_sse	*xs = arg;
	char			*why;

	if (xs->finishing) {
		xse_close(xs, "finished");
		return;
	}
	xasprintf(&why, "no endpoint event from %s within %d s: is it a "
	    "legacy HTTP+SSE endpoint?", xs->x.target, XSE_ENDPOINT_TIMEOUT_S);
	xse_close(xs, why);
	free(why);
}

/* Open the event stream (on the loop pass after xport_sse returns). */
static void
xse_start_cb(evutil_socket_t fd, short events, void *arg)
{
	struct xport_sse	*xs = arg;
	struct evbuffer		*out;
	struct timeval		 tv = { XSE_CONNECT_TIMEOUT_S, 0 };
	char			*cause = NULL, **h;

	if ((xs->stream = net_upstream_connect(xs->x.base, &xs->up,
	    &cause)) == NULL) {
		xse_close(xs, cause);
		free(cause);
		return;
	}
	bufferevent_setcb(xs->stream, xse_stream_read_cb, NULL,
	    xse_stream_event_cb, xs);
	bufferevent_set_timeouts(xs->stream, NULL, &tv);
	out = bufferevent_get_output(xs->stream);
	evbuffer_add_printf(out, "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "Accept: text/event-stream\r\nCache-Control: no-cache\r\n",
	    xs->get_target, xs->up.url.hostport);
	for (h = xs->x.headers; h != NULL && *h != NULL; h++)
		evbuffer_add_printf(out, "%s\r\n", *h);
	evbuffer_add_printf(out, "\r\n");
	bufferevent_enable(xs->stream, xs->x.paused ? EV_WRITE : EV_READ |
	    EV_WRITE);
}

/* Copy a NULL-ended list of strings (NULL for none). */
static char **
xse_strv_copy(const char *const *v)
{
	char	**c;
	size_t	  n, i;

	for (n = 0; v != NULL && v[n] != NULL; n++)
		;
	if (n == 0)
		return NULL;
	c = xcalloc(n + 1, sizeof *c);
	for (i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

static void
xse_send(struct xport *x, const char *bytes, size_t len,
    const char *const *headers)
{
	struct xport_sse	*xs = (struct xport_sse *)x;
	struct xse_msg		*m;
	char			*why;

	if (xs->state == XSE_CLOSED || xs->finishing ||
	    (xs->state != XSE_OPEN && (xs->nqueued >= XSE_QUEUE_MAX ||
	    xs->queued_bytes + len > XSE_QUEUE_BYTES))) {
		if (xs->state == XSE_CLOSED || xs->finishing)
			xasprintf(&why, "the transport to %s is closed: a "
			    "message was not sent", xs->x.target);
		else
			xasprintf(&why, "%s has sent no endpoint event yet "
			    "and %zu messages wait for it: a message was "
			    "dropped", xs->x.target, xs->nqueued);
		xport_note(&xs->x, "%s", why);
		if (xs->x.cbs.failed != NULL)
			xs->x.cbs.failed(bytes, len, why, xs->x.arg);
		free(why);
		return;
	}
	m = xse_msg_new(xs, bytes, len);
	if (xs->state == XSE_OPEN) {
		xse_post_start(xs, m, headers);
		return;
	}
	m->headers = xse_strv_copy(headers);
	m->queued = 1;
	TAILQ_INSERT_TAIL(&xs->queue, m, qentry);
	xs->nqueued++;
	xs->queued_bytes += len;
}

/*
 * End the session: once the POSTs in flight have their answers (or after
 * XSE_FINISH_TIMEOUT_S), close the stream.
 */
static void
xse_finish(struct xport *x)
{
	struct xport_sse	*xs = (struct xport_sse *)x;
	struct timeval		 tv = { XSE_FINISH_TIMEOUT_S, 0 };

	if (xs->finishing || xs->state == XSE_CLOSED) {
		xs->finishing = 1;
		return;
	}
	xs->finishing = 1;
	if (xs->nqueued > 0)
		xport_note(&xs->x, "finished before %s sent its endpoint event: %zu "
		    "messages were never sent", xs->x.target, xs->nqueued);
	if (TAILQ_EMPTY(&xs->posts))
		xse_close(xs, "finished");
	else
		evtimer_add(xs->timer, &tv);
}

static void
xse_pause(struct xport *x, int on)
{
	struct xport_sse	*xs = (struct xport_sse *)x;
	struct xse_post		*pp;

	if (xs->stream != NULL) {
		if (on)
			bufferevent_disable(xs->stream, EV_READ);
		else
			bufferevent_enable(xs->stream, EV_READ);
	}
	TAILQ_FOREACH(pp, &xs->posts, entry) {
		if (on)
			bufferevent_disable(pp->bev, EV_READ);
		else
			bufferevent_enable(pp->bev, EV_READ);
	}
}

static void
xse_free(struct xport *x)
{
	struct xport_sse	*xs = (struct xport_sse *)x;
	struct xse_post		*pp;
	struct xse_msg		*m;

	xs->state = XSE_CLOSED;
	while ((pp = TAILQ_FIRST(&xs->posts)) != NULL) {
		if ((m = pp->m) != NULL) {
			m->post = NULL;
			if (!m->pending && !m->queued)
				xse_msg_free(m);
		}
		xse_post_free(pp);
	}
	while ((m = TAILQ_FIRST(&xs->queue)) != NULL)
		xse_msg_drop(xs, m);
	while ((m = TAILQ_FIRST(&xs->pending)) != NULL)
		xse_msg_drop(xs, m);
	if (xs->stream != NULL)
		bufferevent_free(xs->stream);
	http_head_clear(&xs->resp);
	sse_clear(&xs->sp);
	evbuffer_free(xs->data);
	event_free(xs->timer);
	event_free(xs->done_ev);
	event_free(xs->start_ev);
	net_upstream_clear(&xs->up);
	free(xs->get_target);
	free(xs->post_target);
	free(xs->done_why);
	free(xs);
}

static const struct xport_ops xse_ops = { xse_send, xse_finish, xse_pause,
	xse_free, NULL };

/*
 * A legacy HTTP+SSE server at url (the stream's URL, path included).  The
 * stream is opened on the next loop pass, so headers set at once
 * (xport_set_headers) go with its GET; messages sent before its endpoint
 * event wait for it (at most XSE_QUEUE_MAX, XSE_QUEUE_BYTES).
 */
struct xport *
xport_sse(struct event_base *base, const char *url, const char *cacert,
    int insecure, size_t max_body, const struct xport_cbs *cbs, void *arg,
    char **cause)
{
	struct xport_sse	*xs = xcalloc(1, sizeof *xs);
	struct timeval		 tv = { XSE_ENDPOINT_TIMEOUT_S, 0 };

	xport_init(&xs->x, &xse_ops, base, cbs, arg);
	if (xport_sse_endpoint(url, "", &xs->get_target, cause) != 0) {
		free(xs);
		return NULL;
	}
	if (net_upstream_init(&xs->up, url, cacert, insecure, cause) != 0) {
		free(xs->get_target);
		free(xs);
		return NULL;
	}
	xs->max_body = max_body;
	xs->x.target = xstrdup(url);
	TAILQ_INIT(&xs->queue);
	TAILQ_INIT(&xs->pending);
	TAILQ_INIT(&xs->posts);
	xs->data = evbuffer_new();
	sse_init(&xs->sp);
	xs->timer = evtimer_new(base, xse_timer_cb, xs);
	xs->done_ev = event_new(base, -1, 0, xse_done_cb, xs);
	xs->start_ev = event_new(base, -1, 0, xse_start_cb, xs);
	if (xs->data == NULL || xs->timer == NULL || xs->done_ev == NULL ||
	    xs->start_ev == NULL)
		fatalx("out of memory");
	/* The endpoint event, connecting included, has this long. */
	evtimer_add(xs->timer, &tv);
	event_active(xs->start_ev, EV_TIMEOUT, 0);
	return &xs->x;
}
