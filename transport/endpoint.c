/* The server side of an MCP transport: what both kinds share. */

#include "transport.h"

/* A message nobody asked for: stdout, or the HTTP event stream if open. */
void
endpoint_send(struct endpoint *ep, const char *bytes, size_t len)
{
	ep->ops->send(ep, bytes, len);
}

/* A message on a request's channel, before its answer. */
void
ereq_send(struct endpoint *ep, struct ereq *er, const char *bytes,
    size_t len)
{
	ep->ops->req_send(ep, er, bytes, len);
}

/* The request's answer (NULL bytes: none); er is gone after this. */
void
ereq_end(struct endpoint *ep, struct ereq *er, const char *bytes,
    size_t len)
{
	ep->ops->req_end(ep, er, bytes, len);
}

/*
 * A fault cuts er's channel short (er NULL: the channel of messages nobody
 * asked for).  er stays the caller's, cut off from its channel: what is
 * sent on it later goes nowhere, and ereq_end then frees it.  status and
 * the two header values (NULL: none) are for EREQ_CUT_STATUS.  A cut the
 * endpoint cannot make (a status over stdio) does nothing.
 */
void
ereq_cut(struct endpoint *ep, struct ereq *er, enum ereq_cut how,
    int status, const char *retry_after, const char *www_authenticate)
{
	if (ep->ops->cut != NULL)
		ep->ops->cut(ep, er, how, status, retry_after,
		    www_authenticate);
}

/* The session id to hand out on HTTP answers (nothing over stdio). */
void
endpoint_set_session(struct endpoint *ep, const char *id)
{
	if (ep->ops->set_session != NULL)
		ep->ops->set_session(ep, id);
}

/* Write what is pending, as far as the peer takes it (at exit). */
void
endpoint_flush(struct endpoint *ep)
{
	if (ep->ops->flush != NULL)
		ep->ops->flush(ep);
}

/*
 * Bytes handed to the endpoint so far, and how many of them are written:
 * a message is delivered once written reaches what queued was just after
 * it.  HTTP does not count (both 0): its messages count as delivered.
 */
void
endpoint_progress(struct endpoint *ep, uint64_t *queued, uint64_t *written)
{
	*queued = *written = 0;
	if (ep->ops->progress != NULL)
		ep->ops->progress(ep, queued, written);
}

/*
 * Whether the channel a message for er would take (er NULL: the one for
 * messages nobody asked for) holds all the client may leave unread: then
 * the sender waits for cbs.drained, as a server blocks on a full socket,
 * rather than queue more or lose it.  1: a connection's output is full;
 * 2: what is kept for an event stream the client has not opened is (sent
 * anyway, it is dropped, with a warning).
 */
int
endpoint_full(struct endpoint *ep, struct ereq *er)
{
	if (ep->ops->full == NULL)
		return 0;
	return ep->ops->full(ep, er);
}

void
endpoint_free(struct endpoint *ep)
{
	if (ep != NULL)
		ep->ops->free(ep);
}

/*
 * Who serves through ep, as its log lines and the texts it answers
 * itself name it ("mock", "record"); a string that outlives ep.
 */
void
endpoint_set_who(struct endpoint *ep, const char *who)
{
	ep->who = who;
}

/*
 * Stop (on) or resume reading client messages: what the client sends then
 * waits in its pipe or socket, not in our memory.  What one read already
 * brought is still delivered.
 */
void
endpoint_pause(struct endpoint *ep, int on)
{
	if (ep->paused == on)
		return;
	ep->paused = on;
	if (ep->ops->pause != NULL)
		ep->ops->pause(ep, on);
}
