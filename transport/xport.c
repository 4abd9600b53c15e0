/* The client side of an MCP transport: what both kinds share. */

#include <stdlib.h>
#include <string.h>

#include "transport.h"

/* Fill the common part of a transport. */
void
xport_init(struct xport *x, const struct xport_ops *ops,
    struct event_base *base, const struct xport_cbs *cbs, void *arg)
{
	x->ops = ops;
	x->base = base;
	x->cbs = *cbs;
	x->arg = arg;
	x->exit_code = -1;
}

/*
 * Send one message (without framing: the transport adds it).  headers,
 * NULL or a NULL-terminated list of "Name: value" lines, go with it over
 * HTTP.
 */
void
xport_send(struct xport *x, const char *bytes, size_t len,
    const char *const *headers)
{
	x->ops->send(x, bytes, len, headers);
}

/* The protocol version to name in HTTP requests from now on. */
void
xport_set_protocol_version(struct xport *x, const char *version)
{
	free(x->protocol_version);
	x->protocol_version = (version != NULL) ? xstrdup(version) : NULL;
}

/*
 * Stop (on) or resume reading from the server: what the caller cannot
 * pass on yet then waits in the server's socket or pipe, not in memory.
 * What one read already brought is still delivered.
 */
void
xport_pause(struct xport *x, int on)
{
	if (x->paused == on)
		return;
	x->paused = on;
	x->ops->pause(x, on);
}

/* End politely: the closed callback says when it is over. */
void
xport_finish(struct xport *x)
{
	x->ops->finish(x);
}

void
xport_free(struct xport *x)
{
	if (x == NULL)
		return;
	free(x->target);
	free(x->protocol_version);
	x->ops->free(x);
}
