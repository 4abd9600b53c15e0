/*
 * The mock's recording on disk: every message of the session, the match
 * index and what the server did around each request, in a temporary
 * SQLite database (an on-disk file SQLite deletes on close), so that the
 * mock's memory does not grow with the session.
 *
 * It is built in two passes.  mdisk_add() takes the messages in the
 * store's order (monotonic time, then seq), copies them in and pairs each
 * answer with its request by id (only the requests still unanswered are
 * held in memory).  mdisk_finish() walks the copy in order once and does
 * what match.c's matcher_build() does: an entry per answered request,
 * keyed by match_request_key(), numbered in recorded order and ranked
 * within its key; each server message given to the entry it was sent for
 * ("before" its answer, "after" it, or the prelude).  Only the requests
 * in flight at a point of the walk are held in memory.
 *
 * mfind.c finds an entry for a live request and loads it (with its
 * request, answer and items) when it is served.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "check_session.h"
#include "mdisk_int.h"

/*
 * The page cache of the temporary database, in KiB (SQLite's
 * cache_size as a negative number): enough for the index's upper pages,
 * a fixed cost whatever the session's size.
 */
#define MDISK_CACHE_KIB		8192

/* The longest request id paired by its text (as plan.c's limit). */
#define MDISK_ID_MAX		510

static const char mdisk_schema[] =
	"PRAGMA journal_mode = OFF;"
	"PRAGMA synchronous = OFF;"
	"PRAGMA temp_store = FILE;"
	"PRAGMA cache_size = -" MDISK_STR(MDISK_CACHE_KIB) ";"
	"CREATE TABLE msg (i INTEGER PRIMARY KEY, seq INTEGER NOT NULL,"
	"  dir INTEGER NOT NULL, kind INTEGER NOT NULL, mono INTEGER NOT NULL,"
	"  method TEXT, trunc INTEGER NOT NULL, answer INTEGER NOT NULL,"
	"  request INTEGER NOT NULL, raw BLOB NOT NULL);"
	"CREATE TABLE keys (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,"
	"  n INTEGER NOT NULL, used INTEGER NOT NULL);"
	"CREATE TABLE entry (n INTEGER PRIMARY KEY, kid INTEGER NOT NULL,"
	"  rank INTEGER NOT NULL, req INTEGER NOT NULL, resp INTEGER NOT NULL,"
	"  latency INTEGER NOT NULL, redacted INTEGER NOT NULL,"
	"  shape INTEGER NOT NULL, method TEXT NOT NULL);"
	"CREATE TABLE item (owner INTEGER NOT NULL, after INTEGER NOT NULL,"
	"  msg INTEGER NOT NULL, offset INTEGER NOT NULL);"
	/*
	 * One transaction until closed: nothing here need survive a
	 * crash, and a find's use count is then no commit of its own.
	 */
	"BEGIN;";

/* Made once the walk is done: the finds and misses use them. */
static const char mdisk_indexes[] =
	"CREATE INDEX entry_key ON entry (kid, rank);"
	/*
	 * A request matched with wildcards reads only the redacted entries
	 * of a key: a key's many plain ones are not walked.
	 */
	"CREATE INDEX entry_redacted ON entry (kid, redacted, rank);"
	"CREATE INDEX entry_method ON entry (method, n);"
	"CREATE INDEX item_owner ON item (owner, after);";

/* A request in flight during the walk: its entry and progress token. */
struct mdisk_flight {
	int64_t		 n;
	int64_t		 req;		/* its message */
	int64_t		 mono;
	json_t		*token;		/* _meta.progressToken, or NULL */
};

/* Prepare a statement on the temporary database, or die: ours is fixed. */
sqlite3_stmt *
mdisk_prepare(struct mdisk *md, const char *sql)
{
	sqlite3_stmt	*stmt;

	if (sqlite3_prepare_v2(md->db, sql, -1, &stmt, NULL) != SQLITE_OK)
		fatalx("mock: the temporary index: %s", sqlite3_errmsg(md->db));
	return stmt;
}

/* Step a statement that returns no row, or die (the disk is full). */
void
mdisk_exec(struct mdisk *md, sqlite3_stmt *stmt)
{
	int	rc = sqlite3_step(stmt);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		fatalx("mock: writing the temporary index failed: %s (is the "
		    "temporary directory full?)", sqlite3_errmsg(md->db));
	sqlite3_reset(stmt);
}

/* Bind a text, or NULL. */
void
mdisk_bind_text(sqlite3_stmt *stmt, int col, const char *s)
{
	if (s == NULL)
		sqlite3_bind_null(stmt, col);
	else
		sqlite3_bind_text(stmt, col, s, -1, SQLITE_TRANSIENT);
}

/*
 * A new, empty recording on disk whose keys leave out the places rules'
 * ignores name (the rules are taken over and left empty; NULL: none);
 * strict demands the recorded order.
 */
struct mdisk *
mdisk_new(int strict, struct diff_rules *rules, char **cause)
{
	struct mdisk	*md = xcalloc(1, sizeof *md);
	char		*err = NULL;

	md->strict = strict;
	rules_init(&md->rules);
	if (rules != NULL) {
		md->rules = *rules;
		rules_init(rules);
	}
	/* An empty name: a temporary file, deleted when closed. */
	if (sqlite3_open_v2("", &md->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    sqlite3_exec(md->db, mdisk_schema, NULL, NULL, &err) !=
	    SQLITE_OK) {
		xasprintf(cause, "cannot make the mock's temporary index: %s",
		    err != NULL ? err : sqlite3_errmsg(md->db));
		sqlite3_free(err);
		mdisk_free(md);
		return NULL;
	}
	md->add = mdisk_prepare(md, "INSERT INTO msg VALUES (?1, ?2, ?3, ?4, "
	    "?5, ?6, ?7, -1, ?8, ?9)");
	md->answer = mdisk_prepare(md, "UPDATE msg SET answer = ?2 "
	    "WHERE i = ?1");
	md->pending = idmap_new();
	md->shape_of = json_object();
	return md;
}

/*
 * Add the next recorded message (in the store's order).  A truncated one
 * (raw only a prefix) takes kind, method and id from the store's row.
 */
void
mdisk_add(struct mdisk *md, int64_t seq, enum dir d, int64_t mono_ns,
    const void *raw, size_t len, int truncated, enum msg_kind kind,
    const char *method, const char *id)
{
	struct scan	 sc;
	char		*smethod = NULL, *sid = NULL, key[MDISK_ID_MAX + 2];
	int64_t		 i = md->nmsg++, req = -1;
	size_t		 klen;

	if (!truncated) {
		scan_message(raw, len, &sc);
		kind = sc.kind;
		method = smethod = scan_method_dup(raw, &sc);
		id = sid = scan_id_dup(raw, &sc);
	}
	if (id != NULL && (klen = strlen(id)) <= MDISK_ID_MAX) {
		key[0] = (char)('0' + (kind == KIND_REQUEST ? d : !d));
		memcpy(key + 1, id, klen);
		if (kind == KIND_REQUEST)
			idmap_put(md->pending, key, klen + 1, i, NULL);
		else if ((kind == KIND_RESPONSE || kind == KIND_ERROR) &&
		    idmap_take(md->pending, key, klen + 1, &req, NULL) == 0) {
			sqlite3_bind_int64(md->answer, 1, req);
			sqlite3_bind_int64(md->answer, 2, i);
			mdisk_exec(md, md->answer);
		} else
			req = -1;
	}
	sqlite3_bind_int64(md->add, 1, i);
	sqlite3_bind_int64(md->add, 2, seq);
	sqlite3_bind_int(md->add, 3, d);
	sqlite3_bind_int(md->add, 4, kind);
	sqlite3_bind_int64(md->add, 5, mono_ns);
	mdisk_bind_text(md->add, 6, method);
	sqlite3_bind_int(md->add, 7, truncated);
	sqlite3_bind_int64(md->add, 8, req);
	sqlite3_bind_blob(md->add, 9, len > 0 ? raw : "", (int)len,
	    SQLITE_STATIC);
	mdisk_exec(md, md->add);
	sqlite3_clear_bindings(md->add);
	free(smethod);
	free(sid);
}

/* A recorded message parsed as plan_json() would (NULL: not JSON). */
json_t *
mdisk_parse(const void *raw, size_t len)
{
	json_t	*v;

	if ((v = jload(raw, len)) == NULL)
		v = json_loadb(raw, len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
		    NULL);
	return v;
}

/* The method of a request message, or NULL if it has none. */
static const char *
mdisk_method(const json_t *msg)
{
	return json_string_value(json_object_get(msg, "method"));
}

/* The key's id and entries so far, a new key when it is the first. */
static int64_t
mdisk_key(struct mdisk *md, const char *key, int64_t *rank)
{
	sqlite3_stmt	*st = md->w_key_get;
	int64_t		 kid;

	mdisk_bind_text(st, 1, key);
	if (sqlite3_step(st) == SQLITE_ROW) {
		kid = sqlite3_column_int64(st, 0);
		*rank = sqlite3_column_int64(st, 1);
		sqlite3_reset(st);
		sqlite3_bind_int64(md->w_key_inc, 1, kid);
		mdisk_exec(md, md->w_key_inc);
		return kid;
	}
	sqlite3_reset(st);
	mdisk_bind_text(md->w_key_add, 1, key);
	mdisk_exec(md, md->w_key_add);
	*rank = 0;
	return sqlite3_last_insert_rowid(md->db);
}

/*
 * The index in md->shapes of the redacted shape of a recorded request
 * (method and what redacted_shape keeps), a new one naming entry n when
 * it is the first: as match.c's.
 */
static size_t
mdisk_shape_of(struct mdisk *md, const json_t *req, int64_t n)
{
	json_t	*have;
	char	*key = match_shape_key(req);
	size_t	 k;

	if ((have = json_object_get(md->shape_of, key)) != NULL) {
		free(key);
		return (size_t)json_integer_value(have);
	}
	k = md->nshapes;
	md->shapes = xreallocarray(md->shapes, k + 1, sizeof *md->shapes);
	md->shapes[md->nshapes++] = n;
	if (json_object_set_new(md->shape_of, key,
	    json_integer((json_int_t)k)) != 0)
		fatalx("mock: a redacted shape not indexed");
	free(key);
	return k;
}

/* Record a server message to play for owner (-1: the prelude). */
static void
mdisk_item(struct mdisk *md, int64_t owner, int after, int64_t msg,
    int64_t offset_ns)
{
	sqlite3_bind_int64(md->w_item, 1, owner);
	sqlite3_bind_int(md->w_item, 2, after);
	sqlite3_bind_int64(md->w_item, 3, msg);
	sqlite3_bind_int64(md->w_item, 4, offset_ns);
	mdisk_exec(md, md->w_item);
	if (owner < 0)
		md->nprelude++;
}

/* Make recorded request i (its JSON req, answered by resp) an entry. */
static void
mdisk_entry_add(struct mdisk *md, int64_t i, const char *smethod,
    const json_t *req, int64_t resp, int64_t latency,
    struct mdisk_flight **flight, size_t *head, size_t *nflight,
    size_t *flightalloc, int64_t mono)
{
	struct mdisk_flight	*f;
	const json_t		*token;
	sqlite3_stmt		*st = md->w_entry;
	char			*key;
	int64_t			 kid, rank, n = md->n++;
	int			 redacted;

	key = match_request_key(req, &md->rules);
	kid = mdisk_key(md, key, &rank);
	free(key);
	redacted = redacted_in(json_object_get(req, "params")) != 0;
	sqlite3_bind_int64(st, 1, n);
	sqlite3_bind_int64(st, 2, kid);
	sqlite3_bind_int64(st, 3, rank);
	sqlite3_bind_int64(st, 4, i);
	sqlite3_bind_int64(st, 5, resp);
	sqlite3_bind_int64(st, 6, latency);
	sqlite3_bind_int(st, 7, redacted);
	sqlite3_bind_int64(st, 8, redacted ? (int64_t)mdisk_shape_of(md, req,
	    n) : 0);
	mdisk_bind_text(st, 9, smethod != NULL ? smethod : mdisk_method(req));
	mdisk_exec(md, st);

	if (*nflight == *flightalloc && *head > 0) {
		memmove(*flight, *flight + *head, (*nflight - *head) *
		    sizeof **flight);
		*nflight -= *head;
		*head = 0;
	}
	if (*nflight == *flightalloc) {
		*flightalloc = *flightalloc * 2 + 16;
		*flight = xreallocarray(*flight, *flightalloc, sizeof **flight);
	}
	f = &(*flight)[(*nflight)++];
	f->n = n;
	f->req = i;
	f->mono = mono;
	token = json_object_get(json_object_get(json_object_get(req,
	    "params"), "_meta"), "progressToken");
	f->token = token != NULL ? json_deep_copy(token) : NULL;
}

/*
 * The in-flight entry a server message belongs to: the one whose
 * progress token a progress notification names, else the latest sent.
 */
static size_t
mdisk_owner(const json_t *msg, const struct mdisk_flight *flight,
    size_t nflight)
{
	const json_t	*token;
	const char	*method = mdisk_method(msg);
	size_t		 i;

	if (method == NULL || strcmp(method, "notifications/progress") != 0)
		return nflight - 1;
	token = json_object_get(json_object_get(msg, "params"),
	    "progressToken");
	if (token == NULL)
		return nflight - 1;
	for (i = nflight; i > 0; i--) {
		if (flight[i - 1].token != NULL &&
		    json_equal(flight[i - 1].token, (json_t *)token))
			return i - 1;
	}
	return nflight - 1;
}

/*
 * The second pass: entries and the server's messages given to them, in
 * one walk of the recording in order (see the comment at the top).
 */
int
mdisk_finish(struct mdisk *md, char **cause)
{
	struct mdisk_flight	*flight = NULL;
	sqlite3_stmt		*walk;
	json_t			*v;
	const void		*raw;
	const char		*smethod;
	/*
	 * In flight: flight[head] to flight[nflight - 1], oldest first.  The
	 * oldest is mostly the one answered, so it leaves by head++, not by
	 * moving all the others (a pipelined client has thousands in flight).
	 */
	size_t			 head = 0, nflight = 0, flightalloc = 0, j;
	int64_t			 i, answer, request, mono, start = 0, last = -1;
	int64_t			 last_mono = 0;
	int			 dir, kind, rc, trunc, atrunc;
	char			*err = NULL;

	idmap_free(md->pending);
	md->pending = NULL;
	md->w_key_get = mdisk_prepare(md, "SELECT id, n FROM keys WHERE "
	    "key = ?1");
	md->w_key_inc = mdisk_prepare(md, "UPDATE keys SET n = n + 1 WHERE "
	    "id = ?1");
	md->w_key_add = mdisk_prepare(md, "INSERT INTO keys (key, n, used) "
	    "VALUES (?1, 1, 0)");
	md->w_entry = mdisk_prepare(md, "INSERT INTO entry VALUES (?1, ?2, "
	    "?3, ?4, ?5, ?6, ?7, ?8, ?9)");
	md->w_item = mdisk_prepare(md, "INSERT INTO item VALUES (?1, ?2, ?3, "
	    "?4)");
	walk = mdisk_prepare(md, "SELECT m.i, m.dir, m.kind, m.mono, m.method, "
	    "m.trunc, m.answer, m.request, m.raw, a.trunc, a.mono FROM msg m "
	    "LEFT JOIN msg a ON a.i = m.answer ORDER BY m.i");
	while ((rc = sqlite3_step(walk)) == SQLITE_ROW) {
		i = sqlite3_column_int64(walk, 0);
		dir = sqlite3_column_int(walk, 1);
		kind = sqlite3_column_int(walk, 2);
		mono = sqlite3_column_int64(walk, 3);
		smethod = (const char *)sqlite3_column_text(walk, 4);
		trunc = sqlite3_column_int(walk, 5);
		answer = sqlite3_column_int64(walk, 6);
		request = sqlite3_column_int64(walk, 7);
		atrunc = sqlite3_column_int(walk, 9);
		if (i == 0)
			start = mono;
		if (dir == DIR_C2S && kind == KIND_REQUEST) {
			/* An answer cut at the record cap is no answer. */
			if (trunc || answer < 0 || atrunc)
				continue;
			raw = sqlite3_column_blob(walk, 8);
			v = mdisk_parse(raw, (size_t)sqlite3_column_bytes(walk,
			    8));
			if (v != NULL && mdisk_method(v) != NULL)
				mdisk_entry_add(md, i, smethod, v, answer,
				    clock_sub(sqlite3_column_int64(walk, 10),
				    mono), &flight, &head, &nflight,
				    &flightalloc, mono);
			json_decref(v);
			continue;
		}
		if (dir != DIR_S2C)
			continue;
		if (kind == KIND_RESPONSE || kind == KIND_ERROR) {
			if (request < 0)
				continue;
			for (j = head; j < nflight; j++) {
				if (flight[j].req == request)
					break;
			}
			if (j == nflight)
				continue;	/* not an entry's */
			last = flight[j].n;
			last_mono = flight[j].mono;
			json_decref(flight[j].token);
			if (j == head)
				head++;
			else {
				memmove(flight + j, flight + j + 1,
				    (nflight - j - 1) * sizeof *flight);
				nflight--;
			}
			if (head == nflight)
				head = nflight = 0;
			continue;
		}
		/* Batches and what is not JSON-RPC are not played. */
		if ((kind != KIND_NOTIFICATION && kind != KIND_REQUEST) ||
		    trunc)
			continue;
		raw = sqlite3_column_blob(walk, 8);
		if ((v = mdisk_parse(raw, (size_t)sqlite3_column_bytes(walk,
		    8))) == NULL)
			continue;
		if (nflight > head) {
			j = head + mdisk_owner(v, flight + head, nflight -
			    head);
			mdisk_item(md, flight[j].n, 0, i, clock_sub(mono,
			    flight[j].mono));
		} else if (last >= 0)
			mdisk_item(md, last, 1, i, clock_sub(mono, last_mono));
		else
			mdisk_item(md, -1, 0, i, clock_sub(mono, start));
		json_decref(v);
	}
	sqlite3_finalize(walk);
	for (j = head; j < nflight; j++)
		json_decref(flight[j].token);
	free(flight);
	if (rc != SQLITE_DONE) {
		xasprintf(cause, "reading the mock's temporary index: %s",
		    sqlite3_errmsg(md->db));
		return -1;
	}
	if (sqlite3_exec(md->db, mdisk_indexes, NULL, NULL, &err) !=
	    SQLITE_OK) {
		xasprintf(cause, "indexing the mock's temporary index: %s",
		    err);
		sqlite3_free(err);
		return -1;
	}
	json_decref(md->shape_of);
	md->shape_of = NULL;
	mfind_prepare(md);
	return 0;
}

/*
 * A recording on disk from a plan (a cassette read whole, the tests):
 * its messages added in order and the index built.
 */
struct mdisk *
mdisk_from_plan(const struct plan *p, int strict, struct diff_rules *rules,
    char **cause)
{
	struct mdisk		*md;
	const struct rmsg	*r;
	size_t			 i;

	if ((md = mdisk_new(strict, rules, cause)) == NULL)
		return NULL;
	for (i = 0; i < p->n; i++) {
		r = &p->m[i];
		mdisk_add(md, r->seq, r->dir, r->mono_ns, r->raw, r->len,
		    r->truncated, r->kind, r->method, r->id);
	}
	if (mdisk_finish(md, cause) != 0) {
		mdisk_free(md);
		return NULL;
	}
	return md;
}

/* Close the temporary database (SQLite deletes it) and free the rest. */
void
mdisk_free(struct mdisk *md)
{
	if (md == NULL)
		return;
	mfind_finalize(md);
	sqlite3_finalize(md->add);
	sqlite3_finalize(md->answer);
	sqlite3_finalize(md->w_key_get);
	sqlite3_finalize(md->w_key_inc);
	sqlite3_finalize(md->w_key_add);
	sqlite3_finalize(md->w_entry);
	sqlite3_finalize(md->w_item);
	if (md->db != NULL)
		sqlite3_close(md->db);
	if (md->pending != NULL)
		idmap_free(md->pending);
	json_decref(md->shape_of);
	free(md->shapes);
	rules_clear(&md->rules);
	free(md);
}
