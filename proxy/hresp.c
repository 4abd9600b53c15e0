/*
 * The response side of an HTTP exchange: its head passed on as it came,
 * its body decoded, recorded (one message for a JSON body, one per SSE
 * event) and forwarded in the framing it came in, and the legacy
 * `endpoint` event rewritten to name us.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "http_int.h"

/*
 * A legacy endpoint event names where to POST.  If it names the upstream
 * (absolute URL, or a path under its prefix), make it name us.  Its path
 * is taken with dot segments removed, as a client resolving it would: one
 * that climbs out of the root, or holds an encoded separator, is left
 * alone (the client could not reach it through us either).  The
 * upstream's query is taken out of it: we add it to every request.
 */
static char *
endpoint_rewrite(struct hproxy *p, const char *data)
{
	const char	*rest = NULL, *prefix = p->up.url.prefix, *tail, *r;
	const char	*uq, *after;
	size_t		 olen = strlen(p->up.url.origin), plen = strlen(prefix);
	char		*s, *path = NULL, *why = NULL;

	if (strncasecmp(data, p->up.url.origin, olen) == 0 &&
	    (data[olen] == '/' || data[olen] == '\0' || data[olen] == '?'))
		rest = data + olen;
	else if (*data == '/')
		rest = data;
	if (rest == NULL)
		return NULL;
	tail = rest + strcspn(rest, "?#");
	if (tail == rest)
		path = xstrdup("/");
	else if (http_target_remove_dots(rest, tail - rest, 0, &path,
	    &why) != 0) {
		free(why);
		return NULL;
	}
	r = path;
	if (plen > 0 && strncmp(r, prefix, plen) == 0 &&
	    (r[plen] == '/' || r[plen] == '\0'))
		r += plen;
	else if (rest == data) {
		free(path);
		return NULL;	/* a relative path outside the prefix */
	}
	/*
	 * The upstream's own query, first in the endpoint's, goes with every
	 * request anyway: left in, the upstream would get it twice.
	 */
	uq = p->up.url.query;
	if (uq != NULL && *tail == '?' && strncmp(tail + 1, uq,
	    strlen(uq)) == 0 && strchr("&#", tail[1 + strlen(uq)]) != NULL) {
		after = tail + 1 + strlen(uq);
		if (*after == '&')
			xasprintf(&s, "%s%s?%s", rest == data ? "" :
			    p->origin, r, after + 1);
		else
			xasprintf(&s, "%s%s%s", rest == data ? "" :
			    p->origin, r, after);
	} else
		xasprintf(&s, "%s%s%s", rest == data ? "" : p->origin, r,
		    tail);
	free(path);
	if (strcmp(s, data) == 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* Replace the first occurrence of from with to in buf. */
static void
evbuffer_replace_first(struct evbuffer *buf, const char *from, const char *to)
{
	struct evbuffer_ptr	 at;
	struct evbuffer		*tail;
	size_t			 pos;

	at = evbuffer_search(buf, from, strlen(from), NULL);
	if (at.pos < 0)
		return;
	pos = (size_t)at.pos;
	tail = evbuffer_new();
	evbuffer_remove_buffer(buf, tail, pos);
	evbuffer_drain(buf, strlen(from));
	evbuffer_add(tail, to, strlen(to));
	evbuffer_add_buffer(tail, buf);
	evbuffer_add_buffer(buf, tail);
	evbuffer_free(tail);
}

/* The most of an SSE event id a log line shows (an id has no length cap). */
#define HRESP_ID_SHOWN	128

/*
 * A legacy endpoint event names the URL the client is to POST to (url, as
 * the client gets it): the session is named by it.  Its id is the
 * session parameter in it (sessionId, session_id) if there is one, else
 * the URL; its POSTs are told by their path and query matching the URL's,
 * whatever names the session there.
 */
static void
hresp_endpoint_session(struct hexch *x, const char *url)
{
	struct hproxy	*p = x->c->p;
	char		*key = hsession_endpoint_key(url), *sid;

	sid = hsession_query_id(url);
	if (x->hs == NULL)
		hexch_assign(x, hsession_get(p, sid != NULL ? sid : key, 1,
		    x->ts_ns));
	free(sid);
	if (!x->hs->legacy) {
		free(key);
		return;
	}
	free(x->hs->endpoint);
	x->hs->endpoint = key;
}

/* One complete SSE event from the upstream. */
void
hresp_sse_event(struct hexch *x, struct sse_event *ev)
{
	struct hproxy	*p = x->c->p;
	struct evbuffer	*data;
	char		*to, *shown;
	int		 rewrite;

	x->sse_events++;
	if (ev->type != NULL && strcmp(ev->type, "endpoint") == 0) {
		x->saw_endpoint = 1;
		shown = hsession_redact_path(ev->data);
		to = endpoint_rewrite(p, ev->data);
		rewrite = to != NULL && x->may_rewrite && x->hold != NULL;
		hresp_endpoint_session(x, rewrite ? to : ev->data);
		if (rewrite) {
			evbuffer_replace_first(x->hold, ev->data, to);
			free(shown);
			shown = hsession_redact_path(to);
			hexch_note_at(x, LOG_LEVEL_DEBUG, "legacy SSE "
			    "endpoint event: rewrote the message URL to %s",
			    shown);
		} else if (to != NULL)
			hexch_note(x, "legacy SSE endpoint event: %s names "
			    "the upstream, but %s, so it was passed on "
			    "unchanged (the client will bypass mcpreel)", shown,
			    !x->may_rewrite ? "the stream has a fixed "
			    "Content-Length" : "the stream was no longer held "
			    "back for it");
		else
			hexch_note_at(x, LOG_LEVEL_DEBUG, "legacy SSE "
			    "endpoint event: %s", shown);
		free(to);
		free(shown);
		return;
	}
	if (x->wait_endpoint)
		hexch_assign(x, hsession_default(p, x->ts_ns));
	if (ev->data_len == 0) {
		/*
		 * No message in it: a priming event, which servers send to
		 * give a stream an event id to resume from (and a retry
		 * time), as the transport recommends.  It passed through; it
		 * is no one's concern, so it is not noted.
		 */
		log_debug("connection %llu: %s%s%.*s%s",
		    (unsigned long long)x->c->id, ev->id != NULL ||
		    ev->retry >= 0 ? "a priming SSE event (no data)" :
		    "an SSE event with no data", ev->id != NULL ? ", id " :
		    "", HRESP_ID_SHOWN, ev->id != NULL ? ev->id : "",
		    ev->retry >= 0 ? ", with a retry time" : "");
		return;
	}
	if (hexch_awaits_answer(x))
		hexch_answer_seen(x, ev->data, ev->data_len);
	data = evbuffer_new();
	evbuffer_add(data, ev->data, ev->data_len);
	hexch_tap_data(x, DIR_S2C, data, ev->data_len, ev->id, NULL);
	evbuffer_free(data);
}

/* Forward the first n held bytes, in the framing the body came in. */
void
hresp_send_held(struct hexch *x, struct evbuffer *out, size_t n)
{
	struct evbuffer	*part;

	if (n == 0)
		return;
	part = evbuffer_new();
	evbuffer_remove_buffer(x->hold, part, n);
	if (x->rechunk)
		http_chunk_add(out, part);
	else
		evbuffer_add_buffer(out, part);
	evbuffer_free(part);
	x->hold_ready = 0;
}

/*
 * --fault, SSE: what of hold the parser has taken may go (an event passed
 * undecided was sent as it came, so ssebuf may hold more than hold).
 */
static void
hresp_fsse_ready(struct hexch *x)
{
	size_t	hl = evbuffer_get_length(x->hold);
	size_t	sl = evbuffer_get_length(x->ssebuf);

	x->hold_ready = hl > sl ? hl - sl : 0;
}

/* What is held back may all go now; nothing is held from here on. */
static void
hresp_release_hold(struct hexch *x, struct evbuffer *out)
{
	if (x->hold == NULL)
		return;
	hresp_send_held(x, out, evbuffer_get_length(x->hold));
	evbuffer_free(x->hold);
	x->hold = NULL;
}

/* The final response head came: record it and pass it on as it was. */
void
hresp_head(struct hconn *c, struct http_head *h)
{
	struct hproxy		*p = c->p;
	struct hexch		*x = c->x;
	enum http_body_kind	 kind;
	uint64_t		 length;
	const char		*sid, *ctype;
	char			*cause = NULL;

	x->resp = *h;
	memset(h, 0, sizeof *h);
	x->have_resp = 1;
	hwait_set(c);
	if (hexch_wants_close(&x->resp))
		x->close_after = 1;
	ctype = http_head_get(&x->resp, "Content-Type");
	x->sse = ctype != NULL &&
	    strncasecmp(ctype, "text/event-stream", 17) == 0;

	if (x->hs != NULL) {
		hsession_settle(p, x->hs, http_head_get(&x->resp,
		    "Mcp-Session-Id"), x->resp.status >= 200 &&
		    x->resp.status < 300);
		hexch_record_response(x);
	} else if ((sid = http_head_get(&x->resp, "Mcp-Session-Id")) !=
	    NULL && *sid != '\0')
		hexch_assign(x, hsession_get(p, sid, 0, x->ts_ns));
	else if (x->sse && strcmp(x->req.method, "GET") == 0) {
		/* Legacy HTTP+SSE: the first event names the session. */
		x->wait_endpoint = 1;
	} else
		hexch_assign(x, hsession_default(p, x->ts_ns));

	if (x->sse) {
		sse_init(&x->sp);
		x->ssebuf = evbuffer_new();
	}
	if (http_body_kind(&x->resp, x->req.method, &kind, &length,
	    &cause) != 0) {
		hexch_note(x, "bad response from the upstream: %s", cause);
		conn_reply_error(c, 502, "Bad Gateway", cause);
		free(cause);
		return;
	}
	http_body_init(&x->respbody, kind, length);
	x->respbody.trailers = x->resptrailers;
	x->rechunk = (kind == HTTP_BODY_CHUNKED);
	/*
	 * The endpoint event may be rewritten (held back until it comes)
	 * only where its length is free to change: chunked or until close.
	 * With --durable every body is held back until it is committed.
	 */
	x->may_rewrite = x->wait_endpoint && kind != HTTP_BODY_LENGTH;
	if (x->may_rewrite || x->durable)
		x->hold = evbuffer_new();
	if (kind == HTTP_BODY_CLOSE)
		x->close_after = 1;
	if (c->p->opt->faults != NULL)
		hfresp_head(x, kind);
	if (x->fresp) {
		/* --fault: the head waits with the body for the decision. */
		evbuffer_remove_buffer(bufferevent_get_input(c->ubev),
		    x->fhead, x->resp.len);
		return;
	}

	/*
	 * Pass the head on exactly as it came, unless its framing is
	 * ambiguous: then as the body is read (RFC 9112 6.3).
	 */
	if (http_head_needs_reframe(&x->resp)) {
		evbuffer_drain(bufferevent_get_input(c->ubev), x->resp.len);
		http_head_write_reframed(bufferevent_get_output(c->cbev),
		    &x->resp);
		if (http_head_get(&x->resp, "Transfer-Encoding") != NULL)
			hexch_note(x, "the response head had both "
			    "Transfer-Encoding and Content-Length: passed on "
			    "with Transfer-Encoding only (RFC 9112 6.3)");
		else
			hexch_note(x, "the response head had Content-Length "
			    "repeated: passed on with one Content-Length (RFC "
			    "9110 8.6)");
	} else
		evbuffer_remove_buffer(bufferevent_get_input(c->ubev),
		    bufferevent_get_output(c->cbev), x->resp.len);
	x->sent_resp = 1;
	if (kind == HTTP_BODY_NONE)
		x->resp_done = 1;
}

/*
 * The (non-SSE) response body is whole: record it as a message when it is
 * JSON (said so, or found so).  Once only: what it taps leaves respdata.
 */
static void
hresp_record_body(struct hexch *x)
{
	struct scan	 sc;
	size_t		 len = evbuffer_get_length(x->respdata);
	const char	*ctype;
	int		 json;

	if (x->sse || len == 0)
		return;
	ctype = http_head_get(&x->resp, "Content-Type");
	json = ctype != NULL && strncasecmp(ctype, "application/json",
	    16) == 0;
	if (!json && !x->resp_cut) {
		scan_message(evbuffer_pullup(x->respdata, -1), len, &sc);
		json = sc.kind != KIND_INVALID;
	}
	if (json) {
		hexch_tap_data(x, DIR_S2C, x->respdata, len, NULL,
		    &x->respcap);
		evbuffer_drain(x->respdata, len);
	}
}

/* The response has been forwarded whole: record it, then the next one. */
void
hresp_done(struct hconn *c)
{
	struct hproxy	*p = c->p;
	struct hexch	*x = c->x;
	int		 close_after;

	hresp_release_hold(x, bufferevent_get_output(c->cbev));
	hresp_record_body(x);
	/* A successful DELETE ends the MCP session. */
	if (strcmp(x->req.method, "DELETE") == 0 && x->hs != NULL &&
	    x->hs->key != NULL && x->resp.status >= 200 &&
	    x->resp.status < 300)
		hsession_end(p, x->hs, "the client ended the session "
		    "(DELETE)");
	if (!x->req_done) {
		/*
		 * The server answered before the request body ended (an
		 * early 413, say): the rest is unwanted; close after this.
		 */
		x->close_after = 1;
	}
	close_after = x->close_after;
	hexch_end(c, "complete");
	c->uscanned = 0;
	if (close_after) {
		conn_close_after_output(c);
		return;
	}
	conn_pause(c->cbev, &c->cpause, PAUSE_BUSY, 0);
	conn_process_requests(c);
}

/*
 * Keep a copy of what came of a (non-SSE) response body for the record:
 * all of it when it says it is JSON; else only HTTP_KEEP_BODY_MAX, so an
 * upstream serving a huge file costs no memory beyond what is in flight.
 */
static void
hresp_keep_body(struct hexch *x, struct evbuffer *tmp)
{
	const char	*ctype = http_head_get(&x->resp, "Content-Type");
	size_t		 have = evbuffer_get_length(x->respdata), room;
	char		*part;

	if (ctype != NULL && strncasecmp(ctype, "application/json", 16) == 0) {
		hcap_copy(&x->respcap, x->respdata, tmp);
		return;
	}
	room = have < HTTP_KEEP_BODY_MAX ? HTTP_KEEP_BODY_MAX - have : 0;
	if (evbuffer_get_length(tmp) <= room) {
		hcap_append(x->respdata, tmp);
		return;
	}
	x->resp_cut = 1;
	if (room > 0) {
		part = xmalloc(room);
		evbuffer_copyout(tmp, part, room);
		evbuffer_add(x->respdata, part, room);
		free(part);
	}
}

/*
 * --durable: forward what is committed.  An event stream goes on up to the
 * end of its last complete event (hold_ready, found as events are parsed)
 * once that event is committed; any other body once it is whole and
 * committed.  What cannot be recorded whole streams regardless, as over
 * stdio: an event or a body past the record size cap, and a body that is
 * not JSON past the part of it kept (HTTP_KEEP_BODY_MAX).
 */
static void
hresp_durable(struct hconn *c, int done)
{
	struct hexch	*x = c->x;
	size_t		 held, cap = line_cap();

	if (x->hold == NULL)
		return;
	held = evbuffer_get_length(x->hold);
	if (done) {
		hresp_record_body(x);
		x->hold_ready = held;
	} else if (!x->sse && (x->respcap.digest != NULL || x->resp_cut))
		x->hold_ready = held;
	else if (x->sse && cap != 0 && held - x->hold_ready > cap)
		x->hold_ready = held;
	if (x->hold_ready == 0)
		return;
	hexch_commit(x);
	hresp_send_held(x, bufferevent_get_output(c->cbev), x->hold_ready);
}

/*
 * Forward what has arrived of the response body, with eof when the
 * upstream has closed.  Returns 1 when the response is complete, 0 when
 * more is to come, -1 when the connection was closed.
 */
int
hresp_body(struct hconn *c, int eof)
{
	struct hexch	*x = c->x;
	struct evbuffer	*in;
	struct evbuffer	*out = bufferevent_get_output(c->cbev);
	char		*dropped;
	struct evbuffer	*tmp;
	struct sse_event ev;
	char		*cause = NULL;
	int		 rc, erc, frc;

	if (x->resp_done)
		return 1;
	/* --fault: a delay holds what follows; a client left waiting. */
	if (x->fwait || x->fhang)
		return 0;
	tmp = evbuffer_new();
	/*
	 * A body that ended while a fault delay ran is all read (its
	 * upstream connection may be gone since, hfresp_upstream_gone).
	 */
	if (x->fbody_done)
		rc = 1;
	else {
		in = bufferevent_get_input(c->ubev);
		rc = http_body_decode(&x->respbody, in, tmp, eof, &cause);
	}
	if (rc == -1) {
		evbuffer_free(tmp);
		hexch_note(x, "bad response body from the upstream: %s",
		    cause);
		free(x->outcome);
		xasprintf(&x->outcome, "bad response body: %s", cause);
		free(cause);
		/* What already went through still reaches the client. */
		if (hfresp_cut(x))
			return 0;
		conn_close_after_output(c);
		return -1;
	}
	/*
	 * The bytes go where they are going before the events in them are
	 * handled: an endpoint rewrite edits the held copy.
	 */
	if (x->sse)
		hcap_append(x->ssebuf, tmp);
	else
		hresp_keep_body(x, tmp);
	if (x->hold != NULL)
		evbuffer_add_buffer(x->hold, tmp);
	else if (x->rechunk)
		http_chunk_add(out, tmp);
	else
		evbuffer_add_buffer(out, tmp);
	while (x->sse && !x->fwait) {
		memset(&ev, 0, sizeof ev);
		erc = sse_next(&x->sp, x->ssebuf, &ev);
		if (erc == 0)
			break;
		if (erc == -1)
			hexch_note(x, "an SSE event too large to record (over "
			    "%d bytes): passed through, not recorded",
			    SSE_LINE_MAX);
		else if (x->fsse && !x->fpass) {
			/* --fault: each event decided (hfault.c). */
			frc = hfresp_event(x, &ev);
			sse_event_clear(&ev);
			if (frc == -1 || frc == 2) {
				evbuffer_free(tmp);
				if (frc == 2)
					conn_watch_output(c);
				return frc == 2 ? 1 : -1;
			}
			continue;
		} else {
			hresp_sse_event(x, &ev);
			sse_event_clear(&ev);
		}
		if (x->fsse) {
			/* An event passed undecided has ended. */
			x->fpass = 0;
			hresp_fsse_ready(x);
		}
		/* All that the parser took has been handled, and may go. */
		if (x->durable)
			x->hold_ready = evbuffer_get_length(x->hold) -
			    evbuffer_get_length(x->ssebuf);
	}
	/*
	 * Between events, what the parser took is committed events or lines
	 * that carry no message (comments such as keep-alive pings, an id or
	 * retry alone, the rest of a dropped event): it may go too.  After a
	 * release past the cap ssebuf may hold more than hold does.
	 */
	if (x->durable && x->sse && !x->sp.pending &&
	    evbuffer_get_length(x->ssebuf) <= evbuffer_get_length(x->hold))
		x->hold_ready = evbuffer_get_length(x->hold) -
		    evbuffer_get_length(x->ssebuf);
	if (x->fsse) {
		if (x->fwait) {
			/* A delayed event holds the rest back. */
			x->fbody_done = rc == 1;
			evbuffer_free(tmp);
			conn_watch_output(c);
			return 0;
		}
		if (!x->sp.pending)
			hresp_fsse_ready(x);
		/*
		 * An event (or line) over HFAULT_HOLD_MAX is not held for a
		 * decision: it goes on as it comes, undecided.
		 */
		if (!x->fpass && hfault_over(x, evbuffer_get_length(x->hold) -
		    x->hold_ready)) {
			hexch_note_at(x, LOG_LEVEL_DEBUG, "an SSE event over %u "
			    "bytes (or over %u held in all): passed on with no "
			    "fault decided", HFAULT_HOLD_MAX, HFAULT_HELD_MAX);
			x->fpass = 1;
		}
		if (x->fpass)
			x->hold_ready = evbuffer_get_length(x->hold);
		hresp_send_held(x, out, x->hold_ready);
	} else if (x->fresp) {
		/* Held whole for the decision, up to a bound. */
		if (rc == 0 && hfault_over(x, evbuffer_get_length(x->hold))) {
			hexch_note_at(x, LOG_LEVEL_DEBUG, "a response body "
			    "over %u bytes (or over %u held in all): passed on "
			    "with no fault decided", HFAULT_HOLD_MAX,
			    HFAULT_HELD_MAX);
			evbuffer_add_buffer(out, x->fhead);
			x->sent_resp = 1;
			x->fresp = 0;
			/* The rest streams as it comes. */
			hresp_release_hold(x, out);
		}
	} else if (x->durable)
		hresp_durable(c, rc == 1);
	else if (x->hold != NULL && (!x->wait_endpoint || x->sse_events > 0 ||
	    evbuffer_get_length(x->hold) > HTTP_HOLD_MAX)) {
		if (x->wait_endpoint)
			hexch_assign(x, hsession_default(c->p, x->ts_ns));
		hresp_release_hold(x, out);
	}
	evbuffer_free(tmp);

	if (rc == 1 && x->fresp && (frc = hfresp_end(x)) != 1) {
		conn_watch_output(c);
		return frc == 0 ? 0 : -1;
	}
	if (rc == 1 && x->fsse && hfresp_stream_end(x)) {
		conn_watch_output(c);
		return 0;
	}
	if (rc == 1) {
		hresp_release_hold(x, out);
		if (x->rechunk) {
			http_chunk_end_trailers(out, x->resptrailers, &dropped);
			hexch_trailers_note(x, "response", dropped);
		}
		x->resp_done = 1;
	}
	conn_watch_output(c);
	return rc;
}
