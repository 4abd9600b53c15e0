/* The live server replay and mock talk to: a command, or a URL. */

#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>

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
		return xport_http(base, t->url, t->cacert, t->insecure,
		    t->max_body, cbs, arg, cause);
	return xport_stdio(base, t->argv, t->max_body, cbs, arg, &t->code,
	    cause);
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

/*
 * Whether cmd may listen on addr: a loopback address always, another only
 * with allow_remote (--allow-remote).  Says why not on stderr.
 */
int
cli_listen_check(const char *cmd, const char *addr, int allow_remote)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	char			*cause = NULL;

	if (net_parse_listen(addr, &ss, &len, &cause) != 0) {
		fprintf(stderr, "mcpreel %s: %s\n", cmd, cause);
		free(cause);
		return -1;
	}
	if (!allow_remote && !net_addr_is_loopback(&ss)) {
		fprintf(stderr, "mcpreel %s: not listening on %s: it is not a "
		    "loopback address, so other machines could use it.  "
		    "Listen on 127.0.0.1, or give --allow-remote to listen "
		    "there anyway\n", cmd, addr);
		return -1;
	}
	return 0;
}
