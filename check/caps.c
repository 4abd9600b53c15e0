/*
 * caps.c: each side uses only what the other declared, and sends only
 * what it may send.  The capability a method needs and whose it is come
 * from protocol/'s method table; the capabilities from initialize (the
 * legacy revisions) or from each request's params._meta (2026-07-28).
 */
#include <string.h>

#include "check_int.h"

/* The capabilities a side declared, or NULL when not known. */
static const json_t *
caps_of(struct check *c, struct cmsg *m, int side)
{
	const json_t	*caps;

	if (side == PROTO_CLIENT && m->v == PROTO_V_2026_07_28 &&
	    m->in->dir == DIR_C2S && m->is_request) {
		caps = check_meta(m->j,
		    "io.modelcontextprotocol/clientCapabilities");
		return (json_is_object(caps) ? caps : NULL);
	}
	if (side == PROTO_CLIENT)
		return (c->side[DIR_C2S].caps_known ? c->side[DIR_C2S].caps :
		    NULL);
	return (c->side[DIR_S2C].caps_known ? c->side[DIR_S2C].caps : NULL);
}

/* A request or notification: its sender, then the capability it needs. */
void
caps_message(struct check *c, struct cmsg *m)
{
	const struct proto_method	*pm;
	const json_t			*caps;
	const char			*spec;
	char				 path[64];
	int				 sender, owner;

	if (m->method == NULL || m->v == PROTO_V_UNKNOWN)
		return;
	if ((pm = proto_method(m->method, m->v)) == NULL ||
	    pm->kind == PROTO_INPUT)
		return;		/* protocol/ reports an unknown method */
	spec = proto_method_spec(pm, m->v);
	sender = m->in->dir == DIR_C2S ? PROTO_CLIENT : PROTO_SERVER;
	if ((pm->senders & sender) == 0) {
		check_path(c, "method", path, sizeof path);
		check_report(c, "jsonrpc.wrong-side", PROTO_ERROR, path, spec,
		    "the %s sent %s, which only the %s sends",
		    proto_side_name(sender), m->method,
		    proto_side_name(pm->senders));
		return;
	}
	if (pm->cap == NULL || pm->cap_side == 0)
		return;
	owner = pm->cap_side == PROTO_RECEIVER ? (sender == PROTO_CLIENT ?
	    PROTO_SERVER : PROTO_CLIENT) : pm->cap_side;
	if ((caps = caps_of(c, m, owner)) == NULL)
		return;		/* not declared anywhere we saw */
	if (proto_caps_has(caps, pm->cap))
		return;
	check_path(c, "method", path, sizeof path);
	check_report(c, owner == PROTO_CLIENT ? "caps.client" : "caps.server",
	    PROTO_ERROR, path, spec, "%s needs the %s capability \"%s\", "
	    "which the %s did not declare%s", m->method,
	    proto_side_name(owner), pm->cap, proto_side_name(owner),
	    m->v != PROTO_V_2026_07_28 ? " in initialize" :
	    owner == PROTO_CLIENT ? " in this request's _meta" :
	    " in its server/discover result");
}
