/*
 * Which recorded exchange answers a live request, for the mock server.
 *
 * Each recorded client request that was answered becomes an entry keyed
 * by its method and canonical params: params without _meta (at any
 * depth) and without the places the user's ignore paths name, keys
 * sorted, compact.  Number spelling does not count, as in the diff: a
 * real with an integral value (1.0, 1e0) is keyed as the integer (1),
 * so 1 and 1.0 match; absent, null and empty params ({} once _meta is
 * gone) are one key.  Strings are keyed as they are, not as any JSON
 * they hold, so ignore paths with {json} steps never apply to keys.
 * Lifecycle requests are keyed by method alone: a client's name, version
 * and capabilities differ between runs, and the answer is the same.
 *
 * Ignore paths are written from the whole request message, as the
 * diff's are: "$.params.arguments.when".  Paths outside $.params never
 * match anything here, so one --ignore list can serve replay and mock.
 * An ignore with a scope (rules.c) applies to the requests in it only:
 * the recorded ones when they are keyed, the live ones when matched.
 *
 * The server's own messages (notifications and requests) are attributed
 * to the request they were sent for, so the mock can play them around
 * the answer: while requests are in flight, to the one whose progress
 * token a progress notification carries, else to the latest sent; when
 * none is, to the one answered last ("after" its answer), or to the
 * prelude before any answer.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* JSON-RPC error codes the mock answers unmatched requests with. */
#define MATCH_INVALID_REQUEST	-32600
#define MATCH_NO_METHOD		-32601
#define MATCH_NO_PARAMS		-32602

/*
 * Most differences an error's data lists: it is shown to a person, and a
 * large params object unlike every recording would otherwise swell the
 * response; the rest are counted in "differences_omitted".
 */
#define MATCH_MAX_DIFFERENCES	32
/* Most redacted places a log line names. */
#define MATCH_REDACTED_PATHS	8

/*
 * Redacted shapes a find fills a request for, at most: a request matched
 * with wildcards costs a fill per shape, so a recording with more (every
 * call redacted differently) matches only through the first ones.
 */
#define MATCH_SHAPES_MAX	256

/*
 * Reals within this magnitude (2^53) hold integers exactly, so one with
 * an integral value is keyed as the integer; larger ones stay reals.
 */
#define MATCH_EXACT_LIMIT	9007199254740992.0

/* Requests keyed by method alone. */
static const char *const match_lifecycle[] = {
	"initialize",
	"server/discover",
};
#define MATCH_NLIFECYCLE \
	(sizeof match_lifecycle / sizeof match_lifecycle[0])

/*
 * Where the canonical copy is in the message being keyed.  The recursion
 * is as deep as the message, which jansson's parser bounds.
 */
struct match_walk {
	struct jpath *const	*ignore;
	size_t			 nignore;
	struct jseg		*path;
	size_t			 npath;
	size_t			 path_size;
};

/* Step down into an object key or an array index. */
static void
match_push(struct match_walk *w, const char *key, size_t index)
{
	struct jseg	*seg;

	if (w->npath == w->path_size) {
		w->path_size = w->path_size == 0 ? 16 : w->path_size * 2;
		w->path = xreallocarray(w->path, w->path_size,
		    sizeof *w->path);
	}
	seg = &w->path[w->npath++];
	seg->key = key;
	seg->index = index;
	seg->json = 0;
}

/* Whether an ignore path names the place the walk is at. */
static int
match_ignored(const struct match_walk *w)
{
	size_t	i;

	for (i = 0; i < w->nignore; i++) {
		if (jpath_match(w->ignore[i], w->path, w->npath))
			return 1;
	}
	return 0;
}

/* A canonical copy of v: no _meta, no ignored places, integral reals. */
static json_t *
match_canon(struct match_walk *w, const json_t *v)
{
	json_t		*out, *e;
	const char	*k;
	size_t		 i;
	double		 d;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		out = json_object();
		json_object_foreach((json_t *)v, k, e) {
			if (strcmp(k, "_meta") == 0)
				continue;
			match_push(w, k, 0);
			if (!match_ignored(w))
				json_object_set_new(out, k, match_canon(w, e));
			w->npath--;
		}
		return out;
	case JSON_ARRAY:
		out = json_array();
		json_array_foreach(v, i, e) {
			match_push(w, NULL, i);
			if (!match_ignored(w))
				json_array_append_new(out, match_canon(w, e));
			w->npath--;
		}
		return out;
	case JSON_REAL:
		d = json_real_value(v);
		if (d >= -MATCH_EXACT_LIMIT && d <= MATCH_EXACT_LIMIT &&
		    (double)(json_int_t)d == d)
			return json_integer((json_int_t)d);
		return json_real(d);
	default:
		/* Strings, integers, true, false and null are never changed. */
		return json_deep_copy(v);
	}
}

/*
 * The canonical params of a request message, or NULL when it has none
 * worth keying (absent, null, ignored, or an object left empty).
 */
static json_t *
match_params(const struct diff_rules *rules, const json_t *msg)
{
	struct match_walk	 w;
	struct jpath		**ignore = NULL;
	json_t			*params, *out = NULL;
	size_t			 i, n = 0;

	params = json_object_get(msg, "params");
	if (params == NULL || json_is_null(params))
		return NULL;
	if (rules != NULL && rules->nignore > 0) {
		ignore = xcalloc(rules->nignore, sizeof *ignore);
		for (i = 0; i < rules->nignore; i++) {
			if (rscope_match(&rules->ignore[i].r.scope, msg))
				ignore[n++] = rules->ignore[i].path;
		}
	}
	memset(&w, 0, sizeof w);
	w.ignore = ignore;
	w.nignore = n;
	match_push(&w, "params", 0);
	if (!match_ignored(&w))
		out = match_canon(&w, params);
	free(w.path);
	free(ignore);
	if (json_is_object(out) && json_object_size(out) == 0) {
		json_decref(out);
		out = NULL;
	}
	return out;
}

/* The method of a request message, or NULL if it has none. */
static const char *
match_method(const json_t *msg)
{
	return json_string_value(json_object_get(msg, "method"));
}

/* Whether a method is keyed by name alone. */
static int
match_lifecycle_method(const char *method)
{
	size_t	i;

	for (i = 0; i < MATCH_NLIFECYCLE; i++) {
		if (strcmp(method, match_lifecycle[i]) == 0)
			return 1;
	}
	return 0;
}

/*
 * The key a request is matched by: its method, a newline, and its params
 * canonical (no _meta, no place an ignore pattern names, keys sorted,
 * integral reals as integers); lifecycle requests by method alone.  Mock
 * and replay's answers to server requests both key requests this way.
 * The caller frees it; NULL when the message has no method.
 */
char *
match_request_key(const json_t *msg, const struct diff_rules *rules)
{
	const char	*method = match_method(msg);
	char		*key;

	if (method == NULL)
		return NULL;
	if (!match_lifecycle_method(method))
		return mkey_request(method, msg, rules);	/* mkey.c */
	xasprintf(&key, "%s\n", method);
	return key;
}

/* The recorded request message of an entry. */
static const json_t *
match_request(const struct matcher *m, const struct mentry *e)
{
	return plan_json(&m->plan->m[e->req]);
}

/*
 * An entry's method without parsing its request: the plan's, scanned when
 * it was loaded.  A miss looks at every entry's method, and the matcher
 * dropped their parsed requests once keyed (a long session's would all
 * be parsed again, and kept, for one miss).
 */
static const char *
match_entry_method(const struct matcher *m, const struct mentry *e)
{
	const struct rmsg	*r = &m->plan->m[e->req];

	return r->method != NULL ? r->method :
	    match_method(match_request(m, e));
}

/* Append a message to play to a list of items. */
static void
match_item(struct mitem **v, size_t *n, size_t msg, int64_t offset_ns)
{
	*v = xreallocarray(*v, *n + 1, sizeof **v);
	(*v)[*n].msg = msg;
	(*v)[*n].offset_ns = offset_ns;
	(*n)++;
}

/* Whether a recorded message is a client request the mock can answer. */
static int
match_is_entry(const struct plan *p, size_t i)
{
	const struct rmsg	*r = &p->m[i];

	/* An answer cut at the record cap is no answer to play. */
	return r->dir == DIR_C2S && r->kind == KIND_REQUEST &&
	    plan_json(r) != NULL && match_method(plan_json(r)) != NULL &&
	    r->answer >= 0 && !p->m[r->answer].truncated;
}

/*
 * The in-flight entry a server message belongs to: the one whose
 * progress token a progress notification names, else the latest sent.
 */
static size_t
match_owner(const struct matcher *m, const struct rmsg *r,
    const size_t *flight, size_t nflight)
{
	const json_t	*token, *params, *theirs;
	const char	*method = match_method(plan_json(r));
	size_t		 i;

	if (method == NULL || strcmp(method, "notifications/progress") != 0)
		return flight[nflight - 1];
	params = json_object_get(plan_json(r), "params");
	if ((token = json_object_get(params, "progressToken")) == NULL)
		return flight[nflight - 1];
	for (i = nflight; i > 0; i--) {
		params = json_object_get(match_request(m,
		    &m->e[flight[i - 1]]), "params");
		theirs = json_object_get(json_object_get(params, "_meta"),
		    "progressToken");
		if (theirs != NULL && json_equal((json_t *)theirs,
		    (json_t *)token))
			return flight[i - 1];
	}
	return flight[nflight - 1];
}

/*
 * Walk the recording in order and give each of the server's own
 * messages to the entry it was sent for (see the comment at the top).
 * The client's answers to server requests are no items: the mock sends
 * the server request and waits for the live client's answer itself.
 */
static void
match_attribute(struct matcher *m, const ssize_t *entry_of)
{
	const struct plan	*p = m->plan;
	const struct rmsg	*r;
	struct mentry		*e;
	size_t			*flight, nflight = 0, i, j, owner;
	ssize_t			 last = -1, k;
	int64_t			 start;

	flight = xreallocarray(NULL, m->n + 1, sizeof *flight);
	start = p->n > 0 ? p->m[0].mono_ns : 0;
	for (i = 0; i < p->n; i++) {
		r = &p->m[i];
		if ((k = entry_of[i]) >= 0) {
			flight[nflight++] = (size_t)k;
			continue;
		}
		if (r->dir != DIR_S2C)
			continue;
		if (r->kind == KIND_RESPONSE || r->kind == KIND_ERROR) {
			if (r->request < 0 || (k = entry_of[r->request]) < 0)
				continue;
			for (j = 0; j < nflight; j++) {
				if (flight[j] == (size_t)k)
					break;
			}
			if (j < nflight) {
				memmove(flight + j, flight + j + 1,
				    (nflight - j - 1) * sizeof *flight);
				nflight--;
			}
			last = k;
			continue;
		}
		/* Batches and what is not JSON-RPC are not played. */
		if ((r->kind != KIND_NOTIFICATION && r->kind != KIND_REQUEST) ||
		    plan_json(r) == NULL)
			continue;

		if (nflight > 0) {
			owner = match_owner(m, r, flight, nflight);
			e = &m->e[owner];
			match_item(&e->before, &e->nbefore, i,
			    clock_sub(r->mono_ns, p->m[e->req].mono_ns));
		} else if (last >= 0) {
			e = &m->e[last];
			match_item(&e->after, &e->nafter, i,
			    clock_sub(r->mono_ns, p->m[e->req].mono_ns));
		} else
			match_item(&m->prelude, &m->nprelude, i,
			    clock_sub(r->mono_ns, start));
	}
	free(flight);
}

/*
 * The text a redacted shape is known by: the request's method and what
 * redacted_shape() keeps of it (the caller frees it).  Shared with the
 * mock's index on disk (mdisk.c).
 */
char *
match_shape_key(const json_t *req)
{
	json_t	*shape;
	char	*text, *key;

	shape = redacted_shape(req);
	text = shape != NULL ? json_dumps(shape, JSON_COMPACT |
	    JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
	json_decref(shape);
	xasprintf(&key, "%s\n%s", match_method(req), text != NULL ? text : "");
	free(text);
	return key;
}

/*
 * The index in m->shapes of the redacted shape of recorded request req
 * (method and what redacted_shape keeps), a new one when it is the
 * first; shape_of maps a shape's text to its index.  The entry about to
 * be added, m->n, stands for a new shape.
 */
static size_t
match_shape_of(struct matcher *m, json_t *shape_of, const json_t *req)
{
	json_t	*have;
	char	*key = match_shape_key(req);
	size_t	 k;

	if ((have = json_object_get(shape_of, key)) != NULL) {
		free(key);
		return (size_t)json_integer_value(have);
	}
	k = m->nshapes;
	m->shapes = xreallocarray(m->shapes, k + 1, sizeof *m->shapes);
	m->shapes[m->nshapes++] = m->n;
	if (json_object_set_new(shape_of, key, json_integer((json_int_t)k)) !=
	    0)
		fatalx("matcher: a redacted shape not indexed");
	free(key);
	return k;
}

/*
 * Build the matcher for a plan (which must outlive it): its entries in
 * recorded order, each with what the server did around it.  The ignores
 * of rules (NULL: none) name places in the request
 * ("$.params.arguments.when") left out of the keys; the matcher takes
 * them over and leaves rules empty.
 */
void
matcher_build(struct matcher *m, const struct plan *p, int strict,
    struct diff_rules *rules)
{
	struct mentry	*e;
	ssize_t		*entry_of = NULL;
	json_t		*list, *shape_of;
	char		*key;
	size_t		 i, alloc = 0;

	memset(m, 0, sizeof *m);
	m->plan = p;
	m->strict = strict;
	m->used = json_object();
	m->index = json_object();
	rules_init(&m->rules);
	if (rules != NULL) {
		m->rules = *rules;
		rules_init(rules);
	}

	shape_of = json_object();
	entry_of = xreallocarray(NULL, p->n + 1, sizeof *entry_of);
	for (i = 0; i < p->n; i++) {
		entry_of[i] = -1;
		if (!match_is_entry(p, i))
			continue;
		if (m->n == alloc) {
			alloc = alloc * 2 + 256;
			m->e = xreallocarray(m->e, alloc, sizeof *m->e);
		}
		e = &m->e[m->n];
		memset(e, 0, sizeof *e);
		e->req = i;
		e->resp = (size_t)p->m[i].answer;
		key = match_request_key(plan_json(&p->m[i]), &m->rules);
		if ((list = json_object_get(m->index, key)) == NULL) {
			list = json_array();
			/* On failure jansson has released list. */
			if (json_object_set_new(m->index, key, list) != 0)
				fatalx("matcher: a request key not indexed");
		}
		/*
		 * The entry names its key by the index's copy: a long session
		 * repeats a few keys many times, and a key is as long as the
		 * params.  The index keeps every key until matcher_clear().
		 */
		e->key = json_object_iter_key(json_object_iter_at(m->index,
		    key));
		free(key);
		if (json_array_append_new(list, json_integer((json_int_t)
		    m->n)) != 0)
			fatalx("matcher: a request key not indexed");
		e->redacted = redacted_in(json_object_get(plan_json(&p->m[i]),
		    "params"));
		if (e->redacted)
			e->shape = match_shape_of(m, shape_of, plan_json(&p->m[i]));
		e->latency_ns = clock_sub(p->m[e->resp].mono_ns,
		    p->m[i].mono_ns);
		entry_of[i] = (ssize_t)m->n++;
		/* Keyed: its JSON is parsed again only if served. */
		plan_json_drop(&p->m[i]);
	}
	match_attribute(m, entry_of);
	free(entry_of);
	json_decref(shape_of);
}

/*
 * Whether a live request matches entry e once the places where e's
 * params were redacted when recorded are taken as wildcards.
 */
static int
match_redacted(const struct matcher *m, const struct mentry *e,
    const json_t *msg)
{
	const json_t	*rec = match_request(m, e);
	json_t		*filled;
	char		*key;
	int		 same;

	if (!e->redacted || strcmp(match_method(rec), match_method(msg)) != 0)
		return 0;
	filled = redacted_fill(rec, msg);
	key = match_request_key(filled, &m->rules);
	same = key != NULL && strcmp(key, e->key) == 0;
	free(key);
	json_decref(filled);
	return same;
}

/*
 * A request no entry's key matches, against the redacted entries with
 * their redacted values as wildcards: the first entry in recorded order
 * it matches gives the key, and of that key's entries it matches, the
 * one for the key's used-th time (the last again once all have been) is
 * the answer; *keyp becomes the key.  Entries of one shape fill the
 * request alike, so it is filled once per shape, not once per entry,
 * and only entries the filled key indexes are looked at.
 */
static const struct mentry *
match_redacted_find(struct matcher *m, const json_t *msg, char **keyp)
{
	const struct mentry	*found = NULL;
	const json_t		*rec;
	json_t			*filled, *list;
	const char		*method = match_method(msg);
	char			**ks;
	size_t			 nsh, s, j, e, best = SIZE_MAX, seen = 0, n;
	json_int_t		 used;

	if (method == NULL || m->nshapes == 0)
		return NULL;
	nsh = m->nshapes;
	if (nsh > MATCH_SHAPES_MAX) {
		nsh = MATCH_SHAPES_MAX;
		if (!m->shapes_capped)
			log_warnx("mock: the recording's requests are redacted "
			    "in %zu ways; a request that matches none exactly "
			    "is tried against the first %d only", m->nshapes,
			    MATCH_SHAPES_MAX);
		m->shapes_capped = 1;
	}
	ks = xreallocarray(NULL, nsh, sizeof *ks);
	for (s = 0; s < nsh; s++) {
		ks[s] = NULL;
		rec = match_request(m, &m->e[m->shapes[s]]);
		if (strcmp(match_method(rec), method) != 0)
			continue;
		filled = redacted_fill(rec, msg);
		ks[s] = match_request_key(filled, &m->rules);
		json_decref(filled);
		if (ks[s] == NULL)
			continue;
		/* The first entry of this shape the filled key names. */
		list = json_object_get(m->index, ks[s]);
		for (j = 0; j < json_array_size(list); j++) {
			e = (size_t)json_integer_value(json_array_get(list, j));
			if (m->e[e].redacted && m->e[e].shape == s) {
				if (e < best)
					best = e;
				break;
			}
		}
	}
	if (best != SIZE_MAX) {
		free(*keyp);
		*keyp = xstrdup(m->e[best].key);
		used = json_integer_value(json_object_get(m->used, *keyp));
		list = json_object_get(m->index, *keyp);
		n = json_array_size(list);
		for (j = 0; j < n; j++) {
			e = (size_t)json_integer_value(json_array_get(list, j));
			if (!m->e[e].redacted || m->e[e].shape >= nsh ||
			    ks[m->e[e].shape] == NULL ||
			    strcmp(ks[m->e[e].shape], *keyp) != 0)
				continue;
			found = &m->e[e];
			if ((json_int_t)seen++ == used)
				break;
		}
	}
	for (s = 0; s < nsh; s++)
		free(ks[s]);
	free(ks);
	return found;
}

/* Say that a match needed redacted values taken as wildcards. */
static void
match_note_redacted(const struct matcher *m, const struct mentry *e)
{
	const struct rmsg	*r = &m->plan->m[e->req];
	char			*where;

	where = redacted_where(plan_json(r), MATCH_REDACTED_PATHS);
	log_info("mock: a %s request matches the one recorded at seq %lld "
	    "only with the values redacted when recorded taken as any "
	    "value (at %s)", r->method != NULL ? r->method : "?",
	    (long long)r->seq, where != NULL ? where : "?");
	free(where);
}

/*
 * The entry to answer a live request with, or NULL.  Entries of the same
 * key are used in recorded order, the last again once all have been; in
 * strict mode only the next entry in recorded order will do.  A request
 * no entry's key matches may still match one whose params were redacted
 * when recorded, with those places as wildcards (and a note in the log).
 */
const struct mentry *
matcher_find(struct matcher *m, const json_t *msg)
{
	const struct mentry	*found = NULL;
	json_t			*list;
	char			*key;
	json_int_t		 used;
	size_t			 n;
	int			 wild = 0;

	if ((key = match_request_key(msg, &m->rules)) == NULL)
		return NULL;
	used = json_integer_value(json_object_get(m->used, key));
	if (m->strict) {
		if (m->next < m->n && strcmp(m->e[m->next].key, key) == 0)
			found = &m->e[m->next++];
		else if (m->next < m->n && match_redacted(m, &m->e[m->next],
		    msg)) {
			found = &m->e[m->next++];
			wild = 1;
		}
	} else {
		/* The used-th entry of the key, or its last. */
		list = json_object_get(m->index, key);
		if ((n = json_array_size(list)) > 0)
			found = &m->e[json_integer_value(json_array_get(list,
			    (size_t)used < n ? (size_t)used : n - 1))];
		/* The recorded key stands for the live one from here. */
		if (found == NULL && (found = match_redacted_find(m, msg,
		    &key)) != NULL) {
			used = json_integer_value(json_object_get(m->used,
			    key));
			wild = 1;
		}
	}
	if (found != NULL)
		json_object_set_new(m->used, key, json_integer(used + 1));
	if (wild)
		match_note_redacted(m, found);
	free(key);
	return found;
}

/*
 * Whether entry e may be played again: the last of its key is, once all
 * have been (never in strict mode).  What mock keeps parsed between plays.
 */
int
matcher_repeats(const struct matcher *m, const struct mentry *e)
{
	json_t	*list;
	size_t	 n;

	if (m->strict)
		return 0;
	list = json_object_get(m->index, e->key);
	if ((n = json_array_size(list)) == 0)
		return 0;
	return json_integer_value(json_array_get(list, n - 1)) ==
	    (json_int_t)(e - m->e);
}

/* Whether any entry is a request of this method. */
static int
match_has_method(const struct matcher *m, const char *method)
{
	size_t	i;

	for (i = 0; i < m->n; i++) {
		if (strcmp(match_entry_method(m, &m->e[i]), method) == 0)
			return 1;
	}
	return 0;
}

/* Whether the recording holds a request of this method never answered. */
static int
match_unanswered(const struct matcher *m, const char *method)
{
	const struct plan	*p = m->plan;
	const char		*theirs;
	size_t			 i;

	for (i = 0; i < p->n; i++) {
		if (p->m[i].dir != DIR_C2S || p->m[i].kind != KIND_REQUEST ||
		    p->m[i].answer >= 0 || plan_json(&p->m[i]) == NULL)
			continue;
		theirs = match_method(plan_json(&p->m[i]));
		if (theirs != NULL && strcmp(theirs, method) == 0)
			return 1;
	}
	return 0;
}

/*
 * Whether the recording holds a request of this method, or its answer,
 * cut at the record cap: the mock cannot match or play it.
 */
static int
match_truncated(const struct matcher *m, const char *method)
{
	const struct plan	*p = m->plan;
	size_t			 i;

	for (i = 0; i < p->n; i++) {
		if (p->m[i].dir != DIR_C2S || p->m[i].kind != KIND_REQUEST ||
		    p->m[i].method == NULL ||
		    strcmp(p->m[i].method, method) != 0)
			continue;
		if (p->m[i].truncated || (p->m[i].answer >= 0 &&
		    p->m[p->m[i].answer].truncated))
			return 1;
	}
	return 0;
}

/* Order method names for the recorded_methods list. */
static int
match_cmp_method(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct methods of the entries, sorted, as a JSON array. */
static json_t *
match_methods(const struct matcher *m)
{
	const char	**v;
	json_t		 *out = json_array();
	size_t		  i;

	v = xreallocarray(NULL, m->n + 1, sizeof *v);
	for (i = 0; i < m->n; i++)
		v[i] = match_entry_method(m, &m->e[i]);
	qsort(v, m->n, sizeof *v, match_cmp_method);
	for (i = 0; i < m->n; i++) {
		if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
			json_array_append_new(out, json_string(v[i]));
	}
	free(v);
	return out;
}

/* Wrap a request's canonical params for the diff: {"params": ...}. */
static json_t *
match_wrap(const struct diff_rules *rules, const json_t *msg)
{
	json_t	*params = match_params(rules, msg);

	/* No params compares as {}, so differences name the keys. */
	if (params == NULL)
		params = json_object();
	return json_pack("{so}", "params", params);
}

/*
 * The places where a recorded request's params and a live request's
 * differ, as the diff reports them ("$.params.arguments.a"); returns how
 * many.  Shared with the mock's index on disk (mfind.c).
 */
size_t
match_params_diff(const struct diff_rules *rules, const json_t *recmsg,
    const json_t *msg, struct diff *d)
{
	json_t	*rec, *live;
	size_t	 n;

	memset(d, 0, sizeof *d);
	rec = match_wrap(rules, recmsg);
	live = match_wrap(rules, msg);
	n = diff_messages(rec, live, NULL, d);
	json_decref(rec);
	json_decref(live);
	return n;
}

/* The entry of this method whose params differ least (earliest on ties). */
static const struct mentry *
match_nearest(const struct matcher *m, const char *method, const json_t *msg)
{
	const struct mentry	*best = NULL;
	struct diff		 d;
	size_t			 i, n, best_n = 0;

	for (i = 0; i < m->n; i++) {
		if (strcmp(match_entry_method(m, &m->e[i]), method) != 0)
			continue;
		n = match_params_diff(&m->rules, match_request(m, &m->e[i]),
		    msg, &d);
		diff_clear(&d);
		if (best == NULL || n < best_n) {
			best = &m->e[i];
			best_n = n;
		}
	}
	return best;
}

/* A JSON-RPC error object with a message (which it frees). */
json_t *
match_error(int code, char *message)
{
	json_t	*error;

	error = json_pack("{siss}", "code", code, "message", message);
	if (error == NULL)
		fatalx("cannot build an error object for '%s'", message);
	free(message);
	return error;
}

/*
 * The data of a -32602 error: the method, the recorded request compared
 * with (rec, at seq), and where the live params differ from its.
 */
json_t *
match_miss_data(const struct diff_rules *rules, const char *method,
    int64_t seq, const json_t *rec, const json_t *msg)
{
	struct diff		 d;
	json_t			*data, *nearest, *list, *one, *params;
	size_t			 i, n;

	nearest = json_pack("{sI}", "seq", (json_int_t)seq);
	if ((params = json_object_get(rec, "params")) != NULL)
		json_object_set_new(nearest, "params", json_deep_copy(params));

	n = match_params_diff(rules, rec, msg, &d);
	list = json_array();
	for (i = 0; i < n && i < MATCH_MAX_DIFFERENCES; i++) {
		one = json_pack("{ss}", "path", d.v[i].path);
		/* A side without the place has no member. */
		if (d.v[i].recorded != NULL)
			json_object_set_new(one, "recorded",
			    json_deep_copy(d.v[i].recorded));
		if (d.v[i].replayed != NULL)
			json_object_set_new(one, "live",
			    json_deep_copy(d.v[i].replayed));
		json_array_append_new(list, one);
	}
	diff_clear(&d);

	data = json_pack("{sssoso}", "method", method, "nearest", nearest,
	    "differences", list);
	if (n > MATCH_MAX_DIFFERENCES)
		json_object_set_new(data, "differences_omitted",
		    json_integer((json_int_t)(n - MATCH_MAX_DIFFERENCES)));
	return data;
}

/*
 * The JSON-RPC error object (the caller owns it) for a live request no
 * entry answers, from what a matcher found out about it (mm): why, and
 * the recorded request nearest to it.  Shared with mfind.c.
 */
json_t *
match_miss_error(const struct diff_rules *rules, const json_t *msg,
    const struct match_miss *mm)
{
	const char	*method = match_method(msg);
	json_t		*error;
	char		*text;

	if (method == NULL)
		return match_error(MATCH_INVALID_REQUEST,
		    xstrdup("mcpreel mock: the request has no method"));
	if (mm->rec == NULL) {
		if (mm->truncated)
			xasprintf(&text, "mcpreel mock: the recorded '%s' "
			    "request or its answer was cut at "
			    "--max-record-size, so it cannot be matched or "
			    "played (record it again with a larger "
			    "--max-record-size)", method);
		else
			xasprintf(&text, "mcpreel mock: method '%s' was %s",
			    method, mm->unanswered ?
			    "recorded but never answered" : "never recorded");
		error = match_error(MATCH_NO_METHOD, text);
		json_object_set_new(error, "data", json_pack("{ssso}",
		    "method", method, "recorded_methods",
		    json_incref(mm->methods)));
		return error;
	}
	if (mm->want == NULL) {
		if (mm->strict)
			xasprintf(&text, "mcpreel mock: %s request out of the "
			    "recorded order; every recorded request has been "
			    "answered", method);
		else
			xasprintf(&text, "mcpreel mock: no recorded %s request "
			    "matches these params", method);
	} else {
		/*
		 * Strict: compared with the entry expected next.  Another
		 * method, or params another entry has, is the order's fault;
		 * the expected method with params never recorded is the
		 * params' fault.
		 */
		if (strcmp(mm->want, method) != 0 || mm->elsewhere)
			xasprintf(&text, "mcpreel mock: %s request out of the "
			    "recorded order; expected %s next", method,
			    mm->want);
		else
			xasprintf(&text, "mcpreel mock: no recorded %s request "
			    "matches these params", method);
	}
	error = match_error(MATCH_NO_PARAMS, text);
	json_object_set_new(error, "data", match_miss_data(rules, method,
	    mm->seq, mm->rec, msg));
	return error;
}

/*
 * The JSON-RPC error object (the caller owns it) for a live request no
 * entry answers: why, and the recorded request nearest to it.
 */
json_t *
matcher_miss(const struct matcher *m, const json_t *msg)
{
	const struct mentry	*e = NULL;
	const char		*method = match_method(msg);
	struct match_miss	 mm;
	json_t			*error;
	char			*key;
	size_t			 i;

	memset(&mm, 0, sizeof mm);
	mm.strict = m->strict;
	if (method == NULL)
		return match_miss_error(&m->rules, msg, &mm);
	if (!match_has_method(m, method)) {
		mm.truncated = match_truncated(m, method);
		mm.unanswered = !mm.truncated && match_unanswered(m, method);
		mm.methods = match_methods(m);
		error = match_miss_error(&m->rules, msg, &mm);
		json_decref(mm.methods);
		return error;
	}
	if (!m->strict || m->next >= m->n)
		e = match_nearest(m, method, msg);
	else {
		e = &m->e[m->next];
		mm.want = match_method(match_request(m, e));
		key = match_request_key(msg, &m->rules);
		for (i = 0; i < m->n && !mm.elsewhere; i++)
			mm.elsewhere = strcmp(m->e[i].key, key) == 0;
		free(key);
	}
	mm.seq = m->plan->m[e->req].seq;
	mm.rec = match_request(m, e);
	return match_miss_error(&m->rules, msg, &mm);
}

/* Free everything the matcher holds (not the plan). */
void
matcher_clear(struct matcher *m)
{
	size_t	i;

	for (i = 0; i < m->n; i++) {
		free(m->e[i].before);
		free(m->e[i].after);
	}
	free(m->e);
	free(m->prelude);
	rules_clear(&m->rules);
	json_decref(m->used);
	json_decref(m->index);
	free(m->shapes);
	memset(m, 0, sizeof *m);
}
