/*
 * The mock's recording on disk: every message of the session, the match
 * index and what the server did around each request, in a temporary
 * SQLite database (an on-disk file SQLite deletes on close), so that the
 * mock's memory does not grow with the session.
 *
 * It is built in two passes.  mdisk_add() takes the messages in the
 * store's order (monotonic time, then seq), parses each once, keeps what
 * the match needs of it (a request's key, redacted shape and progress
 * token; whether a server message can be played) and pairs each answer
 * with its request by id (only the requests still unanswered are held in
 * memory); the bytes go to a table of their own, read when served.
 * mdisk_finish() walks these small rows in order once and does what
 * match.c's matcher_build() does: an entry per answered request, keyed by
 * match_request_key(), numbered in recorded order and ranked within its
 * key; each server message given to the entry it was sent for ("before"
 * its answer, "after" it, or the prelude).  Only the requests in flight
 * at a point of the walk are held in memory.
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

/*
 * The temporary database's page size: fewer, fuller pages to write and
 * walk while building (task-clock of a mock's start on 100 000 messages:
 * about 1 000 ms with 4 KiB pages, 850 with 16 KiB, no better with 64
 * KiB), and still a small read for each look-up when serving.
 */
#define MDISK_PAGE		16384

/* The longest request id paired by its text (as plan.c's limit). */
#define MDISK_ID_MAX		510

static const char mdisk_schema[] =
	"PRAGMA page_size = " MDISK_STR(MDISK_PAGE) ";"
	"PRAGMA journal_mode = OFF;"
	"PRAGMA synchronous = OFF;"
	"PRAGMA temp_store = FILE;"
	"PRAGMA cache_size = -" MDISK_STR(MDISK_CACHE_KIB) ";"
	/*
	 * key: a request's key (NULL: no entry can be made of it); shape:
	 * its redacted shape's key when redacted; token: a request's
	 * progress token, or the one a server's progress notification
	 * names (JSON, canonical); play: a server message that parses;
	 * emethod: the method a request's JSON gives when the scan found
	 * none; request: an
	 * answer's request (-1: none), the way a request finds its answer
	 * (msg_request).
	 */
	"CREATE TABLE msg (i INTEGER PRIMARY KEY, seq INTEGER NOT NULL,"
	"  dir INTEGER NOT NULL, kind INTEGER NOT NULL, mono INTEGER NOT NULL,"
	"  method TEXT, trunc INTEGER NOT NULL,"
	"  request INTEGER NOT NULL, key TEXT,"
	"  redacted INTEGER NOT NULL, shape TEXT, token TEXT,"
	"  play INTEGER NOT NULL, emethod TEXT);"
	/*
	 * The bytes, apart: the walk and the statements between the passes
	 * read the small rows only.
	 */
	"CREATE TABLE raw (i INTEGER PRIMARY KEY, raw BLOB NOT NULL);"
	/* A key's entries are counted by entry_key (its last rank + 1). */
	"CREATE TABLE keys (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,"
	"  used INTEGER NOT NULL);"
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

/*
 * Made between the passes, a statement each rather than one per row
 * (a per-row statement costs more than the row): how a request finds
 * its answer, and the keys.
 */
static const char mdisk_between[] =
	"CREATE INDEX msg_request ON msg (request) WHERE request >= 0;"
	"INSERT OR IGNORE INTO keys (key, used) SELECT key, 0 FROM msg"
	"  WHERE key IS NOT NULL;";

/*
 * Made once the walk is done: each entry's rank within its key, and what
 * the finds and misses use.  The ranks go through a table of their own,
 * not UPDATE ... FROM: that needs SQLite 3.33, and older ones (3.31 of
 * Ubuntu 20.04) are still built against; window functions need 3.25.
 */
static const char mdisk_indexes[] =
	"CREATE TABLE entry_rank (n INTEGER PRIMARY KEY, r INTEGER NOT NULL);"
	"INSERT INTO entry_rank SELECT n, row_number() OVER"
	"  (PARTITION BY kid ORDER BY n) - 1 FROM entry;"
	"UPDATE entry SET rank = (SELECT r FROM entry_rank"
	"  WHERE entry_rank.n = entry.n);"
	"DROP TABLE entry_rank;"
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
	char		*token;		/* _meta.progressToken (canonical
					   JSON), or NULL */
};

/* What mdisk_add() keeps of a message it parsed (mdisk_digest()). */
struct mdisk_digest {
	char		*key;		/* NULL: no entry */
	int		 redacted;
	char		*shape;
	char		*token;
	int		 play;
	const char	*emethod;	/* in v */
	json_t		*v;
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

/* Open md's temporary database, empty, ready for mdisk_add(). */
static int
mdisk_open(struct mdisk *md, char **cause)
{
	char	*err = NULL;

	/* An empty name: a temporary file, deleted when closed. */
	if (sqlite3_open_v2("", &md->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    sqlite3_exec(md->db, mdisk_schema, NULL, NULL, &err) !=
	    SQLITE_OK) {
		xasprintf(cause, "cannot make the mock's temporary index: %s",
		    err != NULL ? err : sqlite3_errmsg(md->db));
		sqlite3_free(err);
		return -1;
	}
	md->add = mdisk_prepare(md, "INSERT INTO msg VALUES (?1, ?2, ?3, ?4, "
	    "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
	md->add_raw = mdisk_prepare(md, "INSERT INTO raw VALUES (?1, ?2)");
	md->pending = idmap_new();
	md->shape_of = json_object();
	return 0;
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

	md->strict = strict;
	rules_init(&md->rules);
	if (rules != NULL) {
		md->rules = *rules;
		rules_init(rules);
	}
	if (mdisk_open(md, cause) != 0) {
		mdisk_free(md);
		return NULL;
	}
	return md;
}

/*
 * Empty md of what mdisk_add() added, its rules kept: a cassette read
 * again, in the store's order.
 */
int
mdisk_reset(struct mdisk *md, char **cause)
{
	sqlite3_finalize(md->add);
	sqlite3_finalize(md->add_raw);
	sqlite3_close(md->db);
	idmap_free(md->pending);
	json_decref(md->shape_of);
	md->add = md->add_raw = NULL;
	md->db = NULL;
	md->pending = NULL;
	md->shape_of = NULL;
	md->nmsg = 0;
	return mdisk_open(md, cause);
}

/* A JSON value as canonical text (the caller frees it), or NULL. */
static char *
mdisk_canon(const json_t *v)
{
	if (v == NULL)
		return NULL;
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* The method of a request message, or NULL if it has none. */
static const char *
mdisk_method(const json_t *msg)
{
	return json_string_value(json_object_get(msg, "method"));
}

/*
 * What the walk needs of a whole message of direction d and kind, parsed
 * once here: of a request, its key, whether and how it was redacted and
 * its progress token; of a server's notification or request, whether it
 * parses (is played) and the progress token it names.
 */
static void
mdisk_digest(struct mdisk *md, enum dir d, enum msg_kind kind,
    const void *raw, size_t len, struct mdisk_digest *dg)
{
	const json_t	*params;
	const char	*method;

	memset(dg, 0, sizeof *dg);
	if (d == DIR_C2S && kind == KIND_REQUEST) {
		if ((dg->v = mdisk_parse(raw, len)) == NULL ||
		    (method = mdisk_method(dg->v)) == NULL ||
		    (dg->key = match_request_key(dg->v, &md->rules)) == NULL)
			return;
		dg->emethod = method;
		params = json_object_get(dg->v, "params");
		if ((dg->redacted = redacted_in(params) != 0))
			dg->shape = match_shape_key(dg->v);
		dg->token = mdisk_canon(json_object_get(json_object_get(params,
		    "_meta"), "progressToken"));
	} else if (d == DIR_S2C && (kind == KIND_NOTIFICATION ||
	    kind == KIND_REQUEST)) {
		if ((dg->v = mdisk_parse(raw, len)) == NULL)
			return;
		dg->play = 1;
		method = mdisk_method(dg->v);
		if (method != NULL &&
		    strcmp(method, "notifications/progress") == 0)
			dg->token = mdisk_canon(json_object_get(
			    json_object_get(dg->v, "params"), "progressToken"));
	}
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
	struct mdisk_digest	 dg;
	struct scan		 sc;
	sqlite3_stmt		*st = md->add;
	char			*smethod = NULL, *sid = NULL;
	char			 key[MDISK_ID_MAX + 2];
	int64_t			 i = md->nmsg++, req = -1;
	size_t			 klen;

	memset(&dg, 0, sizeof dg);
	if (!truncated) {
		scan_message(raw, len, &sc);
		kind = sc.kind;
		method = smethod = scan_method_dup(raw, &sc);
		id = sid = scan_id_dup(raw, &sc);
		mdisk_digest(md, d, kind, raw, len, &dg);
	}
	if (id != NULL && (klen = strlen(id)) <= MDISK_ID_MAX) {
		key[0] = (char)('0' + (kind == KIND_REQUEST ? d : !d));
		memcpy(key + 1, id, klen);
		/* The walk finds a request's answer by its request column. */
		if (kind == KIND_REQUEST)
			idmap_put(md->pending, key, klen + 1, i, NULL);
		else if (!((kind == KIND_RESPONSE || kind == KIND_ERROR) &&
		    idmap_take(md->pending, key, klen + 1, &req, NULL) == 0))
			req = -1;
	}
	sqlite3_bind_int64(st, 1, i);
	sqlite3_bind_int64(st, 2, seq);
	sqlite3_bind_int(st, 3, d);
	sqlite3_bind_int(st, 4, kind);
	sqlite3_bind_int64(st, 5, mono_ns);
	mdisk_bind_text(st, 6, method);
	sqlite3_bind_int(st, 7, truncated);
	sqlite3_bind_int64(st, 8, req);
	mdisk_bind_text(st, 9, dg.key);
	sqlite3_bind_int(st, 10, dg.redacted);
	mdisk_bind_text(st, 11, dg.shape);
	mdisk_bind_text(st, 12, dg.token);
	sqlite3_bind_int(st, 13, dg.play);
	mdisk_bind_text(st, 14, smethod == NULL ? dg.emethod : NULL);
	mdisk_exec(md, st);
	sqlite3_bind_int64(md->add_raw, 1, i);
	sqlite3_bind_blob(md->add_raw, 2, len > 0 ? raw : "", (int)len,
	    SQLITE_STATIC);
	mdisk_exec(md, md->add_raw);
	json_decref(dg.v);
	free(dg.key);
	free(dg.shape);
	free(dg.token);
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

/*
 * The index in md->shapes of a redacted shape (the key match_shape_key()
 * gives), a new one naming entry n when it is the first: as match.c's.
 */
static size_t
mdisk_shape_of(struct mdisk *md, const char *key, int64_t n)
{
	json_t	*have;
	size_t	 k;

	if ((have = json_object_get(md->shape_of, key)) != NULL)
		return (size_t)json_integer_value(have);
	k = md->nshapes;
	md->shapes = xreallocarray(md->shapes, k + 1, sizeof *md->shapes);
	md->shapes[md->nshapes++] = n;
	if (json_object_set_new(md->shape_of, key,
	    json_integer((json_int_t)k)) != 0)
		fatalx("mock: a redacted shape not indexed");
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

/* The requests in flight during the walk (see mdisk_finish()). */
struct mdisk_flights {
	struct mdisk_flight	*v;
	size_t			 head, n, alloc;
};

/*
 * Make the walk's row of recorded request i (with the key kid) an entry
 * answered by resp, and put it in flight.
 */
static void
mdisk_entry_add(struct mdisk *md, sqlite3_stmt *walk, int64_t i,
    int64_t resp, int64_t latency, int64_t mono, struct mdisk_flights *fl)
{
	struct mdisk_flight	*f;
	sqlite3_stmt		*st = md->w_entry;
	const char		*method, *shape, *token;
	int64_t			 kid, n = md->n++;
	int			 redacted;

	kid = sqlite3_column_int64(walk, 16);
	redacted = sqlite3_column_int(walk, 11);
	shape = (const char *)sqlite3_column_text(walk, 12);
	method = (const char *)sqlite3_column_text(walk, 4);
	if (method == NULL)
		method = (const char *)sqlite3_column_text(walk, 15);
	sqlite3_bind_int64(st, 1, n);
	sqlite3_bind_int64(st, 2, kid);
	sqlite3_bind_int64(st, 3, 0);	/* ranked once all are in */
	sqlite3_bind_int64(st, 4, i);
	sqlite3_bind_int64(st, 5, resp);
	sqlite3_bind_int64(st, 6, latency);
	sqlite3_bind_int(st, 7, redacted);
	sqlite3_bind_int64(st, 8, redacted && shape != NULL ?
	    (int64_t)mdisk_shape_of(md, shape, n) : 0);
	mdisk_bind_text(st, 9, method);
	mdisk_exec(md, st);

	if (fl->n == fl->alloc && fl->head > 0) {
		memmove(fl->v, fl->v + fl->head, (fl->n - fl->head) *
		    sizeof *fl->v);
		fl->n -= fl->head;
		fl->head = 0;
	}
	if (fl->n == fl->alloc) {
		fl->alloc = fl->alloc * 2 + 16;
		fl->v = xreallocarray(fl->v, fl->alloc, sizeof *fl->v);
	}
	f = &fl->v[fl->n++];
	f->n = n;
	f->req = i;
	f->mono = mono;
	token = (const char *)sqlite3_column_text(walk, 13);
	f->token = token != NULL ? xstrdup(token) : NULL;
}

/*
 * The in-flight entry a server message belongs to: the one whose
 * progress token a progress notification names (token), else the latest
 * sent.
 */
static size_t
mdisk_owner(const char *token, const struct mdisk_flight *flight,
    size_t nflight)
{
	size_t	i;

	if (token == NULL)
		return nflight - 1;
	for (i = nflight; i > 0; i--) {
		if (flight[i - 1].token != NULL &&
		    strcmp(flight[i - 1].token, token) == 0)
			return i - 1;
	}
	return nflight - 1;
}

/* An answer came: its request leaves the flights (the entry's, if one). */
static void
mdisk_answered(struct mdisk_flights *fl, int64_t request, int64_t *last,
    int64_t *last_mono)
{
	size_t	j;

	for (j = fl->head; j < fl->n; j++) {
		if (fl->v[j].req == request)
			break;
	}
	if (j == fl->n)
		return;		/* not an entry's */
	*last = fl->v[j].n;
	*last_mono = fl->v[j].mono;
	free(fl->v[j].token);
	if (j == fl->head)
		fl->head++;
	else {
		memmove(fl->v + j, fl->v + j + 1, (fl->n - j - 1) *
		    sizeof *fl->v);
		fl->n--;
	}
	if (fl->head == fl->n)
		fl->head = fl->n = 0;
}

/* Run statements over the whole index (between and after the walk). */
static int
mdisk_sql(struct mdisk *md, const char *sql, char **cause)
{
	char	*err = NULL;

	if (sqlite3_exec(md->db, sql, NULL, NULL, &err) == SQLITE_OK)
		return 0;
	xasprintf(cause, "indexing the mock's temporary index: %s", err);
	sqlite3_free(err);
	return -1;
}

/*
 * The second pass: entries and the server's messages given to them, in
 * one walk of the recording's rows in order (see the comment at the top);
 * no message is read or parsed again.
 */
int
mdisk_finish(struct mdisk *md, char **cause)
{
	/*
	 * In flight: v[head] to v[n - 1], oldest first.  The oldest is
	 * mostly the one answered, so it leaves by head++, not by moving
	 * all the others (a pipelined client has thousands in flight).
	 */
	struct mdisk_flights	 fl;
	sqlite3_stmt		*walk;
	size_t			 j;
	int64_t			 i, answer, request, mono, start = 0, last = -1;
	int64_t			 last_mono = 0;
	int			 dir, kind, rc, trunc, atrunc;

	memset(&fl, 0, sizeof fl);
	idmap_free(md->pending);
	md->pending = NULL;
	if (mdisk_sql(md, mdisk_between, cause) != 0)
		return -1;
	md->w_entry = mdisk_prepare(md, "INSERT INTO entry VALUES (?1, ?2, "
	    "?3, ?4, ?5, ?6, ?7, ?8, ?9)");
	md->w_item = mdisk_prepare(md, "INSERT INTO item VALUES (?1, ?2, ?3, "
	    "?4)");
	walk = mdisk_prepare(md, "SELECT m.i, m.dir, m.kind, m.mono, m.method, "
	    "m.trunc, a.i, m.request, a.trunc, a.mono, NULL, m.redacted, "
	    "m.shape, m.token, m.play, m.emethod, k.id FROM msg m "
	    "LEFT JOIN msg a ON a.request = m.i AND a.request >= 0 "
	    "LEFT JOIN keys k ON k.key = m.key ORDER BY m.i");
	while ((rc = sqlite3_step(walk)) == SQLITE_ROW) {
		i = sqlite3_column_int64(walk, 0);
		dir = sqlite3_column_int(walk, 1);
		kind = sqlite3_column_int(walk, 2);
		mono = sqlite3_column_int64(walk, 3);
		trunc = sqlite3_column_int(walk, 5);
		answer = sqlite3_column_type(walk, 6) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(walk, 6);
		request = sqlite3_column_int64(walk, 7);
		atrunc = sqlite3_column_int(walk, 8);
		if (i == 0)
			start = mono;
		if (dir == DIR_C2S && kind == KIND_REQUEST) {
			/* An answer cut at the record cap is no answer. */
			if (trunc || answer < 0 || atrunc ||
			    sqlite3_column_type(walk, 16) == SQLITE_NULL)
				continue;
			mdisk_entry_add(md, walk, i, answer, clock_sub(
			    sqlite3_column_int64(walk, 9), mono), mono, &fl);
			continue;
		}
		if (dir != DIR_S2C)
			continue;
		if (kind == KIND_RESPONSE || kind == KIND_ERROR) {
			if (request >= 0)
				mdisk_answered(&fl, request, &last,
				    &last_mono);
			continue;
		}
		/* Batches and what is not JSON-RPC are not played. */
		if ((kind != KIND_NOTIFICATION && kind != KIND_REQUEST) ||
		    trunc || !sqlite3_column_int(walk, 14))
			continue;
		if (fl.n > fl.head) {
			j = fl.head + mdisk_owner((const char *)
			    sqlite3_column_text(walk, 13), fl.v + fl.head,
			    fl.n - fl.head);
			mdisk_item(md, fl.v[j].n, 0, i, clock_sub(mono,
			    fl.v[j].mono));
		} else if (last >= 0)
			mdisk_item(md, last, 1, i, clock_sub(mono, last_mono));
		else
			mdisk_item(md, -1, 0, i, clock_sub(mono, start));
	}
	sqlite3_finalize(walk);
	for (j = fl.head; j < fl.n; j++)
		free(fl.v[j].token);
	free(fl.v);
	if (rc != SQLITE_DONE) {
		xasprintf(cause, "reading the mock's temporary index: %s",
		    sqlite3_errmsg(md->db));
		return -1;
	}
	if (mdisk_sql(md, mdisk_indexes, cause) != 0)
		return -1;
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
	sqlite3_finalize(md->add_raw);
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
