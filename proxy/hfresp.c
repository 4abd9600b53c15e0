/*
 * Fault injection over HTTP, the response side: a JSON response held
 * whole with its head, and an SSE stream decided event by event (see
 * hfault.c for the whole picture).
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "http_int.h"
#include "fault.h"

/*
 * The response head came (not sent yet): with rules, an SSE stream is
 * decided event by event, and a JSON body is held whole with its head.
 */
void
hfresp_head(struct hexch *x, enum http_body_kind kind)
{
	const char	*ctype;

	if (!hfault_active(x->c->p) || x->durable)
		return;
	if (x->sse) {
		/* A fixed length cannot take a changed event. */
		if (kind == HTTP_BODY_LENGTH) {
			hexch_note_at(x, LOG_LEVEL_DEBUG, "an SSE response with "
			    "Content-Length: its events go on undecided");
			return;
		}
		x->fsse = 1;
		if (x->hold == NULL)
			x->hold = evbuffer_new();
		return;
	}
	ctype = http_head_get(&x->resp, "Content-Type");
	if (kind == HTTP_BODY_NONE || ctype == NULL ||
	    strncasecmp(ctype, "application/json", 16) != 0 ||
	    http_head_needs_reframe(&x->resp))
		return;
	x->fresp = 1;
	x->fhead = evbuffer_new();
	if (x->hold == NULL)
		x->hold = evbuffer_new();
}

/* Send the held JSON response as it came: its head, then its body. */
static void
hfresp_release(struct hexch *x)
{
	struct evbuffer	*out = bufferevent_get_output(x->c->cbev);

	evbuffer_add_buffer(out, x->fhead);
	x->sent_resp = 1;
	x->fresp = 0;
	hresp_send_held(x, out, evbuffer_get_length(x->hold));
}

/* Send the held JSON response's head with body in place of its own. */
static void
hfresp_replace(struct hexch *x, struct evbuffer *body)
{
	struct evbuffer	*out = bufferevent_get_output(x->c->cbev);
	struct http_head *h = &x->resp;
	size_t		 i;

	evbuffer_add_printf(out, "HTTP/1.%d %03d %s\r\n", h->version % 10,
	    h->status, h->reason != NULL ? h->reason : "");
	for (i = 0; i < h->nheaders; i++) {
		if (strcasecmp(h->headers[i].name, "Content-Length") == 0 ||
		    strcasecmp(h->headers[i].name, "Transfer-Encoding") == 0)
			continue;
		evbuffer_add_printf(out, "%s: %s\r\n", h->headers[i].name,
		    h->headers[i].value);
	}
	evbuffer_add_printf(out, "Content-Length: %zu\r\n\r\n",
	    evbuffer_get_length(body));
	evbuffer_add_buffer(out, body);
	evbuffer_drain(x->hold, evbuffer_get_length(x->hold));
	x->rechunk = 0;
	x->sent_resp = 1;
	x->fresp = 0;
}

/* Record the held JSON response body with a fault and role. */
static void
hfresp_tap(struct hexch *x, int64_t n, int role)
{
	size_t	len = evbuffer_get_length(x->respdata);

	if (len == 0)
		return;
	x->tap_fault = n;
	x->tap_role = role;
	hexch_tap_data(x, DIR_S2C, x->respdata, len, NULL, &x->respcap);
	x->tap_fault = 0;
	x->tap_role = 0;
	evbuffer_drain(x->respdata, len);
}

/*
 * The upstream left a response unfinished (it closed or failed, or sent a
 * bad body).  A held JSON response goes on as far as it came, undecided,
 * as it would with no rule.  An answer a fault keeps from the client (a
 * timeout's, a dropped one) stays kept: the client is left waiting, and
 * 1 says so (the caller leaves the connection open); else 0.
 */
int
hfresp_cut(struct hexch *x)
{
	if (x->fhang)
		return 1;
	/* A stream whose answer was dropped: as if it had ended. */
	if (x->fsse && x->fdropped)
		return hfresp_stream_end(x);
	if (x->fresp && x->fswallow) {
		hfresp_tap(x, x->fault_n, FAULT_ROLE_ORIGINAL);
		hfault_hang(x);
		return 1;
	}
	if (x->fresp && x->fhead != NULL)
		hfresp_release(x);
	return 0;
}

/* A s2c delay ran out: the held event or body goes on. */
static void
hfresp_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct hexch	*x = arg;
	struct hconn	*c = x->c;

	x->fwait = 0;
	if (x->fresp)
		hfresp_release(x);
	else {
		hresp_send_held(x, bufferevent_get_output(c->cbev),
		    x->fevent_len);
		x->hold_ready = 0;
	}
	x->fevent_len = 0;
	hfault_account(x);
	conn_pause(c->ubev, &c->upause, PAUSE_FAULT, 0);
	if (hresp_body(c, 0) == 1)
		hresp_done(c);
	if (c->dead)
		return;
	/* What hresp_body held since (the next delayed event) counts. */
	if (c->x != NULL)
		hfault_account(c->x);
	conn_watch_output(c);
}

/* Start a s2c delay of hit's length. */
static void
hfresp_delay(struct hexch *x, const struct fault_hit *hit)
{
	struct hconn	*c = x->c;
	struct timeval	 tv;

	x->fwait = 1;
	/* A c2s delay's timer (long fired) has the request's callback. */
	if (x->ftimer != NULL)
		event_free(x->ftimer);
	x->ftimer = evtimer_new(c->p->base, hfresp_timer_cb, x);
	tv.tv_sec = hit->delay_ms / 1000;
	tv.tv_usec = (hit->delay_ms % 1000) * 1000;
	evtimer_add(x->ftimer, &tv);
	conn_pause(c->ubev, &c->upause, PAUSE_FAULT, 1);
}

/*
 * The JSON response body is whole (held with its head): decide.  Returns
 * 1 when the response may end as usual (hresp_done), 0 when it waits (a
 * delay) or the client is left waiting, -1 when the connection closed.
 */
int
hfresp_end(struct hexch *x)
{
	struct hconn		*c = x->c;
	struct fault_hit	 hit;
	struct evbuffer		*rep;
	const char		*p;
	size_t			 len;
	int64_t			 n;
	int			 stray, rc = 1;

	if (!x->fresp)
		return 1;
	len = evbuffer_get_length(x->hold);
	p = (const char *)evbuffer_pullup(x->hold, -1);
	if (x->fswallow) {
		/* A timeout: the answer came, and goes no further. */
		hfresp_tap(x, x->fault_n, FAULT_ROLE_ORIGINAL);
		hfault_hang(x);
		return 0;
	}
	memset(&hit, 0, sizeof hit);
	if (len == 0 || fault_decide(c->p->opt->faults->set, DIR_S2C, p, len,
	    1, &hit) == 0) {
		hfresp_release(x);
		return 1;
	}
	n = hfault_record(x, &hit, DIR_S2C, p, len, 0);
	switch (hit.action) {
	case FAULT_DELAY:
		hfresp_tap(x, n, FAULT_ROLE_DELAYED);
		hfresp_delay(x, &hit);
		x->fbody_done = 1;
		rc = 0;
		break;
	case FAULT_CORRUPT:
	case FAULT_MUTATE:
		hfresp_tap(x, n, FAULT_ROLE_ORIGINAL);
		rep = hfault_replacement(&hit, p, len, &stray);
		p = (const char *)evbuffer_pullup(rep, -1);
		hfault_tap(x, DIR_S2C, p, evbuffer_get_length(rep), NULL, n,
		    FAULT_ROLE_INJECTED);
		hfresp_replace(x, rep);
		evbuffer_free(rep);
		break;
	case FAULT_CLOSE:
		hfresp_tap(x, n, FAULT_ROLE_ORIGINAL);
		writer_exchange_fault(c->p->w, x->wx, n);
		free(x->outcome);
		xasprintf(&x->outcome, "%s by a fault (#%lld)",
		    hit.close == FAULT_CLOSE_END_STREAM ? "closed" : "reset",
		    (long long)n);
		if (hit.close == FAULT_CLOSE_END_STREAM)
			conn_close(c, x->outcome);
		else
			hfault_reset(c, x->outcome);
		rc = -1;
		break;
	case FAULT_DROP:
	default:
		/* The answer is lost: the client waits, as for a drop. */
		hfresp_tap(x, n, FAULT_ROLE_ORIGINAL);
		hfault_hang(x);
		rc = 0;
		break;
	}
	fault_hit_clear(&hit);
	return rc;
}

/* Whether an SSE event's data answers x's own request. */
static int
hfresp_answers(const struct hexch *x, const char *p, size_t len)
{
	struct scan	sc;

	if (x->rpc_id == NULL)
		return 0;
	scan_message(p, len, &sc);
	return (sc.kind == KIND_RESPONSE || sc.kind == KIND_ERROR) &&
	    sc.has_id && sc.id_len == strlen(x->rpc_id) &&
	    memcmp(p + sc.id_off, x->rpc_id, sc.id_len) == 0;
}

/* Write an SSE event with ev's id and type and data in place of its own. */
static void
hfresp_sse_write(struct evbuffer *out, const struct sse_event *ev,
    const char *data, size_t len)
{
	if (ev->id != NULL)
		evbuffer_add_printf(out, "id: %s\n", ev->id);
	if (ev->type != NULL)
		evbuffer_add_printf(out, "event: %s\n", ev->type);
	hfault_sse_data(out, data, len);
}


/*
 * One complete SSE event of a stream decided event by event: its bytes
 * are hold[hold_ready, end of what the parser took).  Returns 0 when the
 * stream goes on, 1 when a delay holds it, 2 when it was ended (the
 * response is done), -1 when the connection was closed.
 */
int
hfresp_event(struct hexch *x, struct sse_event *ev)
{
	struct hconn		*c = x->c;
	struct evbuffer		*out = bufferevent_get_output(c->cbev);
	struct evbuffer		*rep, *ev_out;
	struct fault_hit	 hit;
	size_t			 start = x->hold_ready, end, evlen;
	int64_t			 n;
	int			 stray, rc = 0, answer;

	end = evbuffer_get_length(x->hold) - evbuffer_get_length(x->ssebuf);
	memset(&hit, 0, sizeof hit);
	if ((ev->type != NULL && strcmp(ev->type, "endpoint") == 0) ||
	    ev->data_len == 0) {
		hresp_sse_event(x, ev);
		x->hold_ready = evbuffer_get_length(x->hold) -
		    evbuffer_get_length(x->ssebuf);
		return 0;
	}
	if (x->wait_endpoint)
		hexch_assign(x, hsession_default(c->p, x->ts_ns));
	answer = hfresp_answers(x, ev->data, ev->data_len);
	if (x->fswallow && answer) {
		/* A timeout: the answer goes no further. */
		hit.action = FAULT_DROP;
		n = x->fault_n;
	} else if (fault_decide(c->p->opt->faults->set, DIR_S2C, ev->data,
	    ev->data_len, 1, &hit) == 0) {
		hresp_sse_event(x, ev);
		x->hold_ready = end;
		return 0;
	} else
		n = hfault_record(x, &hit, DIR_S2C, ev->data, ev->data_len, 0);
	/* What came before the event goes on. */
	hresp_send_held(x, out, start);
	evlen = end - start;
	x->hold_ready = 0;
	switch (hit.action) {
	case FAULT_DELAY:
		if (hexch_awaits_answer(x))
			hexch_answer_seen(x, ev->data, ev->data_len);
		hfault_tap(x, DIR_S2C, ev->data, ev->data_len, ev->id, n,
		    FAULT_ROLE_DELAYED);
		x->fevent_len = evlen;
		hfresp_delay(x, &hit);
		rc = 1;
		break;
	case FAULT_CORRUPT:
	case FAULT_MUTATE:
		if (hexch_awaits_answer(x))
			hexch_answer_seen(x, ev->data, ev->data_len);
		hfault_tap(x, DIR_S2C, ev->data, ev->data_len, ev->id, n,
		    FAULT_ROLE_ORIGINAL);
		rep = hfault_replacement(&hit, ev->data, ev->data_len, &stray);
		hfault_tap(x, DIR_S2C, (const char *)evbuffer_pullup(rep, -1),
		    evbuffer_get_length(rep), ev->id, n, FAULT_ROLE_INJECTED);
		evbuffer_drain(x->hold, evlen);
		ev_out = evbuffer_new();
		hfresp_sse_write(ev_out, ev, (const char *)evbuffer_pullup(rep,
		    -1), evbuffer_get_length(rep));
		/* The new event goes on with the next release. */
		x->hold_ready = evbuffer_get_length(ev_out);
		evbuffer_prepend_buffer(x->hold, ev_out);
		evbuffer_free(ev_out);
		evbuffer_free(rep);
		break;
	case FAULT_CLOSE:
		hfault_tap(x, DIR_S2C, ev->data, ev->data_len, ev->id, n,
		    FAULT_ROLE_ORIGINAL);
		if (x->wx != NULL)
			writer_exchange_fault(c->p->w, x->wx, n);
		free(x->outcome);
		if (hit.close == FAULT_CLOSE_END_STREAM) {
			xasprintf(&x->outcome, "stream ended by a fault (#%lld)",
			    (long long)n);
			evbuffer_drain(x->hold, evbuffer_get_length(x->hold));
			if (x->rechunk)
				http_chunk_end(out);
			/* The upstream's request goes with it. */
			x->close_after = 1;
			x->resp_done = 1;
			rc = 2;
			if (!x->rechunk) {
				conn_close_after_output(c);
				rc = -1;
			}
		} else {
			xasprintf(&x->outcome, "reset by a fault (#%lld)",
			    (long long)n);
			hfault_reset(c, x->outcome);
			rc = -1;
		}
		break;
	case FAULT_DROP:
	default:
		hfault_tap(x, DIR_S2C, ev->data, ev->data_len, ev->id, n,
		    FAULT_ROLE_ORIGINAL);
		evbuffer_drain(x->hold, evlen);
		if (answer)
			x->fdropped = 1;
		else if (hexch_awaits_answer(x))
			hexch_answer_seen(x, ev->data, ev->data_len);
		break;
	}
	fault_hit_clear(&hit);
	return rc;
}

/*
 * The upstream closed or failed while x waits on a fault (a delay, a
 * client left waiting) with its response whole, or before any of x's
 * request went on it (held for its decision or delayed: it was idle, and
 * the request goes on a new connection): nothing is lost, the connection
 * is let go.  1 if so.
 */
int
hfresp_upstream_gone(struct hconn *c)
{
	struct hexch	*x = c->x;

	if (x == NULL || !((x->fwait && x->fbody_done) || x->fhang ||
	    x->fhold))
		return 0;
	if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	return 1;
}

/*
 * An SSE response ended upstream: a stream whose answer was dropped
 * leaves its client waiting (1); else 0, it ends as usual.
 */
int
hfresp_stream_end(struct hexch *x)
{
	if (!x->fsse || !x->fdropped)
		return 0;
	hresp_send_held(x, bufferevent_get_output(x->c->cbev),
	    evbuffer_get_length(x->hold));
	hfault_hang(x);
	return 1;
}
