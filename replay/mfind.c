/*
 * Which recorded exchange answers a live request, from the mock's index
 * on disk (mdisk.c): the same choices as match.c's matcher, each entry
 * and message read from the temporary database when it is served.
 *
 * Entries of the same key are used in recorded order, the last again
 * once all have been: each key has its entries ranked 0, 1, ... and a
 * count of its uses, so a find is two indexed look-ups and one update
 * however long the session.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mdisk_int.h"

/*
 * Redacted shapes a find fills a request for, at most (as match.c's
 * MATCH_SHAPES_MAX): a request matched with wildcards costs a fill and a
 * read per shape.
 */
#define MFIND_SHAPES_MAX	256
/* Most redacted places a log line names. */
#define MFIND_REDACTED_PATHS	8

/*
 * Step a query: 1 for a row, 0 at its end, or die when the temporary
 * database cannot be read (an I/O error, no memory): a read taken for
 * "no such entry" would serve a miss, or "null" for a recorded answer.
 */
static int
mfind_row(sqlite3_stmt *st)
{
	int	rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc != SQLITE_DONE)
		fatalx("mock: reading the temporary index failed: %s",
		    sqlite3_errmsg(sqlite3_db_handle(st)));
	return 0;
}

/* Prepare what serving needs, once the index is built. */
void
mfind_prepare(struct mdisk *md)
{
	md->f_key = mdisk_prepare(md, "SELECT k.id, (SELECT max(rank) + 1 "
	    "FROM entry WHERE kid = k.id), k.used FROM keys k WHERE key = ?1");
	md->f_rank = mdisk_prepare(md, "SELECT n FROM entry WHERE kid = ?1 "
	    "AND rank = ?2");
	md->f_used = mdisk_prepare(md, "UPDATE keys SET used = used + 1 "
	    "WHERE key = ?1");
	md->f_entry = mdisk_prepare(md, "SELECT k.key, e.req, e.resp, "
	    "e.latency, e.method, e.rank, (SELECT max(rank) + 1 FROM entry "
	    "WHERE kid = e.kid), q.seq, NULL, a.seq, NULL, "
	    "e.redacted, e.shape FROM entry e JOIN keys k ON k.id = e.kid "
	    "JOIN msg q ON q.i = e.req JOIN msg a ON a.i = e.resp "
	    "WHERE e.n = ?1");
	md->f_items = mdisk_prepare(md, "SELECT after, msg, offset FROM item "
	    "WHERE owner = ?1 ORDER BY after, rowid");
	md->f_msg = mdisk_prepare(md, "SELECT raw FROM raw WHERE i = ?1");
	/* The redacted entries of a key, in order (by entry_redacted). */
	md->f_bykey = mdisk_prepare(md, "SELECT n, shape FROM entry WHERE "
	    "kid = (SELECT id FROM keys WHERE key = ?1) AND redacted = 1 "
	    "ORDER BY rank");
	/* The first of them of a shape. */
	md->f_byshape = mdisk_prepare(md, "SELECT n FROM entry WHERE "
	    "kid = (SELECT id FROM keys WHERE key = ?1) AND redacted = 1 "
	    "AND shape = ?2 ORDER BY rank LIMIT 1");
	md->f_method = mdisk_prepare(md, "SELECT n FROM entry WHERE "
	    "method = ?1 ORDER BY n");
	md->f_methods = mdisk_prepare(md, "SELECT DISTINCT method FROM entry "
	    "ORDER BY method");
	md->f_trunc = mdisk_prepare(md, "SELECT 1 FROM msg m WHERE "
	    "m.dir = ?2 AND m.kind = ?3 AND m.method = ?1 AND (m.trunc OR "
	    "EXISTS (SELECT 1 FROM msg a WHERE a.request = m.i AND "
	    "a.request >= 0 AND a.trunc)) LIMIT 1");
	md->f_unanswered = mdisk_prepare(md, "SELECT 1 FROM msg m WHERE "
	    "m.dir = ?2 AND m.kind = ?3 AND NOT m.trunc AND m.method = ?1 AND "
	    "NOT EXISTS (SELECT 1 FROM msg a WHERE a.request = m.i AND "
	    "a.request >= 0) LIMIT 1");
	/* A key of requests never answered has no entries. */
	md->f_haskey = mdisk_prepare(md, "SELECT 1 FROM keys k WHERE "
	    "key = ?1 AND EXISTS (SELECT 1 FROM entry WHERE kid = k.id)");
	/* Bindings stay across resets: mfind_any() binds the method only. */
	sqlite3_bind_int(md->f_trunc, 2, DIR_C2S);
	sqlite3_bind_int(md->f_trunc, 3, KIND_REQUEST);
	sqlite3_bind_int(md->f_unanswered, 2, DIR_C2S);
	sqlite3_bind_int(md->f_unanswered, 3, KIND_REQUEST);
}

/* Finalize what mfind_prepare() made. */
void
mfind_finalize(struct mdisk *md)
{
	size_t	k;

	for (k = 0; k < MDISK_CACHED; k++)
		json_decref(md->cache[k].v);
	sqlite3_finalize(md->f_key);
	sqlite3_finalize(md->f_rank);
	sqlite3_finalize(md->f_used);
	sqlite3_finalize(md->f_entry);
	sqlite3_finalize(md->f_items);
	sqlite3_finalize(md->f_msg);
	sqlite3_finalize(md->f_bykey);
	sqlite3_finalize(md->f_byshape);
	sqlite3_finalize(md->f_method);
	sqlite3_finalize(md->f_methods);
	sqlite3_finalize(md->f_trunc);
	sqlite3_finalize(md->f_unanswered);
	sqlite3_finalize(md->f_haskey);
}

/* How many entries (answered recorded requests) there are. */
int64_t
mdisk_entries(const struct mdisk *md)
{
	return md->n;
}

/* Whether a one-text query has a row for s. */
static int
mfind_any(sqlite3_stmt *st, const char *s)
{
	int	found;

	mdisk_bind_text(st, 1, s);
	found = mfind_row(st);
	sqlite3_reset(st);
	return found;
}

/* Append a message to play to a list of items. */
static void
mfind_item(struct mitem **v, size_t *n, size_t msg, int64_t offset_ns)
{
	*v = xreallocarray(*v, *n + 1, sizeof **v);
	(*v)[*n].msg = msg;
	(*v)[*n].offset_ns = offset_ns;
	(*n)++;
}

/*
 * Entry n read from disk (with its answer and items when items is set,
 * else its request only), or NULL if there is none; the caller frees it with mfind_entry_free().
 */
static struct mdent *
mfind_load(struct mdisk *md, int64_t n, int items)
{
	sqlite3_stmt	*st = md->f_entry;
	struct mdent	*e;

	sqlite3_bind_int64(st, 1, n);
	if (!mfind_row(st)) {
		sqlite3_reset(st);
		return NULL;
	}
	e = xcalloc(1, sizeof *e);
	e->n = n;
	e->key = xstrdup((const char *)sqlite3_column_text(st, 0));
	e->req = (size_t)sqlite3_column_int64(st, 1);
	e->resp = (size_t)sqlite3_column_int64(st, 2);
	e->latency_ns = sqlite3_column_int64(st, 3);
	e->method = xstrdup((const char *)sqlite3_column_text(st, 4));
	e->repeats = !md->strict && sqlite3_column_int64(st, 5) ==
	    sqlite3_column_int64(st, 6) - 1;
	e->req_seq = sqlite3_column_int64(st, 7);
	e->resp_seq = sqlite3_column_int64(st, 9);
	e->redacted = sqlite3_column_int(st, 11);
	e->shape = (size_t)sqlite3_column_int64(st, 12);
	sqlite3_reset(st);
	e->request = mfind_message(md, e->req);
	/* Without its items it is only compared: its answer is not read. */
	if (!items)
		return e;
	e->answer = mfind_message(md, e->resp);
	st = md->f_items;
	sqlite3_bind_int64(st, 1, n);
	while (mfind_row(st)) {
		if (sqlite3_column_int(st, 0))
			mfind_item(&e->after, &e->nafter,
			    (size_t)sqlite3_column_int64(st, 1),
			    sqlite3_column_int64(st, 2));
		else
			mfind_item(&e->before, &e->nbefore,
			    (size_t)sqlite3_column_int64(st, 1),
			    sqlite3_column_int64(st, 2));
	}
	sqlite3_reset(st);
	return e;
}

/* Entry n (in recorded order) with its items, or NULL. */
struct mdent *
mfind_entry(struct mdisk *md, int64_t n)
{
	return mfind_load(md, n, 1);
}

/* Free an entry mfind_find() or mfind_entry() gave. */
void
mfind_entry_free(struct mdent *e)
{
	if (e == NULL)
		return;
	free(e->key);
	free(e->method);
	json_decref(e->request);
	json_decref(e->answer);
	free(e->before);
	free(e->after);
	free(e);
}

/*
 * Recorded message i, parsed, or NULL: a reference to a tree the last
 * few reads share (the caller decrefs it and must not change it).  An
 * answer played again and again (the last of its key) is read and
 * parsed once, as when the whole session was in memory.
 */
json_t *
mfind_message(struct mdisk *md, size_t i)
{
	sqlite3_stmt	*st = md->f_msg;
	struct mdisk_cached *c;
	json_t		*v = NULL;
	size_t		 k;

	for (k = 0; k < MDISK_CACHED; k++) {
		c = &md->cache[k];
		if (c->v != NULL && c->msg == i)
			return json_incref(c->v);
	}
	sqlite3_bind_int64(st, 1, (int64_t)i);
	if (mfind_row(st))
		v = mdisk_parse(sqlite3_column_blob(st, 0),
		    (size_t)sqlite3_column_bytes(st, 0));
	sqlite3_reset(st);
	if (v == NULL)
		return NULL;
	c = &md->cache[md->cache_next++ % MDISK_CACHED];
	json_decref(c->v);
	c->v = json_incref(v);
	c->msg = i;
	return v;
}

/* The server messages before any request (*items, the caller frees). */
size_t
mfind_prelude(struct mdisk *md, struct mitem **items)
{
	sqlite3_stmt	*st = md->f_items;
	size_t		 n = 0;

	*items = NULL;
	sqlite3_bind_int64(st, 1, -1);
	while (mfind_row(st))
		mfind_item(items, &n, (size_t)sqlite3_column_int64(st, 1),
		    sqlite3_column_int64(st, 2));
	sqlite3_reset(st);
	return n;
}

/* The method of a request message, or NULL if it has none. */
static const char *
mfind_method(const json_t *msg)
{
	return json_string_value(json_object_get(msg, "method"));
}

/*
 * Whether a live request matches entry e once the places where e's
 * params were redacted when recorded are taken as wildcards.
 */
static int
mfind_redacted(const struct mdisk *md, const struct mdent *e,
    const json_t *msg)
{
	json_t	*filled;
	char	*key;
	int	 same;

	if (!e->redacted || e->request == NULL ||
	    strcmp(mfind_method(e->request), mfind_method(msg)) != 0)
		return 0;
	filled = redacted_fill(e->request, msg);
	key = match_request_key(filled, &md->rules);
	same = key != NULL && strcmp(key, e->key) == 0;
	free(key);
	json_decref(filled);
	return same;
}

/*
 * A request no entry's key matches, against the redacted entries with
 * their redacted values as wildcards, as match.c's: the first entry in
 * recorded order it matches gives the key, and of that key's entries it
 * matches, the one for the key's used-th time (the last again once all
 * have been) is the answer; *keyp becomes the key.
 */
static int64_t
mfind_redacted_find(struct mdisk *md, const json_t *msg, char **keyp)
{
	sqlite3_stmt	*st = md->f_bykey;
	struct mdent	*rec;
	json_t		*filled;
	const char	*method = mfind_method(msg);
	char		**ks;
	size_t		 nsh, s, sh;
	int64_t		 best = -1, found = -1, n, used = 0, seen = 0;

	if (method == NULL || md->nshapes == 0)
		return -1;
	nsh = md->nshapes;
	if (nsh > MFIND_SHAPES_MAX) {
		nsh = MFIND_SHAPES_MAX;
		if (!md->shapes_capped)
			log_warnx("mock: the recording's requests are redacted "
			    "in %zu ways; a request that matches none exactly "
			    "is tried against the first %d only", md->nshapes,
			    MFIND_SHAPES_MAX);
		md->shapes_capped = 1;
	}
	ks = xcalloc(nsh, sizeof *ks);
	for (s = 0; s < nsh; s++) {
		rec = mfind_load(md, md->shapes[s], 0);
		if (rec != NULL && rec->request != NULL &&
		    strcmp(mfind_method(rec->request), method) == 0) {
			filled = redacted_fill(rec->request, msg);
			ks[s] = match_request_key(filled, &md->rules);
			json_decref(filled);
		}
		mfind_entry_free(rec);
		if (ks[s] == NULL)
			continue;
		/* The first entry of this shape the filled key names. */
		mdisk_bind_text(md->f_byshape, 1, ks[s]);
		sqlite3_bind_int64(md->f_byshape, 2, (int64_t)s);
		if (mfind_row(md->f_byshape)) {
			n = sqlite3_column_int64(md->f_byshape, 0);
			if (best < 0 || n < best)
				best = n;
		}
		sqlite3_reset(md->f_byshape);
	}
	if (best >= 0 && (rec = mfind_load(md, best, 0)) != NULL) {
		free(*keyp);
		*keyp = rec->key;
		rec->key = NULL;
		mfind_entry_free(rec);
		mdisk_bind_text(md->f_key, 1, *keyp);
		if (mfind_row(md->f_key))
			used = sqlite3_column_int64(md->f_key, 2);
		sqlite3_reset(md->f_key);
		mdisk_bind_text(st, 1, *keyp);
		while (mfind_row(st)) {
			sh = (size_t)sqlite3_column_int64(st, 1);
			if (sh >= nsh || ks[sh] == NULL ||
			    strcmp(ks[sh], *keyp) != 0)
				continue;
			found = sqlite3_column_int64(st, 0);
			if (seen++ == used)
				break;
		}
		sqlite3_reset(st);
	}
	for (s = 0; s < nsh; s++)
		free(ks[s]);
	free(ks);
	return found;
}

/* Say that a match needed redacted values taken as wildcards. */
static void
mfind_note_redacted(const struct mdent *e)
{
	char	*where;

	where = redacted_where(e->request, MFIND_REDACTED_PATHS);
	log_info("mock: a %s request matches the one recorded at seq %lld "
	    "only with the values redacted when recorded taken as any "
	    "value (at %s)", e->method, (long long)e->req_seq,
	    where != NULL ? where : "?");
	free(where);
}

/*
 * The entry to answer a live request with (the caller frees it), or
 * NULL: as matcher_find().
 */
struct mdent *
mfind_find(struct mdisk *md, const json_t *msg)
{
	struct mdent	*found = NULL;
	sqlite3_stmt	*st = md->f_key;
	char		*key;
	int64_t		 kid, kn, used, n = -1;
	int		 wild = 0;

	if ((key = match_request_key(msg, &md->rules)) == NULL)
		return NULL;
	if (md->strict) {
		if (md->next < md->n &&
		    (found = mfind_entry(md, md->next)) != NULL) {
			if (strcmp(found->key, key) == 0)
				md->next++;
			else if (mfind_redacted(md, found, msg)) {
				md->next++;
				wild = 1;
			} else {
				mfind_entry_free(found);
				found = NULL;
			}
		}
	} else {
		/* The used-th entry of the key, or its last. */
		mdisk_bind_text(st, 1, key);
		if (mfind_row(st)) {
			kid = sqlite3_column_int64(st, 0);
			kn = sqlite3_column_int64(st, 1);
			used = sqlite3_column_int64(st, 2);
			sqlite3_reset(st);
			sqlite3_bind_int64(md->f_rank, 1, kid);
			sqlite3_bind_int64(md->f_rank, 2, used < kn ? used :
			    kn - 1);
			if (mfind_row(md->f_rank))
				n = sqlite3_column_int64(md->f_rank, 0);
			sqlite3_reset(md->f_rank);
		} else
			sqlite3_reset(st);
		/* The recorded key stands for the live one from here. */
		if (n < 0 && (n = mfind_redacted_find(md, msg, &key)) >= 0)
			wild = 1;
		if (n >= 0)
			found = mfind_entry(md, n);
	}
	if (found != NULL) {
		mdisk_bind_text(md->f_used, 1, key);
		mdisk_exec(md, md->f_used);
	}
	if (found != NULL && wild)
		mfind_note_redacted(found);
	free(key);
	return found;
}

/* The distinct methods of the entries, sorted, as a JSON array. */
static json_t *
mfind_methods(struct mdisk *md)
{
	sqlite3_stmt	*st = md->f_methods;
	json_t		*out = json_array();

	while (mfind_row(st))
		json_array_append_new(out, json_string((const char *)
		    sqlite3_column_text(st, 0)));
	sqlite3_reset(st);
	return out;
}

/*
 * The entry of this method whose params differ least (earliest on
 * ties), without its items; every entry of the method is read.
 */
static struct mdent *
mfind_nearest(struct mdisk *md, const char *method, const json_t *msg)
{
	sqlite3_stmt	*st = md->f_method;
	struct mdent	*best = NULL, *e;
	struct diff	 d;
	size_t		 n, best_n = 0;

	mdisk_bind_text(st, 1, method);
	while (mfind_row(st)) {
		e = mfind_load(md, sqlite3_column_int64(st, 0), 0);
		if (e == NULL)
			continue;
		n = match_params_diff(&md->rules, e->request, msg, &d);
		diff_clear(&d);
		if (best == NULL || n < best_n) {
			mfind_entry_free(best);
			best = e;
			best_n = n;
		} else
			mfind_entry_free(e);
	}
	sqlite3_reset(st);
	return best;
}

/*
 * The JSON-RPC error object (the caller owns it) for a live request no
 * entry answers: as matcher_miss().
 */
json_t *
mfind_miss(struct mdisk *md, const json_t *msg)
{
	struct match_miss	 mm;
	struct mdent		*e;
	const char		*method = mfind_method(msg);
	json_t			*error;
	char			*key;

	memset(&mm, 0, sizeof mm);
	mm.strict = md->strict;
	if (method == NULL)
		return match_miss_error(&md->rules, msg, &mm);
	if (!mfind_any(md->f_method, method)) {
		mm.truncated = mfind_any(md->f_trunc, method);
		mm.unanswered = !mm.truncated &&
		    mfind_any(md->f_unanswered, method);
		mm.methods = mfind_methods(md);
		error = match_miss_error(&md->rules, msg, &mm);
		json_decref(mm.methods);
		return error;
	}
	if (!md->strict || md->next >= md->n)
		e = mfind_nearest(md, method, msg);
	else {
		e = mfind_load(md, md->next, 0);
		mm.want = mfind_method(e->request);
		key = match_request_key(msg, &md->rules);
		mm.elsewhere = mfind_any(md->f_haskey, key);
		free(key);
	}
	mm.seq = e->req_seq;
	mm.rec = e->request;
	error = match_miss_error(&md->rules, msg, &mm);
	mfind_entry_free(e);
	return error;
}
