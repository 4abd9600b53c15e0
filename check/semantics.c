/*
 * semantics.c: what a message means given the ones before it: tools/call
 * of a tool the last tools/list did not name (and through tools.c its
 * arguments against its inputSchema, its answer against its
 * outputSchema), progress for a request that is not running or not
 * increasing, cancellation of an unknown or finished request or of
 * initialize, pagination cursors that repeat, and 2026-07-28's
 * input_required round trips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_int.h"

/* input_required results kept awaiting their retry, at most. */
#define SEM_INPUT_WAIT_MAX	1000

/* tools/call: the tool must be known; its arguments fit its schema. */
static void
sem_tools_call(struct check *c, struct cmsg *m)
{
	const json_t	*name;
	char		 path[64], spec[64], *q;

	name = json_object_get(json_object_get(m->j, "params"), "name");
	if (!json_is_string(name))
		return;
	if (tools_unknown(c, name)) {
		check_report(c, "tool.unknown", PROTO_WARNING,
		    check_path(c, "params.name", path, sizeof path),
		    check_spec(m->v, "server/tools", spec, sizeof spec),
		    "tool %s is not in the last tools/list", (q =
		    tools_quote(json_string_value(name),
		    json_string_length(name))));
		free(q);
		m->tool_flags |= TOOL_UNKNOWN;
		return;
	}
	tools_call(c, m, name);
}

/* notifications/progress: for a running request, increasing. */
static void
sem_progress(struct check *c, struct cmsg *m)
{
	struct side	*s = &c->side[!m->in->dir];
	const json_t	*params, *token, *value;
	struct pend	*p;
	char		*key, path[64], spec[64];
	int64_t		 slot;
	double		 d;

	params = json_object_get(m->j, "params");
	token = json_object_get(params, "progressToken");
	value = json_object_get(params, "progress");
	if (token == NULL || (key = rpc_key_free(check_id_text(token))) ==
	    NULL)
		return;
	check_spec(m->v, m->v == PROTO_V_2026_07_28 ?
	    "basic/patterns/progress" : "basic/utilities/progress", spec,
	    sizeof spec);
	if (idmap_get(s->tokens, key, strlen(key), &slot) != 0) {
		check_path(c, "params.progressToken", path, sizeof path);
		if (recent_has(&s->finished, key))
			check_report(c, "progress.after-response",
			    PROTO_WARNING, path, spec, "progress for token %s "
			    "after its request was answered; progress stops "
			    "with the response", key);
		else if (s->untracked == 0)	/* else maybe one of theirs */
			check_report(c, "progress.unknown-token",
			    PROTO_WARNING, path, spec, "progress for token %s, "
			    "which no running request of the %s gave", key,
			    m->in->dir == DIR_C2S ? "server" : "client");
		free(key);
		return;
	}
	p = &s->pend[slot];
	if (json_is_number(value)) {
		d = json_number_value(value);
		if (p->has_progress && d <= p->progress)
			check_report(c, "progress.not-increasing", PROTO_ERROR,
			    check_path(c, "params.progress", path,
			    sizeof path), spec, "progress %g after %g; the "
			    "value must increase with each notification", d,
			    p->progress);
		p->has_progress = 1;
		p->progress = d;
	}
	free(key);
}

/* notifications/cancelled: of a request of the sender's, not initialize. */
static void
sem_cancelled(struct check *c, struct cmsg *m)
{
	struct side	*s = &c->side[m->in->dir];
	const json_t	*rid;
	struct pend	*p;
	char		*key, path[64], spec[64];

	rid = json_object_get(json_object_get(m->j, "params"), "requestId");
	if (rid == NULL || (key = rpc_key_free(check_id_text(rid))) == NULL)
		return;
	check_path(c, "params.requestId", path, sizeof path);
	check_spec(m->v, m->v == PROTO_V_2026_07_28 ?
	    "basic/patterns/cancellation" : "basic/utilities/cancellation",
	    spec, sizeof spec);
	if ((p = rpc_find(s, key)) != NULL) {
		if (p->method != NULL && strcmp(p->method, "initialize") == 0)
			check_report(c, "cancel.initialize", PROTO_ERROR, path,
			    spec, "initialize was cancelled; the client must "
			    "not cancel its initialize request");
		p->cancelled = 1;
	} else if (recent_has(&s->unread, key)) {
		/* Its answer broke the envelope (a finding already): the
		   sender could not take it as one, and may cancel. */
	} else if (recent_has(&s->answered, key))
		check_report(c, "cancel.finished", PROTO_NOTE, path, spec,
		    "request %s was already answered; a cancel may cross "
		    "the response, and the receiver ignores it", key);
	else if (s->untracked == 0)
		check_report(c, "cancel.unknown", PROTO_WARNING, path, spec,
		    "no request %s of the %s is known; a side cancels only "
		    "requests it sent", key, m->in->dir == DIR_C2S ? "client" :
		    "server");
	free(key);
}

/* The key of an input_required wait: method and its name or uri. */
static void
sem_input_key(char *buf, size_t size, const char *method, const char *target)
{
	snprintf(buf, size, "%s\n%s", method, target != NULL ? target : "");
}

/* 2026-07-28: a retry answers every input request, state unchanged. */
static void
sem_input_retry(struct check *c, struct cmsg *m)
{
	const json_t	*params, *target, *wait, *reqs, *resps, *v;
	const char	*k, *state;
	char		 key[512], path[64], spec[64], *tkey;
	size_t		 tlen;

	params = json_object_get(m->j, "params");
	target = json_object_get(params, "name");
	if (!json_is_string(target))
		target = json_object_get(params, "uri");
	tkey = json_is_string(target) ? tools_key(json_string_value(target),
	    json_string_length(target), &tlen) :
	    NULL;	/* as the result's request keeps it */
	sem_input_key(key, sizeof key, m->method, tkey);
	free(tkey);
	if ((wait = json_object_get(c->input_wait, key)) == NULL)
		return;
	check_spec(m->v, "basic/patterns/mrtr", spec, sizeof spec);
	reqs = json_object_get(wait, "inputRequests");
	resps = json_object_get(params, "inputResponses");
	json_object_foreach((json_t *)reqs, k, v) {
		if (json_object_get(resps, k) == NULL)
			check_report(c, "mrtr.input-responses", PROTO_WARNING,
			    check_path(c, "params.inputResponses", path,
			    sizeof path), spec, "the retry has no answer for "
			    "input request \"%s\" of the input_required "
			    "result", k);
	}
	state = json_string_value(json_object_get(wait, "requestState"));
	v = json_object_get(params, "requestState");
	if (state != NULL && (!json_is_string(v) ||
	    strcmp(json_string_value(v), state) != 0))
		check_report(c, "mrtr.request-state", PROTO_ERROR,
		    check_path(c, "params.requestState", path, sizeof path),
		    spec, "%s; the retry sends back the requestState it got, "
		    "unchanged", v == NULL ? "the retry has no requestState" :
		    "the retry's requestState differs from the one received");
	json_object_del(c->input_wait, key);
}

/* A request or notification. */
void
sem_message(struct check *c, struct cmsg *m)
{
	if (m->method == NULL)
		return;
	if (m->is_request && strcmp(m->method, "tools/call") == 0)
		sem_tools_call(c, m);
	if (m->is_request && m->v == PROTO_V_2026_07_28 &&
	    json_object_size(c->input_wait) > 0)
		sem_input_retry(c, m);
	if (m->is_notification && strcmp(m->method,
	    "notifications/progress") == 0)
		sem_progress(c, m);
	if (m->is_notification && strcmp(m->method,
	    "notifications/cancelled") == 0)
		sem_cancelled(c, m);
}

/* tools/list: remember the tools (a first page starts over). */
static void
sem_tools_list(struct check *c, struct cmsg *m, const json_t *result)
{
	const json_t	*tools, *t;
	size_t		 i;

	tools = json_object_get(result, "tools");
	if (!json_is_array(tools))
		return;
	if (m->req->cursor == NULL)
		tools_list_begin(c);
	json_array_foreach(tools, i, t)
		tools_listed(c, m, t, i);
}

/* A paginated result: its nextCursor must not come round again. */
static void
sem_cursor(struct check *c, struct cmsg *m, const json_t *result)
{
	const json_t	*next;
	json_t		*seen;
	char		 path[64], spec[64], *key;
	int		 repeat;

	next = json_object_get(result, "nextCursor");
	seen = json_object_get(c->cursors, m->req->method);
	if (seen == NULL && json_object_size(c->cursors) >=
	    CHECK_CURSOR_METHODS_MAX) {
		/* a peer inventing methods: not tracked */
		check_limit(c, CHECK_LIMIT_CURSOR_METHODS,
		    CHECK_CURSOR_METHODS_MAX);
		return;
	}
	if (m->req->cursor == NULL || seen == NULL) {
		seen = json_object();
		json_object_set_new(c->cursors, m->req->method, seen);
	}
	if (m->req->cursor != NULL && json_object_size(seen) <
	    CHECK_CURSORS_MAX)
		json_object_set_new(seen, m->req->cursor, json_true());
	else if (m->req->cursor != NULL &&
	    json_object_get(seen, m->req->cursor) == NULL)
		check_limit(c, CHECK_LIMIT_CURSORS, CHECK_CURSORS_MAX);
	if (!json_is_string(next))
		return;
	key = rpc_key_free(check_id_text(next));
	repeat = json_object_get(seen, key) != NULL;
	free(key);
	if (repeat)
		check_report(c, "pagination.cursor-repeat", PROTO_WARNING,
		    check_path(c, "result.nextCursor", path, sizeof path),
		    check_spec(m->v, "server/utilities/pagination", spec,
		    sizeof spec), "nextCursor \"%s\" was already used in this "
		    "listing; following it would loop",
		    json_string_value(next));
}

/* A response to a request we tracked (m->req). */
void
sem_answered(struct check *c, struct cmsg *m)
{
	const json_t	*result, *rt;
	char		 key[512];
	const char	*method = m->req->method;

	result = json_object_get(m->j, "result");
	if (method != NULL && strcmp(method, "tools/call") == 0)
		tools_answered(c, m);
	if (method != NULL && strcmp(method, "tasks/result") == 0)
		tools_task_result(c, m);
	if (method == NULL || !json_is_object(result))
		return;
	if (strcmp(method, "tools/list") == 0)
		sem_tools_list(c, m, result);
	if (json_object_get(result, "nextCursor") != NULL ||
	    m->req->cursor != NULL)
		sem_cursor(c, m, result);
	if (strcmp(method, "server/discover") == 0 &&
	    json_is_object(json_object_get(result, "capabilities"))) {
		json_decref(c->side[DIR_S2C].caps);
		c->side[DIR_S2C].caps = json_deep_copy(json_object_get(result,
		    "capabilities"));
		c->side[DIR_S2C].caps_known = 1;
	}
	rt = json_object_get(result, "resultType");
	if (m->v == PROTO_V_2026_07_28 && json_is_string(rt) &&
	    strcmp(json_string_value(rt), "input_required") == 0) {
		sem_input_key(key, sizeof key, method, m->req->target);
		if (json_object_size(c->input_wait) < SEM_INPUT_WAIT_MAX ||
		    json_object_get(c->input_wait, key) != NULL)
			json_object_set(c->input_wait, key, (json_t *)result);
		else
			check_limit(c, CHECK_LIMIT_INPUT_WAIT,
			    SEM_INPUT_WAIT_MAX);
		return;
	}
}
