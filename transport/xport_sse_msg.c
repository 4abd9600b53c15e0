/*
 * The legacy HTTP+SSE transport's messages sent: each one copied until it
 * is delivered, and each request remembered (by its id's JSON text) until
 * its answer comes on the stream or a notifications/cancelled names it.
 */

#include <stdlib.h>
#include <string.h>

#include "transport.h"
#include "xport_sse_int.h"

/* Free a message; it must be on no list. */
void
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
void
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
void
xse_msg_fail(struct xport_sse *xs, struct xse_msg *m, const char *why)
{
	if (xs->x.cbs.failed != NULL)
		xs->x.cbs.failed(m->body, m->len, why, xs->x.arg);
	xse_msg_drop(xs, m);
}

/* Where a member's value is (xse_msg_member). */
struct xse_msg_find {
	const char	*buf;
	const char	*name;
	size_t		 off;
	size_t		 len;
	int		 found;
};

/* scan_members callback: keep the value of the member called f->name. */
static int
xse_msg_member_cb(const struct scan_member *mb, void *arg)
{
	struct xse_msg_find	*f = arg;

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
xse_msg_member(const char *buf, size_t len, const char *name, size_t *off,
    size_t *vlen)
{
	struct xse_msg_find	f = { buf, name, 0, 0, 0 };

	if (scan_members(buf, len, xse_msg_member_cb, &f) != 0 || !f.found)
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
xse_msg_cancelled(struct xport_sse *xs, const char *bytes, size_t len,
    const struct scan *sc)
{
	struct xse_msg	*m;
	size_t		 poff, plen, ioff, ilen;

	if (sc->kind != KIND_NOTIFICATION || sc->method_escaped ||
	    sc->method_len != 23 || memcmp(bytes + sc->method_off,
	    "notifications/cancelled", 23) != 0)
		return;
	if (xse_msg_member(bytes, len, "params", &poff, &plen) != 0 ||
	    xse_msg_member(bytes + poff, plen, "requestId", &ioff, &ilen) != 0)
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
struct xse_msg *
xse_msg_new(struct xport_sse *xs, const char *bytes, size_t len)
{
	struct xse_msg	*m = xcalloc(1, sizeof *m), *old;
	struct scan	 sc;

	m->body = xmalloc(len > 0 ? len : 1);
	memcpy(m->body, bytes, len);
	m->len = len;
	scan_message(bytes, len, &sc);
	xse_msg_cancelled(xs, bytes, len, &sc);
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
void
xse_msg_answered(struct xport_sse *xs, const char *body, size_t len)
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
