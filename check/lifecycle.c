/*
 * lifecycle.c: the handshake of the legacy revisions (initialize first,
 * only pings until it is answered, notifications/initialized before
 * normal operation, the version the server answers with) and the
 * revision each message is read under.  A 2026-07-28 session has no
 * handshake: its requests say their revision in params._meta.
 */
#include <stdlib.h>
#include <string.h>

#include "check_int.h"

#define LIFE_PAGE	"basic/lifecycle"

static const char *const life_state_names[LIFE_STATE_MAX] = {
	[LIFE_NONE] = "none",
	[LIFE_INITIALIZING] = "initializing",
	[LIFE_INITIALIZED] = "initialized",
	[LIFE_OPERATING] = "operating",
	[LIFE_MODERN] = "modern",
};

/* Move the lifecycle on, logging the transition. */
static void
life_set_state(struct check *c, enum life_state s)
{
	if (s < 0 || s >= LIFE_STATE_MAX)
		fatalx("bad lifecycle state %d", (int)s);
	log_debug("check: lifecycle %s -> %s", life_state_names[c->life],
	    life_state_names[s]);
	c->life = s;
}

/* The initialize request: the version asked, the client's capabilities. */
static void
life_initialize(struct check *c, struct cmsg *m)
{
	const json_t	*params, *pv, *caps;
	char		 spec[64], path[64];

	params = json_object_get(m->j, "params");
	/* Unless it is the retry of one whose POST may have been refused
	   (its status not yet known live), as a refused one began none. */
	if (c->life != LIFE_NONE && !(c->life == LIFE_INITIALIZING &&
	    c->init_unknown)) {
		check_report(c, "lifecycle.initialize-twice", PROTO_ERROR,
		    check_path(c, "method", path, sizeof path),
		    check_spec(c->v, LIFE_PAGE, spec, sizeof spec),
		    "initialize again in a session that is already %s; a "
		    "session is initialized once", c->life == LIFE_MODERN ?
		    "using 2026-07-28 (which has no handshake)" :
		    "initialized");
		return;
	}
	life_set_state(c, LIFE_INITIALIZING);
	pv = json_object_get(params, "protocolVersion");
	c->asked = json_is_string(pv) ?
	    proto_version_parse(json_string_value(pv)) : PROTO_V_UNKNOWN;
	if (c->asked != PROTO_V_UNKNOWN)
		c->v = c->asked;
	free(c->init_id);
	c->init_id = m->id != NULL ? rpc_key(m->id) : NULL;
	c->init_unknown = check_status_unknown(m->in);
	caps = json_object_get(params, "capabilities");
	json_decref(c->side[DIR_C2S].caps);
	c->side[DIR_C2S].caps = json_is_object(caps) ? json_deep_copy(caps) :
	    NULL;
	c->side[DIR_C2S].caps_known = json_is_object(caps);
}

/* Whether a message is one of those allowed before the handshake ends. */
static int
life_early_ok(const struct cmsg *m, int server)
{
	if (strcmp(m->method, "ping") == 0)
		return (1);
	/* The server may log before initialized (lifecycle page). */
	return (server && m->is_notification &&
	    strcmp(m->method, "notifications/message") == 0);
}

/* A request or notification, in the light of the lifecycle. */
void
life_message(struct check *c, struct cmsg *m)
{
	char	spec[64], path[64];
	int	server = m->in->dir == DIR_S2C;

	if (m->method == NULL)
		return;
	if (m->is_request && !server && check_meta(m->j,
	    "io.modelcontextprotocol/protocolVersion") != NULL &&
	    m->v == PROTO_V_2026_07_28) {
		if (c->life == LIFE_NONE)
			life_set_state(c, LIFE_MODERN);
		if (c->life == LIFE_MODERN)
			c->v = m->v;
		return;
	}
	if (m->is_request && !server && strcmp(m->method, "initialize") ==
	    0) {
		life_initialize(c, m);
		return;
	}
	/* Operating, only a second initialized is a finding (a hot path). */
	if (c->life == LIFE_OPERATING && (server || strcmp(m->method,
	    "notifications/initialized") != 0))
		return;
	check_path(c, "method", path, sizeof path);
	check_spec(c->v, LIFE_PAGE, spec, sizeof spec);
	switch (c->life) {
	case LIFE_NONE:
		if (c->before_init_noted++ > 0)
			return;
		check_report(c, "lifecycle.before-initialize", PROTO_ERROR,
		    path, spec, "%s %s before initialize; initialize must be "
		    "the first request (or, from 2026-07-28, each request "
		    "names its revision in params._meta)", server ?
		    "the server sent" : "the client sent", m->method);
		return;
	case LIFE_INITIALIZING:
		if (!server && strcmp(m->method,
		    "notifications/initialized") == 0) {
			check_report(c, "lifecycle.initialized-early",
			    PROTO_ERROR, path, spec, "notifications/"
			    "initialized before the server answered "
			    "initialize");
			life_set_state(c, LIFE_OPERATING);
			return;
		}
		if (life_early_ok(m, server) || (!server &&
		    m->is_notification))
			return;
		check_report(c, "lifecycle.before-initialized", PROTO_WARNING,
		    path, spec, "%s before initialize was answered; until "
		    "then the %s should send only pings%s", m->method,
		    server ? "server" : "client", server ? " and log "
		    "messages" : "");
		return;
	case LIFE_INITIALIZED:
		if (!server && strcmp(m->method,
		    "notifications/initialized") == 0) {
			life_set_state(c, LIFE_OPERATING);
			return;
		}
		if (life_early_ok(m, server) || m->is_notification)
			return;
		check_report(c, "lifecycle.before-initialized", PROTO_WARNING,
		    path, spec, "%s before notifications/initialized; the "
		    "client sends it first, and until it comes the server "
		    "should send only pings and log messages", m->method);
		return;
	case LIFE_OPERATING:
		if (!server && strcmp(m->method,
		    "notifications/initialized") == 0)
			check_report(c, "lifecycle.initialized-twice",
			    PROTO_WARNING, path, spec, "notifications/"
			    "initialized again; it is sent once, after "
			    "initialize is answered");
		return;
	case LIFE_MODERN:
	case LIFE_STATE_MAX:
		return;
	}
}

/* A response: initialize's result sets the revision and server caps. */
void
life_answered(struct check *c, struct cmsg *m)
{
	const json_t		*result, *pv, *caps;
	enum proto_version	 got;
	char			 spec[64], path[64];

	if (m->req->method == NULL || strcmp(m->req->method, "initialize") !=
	    0)
		return;
	result = json_object_get(m->j, "result");
	if (!json_is_object(result)) {
		/* Refused: the client may try again. */
		if (c->life == LIFE_INITIALIZING)
			life_set_state(c, LIFE_NONE);
		c->before_init_noted = 0;
		return;
	}
	if (c->life == LIFE_INITIALIZING)
		life_set_state(c, LIFE_INITIALIZED);
	caps = json_object_get(result, "capabilities");
	json_decref(c->side[DIR_S2C].caps);
	c->side[DIR_S2C].caps = json_is_object(caps) ? json_deep_copy(caps) :
	    NULL;
	c->side[DIR_S2C].caps_known = json_is_object(caps);
	pv = json_object_get(result, "protocolVersion");
	if (!json_is_string(pv))
		return;		/* a shape finding already */
	check_path(c, "result.protocolVersion", path, sizeof path);
	check_spec(c->asked, LIFE_PAGE, spec, sizeof spec);
	got = proto_version_parse(json_string_value(pv));
	if (got == PROTO_V_UNKNOWN || got == PROTO_V_2026_07_28) {
		check_report(c, "lifecycle.version-unknown", PROTO_ERROR,
		    path, spec, "the server answered protocolVersion \"%s\", "
		    "which is no revision with an initialize handshake; it "
		    "must answer with one it supports", json_string_value(pv));
		return;
	}
	c->v = got;
	if (c->asked != PROTO_V_UNKNOWN && got != c->asked)
		check_report(c, "lifecycle.version-differs", PROTO_NOTE, path,
		    spec, "the client asked for %s and the server answered "
		    "%s: right only if the server does not support %s (it "
		    "must then offer the latest it does)",
		    proto_version_name(c->asked), proto_version_name(got),
		    proto_version_name(c->asked));
}
