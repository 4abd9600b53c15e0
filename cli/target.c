/* The live server replay and mock talk to: a command, or a URL. */

#include "cli.h"
#include "replay.h"
#include "store.h"

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

static int
load_cb(const struct timeline_row *r, void *arg)
{
	if (!r->is_event)
		plan_add(arg, r->m.seq, r->m.dir, r->m.mono_ns, r->m.raw,
		    r->m.len);
	return 0;
}

/* Load session id's messages into p and build the plan. */
int
cli_load_plan(struct store *st, int64_t id, struct plan *p, char **cause)
{
	if (query_timeline(st, id, 0, load_cb, p, cause) != 0)
		return -1;
	plan_build(p);
	return 0;
}
