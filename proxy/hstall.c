/*
 * Pausing HTTP connections while the writer is behind, and waking them
 * when it has caught up: only the connections that tapped meanwhile, so
 * that thousands of idle streams cost nothing per queue cycle.
 */

#include <event2/bufferevent.h>

#include "http_int.h"

/*
 * The writer caught up: the connections it stalled read again.  Only
 * those: with thousands of idle streams, waking (and pausing) every
 * connection each time the queue fills and drains was two epoll changes
 * per connection per cycle, most of the proxy's time.
 */
void
hstall_resume_cb(void *arg)
{
	struct hproxy	*p = arg;
	struct hconn	*c;

	p->stall_bytes = 0;
	while ((c = TAILQ_FIRST(&p->stalled)) != NULL) {
		TAILQ_REMOVE(&p->stalled, c, sentry);
		c->stalled = 0;
		conn_pause(c->cbev, &c->cpause, PAUSE_STORE, 0);
		conn_pause(c->ubev, &c->upause, PAUSE_STORE, 0);
	}
}

/* Put a connection on the list the writer's resume wakes. */
void
hstall_add(struct hconn *c)
{
	/* A closed one is off every list, and soon freed. */
	if (c->stalled || c->dead)
		return;
	c->stalled = 1;
	TAILQ_INSERT_TAIL(&c->p->stalled, c, sentry);
}

/* Stop c reading, both sides, until the writer's resume. */
static void
hstall_conn(struct hconn *c)
{
	hstall_add(c);
	conn_pause(c->cbev, &c->cpause, PAUSE_STORE, 1);
	conn_pause(c->ubev, &c->upause, PAUSE_STORE, 1);
}

/*
 * After a tap of c's (len bytes) said the writer is behind: c stops
 * reading, both sides.  The others stop when they tap while it is
 * behind, each at most a read past the queue's bound, so an idle
 * connection costs nothing; once those reads add up to HTTP_STALL_BYTES,
 * every connection stops, so memory stays bounded however many are busy.
 */
void
hstall_full(struct hconn *c, size_t len)
{
	struct hproxy	*p = c->p;
	struct hconn	*o;

	hstall_conn(c);
	if (p->stall_bytes >= HTTP_STALL_BYTES)
		return;
	p->stall_bytes += len;
	if (p->stall_bytes < HTTP_STALL_BYTES)
		return;
	log_debug("recording is behind and %zu bytes came meanwhile: every "
	    "connection pauses", p->stall_bytes);
	TAILQ_FOREACH(o, &p->conns, entry)
		hstall_conn(o);
}
