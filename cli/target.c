/* The live server replay and mock talk to: a command, or a URL. */

#include "cli.h"
#include "replay.h"

/*
 * Open t as the client side of its transport: Streamable HTTP when it has
 * a URL, else its command over stdio (t->code gets the shell's status for
 * a command that cannot start).
 */
struct xport *
cli_target_open(struct event_base *base, const struct xport_cbs *cbs,
    void *arg, void *target, char **cause)
{
	struct cli_target	*t = target;

	if (t->url != NULL)
		return xport_http(base, t->url, t->cacert, t->insecure, cbs,
		    arg, cause);
	return xport_stdio(base, t->argv, cbs, arg, &t->code, cause);
}
