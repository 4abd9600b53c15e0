/*
 * What a selected rule does to its message, as a decision (struct
 * fault_hit): the answer sent in the server's place (a JSON-RPC error or
 * a tool result with isError, carrying the request's id as written), the
 * bytes that replace a corrupted message, a mutated message, a delay, a
 * close, an HTTP status.  The caller does it; nothing here does I/O.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_int.h"

/* Defaults of the answers. */
#define FAULT_ERROR_CODE	(-32603)
#define FAULT_ERROR_MESSAGE	"Internal error (injected by mcpreel)"
#define FAULT_TOOL_TEXT		"Tool error (injected by mcpreel)"
#define FAULT_WWW_AUTHENTICATE	"Bearer error=\"invalid_token\""
/* The line corrupt mode=stray sends before the message. */
#define FAULT_STRAY_LINE	"this line is not JSON (stray bytes injected " \
	"by mcpreel)"
/*
 * mutate looks this deep into a message and no deeper.  It matches its
 * pattern as it descends (a state per depth, moved in O(steps) a node),
 * so a message costs at most its nodes times the pattern's steps.
 */
#define FAULT_MUTATE_DEPTH	48
/* How much of an id the detail quotes. */
#define FAULT_ID_QUOTE		64

/* Match steps mutate has taken (jpath states moved), for tests. */
uint64_t	fault_act_work;

/* "tools/call request 7" (or what is known of it), for details. */
static char *
fault_act_what(const struct fault_msg *m)
{
	char		*s;
	const char	*kind = kind_name(m->kind);
	int		 idlen;

	idlen = (int)(m->idlen > FAULT_ID_QUOTE ? FAULT_ID_QUOTE : m->idlen);
	if (m->method != NULL && m->id != NULL)
		xasprintf(&s, "%s %s %.*s%s", m->method, kind, idlen, m->id,
		    (size_t)idlen < m->idlen ? "..." : "");
	else if (m->method != NULL)
		xasprintf(&s, "%s %s", m->method, kind);
	else if (m->id != NULL)
		xasprintf(&s, "%s %.*s%s", kind, idlen, m->id,
		    (size_t)idlen < m->idlen ? "..." : "");
	else
		s = xstrdup(kind);
	return s;
}

/* Set hit's bytes to a whole JSON-RPC response to m: id as written. */
static void
fault_act_answer(struct fault_hit *hit, const struct fault_msg *m,
    const char *member, json_t *value)
{
	char	*v;

	v = json_dumps(value, JSON_COMPACT);
	if (v == NULL)
		fatalx("fault: cannot write an answer");
	hit->len = (size_t)xasprintf(&hit->bytes,
	    "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"%s\":%s}", (int)m->idlen, m->id,
	    member, v);
	free(v);
}

/* error: a JSON-RPC error answering the request. */
static void
fault_act_error(const struct fault_rule *r, const struct fault_msg *m,
    struct fault_hit *hit, const char *what)
{
	const struct fault_val	*v = r->v;
	json_t			*e;
	int64_t			 code;
	const char		*msg;

	code = v[FS_CODE].set ? v[FS_CODE].i : FAULT_ERROR_CODE;
	msg = v[FS_MESSAGE].set ? v[FS_MESSAGE].s : FAULT_ERROR_MESSAGE;
	e = json_object();
	json_object_set_new(e, "code", json_integer((json_int_t)code));
	json_object_set_new(e, "message", json_string(msg));
	if (v[FS_DATA].set)
		json_object_set(e, "data", v[FS_DATA].json);
	fault_act_answer(hit, m, "error", e);
	json_decref(e);
	xasprintf(&hit->detail, "answered %s with error %lld \"%s\"; the "
	    "server never saw it", what, (long long)code, msg);
}

/* tool-error: a tools/call result with isError: true. */
static void
fault_act_tool_error(const struct fault_rule *r, const struct fault_msg *m,
    struct fault_hit *hit, const char *what)
{
	json_t		*res;
	const char	*text;

	text = r->v[FS_TEXT].set ? r->v[FS_TEXT].s : FAULT_TOOL_TEXT;
	res = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text",
	    "text", text, "isError", 1);
	if (res == NULL)
		fatalx("fault: cannot build a tool result");
	fault_act_answer(hit, m, "result", res);
	json_decref(res);
	xasprintf(&hit->detail, "answered %s with a tool result with isError: "
	    "true; the server never saw it", what);
}

/* corrupt: the bytes to forward instead (or before, for stray). */
static void
fault_act_corrupt(const struct fault_rule *r, const struct fault_msg *m,
    struct fault_hit *hit, const char *what)
{
	int	mode = r->v[FS_MODE].set ? (int)r->v[FS_MODE].i : 0;
	size_t	last;

	hit->corrupt = (enum fault_corrupt)mode;
	switch (hit->corrupt) {
	case FAULT_CORRUPT_TRUNCATE:
		hit->len = m->len / 2;
		hit->bytes = xmalloc(hit->len + 1);
		memcpy(hit->bytes, m->buf, hit->len);
		hit->bytes[hit->len] = '\0';
		xasprintf(&hit->detail, "%s cut to its first %zu of %zu "
		    "bytes", what, hit->len, m->len);
		break;
	case FAULT_CORRUPT_STRAY:
		hit->bytes = xstrdup(FAULT_STRAY_LINE);
		hit->len = strlen(hit->bytes);
		xasprintf(&hit->detail, "a line of stray bytes sent before %s",
		    what);
		break;
	default:	/* invalid-json: a comma before the closing bracket */
		last = m->len;
		while (last > 0 && strchr(" \t\r\n", m->buf[last - 1]) != NULL)
			last--;
		if (last == 0)
			last = m->len;
		else
			last--;
		hit->len = m->len + 1;
		hit->bytes = xmalloc(hit->len + 1);
		memcpy(hit->bytes, m->buf, last);
		hit->bytes[last] = ',';
		memcpy(hit->bytes + last + 1, m->buf + last, m->len - last);
		hit->bytes[hit->len] = '\0';
		xasprintf(&hit->detail, "%s replaced by invalid JSON (a "
		    "trailing comma)", what);
		break;
	}
}

/* A walk of mutate over a message's tree. */
struct fault_act_walk {
	const struct jpath	*jp;
	json_t			*value;		/* set: what to write */
	const char		*last;		/* set: a key it may add */
	size_t			 nstates;	/* jpath_nstates() */
	unsigned char		*states;	/* one state a depth, and 1 */
	size_t			 changes;
};

/*
 * Move the walk's state at depth one segment down into depth + 1.
 * Returns whether a place below can still match.
 */
static int
fault_act_advance(struct fault_act_walk *w, size_t depth,
    const struct jseg *seg)
{
	fault_act_work += w->nstates;
	return jpath_advance(w->jp, w->states + depth * w->nstates, seg,
	    w->states + (depth + 1) * w->nstates);
}

/* Whether the state at depth says the path so far matches. */
static int
fault_act_matches(struct fault_act_walk *w, size_t depth)
{
	return jpath_accepts(w->jp, w->states + depth * w->nstates);
}

/* Set or remove every place below node (at depth) the pattern matches. */
static void
fault_act_walk(struct fault_act_walk *w, json_t *node, size_t depth)
{
	struct jseg	 seg;
	const char	*key;
	json_t		*child;
	void		*tmp;
	size_t		 i;

	if (depth >= FAULT_MUTATE_DEPTH)
		return;
	memset(&seg, 0, sizeof seg);
	if (json_is_object(node)) {
		json_object_foreach_safe(node, tmp, key, child) {
			seg.key = key;
			if (!fault_act_advance(w, depth, &seg))
				continue;
			if (fault_act_matches(w, depth + 1)) {
				if (w->value == NULL)
					json_object_del(node, key);
				else
					json_object_set(node, key, w->value);
				w->changes++;
				continue;
			}
			fault_act_walk(w, child, depth + 1);
		}
		if (w->value != NULL && w->last != NULL &&
		    json_object_get(node, w->last) == NULL) {
			seg.key = w->last;
			if (fault_act_advance(w, depth, &seg) &&
			    fault_act_matches(w, depth + 1)) {
				json_object_set(node, w->last, w->value);
				w->changes++;
			}
		}
	} else if (json_is_array(node)) {
		/* From the end, so a removal leaves the indexes to come. */
		for (i = json_array_size(node); i-- > 0;) {
			seg.index = i;
			if (!fault_act_advance(w, depth, &seg))
				continue;
			if (fault_act_matches(w, depth + 1)) {
				if (w->value == NULL)
					json_array_remove(node, i);
				else
					json_array_set(node, i, w->value);
				w->changes++;
				continue;
			}
			fault_act_walk(w, json_array_get(node, i), depth + 1);
		}
	}
}

/*
 * A mutated message's text: numbers with 15 significant digits when that
 * writes every one back exactly (0.1 stays 0.1), else with 17.
 */
static char *
fault_act_dump(json_t *root)
{
	json_t	*back;
	char	*s;

	s = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(15));
	if (s != NULL) {
		back = json_loads(s, 0, NULL);
		if (back != NULL && json_equal(back, root)) {
			json_decref(back);
			return s;
		}
		json_decref(back);
		free(s);
	}
	s = json_dumps(root, JSON_COMPACT);
	if (s == NULL)
		fatalx("fault: cannot write a mutated message");
	return s;
}

/* mutate: the changed message; 0 when the pattern matched no place. */
static int
fault_act_mutate(const struct fault_rule *r, const struct fault_msg *m,
    struct fault_hit *hit, const char *what)
{
	struct fault_act_walk	 w;
	json_t			*root;
	int			 set = r->v[FS_SET].set;

	root = json_loadb(m->buf, m->len, 0, NULL);
	if (root == NULL)
		return 0;
	memset(&w, 0, sizeof w);
	w.jp = set ? r->v[FS_SET].jp : r->v[FS_REMOVE].jp;
	w.value = set ? r->v[FS_VALUE].json : NULL;
	w.last = set ? jpath_last_key(w.jp) : NULL;
	w.nstates = jpath_nstates(w.jp);
	w.states = xreallocarray(NULL, FAULT_MUTATE_DEPTH + 1, w.nstates);
	jpath_start(w.jp, w.states);
	fault_act_walk(&w, root, 0);
	free(w.states);
	if (w.changes == 0) {
		json_decref(root);
		return 0;
	}
	hit->bytes = fault_act_dump(root);
	json_decref(root);
	hit->len = strlen(hit->bytes);
	xasprintf(&hit->detail, "%s forwarded with %s %s at %zu place%s", what,
	    set ? "set" : "removed", set ? r->v[FS_SET].s : r->v[FS_REMOVE].s,
	    w.changes, w.changes == 1 ? "" : "s");
	return 1;
}

/* Fill the parts of a hit every action has. */
static void
fault_act_init(const struct fault_rule *r, int ruleno, struct fault_hit *hit)
{
	memset(hit, 0, sizeof *hit);
	hit->rule = ruleno;
	hit->rule_text = r->text;
	hit->action = r->adef->action;
}

/*
 * Turn rule r (number ruleno) selecting m into a decision in *hit.
 * Returns 1, or 0 when the rule turns out not to apply (a mutate whose
 * pattern matches no place in the message), *hit then cleared.
 */
int
fault_act_apply(struct fault_set *set, const struct fault_rule *r,
    int ruleno, const struct fault_msg *m, struct fault_hit *hit)
{
	const struct fault_val	*v = r->v;
	char			*what = fault_act_what(m);
	int64_t			 d;
	int			 rc = 1;

	fault_act_init(r, ruleno, hit);
	switch (r->adef->action) {
	case FAULT_DELAY:
		d = v[FS_MS].i;
		if (v[FS_JITTER].set && v[FS_JITTER].i > 0)
			d += fault_prng_range(&set->prng, -v[FS_JITTER].i,
			    v[FS_JITTER].i);
		if (d < 0)
			d = 0;
		if (d > FAULT_DELAY_MAX_MS)
			d = FAULT_DELAY_MAX_MS;
		hit->delay_ms = d;
		xasprintf(&hit->detail, "%s delayed %lld ms", what,
		    (long long)d);
		break;
	case FAULT_ERROR:
		fault_act_error(r, m, hit, what);
		break;
	case FAULT_TOOL_ERROR:
		fault_act_tool_error(r, m, hit, what);
		break;
	case FAULT_DROP:
		xasprintf(&hit->detail, "%s dropped", what);
		break;
	case FAULT_TIMEOUT:
		hit->delay_ms = v[FS_MS].i;
		xasprintf(&hit->detail, "%s forwarded; its answer is held "
		    "until %lld ms after it, then dropped", what,
		    (long long)hit->delay_ms);
		break;
	case FAULT_CORRUPT:
		fault_act_corrupt(r, m, hit, what);
		break;
	case FAULT_CLOSE:
		if (v[FS_MODE].set)
			hit->close = (enum fault_close)v[FS_MODE].i;
		else
			hit->close = m->http ? FAULT_CLOSE_RESET :
			    FAULT_CLOSE_PIPES;
		xasprintf(&hit->detail, "%s not forwarded; the transport is "
		    "closed (%s)", what, fault_close_modes[hit->close]);
		break;
	case FAULT_HTTP_STATUS:
		hit->status = atoi(v[FS_STATUS].s);
		if (v[FS_RETRY_AFTER].set)
			hit->retry_after = xstrdup(v[FS_RETRY_AFTER].s);
		if (hit->status == 401)
			hit->www_authenticate = xstrdup(
			    v[FS_WWW_AUTHENTICATE].set ?
			    v[FS_WWW_AUTHENTICATE].s : FAULT_WWW_AUTHENTICATE);
		xasprintf(&hit->detail, "answered %s with HTTP status %d; the "
		    "server never saw it", what, hit->status);
		break;
	case FAULT_MUTATE:
		rc = fault_act_mutate(r, m, hit, what);
		if (rc == 0)
			fault_hit_clear(hit);
		break;
	default:
		fatalx("fault: action %d unknown", (int)r->adef->action);
	}
	free(what);
	return rc;
}

/*
 * The answer to a request put under timeout by rule r: the caller holds
 * it to the timeout and drops it (or drops it, if it came later).
 */
void
fault_act_late_answer(const struct fault_rule *r, int ruleno,
    const struct fault_msg *m, struct fault_hit *hit)
{
	char	*what = fault_act_what(m);

	fault_act_init(r, ruleno, hit);
	hit->delay_ms = r->v[FS_MS].i;
	xasprintf(&hit->detail, "%s answers a request under timeout: held "
	    "until %lld ms after the request, then dropped", what,
	    (long long)hit->delay_ms);
	free(what);
}
