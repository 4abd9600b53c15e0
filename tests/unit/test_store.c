/*
 * The store: creating and opening database files, the writer thread that
 * records a session, and the queries the CLI asks.  Each test works in a
 * fresh directory of its own and reads what was written back through the
 * plain SQLite API, as a user with sqlite3 would.
 */

#include <sys/stat.h>

#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "store.h"
#include "store_int.h"
#include "store_util.h"
#include "unit.h"

/* Messages queued at once by the drain test, beyond the high mark. */
#define STORE_MANY	100000
/* How long the pause test waits for the drain callback, ms. */
#define STORE_DRAIN_WAIT_MS	60000

TestSuite(store, .init = store_setup, .fini = store_teardown,
    .timeout = UNIT_TIMEOUT);

/* Wait until the monotonic clock has moved past where it is now. */
static void
store_test_tick(void)
{
	int64_t	t = clock_mono_ns();

	while (clock_mono_ns() <= t)
		;
}

/* Create the file and its missing directories, private to its owner. */
Test(store, create_mode_and_dirs, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	struct stat	 sb;
	char		*path, *dir, *wal, *cause = NULL;

	path = store_test_path("a/b/c/rec.db");
	dir = store_test_path("a/b");
	xasprintf(&wal, "%s-wal", path);
	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "store_open: %s", cause);
	cr_assert_str_eq(store_path(st), path);

	cr_assert_eq(stat(path, &sb), 0);
	cr_assert(S_ISREG(sb.st_mode));
	cr_assert_eq(sb.st_mode & 07777, 0600, "mode %o", sb.st_mode & 07777);
	cr_assert_eq(stat(dir, &sb), 0);
	cr_assert(S_ISDIR(sb.st_mode));
	cr_assert_eq(sb.st_mode & 07777, 0700, "dir mode %o",
	    sb.st_mode & 07777);
	/* The write-ahead log, there while the store is open, too. */
	cr_assert_eq(stat(wal, &sb), 0, "no %s", wal);
	cr_assert_eq(sb.st_mode & 07777, 0600, "wal mode %o",
	    sb.st_mode & 07777);
	store_close(st);
	free(wal);
	free(dir);
	free(path);
}

/*
 * A reserve left at this process's name (an earlier process of the same
 * pid, killed: pid reuse, usual in a container) is replaced, not taken
 * for a name that cannot be had; a symlink there is removed, its target
 * left alone.
 */
Test(store, reserve_over_leftover, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	struct stat	 sb;
	char		*path, *reserve, *victim, *cause = NULL;
	int		 fd;

	path = store_test_path("res.db");
	victim = store_test_path("victim");
	xasprintf(&reserve, "%s-reserve.%ld", path, (long)getpid());
	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "store_open: %s", cause);

	fd = open(reserve, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "x", 1), 1);
	close(fd);
	store_reserve(st);
	cr_assert_eq(stat(reserve, &sb), 0, "no reserve");
	cr_assert_eq(sb.st_size, STORE_RESERVE, "a leftover of %lld bytes "
	    "was kept", (long long)sb.st_size);
	store_release(st);
	cr_assert_neq(stat(reserve, &sb), 0, "released");

	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "precious", 8), 8);
	close(fd);
	cr_assert_eq(symlink(victim, reserve), 0);
	store_reserve(st);
	cr_assert_eq(lstat(reserve, &sb), 0);
	cr_assert(S_ISREG(sb.st_mode), "the link was replaced by a file");
	cr_assert_eq(sb.st_size, STORE_RESERVE);
	cr_assert_eq(stat(victim, &sb), 0);
	cr_assert_eq(sb.st_size, 8, "the link's target is untouched");
	cr_assert_eq(sb.st_mode & 07777, 0644);
	store_release(st);
	store_close(st);
	free(reserve);
	free(victim);
	free(path);
}

/* A new file carries the current schema version and its tables. */
Test(store, schema_version, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	sqlite3		*db;
	char		*path, *cause = NULL;

	path = store_test_path("rec.db");
	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "store_open: %s", cause);
	store_close(st);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM sqlite_master "
	    "WHERE name IN ('sessions', 'messages', 'events', 'exchanges', "
	    "'faults')"), 5);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM sessions"), 0);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM "
	    "pragma_table_info('http_exchanges') WHERE name IN "
	    "('request_trailers', 'response_trailers')"), 2);
	sqlite3_close(db);

	/* Opened again, without STORE_CREATE, it is left as it is. */
	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "reopen: %s", cause);
	store_close(st);
	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	sqlite3_close(db);
	free(path);
}

/*
 * A version 5 file, the schema that came before faults (less the comments),
 * with a session of two messages over HTTP, one of them cut and redacted.
 */
static const char store_v5_sql[] =
    "CREATE TABLE sessions (id INTEGER PRIMARY KEY, name TEXT,"
    " transport TEXT NOT NULL, target TEXT NOT NULL,"
    " started_ns INTEGER NOT NULL, ended_ns INTEGER, exit_status INTEGER,"
    " exit_signal INTEGER, end_reason TEXT,"
    " messages_lost INTEGER NOT NULL DEFAULT 0, store_error TEXT,"
    " imported_from TEXT, recorder_pid INTEGER, mcpreel_version TEXT,"
    " origin TEXT NOT NULL DEFAULT 'record');"
    "CREATE TABLE messages (id INTEGER PRIMARY KEY,"
    " session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL, direction TEXT NOT NULL CHECK (direction ="
    " 'c2s' OR direction = 's2c'), ts_ns INTEGER NOT NULL,"
    " mono_ns INTEGER NOT NULL, kind TEXT NOT NULL, method TEXT,"
    " rpc_id TEXT, reply_to INTEGER REFERENCES messages(id),"
    " size INTEGER NOT NULL,"
    " http_exchange_id INTEGER REFERENCES http_exchanges(id),"
    " sse_event_id TEXT, wire_size INTEGER, sha256 TEXT,"
    " truncated INTEGER NOT NULL DEFAULT 0,"
    " redacted INTEGER NOT NULL DEFAULT 0, raw BLOB NOT NULL,"
    " UNIQUE (session_id, seq));"
    "CREATE INDEX messages_reply_to ON messages(reply_to)"
    " WHERE reply_to IS NOT NULL;"
    "CREATE TABLE events (id INTEGER PRIMARY KEY,"
    " session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " ts_ns INTEGER NOT NULL, mono_ns INTEGER NOT NULL, kind TEXT NOT NULL,"
    " text BLOB NOT NULL);"
    "CREATE INDEX events_session ON events(session_id, mono_ns);"
    "CREATE TABLE http_exchanges (id INTEGER PRIMARY KEY,"
    " session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " connection INTEGER NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL,"
    " request_headers TEXT NOT NULL, started_ns INTEGER NOT NULL,"
    " mono_ns INTEGER NOT NULL, status INTEGER, response_headers TEXT,"
    " response_mono_ns INTEGER, ended_ns INTEGER, outcome TEXT, body BLOB,"
    " request_trailers TEXT, response_trailers TEXT);"
    "CREATE INDEX http_exchanges_session ON http_exchanges(session_id);"
    "CREATE VIEW exchanges AS SELECT q.session_id AS session_id,"
    " r.mono_ns - q.mono_ns AS latency_ns FROM messages q"
    " LEFT JOIN messages r ON r.reply_to = q.id WHERE q.kind = 'request';"
    "INSERT INTO sessions (id, transport, target, started_ns, origin)"
    " VALUES (1, 'http', 'http://x/', 1, 'record');"
    "INSERT INTO events VALUES (3, 1, 5, 50, 'note', 'hello');"
    "INSERT INTO http_exchanges (id, session_id, connection, method, path,"
    " request_headers, started_ns, mono_ns, status, response_trailers)"
    " VALUES (4, 1, 1, 'POST', '/mcp', '[]', 9, 90, 200, '[[\"a\",\"b\"]]');"
    "INSERT INTO messages VALUES (7, 1, 1, 'c2s', 10, 100, 'request',"
    " 'ping', '1', NULL, 5, 4, NULL, NULL, NULL, 0, 0, X'7265713a31');"
    "INSERT INTO messages VALUES (9, 1, 2, 's2c', 11, 142, 'response',"
    " 'ping', '1', 7, 5, 4, 'ev-2', 900, 'abcd', 1, 1, X'7265733a31');"
    "PRAGMA user_version = 5;";

/*
 * Opening a version 5 file migrates it to 6: a faults table, messages'
 * fault and fault_role before raw (which stays last), http_exchanges'
 * fault; every row keeps its columns, the view and the foreign keys
 * hold, and the new columns take what the writer would write.
 */
Test(store, migrate_v5, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	sqlite3		*db;
	char		*path, *cause = NULL;

	path = store_test_path("v5.db");
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, store_v5_sql, NULL, NULL, NULL),
	    SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "store_open: %s", cause);
	store_close(st);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	cr_assert_eq(store_test_int(db, "SELECT cid FROM "
	    "pragma_table_info('messages') WHERE name = 'raw'"),
	    store_test_int(db, "SELECT max(cid) FROM "
	    "pragma_table_info('messages')"), "raw is not the last column");
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM "
	    "pragma_table_info('messages') WHERE name IN ('fault', "
	    "'fault_role')"), 2);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM "
	    "pragma_table_info('http_exchanges') WHERE name = 'fault'"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM "
	    "pragma_table_info('faults')"), 12);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages"), 2);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages WHERE "
	    "id = 7 AND raw = X'7265713a31' AND kind = 'request' AND "
	    "http_exchange_id = 4 AND fault IS NULL AND fault_role IS NULL"),
	    1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages WHERE "
	    "id = 9 AND reply_to = 7 AND raw = X'7265733a31' AND "
	    "sse_event_id = 'ev-2' AND wire_size = 900 AND sha256 = 'abcd' "
	    "AND truncated = 1 AND redacted = 1"), 1);
	cr_assert_eq(store_test_int(db, "SELECT latency_ns FROM exchanges"),
	    42);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM events WHERE "
	    "id = 3 AND text = 'hello'"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM http_exchanges "
	    "WHERE id = 4 AND status = 200 AND fault IS NULL AND "
	    "response_trailers = '[[\"a\",\"b\"]]'"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM sqlite_master "
	    "WHERE name IN ('messages_v6', 'messages_reply_to')"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM "
	    "pragma_foreign_key_check"), 0,
	    "a dangling reference after the migration");
	sqlite3_close(db);

	/* The check on fault_role came along. */
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_neq(sqlite3_exec(db, "UPDATE messages SET fault_role = "
	    "'other' WHERE id = 7", NULL, NULL, NULL), SQLITE_OK,
	    "fault_role took a value outside its CHECK");
	cr_assert_eq(sqlite3_exec(db, "UPDATE messages SET fault = 1, "
	    "fault_role = 'delayed' WHERE id = 7", NULL, NULL, NULL),
	    SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);
	free(path);
}

/* A version 2 file (raw in the middle of messages) as mcpreel 0.1 wrote it. */
static const char store_v2_sql[] =
    "CREATE TABLE sessions (id INTEGER PRIMARY KEY, name TEXT,"
    " transport TEXT NOT NULL, target TEXT NOT NULL,"
    " started_ns INTEGER NOT NULL, ended_ns INTEGER, exit_status INTEGER,"
    " exit_signal INTEGER, end_reason TEXT,"
    " messages_lost INTEGER NOT NULL DEFAULT 0, recorder_pid INTEGER,"
    " mcpreel_version TEXT);"
    "CREATE TABLE messages (id INTEGER PRIMARY KEY,"
    " session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL, direction TEXT NOT NULL, ts_ns INTEGER NOT NULL,"
    " mono_ns INTEGER NOT NULL, kind TEXT NOT NULL, method TEXT,"
    " rpc_id TEXT, reply_to INTEGER REFERENCES messages(id),"
    " size INTEGER NOT NULL, raw BLOB NOT NULL,"
    " http_exchange_id INTEGER, sse_event_id TEXT,"
    " UNIQUE (session_id, seq));"
    "CREATE INDEX messages_reply_to ON messages(reply_to);"
    "CREATE TABLE events (id INTEGER PRIMARY KEY, session_id INTEGER,"
    " ts_ns INTEGER, mono_ns INTEGER, kind TEXT, text BLOB);"
    "CREATE TABLE http_exchanges (id INTEGER PRIMARY KEY, session_id INTEGER,"
    " connection INTEGER, method TEXT, path TEXT, request_headers TEXT,"
    " started_ns INTEGER, mono_ns INTEGER, status INTEGER,"
    " response_headers TEXT, response_mono_ns INTEGER, ended_ns INTEGER,"
    " outcome TEXT, body BLOB);"
    "CREATE VIEW exchanges AS SELECT q.session_id AS session_id,"
    " r.mono_ns - q.mono_ns AS latency_ns FROM messages q"
    " LEFT JOIN messages r ON r.reply_to = q.id WHERE q.kind = 'request';"
    "INSERT INTO sessions (id, transport, target, started_ns)"
    " VALUES (1, 'stdio', '[\"srv\"]', 1);"
    "INSERT INTO sessions (id, name, transport, target, started_ns,"
    " end_reason) VALUES (2, 'replay of 1', 'stdio', '(replay)', 2,"
    " 'replay finished'), (3, 'mock fallback of 1', 'stdio', 'node', 3,"
    " 'mock stopped'), (4, 'mine', 'http', 'http://x/', 4,"
    " 'replay could not run');"
    "INSERT INTO sessions (id, name, transport, target, started_ns)"
    " VALUES (5, 'mock fallback of 1', 'stdio', 'node', 5);"
    "INSERT INTO messages VALUES (7, 1, 1, 'c2s', 10, 100, 'request',"
    " 'ping', '1', NULL, 5, X'7265713a31', NULL, NULL);"
    "INSERT INTO messages VALUES (9, 1, 2, 's2c', 11, 142, 'response',"
    " 'ping', '1', 7, 5, X'7265733a31', NULL, 'ev-2');"
    "PRAGMA user_version = 2;";

/*
 * Opening a version 2 file migrates it: raw becomes the last column of
 * messages, every row keeps its id, bytes and pairing, the view works;
 * sessions get their origin.
 */
Test(store, migrate_v2, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	sqlite3		*db;
	char		*path, *cause = NULL;

	path = store_test_path("v2.db");
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, store_v2_sql, NULL, NULL, NULL),
	    SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "store_open: %s", cause);
	store_close(st);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	cr_assert_eq(store_test_int(db, "SELECT cid FROM "
	    "pragma_table_info('messages') WHERE name = 'raw'"),
	    store_test_int(db, "SELECT max(cid) FROM "
	    "pragma_table_info('messages')"), "raw is not the last column");
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages"), 2);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages WHERE "
	    "id = 7 AND raw = X'7265713a31' AND kind = 'request'"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages WHERE "
	    "id = 9 AND reply_to = 7 AND raw = X'7265733a31' AND "
	    "sse_event_id = 'ev-2'"), 1);
	cr_assert_eq(store_test_int(db, "SELECT latency_ns FROM exchanges"),
	    42);
	/* What made each session, from what older files said in words. */
	cr_assert_eq(store_test_int(db, "SELECT group_concat(origin, ' ') "
	    "= 'record replay mock replay mock' FROM (SELECT origin FROM "
	    "sessions ORDER BY id)"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM sqlite_master "
	    "WHERE name IN ('messages_v3')"), 0);
	/* 4 -> 5: trailer columns, empty. */
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM "
	    "pragma_table_info('http_exchanges') WHERE name IN "
	    "('request_trailers', 'response_trailers')"), 2);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM "
	    "pragma_foreign_key_check"), 0,
	    "a dangling reference after the migration");
	sqlite3_close(db);
	free(path);
}

/* Without STORE_CREATE a missing file is an error naming it. */
Test(store, missing_without_create, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	struct stat	 sb;
	char		*path, *cause = NULL;

	path = store_test_path("nothing/here.db");
	st = store_open(path, 0, &cause);
	cr_assert_null(st);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, path), "cause: %s", cause);
	cr_assert_neq(stat(path, &sb), 0, "the file was created");
	free(cause);
	free(path);
}

/* A file that is not a database is refused with a reason. */
Test(store, not_a_database, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	char		*path, *cause = NULL, text[4096];
	FILE		*f;

	path = store_test_path("notes.txt");
	f = fopen(path, "w");
	cr_assert_not_null(f);
	memset(text, 'x', sizeof text);
	cr_assert_eq(fwrite(text, 1, sizeof text, f), sizeof text);
	fclose(f);

	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_null(st);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, path), "cause: %s", cause);
	cr_assert_not_null(strstr(cause, "not a database"), "cause: %s",
	    cause);
	free(cause);
	free(path);
}

/* A file from a newer mcpreel is refused, saying so. */
Test(store, newer_schema, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	sqlite3		*db;
	char		*path, *sql, *cause = NULL;

	path = store_test_path("new.db");
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	xasprintf(&sql, "CREATE TABLE t (x); PRAGMA user_version = %d",
	    STORE_SCHEMA_VERSION + 1);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	free(sql);

	st = store_open(path, 0, &cause);
	cr_assert_null(st);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, "newer"), "cause: %s", cause);
	free(cause);
	free(path);
}

/*
 * One recorded session as data: messages in both directions (with the
 * pairing each should get) and events between them.  The same id is in
 * flight both ways at once, a response comes back the way its request
 * went, one is answered twice, and some raw bytes are no text at all.
 */
struct rec_step {
	const char	*event;		/* an event of this kind, or NULL */
	enum dir	 dir;
	const char	*raw;
	size_t		 len;
	const char	*kind;
	const char	*method;	/* as stored: a response's request's */
	const char	*rpc_id;
	int		 reply_seq;	/* seq of the request answered, or 0 */
};

#define RAW(s)	(s), sizeof(s) - 1
#define C2S	DIR_C2S
#define S2C	DIR_S2C

static const struct rec_step rec_steps[] = {
	{ "spawn", S2C, RAW("[\"server\",\"--stdio\"]"), NULL, NULL, NULL,
	  0 },
	{ NULL, C2S, RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	  "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}"),
	  "request", "initialize", "1", 0 },
	{ NULL, S2C, RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	  "\"sampling/createMessage\",\"params\":{\"maxTokens\":9}}"),
	  "request", "sampling/createMessage", "1", 0 },
	{ "stderr", S2C, RAW("warn: \xff\xfe odd \0 bytes"), NULL, NULL,
	  NULL, 0 },
	{ NULL, C2S, RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	  "{\"role\":\"assistant\"}}"),
	  "response", "sampling/createMessage", "1", 2 },
	{ NULL, S2C, RAW("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	  "{\"protocolVersion\":\"2025-06-18\"}}"),
	  "response", "initialize", "1", 1 },
	{ NULL, C2S, RAW("{\"jsonrpc\":\"2.0\",\"method\":"
	  "\"notifications/initialized\"}"),
	  "notification", "notifications/initialized", NULL, 0 },
	{ NULL, C2S, RAW("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":"
	  "\"tools\\/call\",\"params\":{\"name\":\"echo\"}}"),
	  "request", "tools/call", "\"a\\\"b\"", 0 },
	{ NULL, C2S, RAW("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}"),
	  "request", "ping", "7", 0 },
	{ NULL, S2C, RAW("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"error\":"
	  "{\"code\":-32602,\"message\":\"bad\"}}"),
	  "error", "tools/call", "\"a\\\"b\"", 6 },
	{ NULL, C2S, RAW("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"),
	  "response", NULL, "7", 0 },
	{ NULL, S2C, RAW("{\"jsonrpc\":\"2.0\", \"id\" : 7,\"result\":{}}"),
	  "response", "ping", "7", 7 },
	{ NULL, S2C, RAW("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"),
	  "response", NULL, "7", 0 },
	{ NULL, C2S, RAW("[{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
	  "\"ping\"}]"),
	  "batch", NULL, NULL, 0 },
	{ NULL, C2S, RAW("\xff\0{\"id\":9}\0\xfe"), "invalid", NULL, NULL, 0 },
	{ NULL, S2C, RAW(""), "invalid", NULL, NULL, 0 },
	{ NULL, C2S, RAW("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":"
	  "\"tools/list\"}"),
	  "request", "tools/list", "10", 0 },
	{ "exit", S2C, RAW("killed by signal 9"), NULL, NULL, NULL, 0 },
};
#define REC_NSTEPS	(sizeof rec_steps / sizeof rec_steps[0])
#define REC_NMSGS	15

/* What recording rec_steps left behind that the database cannot say. */
struct rec_result {
	int64_t		session;
	int64_t		mono[REC_NSTEPS];	/* each message's stamp */
	int64_t		bytes;
};

/*
 * Record rec_steps as session "steps" into a new database at path, every
 * step stamped strictly after the one before, and end the session as a
 * server killed by SIGKILL would.
 */
static void
store_test_record(const char *path, struct rec_result *res)
{
	const struct rec_step	*r;
	struct writer		*w = store_test_writer(path);
	struct wsession		*s;
	struct msg		*m;
	struct scan		 sc;
	size_t			 i, nmsgs = 0;

	memset(res, 0, sizeof *res);
	s = writer_session_begin(w, "steps", "stdio", "[\"server\"]");
	for (i = 0; i < REC_NSTEPS; i++) {
		r = &rec_steps[i];
		store_test_tick();
		if (r->event != NULL) {
			writer_event(w, s, r->event, r->raw, r->len);
			continue;
		}
		m = msg_new(r->dir, r->raw, r->len);
		res->mono[i] = m->mono_ns;
		res->bytes += (int64_t)r->len;
		/*
		 * Taken either way; 1 only asks a live producer to pause.
		 * Every other message is classified here, as the stdio tap
		 * does (writer_scan): the rows must not tell them apart.
		 */
		if (i % 2 == 0)
			(void)writer_message(w, s, NULL, m);
		else {
			writer_scan(m, &sc);
			(void)writer_message_scanned(w, s, NULL, m, &sc);
		}
		nmsgs++;
	}
	cr_assert_eq(nmsgs, REC_NMSGS);
	writer_session_end(w, s, 137, 9, "server killed by signal 9");
	writer_stop(w);
	res->session = writer_session_id(s);
	cr_assert_gt(res->session, 0);
	cr_assert_eq(writer_session_lost(s), 0);
	writer_session_free(s);
}

/* Compare a text column with what is expected, NULL meaning SQL NULL. */
static void
store_test_text(sqlite3_stmt *stmt, int col, const char *want, size_t seq)
{
	const char	*got = (const char *)sqlite3_column_text(stmt, col);

	if (want == NULL)
		cr_assert_eq(sqlite3_column_type(stmt, col), SQLITE_NULL,
		    "seq %zu column %d: '%s', want NULL", seq, col, got);
	else {
		cr_assert_not_null(got, "seq %zu column %d: NULL, want '%s'",
		    seq, col, want);
		cr_assert_str_eq(got, want, "seq %zu column %d", seq, col);
	}
}

/*
 * Every message is a row, in order from seq 1, with its direction, kind,
 * method, id, the request it answers, and its bytes exactly.
 */
Test(store, writer_records_messages, .timeout = UNIT_TIMEOUT)
{
	struct rec_result	 res;
	const struct rec_step	*r;
	sqlite3			*db;
	sqlite3_stmt		*stmt;
	char			*path = store_test_path("rec.db");
	const void		*raw;
	size_t			 i, seq = 0;

	store_test_record(path, &res);
	db = store_test_sqlite(path);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT m.seq, m.direction, "
	    "m.kind, m.method, m.rpc_id, q.seq, m.size, m.raw, m.mono_ns, "
	    "m.reply_to IS NULL FROM messages m LEFT JOIN messages q ON "
	    "q.id = m.reply_to WHERE m.session_id = ?1 ORDER BY m.seq", -1,
	    &stmt, NULL), SQLITE_OK);
	sqlite3_bind_int64(stmt, 1, res.session);
	for (i = 0; i < REC_NSTEPS; i++) {
		r = &rec_steps[i];
		if (r->event != NULL)
			continue;
		seq++;
		cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW, "row %zu missing",
		    seq);
		cr_assert_eq(sqlite3_column_int64(stmt, 0), (int64_t)seq);
		store_test_text(stmt, 1, dir_name(r->dir), seq);
		store_test_text(stmt, 2, r->kind, seq);
		store_test_text(stmt, 3, r->method, seq);
		store_test_text(stmt, 4, r->rpc_id, seq);
		if (r->reply_seq == 0)
			cr_assert_eq(sqlite3_column_int(stmt, 9), 1,
			    "seq %zu answers something", seq);
		else
			cr_assert_eq(sqlite3_column_int(stmt, 5),
			    r->reply_seq, "seq %zu answers seq %d, want %d",
			    seq, sqlite3_column_int(stmt, 5), r->reply_seq);
		cr_assert_eq(sqlite3_column_int64(stmt, 6), (int64_t)r->len);
		cr_assert_eq(sqlite3_column_type(stmt, 7), SQLITE_BLOB,
		    "seq %zu raw is not a blob", seq);
		raw = sqlite3_column_blob(stmt, 7);
		cr_assert_eq((size_t)sqlite3_column_bytes(stmt, 7), r->len);
		if (r->len > 0)
			cr_assert_eq(memcmp(raw, r->raw, r->len), 0,
			    "seq %zu raw differs", seq);
		cr_assert_eq(sqlite3_column_int64(stmt, 8), res.mono[i]);
	}
	cr_assert_eq(sqlite3_step(stmt), SQLITE_DONE, "rows beyond %zu", seq);
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	free(path);
}

/* Events are rows with their kind and exact bytes; the end is recorded. */
Test(store, writer_records_events_and_end, .timeout = UNIT_TIMEOUT)
{
	struct rec_result	 res;
	const struct rec_step	*r;
	sqlite3			*db;
	sqlite3_stmt		*stmt;
	char			*path = store_test_path("rec.db");
	size_t			 i, n = 0;

	store_test_record(path, &res);
	db = store_test_sqlite(path);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT kind, text FROM events "
	    "WHERE session_id = ?1 ORDER BY id", -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_int64(stmt, 1, res.session);
	for (i = 0; i < REC_NSTEPS; i++) {
		r = &rec_steps[i];
		if (r->event == NULL)
			continue;
		cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
		store_test_text(stmt, 0, r->event, i);
		cr_assert_eq((size_t)sqlite3_column_bytes(stmt, 1), r->len);
		cr_assert_eq(memcmp(sqlite3_column_blob(stmt, 1), r->raw,
		    r->len), 0, "event %s text differs", r->event);
		n++;
	}
	cr_assert_eq(sqlite3_step(stmt), SQLITE_DONE);
	cr_assert_eq(n, 3);
	sqlite3_finalize(stmt);

	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT name, transport, target, "
	    "ended_ns >= started_ns, exit_status, exit_signal, end_reason, "
	    "messages_lost, recorder_pid, mcpreel_version FROM sessions "
	    "WHERE id = ?1", -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_int64(stmt, 1, res.session);
	cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
	store_test_text(stmt, 0, "steps", 0);
	store_test_text(stmt, 1, "stdio", 0);
	store_test_text(stmt, 2, "[\"server\"]", 0);
	cr_assert_eq(sqlite3_column_int(stmt, 3), 1, "ended before it began");
	cr_assert_eq(sqlite3_column_int(stmt, 4), 137);
	cr_assert_eq(sqlite3_column_int(stmt, 5), 9);
	store_test_text(stmt, 6, "server killed by signal 9", 0);
	cr_assert_eq(sqlite3_column_int(stmt, 7), 0);
	cr_assert_eq(sqlite3_column_int64(stmt, 8), (int64_t)getpid());
	store_test_text(stmt, 9, MCPREEL_VERSION, 0);
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	free(path);
}

/* Collect what query_sessions reports (an arg for its callback). */
struct sessions_seen {
	int			n;
	struct session_row	row[8];
	char			name[8][32];
	char			reason[8][64];
};

/* Copy one session row, with its strings, into a sessions_seen. */
static int
store_test_session_cb(const struct session_row *r, void *arg)
{
	struct sessions_seen	*seen = arg;

	cr_assert_lt(seen->n, 8);
	seen->row[seen->n] = *r;
	seen->row[seen->n].name = NULL;
	seen->row[seen->n].end_reason = NULL;
	seen->row[seen->n].transport = NULL;
	seen->row[seen->n].target = NULL;
	snprintf(seen->name[seen->n], sizeof seen->name[0], "%s",
	    r->name != NULL ? r->name : "(null)");
	snprintf(seen->reason[seen->n], sizeof seen->reason[0], "%s",
	    r->end_reason != NULL ? r->end_reason : "(null)");
	seen->n++;
	return 0;
}

/*
 * A session that ends without an exit status stores NULLs, and
 * query_sessions reports both sessions with their counts.
 */
Test(store, session_end_and_list, .timeout = UNIT_TIMEOUT)
{
	struct sessions_seen	 seen;
	struct writer		*w;
	struct wsession		*s;
	struct store		*st;
	char			*path = store_test_path("rec.db");
	char			*cause = NULL;
	const char		*text =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}";
	int64_t			 first, second;

	w = store_test_writer(path);
	s = writer_session_begin(w, NULL, "stdio", "[\"a\"]");
	writer_message(w, s, NULL, msg_new(DIR_C2S, text, strlen(text)));
	writer_message(w, s, NULL, msg_new(DIR_S2C, text, strlen(text)));
	writer_session_end(w, s, 0, 0, "server exited");
	writer_stop(w);
	first = writer_session_id(s);
	writer_session_free(s);

	w = store_test_writer(path);
	s = writer_session_begin(w, "two", "stdio", "[\"b\"]");
	writer_session_end(w, s, -1, 0, NULL);
	writer_stop(w);
	second = writer_session_id(s);
	writer_session_free(s);
	cr_assert_gt(second, first);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_sessions(st, 0, store_test_session_cb, &seen,
	    &cause), 0, "%s", cause);
	cr_assert_eq(seen.n, 2);
	cr_assert_eq(seen.row[0].id, first);
	cr_assert_str_eq(seen.name[0], "(null)");
	cr_assert_eq(seen.row[0].messages, 2);
	cr_assert_eq(seen.row[0].bytes, 2 * (int64_t)strlen(text));
	cr_assert(seen.row[0].has_exit);
	cr_assert_eq(seen.row[0].exit_status, 0);
	cr_assert_eq(seen.row[0].exit_signal, 0);
	cr_assert_gt(seen.row[0].ended_ns, 0);
	cr_assert_str_eq(seen.reason[0], "server exited");

	cr_assert_eq(seen.row[1].id, second);
	cr_assert_str_eq(seen.name[1], "two");
	cr_assert_eq(seen.row[1].messages, 0);
	cr_assert_not(seen.row[1].has_exit, "exit status -1 was stored");
	cr_assert_str_eq(seen.reason[1], "(null)");

	/* Only the one asked for. */
	memset(&seen, 0, sizeof seen);
	cr_assert_eq(query_sessions(st, second, store_test_session_cb, &seen,
	    &cause), 0);
	cr_assert_eq(seen.n, 1);
	cr_assert_eq(seen.row[0].id, second);
	store_close(st);
	free(path);
}

/*
 * Opening a version 6 file (made here as a current one less the column)
 * migrates it to 7: sessions.otlp_dropped, client_address and
 * client_port, NULL for the sessions it had
 * (they were not exported), the other columns kept.
 */
Test(store, migrate_v6, .timeout = UNIT_TIMEOUT)
{
	struct store	*st;
	sqlite3		*db;
	char		*path = store_test_path("v6.db"), *cause = NULL;

	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "%s", cause);
	store_close(st);
	/* The table is empty: its definition can be that of version 6. */
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "PRAGMA writable_schema = ON; "
	    "UPDATE sqlite_master SET sql = 'CREATE TABLE sessions (id "
	    "INTEGER PRIMARY KEY, name TEXT, transport TEXT NOT NULL, target "
	    "TEXT NOT NULL, started_ns INTEGER NOT NULL, ended_ns INTEGER, "
	    "exit_status INTEGER, exit_signal INTEGER, end_reason TEXT, "
	    "messages_lost INTEGER NOT NULL DEFAULT 0, store_error TEXT, "
	    "imported_from TEXT, recorder_pid INTEGER, mcpreel_version TEXT, "
	    "origin TEXT NOT NULL DEFAULT ''record'')' WHERE type = 'table' "
	    "AND name = 'sessions'; PRAGMA writable_schema = OFF; "
	    "PRAGMA user_version = 6;", NULL, NULL, NULL), SQLITE_OK,
	    "%s", sqlite3_errmsg(db));
	sqlite3_close(db);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "INSERT INTO sessions (id, transport, "
	    "target, started_ns, messages_lost) VALUES (3, 'stdio', "
	    "'[\"s\"]', 5, 2)", NULL, NULL, NULL), SQLITE_OK, "%s",
	    sqlite3_errmsg(db));
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM "
	    "pragma_table_info('sessions') WHERE name = 'otlp_dropped'"), 0);
	sqlite3_close(db);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "store_open: %s", cause);
	store_close(st);
	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "PRAGMA user_version"), 7);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM sessions "
	    "WHERE id = 3 AND otlp_dropped IS NULL AND client_address IS NULL "
	    "AND client_port IS NULL AND messages_lost = 2 AND "
	    "started_ns = 5"), 1);
	sqlite3_close(db);
	free(path);
}

/*
 * writer_session_otlp_dropped() sets the session's otlp_dropped (after
 * its end, as record does it); a session without one keeps NULL.
 */
Test(store, writer_otlp_dropped, .timeout = UNIT_TIMEOUT)
{
	struct writer	*w;
	struct wsession	*s, *t;
	sqlite3		*db;
	char		*path = store_test_path("otlp.db");
	int		 tag;

	w = store_test_writer(path);
	s = writer_session_begin(w, "a", "stdio", "[\"a\"]");
	t = writer_session_begin(w, "b", "stdio", "[\"b\"]");
	writer_session_set_tag(s, &tag);
	cr_assert_eq(writer_session_tag(s), &tag);
	cr_assert_null(writer_session_tag(t));
	writer_session_end(w, s, 0, 0, "done");
	writer_session_end(w, t, 0, 0, "done");
	writer_session_otlp_dropped(w, s, 42);
	writer_session_client(w, s, "::1", 5151);
	writer_stop(w);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "SELECT otlp_dropped FROM sessions "
	    "WHERE name = 'a'"), 42);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM sessions "
	    "WHERE name = 'b' AND otlp_dropped IS NULL"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM sessions "
	    "WHERE name = 'a' AND client_address = '::1' AND "
	    "client_port = 5151"), 1);
	sqlite3_close(db);
	writer_session_free(s);
	writer_session_free(t);
	free(path);
}

/*
 * Everything queued is written before writer_stop returns: many more
 * messages than fit under the high mark, stopped at once.
 */
Test(store, stop_drains_queue, .timeout = UNIT_TIMEOUT)
{
	struct writer	*w;
	struct wsession	*s;
	sqlite3		*db;
	char		*path = store_test_path("many.db"), text[96];
	int		 i, n;
	int64_t		 id;

	w = store_test_writer(path);
	s = writer_session_begin(w, "many", "stdio", "[]");
	for (i = 0; i < STORE_MANY; i++) {
		n = snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\","
		    "\"method\":\"notifications/progress\",\"params\":"
		    "{\"progress\":%d}}", i);
		writer_message(w, s, NULL, msg_new(i % 2 ? DIR_S2C : DIR_C2S,
		    text, (size_t)n));
	}
	writer_session_end(w, s, 0, 0, "done");
	writer_stop(w);
	id = writer_session_id(s);
	cr_assert_eq(writer_session_lost(s), 0);
	writer_session_free(s);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages"),
	    STORE_MANY);
	cr_assert_eq(store_test_int(db, "SELECT count(DISTINCT seq) FROM "
	    "messages"), STORE_MANY);
	cr_assert_eq(store_test_int(db, "SELECT min(seq) FROM messages"), 1);
	cr_assert_eq(store_test_int(db, "SELECT max(seq) FROM messages"),
	    STORE_MANY);
	/* In queue order: seq i + 1 holds progress i. */
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages WHERE "
	    "json_extract(CAST(raw AS TEXT), '$.params.progress') != "
	    "seq - 1"), 0);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages WHERE "
	    "direction = 's2c'"), STORE_MANY / 2);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM sessions WHERE "
	    "end_reason = 'done' AND ended_ns IS NOT NULL"), 1);
	cr_assert_gt(id, 0);
	sqlite3_close(db);
	free(path);
}

/* What the drain callback has seen, shared with the writer thread. */
struct drain_seen {
	pthread_mutex_t	lock;
	int		calls;
};

/* Count a drain callback (it runs on the writer thread). */
static void
store_test_drain_cb(void *arg)
{
	struct drain_seen	*d = arg;

	pthread_mutex_lock(&d->lock);
	d->calls++;
	pthread_mutex_unlock(&d->lock);
}

/*
 * Past the high mark writer_message asks the producer to pause, and the
 * drain callback says when to go on; nothing queued meanwhile is lost.
 */
Test(store, pause_and_drain, .timeout = UNIT_TIMEOUT)
{
	struct drain_seen	 d;
	struct writer		*w;
	struct wsession		*s;
	struct timespec		 ts = { 0, 1000000 };
	sqlite3			*db;
	char			*path = store_test_path("pause.db");
	const char		*text =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}";
	int			 i, paused = 0, calls = 0;
	int64_t			 n = 0;

	pthread_mutex_init(&d.lock, NULL);
	d.calls = 0;
	w = store_test_writer(path);
	writer_set_drain_cb(w, store_test_drain_cb, &d);
	s = writer_session_begin(w, NULL, "stdio", "[]");
	/* The producer is far faster than SQLite: it must hit the mark. */
	while (!paused && n < 10 * STORE_MANY) {
		paused = writer_message(w, s, NULL, msg_new(DIR_C2S, text,
		    strlen(text)));
		n++;
	}
	cr_assert(paused, "never asked to pause after %lld messages",
	    (long long)n);
	for (i = 0; i < STORE_DRAIN_WAIT_MS && calls == 0; i++) {
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&d.lock);
		calls = d.calls;
		pthread_mutex_unlock(&d.lock);
	}
	cr_assert_eq(calls, 1, "drain callback called %d times", calls);

	/*
	 * Drained, the queue calls back no more until paused again.  Each
	 * message waits for the one before to be committed: on a loaded
	 * machine a writer kept off the CPU for WRITER_MAX_LAG_MS would
	 * rightly ask for a pause otherwise.
	 */
	for (i = 0; i < 10; i++) {
		writer_sync(w);
		cr_assert_eq(writer_message(w, s, NULL, msg_new(DIR_C2S, text,
		    strlen(text))), 0);
		n++;
	}
	writer_stop(w);
	cr_assert_eq(d.calls, 1, "drain callback called %d times", d.calls);
	writer_session_free(s);
	pthread_mutex_destroy(&d.lock);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages"), n);
	sqlite3_close(db);
	free(path);
}

/* "last", an id, a name (its newest session) and nonsense. */
Test(store, find_session, .timeout = UNIT_TIMEOUT)
{
	const char	*names[] = { "alpha", NULL, "alpha", "1", "beta" };
	struct writer	*w;
	struct wsession	*s[5];
	struct store	*st;
	char		*path = store_test_path("find.db"), *cause = NULL;
	char		 spec[32];
	int64_t		 id, ids[5];
	size_t		 i;

	/* An empty database has no last session. */
	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "%s", cause);
	cr_assert_eq(query_find_session(st, "last", &id, &cause), -1);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, "no recorded sessions"), "cause: %s",
	    cause);
	free(cause);
	cause = NULL;
	store_close(st);

	w = store_test_writer(path);
	for (i = 0; i < 5; i++)
		s[i] = writer_session_begin(w, names[i], "stdio", "[]");
	writer_stop(w);
	for (i = 0; i < 5; i++) {
		ids[i] = writer_session_id(s[i]);
		cr_assert_gt(ids[i], 0);
		if (i > 0)
			cr_assert_gt(ids[i], ids[i - 1]);
		writer_session_free(s[i]);
	}
	cr_assert_eq(ids[0], 1, "the first session is not id 1");

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);
	cr_assert_eq(query_find_session(st, "last", &id, &cause), 0);
	cr_assert_eq(id, ids[4]);
	cr_assert_eq(query_find_session(st, "alpha", &id, &cause), 0);
	cr_assert_eq(id, ids[2], "not the newest of the name");
	cr_assert_eq(query_find_session(st, "beta", &id, &cause), 0);
	cr_assert_eq(id, ids[4]);
	id = 0;
	snprintf(spec, sizeof spec, "%lld", (long long)ids[1]);
	cr_assert_eq(query_find_session(st, spec, &id, &cause), 0);
	cr_assert_eq(id, ids[1]);
	/* A number is an id first, a name only when no id matches. */
	cr_assert_eq(query_find_session(st, "1", &id, &cause), 0);
	cr_assert_eq(id, ids[0]);

	cr_assert_eq(query_find_session(st, "gamma", &id, &cause), -1);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, "'gamma'"), "cause: %s", cause);
	free(cause);
	cause = NULL;
	cr_assert_eq(query_find_session(st, "999", &id, &cause), -1);
	cr_assert_not_null(strstr(cause, "999"), "cause: %s", cause);
	free(cause);
	cause = NULL;
	cr_assert_eq(query_find_session(st, "", &id, &cause), -1);
	cr_assert_not_null(cause);
	free(cause);
	store_close(st);
	free(path);
}

/* What a timeline callback saw, checked against rec_steps as it goes. */
struct timeline_seen {
	const struct rec_result	*res;
	int			 with_events;
	size_t			 step;		/* the next rec_steps entry */
	size_t			 seq;
	int64_t			 last_mono;
};

/* Check one timeline row against the next step it should be. */
static int
store_test_timeline_cb(const struct timeline_row *t, void *arg)
{
	struct timeline_seen	*seen = arg;
	const struct rec_step	*r;
	size_t			 i;

	while (seen->step < REC_NSTEPS && !seen->with_events &&
	    rec_steps[seen->step].event != NULL)
		seen->step++;
	cr_assert_lt(seen->step, REC_NSTEPS, "more rows than steps");
	i = seen->step++;
	r = &rec_steps[i];
	if (r->event != NULL) {
		cr_assert(t->is_event, "step %zu: a message, want event %s",
		    i, r->event);
		cr_assert_str_eq(t->e.kind, r->event);
		cr_assert_eq(t->e.len, r->len);
		cr_assert_eq(memcmp(t->e.text, r->raw, r->len), 0);
		cr_assert_gt(t->e.mono_ns, seen->last_mono);
		seen->last_mono = t->e.mono_ns;
		return 0;
	}
	cr_assert_not(t->is_event, "step %zu: an event, want a message", i);
	seen->seq++;
	cr_assert_eq(t->m.seq, (int64_t)seen->seq);
	cr_assert_eq(t->m.dir, r->dir);
	cr_assert_str_eq(kind_name(t->m.kind), r->kind);
	if (r->method == NULL)
		cr_assert_null(t->m.method, "seq %zu method %s", seen->seq,
		    t->m.method);
	else
		cr_assert_str_eq(t->m.method, r->method);
	if (r->rpc_id == NULL)
		cr_assert_null(t->m.rpc_id);
	else
		cr_assert_str_eq(t->m.rpc_id, r->rpc_id);
	cr_assert_eq(t->m.len, r->len);
	if (r->len > 0)
		cr_assert_eq(memcmp(t->m.raw, r->raw, r->len), 0);
	cr_assert_eq(t->m.mono_ns, seen->res->mono[i]);
	cr_assert_gt(t->m.mono_ns, seen->last_mono);
	seen->last_mono = t->m.mono_ns;

	/* A paired response's latency is from its request; else -1. */
	if (r->reply_seq != 0) {
		size_t	j, q = 0;

		for (j = 0; j < REC_NSTEPS; j++) {
			if (rec_steps[j].event == NULL &&
			    ++q == (size_t)r->reply_seq)
				break;
		}
		cr_assert_lt(j, REC_NSTEPS);
		cr_assert_eq(t->m.latency_ns,
		    seen->res->mono[i] - seen->res->mono[j],
		    "seq %zu latency %lld", seen->seq,
		    (long long)t->m.latency_ns);
		cr_assert_gt(t->m.latency_ns, 0);
		cr_assert_eq(t->m.reply_seq, (int64_t)r->reply_seq);
	} else {
		cr_assert_eq(t->m.latency_ns, -1, "seq %zu latency %lld",
		    seen->seq, (long long)t->m.latency_ns);
		cr_assert_eq(t->m.reply_seq, 0);
	}
	return 0;
}

/* The timeline interleaves messages and events in the order they came. */
Test(store, timeline, .timeout = UNIT_TIMEOUT)
{
	struct rec_result	 res;
	struct timeline_seen	 seen;
	struct store		*st;
	char			*path = store_test_path("rec.db");
	char			*cause = NULL;

	store_test_record(path, &res);
	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "%s", cause);

	memset(&seen, 0, sizeof seen);
	seen.res = &res;
	seen.with_events = 1;
	cr_assert_eq(query_timeline(st, res.session, 1,
	    store_test_timeline_cb, &seen, &cause), 0, "%s", cause);
	cr_assert_eq(seen.step, REC_NSTEPS);
	cr_assert_eq(seen.seq, REC_NMSGS);

	memset(&seen, 0, sizeof seen);
	seen.res = &res;
	cr_assert_eq(query_timeline(st, res.session, 0,
	    store_test_timeline_cb, &seen, &cause), 0, "%s", cause);
	cr_assert_eq(seen.seq, REC_NMSGS);

	/* Another session's timeline is empty. */
	memset(&seen, 0, sizeof seen);
	seen.res = &res;
	seen.with_events = 1;
	cr_assert_eq(query_timeline(st, res.session + 1, 1,
	    store_test_timeline_cb, &seen, &cause), 0);
	cr_assert_eq(seen.step, 0);
	store_close(st);
	free(path);
}

/* The exchanges view pairs each request with its answer, or none. */
Test(store, exchanges_view, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*direction;
		const char	*method;
		int		 request_seq;
		int		 response_seq;	/* 0: unanswered */
		const char	*outcome;
	} want[] = {
		{ "c2s", "initialize", 1, 4, "response" },
		{ "s2c", "sampling/createMessage", 2, 3, "response" },
		{ "c2s", "tools/call", 6, 8, "error" },
		{ "c2s", "ping", 7, 10, "response" },
		{ "c2s", "tools/list", 15, 0, NULL },
	};
	struct rec_result	 res;
	sqlite3			*db;
	sqlite3_stmt		*stmt;
	char			*path = store_test_path("rec.db");
	size_t			 i;

	store_test_record(path, &res);
	db = store_test_sqlite(path);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT direction, method, "
	    "request_seq, response_seq, outcome, latency_ns FROM exchanges "
	    "WHERE session_id = ?1 ORDER BY request_seq", -1, &stmt, NULL),
	    SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_bind_int64(stmt, 1, res.session);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW, "row %zu", i);
		store_test_text(stmt, 0, want[i].direction, i);
		store_test_text(stmt, 1, want[i].method, i);
		cr_assert_eq(sqlite3_column_int(stmt, 2), want[i].request_seq);
		if (want[i].response_seq == 0) {
			cr_assert_eq(sqlite3_column_type(stmt, 3),
			    SQLITE_NULL);
			cr_assert_eq(sqlite3_column_type(stmt, 5),
			    SQLITE_NULL);
		} else {
			cr_assert_eq(sqlite3_column_int(stmt, 3),
			    want[i].response_seq, "row %zu", i);
			cr_assert_gt(sqlite3_column_int64(stmt, 5), 0);
		}
		store_test_text(stmt, 4, want[i].outcome, i);
	}
	cr_assert_eq(sqlite3_step(stmt), SQLITE_DONE, "more exchanges");
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	free(path);
}

/* A JSON-RPC ping with id n, for the lock tests. */
static struct msg *
store_test_ping(int n)
{
	char	buf[80];

	snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"ping\"}", n);
	return msg_new(DIR_C2S, buf, strlen(buf));
}

/*
 * A session that begins while another connection holds the write lock
 * past both bounded waits (the batch's, then the session row's own): the
 * messages of that time are counted lost, and once the lock is released
 * the session row is written after all and the rest is recorded.
 */
Test(store, lock_at_session_begin, .timeout = UNIT_TIMEOUT)
{
	struct wfault	 f;
	struct writer	*w;
	struct wsession	*s;
	sqlite3		*other;
	char		*path = store_test_path("lock.db");
	int		 i;

	w = store_test_writer(path);
	cr_assert_eq(sqlite3_open(path, &other), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL),
	    SQLITE_OK);
	s = writer_session_begin(w, "locked", "stdio", "[]");
	memset(&f, 0, sizeof f);
	f.n = writer_session_next_fault(s);
	f.rule = "method=ping drop";
	f.action = "drop";
	writer_fault(w, s, &f);
	writer_message(w, s, NULL, store_test_ping(1));
	sleep(2 * STORE_BUSY_TIMEOUT_MS / 1000 + 2);
	cr_assert_eq(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL),
	    SQLITE_OK);
	for (i = 10; i < 15; i++)
		writer_message(w, s, NULL, store_test_ping(i));
	writer_session_end(w, s, 0, 0, "done");
	writer_stop(w);
	cr_assert_neq(writer_session_id(s), 0, "the session row was never "
	    "written");
	cr_assert_eq(writer_session_lost(s), 1);
	cr_assert_eq(writer_session_faults_lost(s), 1, "the fault of the "
	    "locked batch is counted");
	writer_session_free(s);
	cr_assert_eq(store_test_int(other, "SELECT count(*) FROM messages"),
	    5);
	cr_assert_eq(store_test_int(other, "SELECT messages_lost FROM "
	    "sessions WHERE name = 'locked' AND ended_ns IS NOT NULL"), 1);
	sqlite3_close(other);
	free(path);
}

/* Whether the drain callback came, under d's lock. */
static int
store_test_drained(struct drain_seen *d)
{
	int	calls;

	pthread_mutex_lock(&d->lock);
	calls = d->calls;
	pthread_mutex_unlock(&d->lock);
	return calls;
}

/*
 * A producer paused for lag alone (a huge message being written) is let
 * go as soon as the writer starts waiting on another process's lock, not
 * when the lock is released: forwarding goes on meanwhile.
 */
Test(store, lock_lifts_lag_pause, .timeout = UNIT_TIMEOUT)
{
	struct drain_seen	 d;
	struct writer		*w;
	struct wsession		*s;
	struct timespec		 ts = { 0, 1000000 };
	sqlite3			*other;
	struct msg		*big;
	char			*path = store_test_path("lag.db"), *wal;
	struct stat		 sb;
	int64_t			 t0;
	int			 i, paused = 0;

	pthread_mutex_init(&d.lock, NULL);
	d.calls = 0;
	w = store_test_writer(path);
	writer_set_drain_cb(w, store_test_drain_cb, &d);
	s = writer_session_begin(w, NULL, "stdio", "[]");
	/* 24 MiB: under the byte mark, but long enough to write. */
	big = msg_alloc(DIR_C2S, 24u * 1024 * 1024);
	memset(big->raw, 'x', big->len);
	writer_message(w, s, NULL, big);
	for (i = 0; i < 2000 && !paused; i++) {
		nanosleep(&ts, NULL);
		paused = writer_message(w, s, NULL, store_test_ping(i));
	}
	cr_assert(paused, "not paused while a 24 MiB message was written");
	/*
	 * The lock must come once the writer has that message in hand (its
	 * pages reach the WAL): taken before its batch began, the wait
	 * would hold 24 MiB of queue, which rightly keeps the pause.
	 */
	if (asprintf(&wal, "%s-wal", path) == -1)
		cr_assert_fail("out of memory");
	for (i = 0; i < 20000 && (stat(wal, &sb) != 0 ||
	    sb.st_size < 4 * 1024 * 1024); i++)
		nanosleep(&ts, NULL);
	free(wal);
	cr_assert_eq(sqlite3_open(path, &other), SQLITE_OK);
	/* Taken as soon as the writer commits: its next batch must wait. */
	sqlite3_busy_timeout(other, 30000);
	for (i = 0; i < 100 && store_test_drained(&d) == 0; i++) {
		if (sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL,
		    NULL) == SQLITE_OK)
			break;
	}
	writer_message(w, s, NULL, store_test_ping(9999));
	t0 = clock_mono_ns();
	while (store_test_drained(&d) == 0 &&
	    clock_mono_ns() - t0 < (int64_t)STORE_BUSY_TIMEOUT_MS * 1000000)
		nanosleep(&ts, NULL);
	cr_assert_eq(store_test_drained(&d), 1, "the pause lasted the lock "
	    "wait");
	cr_assert_lt(clock_mono_ns() - t0, (int64_t)2000 * 1000000,
	    "the pause lasted %lld ms into the lock wait",
	    (long long)((clock_mono_ns() - t0) / 1000000));
	sqlite3_exec(other, "COMMIT", NULL, NULL, NULL);
	writer_stop(w);
	writer_session_free(s);
	sqlite3_close(other);
	pthread_mutex_destroy(&d.lock);
	free(path);
}

/* Record the c2s request (or, with answer, the s2c response) of id i. */
static void
store_test_rpc(struct writer *w, struct wsession *s, int i, int answer)
{
	char	buf[128];
	int	n;

	if (answer)
		n = snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{}}", i);
	else
		n = snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"tools/call\"}", i);
	cr_assert(n > 0 && (size_t)n < sizeof buf);
	(void)writer_message(w, s, NULL, msg_new(answer ? DIR_S2C : DIR_C2S,
	    buf, (size_t)n));
}

/*
 * A peer that never answers cannot grow the writer's map of requests
 * awaiting an answer without end: past WRITER_PENDING_MAX the oldest are
 * forgotten (their late answers recorded unpaired), while the newest
 * still pair with their answers.
 */
Test(store, pending_requests_bounded, .timeout = UNIT_TIMEOUT)
{
	struct writer	*w;
	struct wsession	*s;
	sqlite3		*db;
	char		*path = store_test_path("pending.db");
	int		 i, total = WRITER_PENDING_MAX + 1000;

	w = store_test_writer(path);
	s = writer_session_begin(w, "pending", "stdio", "[\"server\"]");
	for (i = 0; i < total; i++)
		store_test_rpc(w, s, i, 0);
	store_test_rpc(w, s, 0, 1);		/* the oldest: forgotten */
	store_test_rpc(w, s, total - 1, 1);	/* the newest: paired */
	writer_session_end(w, s, 0, 0, "done");
	writer_stop(w);
	writer_session_free(s);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages"),
	    total + 2, "every message is recorded, paired or not");
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages "
	    "WHERE kind = 'response' AND reply_to IS NULL AND rpc_id = '0' "
	    "AND method IS NULL"), 1, "the oldest request's answer pairs with "
	    "nothing");
	cr_assert_eq(store_test_int(db, "SELECT q.rpc_id FROM messages r "
	    "JOIN messages q ON q.id = r.reply_to WHERE r.kind = 'response'"),
	    total - 1, "the newest request's answer finds it");
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages r "
	    "WHERE r.kind = 'response' AND r.method = 'tools/call'"), 1);
	sqlite3_close(db);
	free(path);
}

/*
 * Long methods cannot get round the count: the map of unanswered requests
 * is bounded in bytes too, so 2 000 requests with 16 KiB methods keep
 * under WRITER_PENDING_BYTES, and the newest still pairs.
 */
Test(store, pending_requests_bounded_bytes, .timeout = UNIT_TIMEOUT)
{
	struct writer	*w;
	struct wsession	*s;
	sqlite3		*db;
	char		*path = store_test_path("pendbytes.db"), *buf, *meth;
	size_t		 mlen = 16 * 1024;
	int		 i, n, total = 2000;

	meth = xmalloc(mlen + 1);
	memset(meth, 'm', mlen);
	meth[mlen] = '\0';
	buf = xmalloc(mlen + 128);
	w = store_test_writer(path);
	s = writer_session_begin(w, "pendbytes", "stdio", "[\"server\"]");
	for (i = 0; i < total; i++) {
		n = snprintf(buf, mlen + 128, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"%s\"}", i, meth);
		(void)writer_message(w, s, NULL, msg_new(DIR_C2S, buf,
		    (size_t)n));
	}
	store_test_rpc(w, s, 0, 1);		/* the oldest: forgotten */
	store_test_rpc(w, s, total - 1, 1);	/* the newest: paired */
	writer_session_end(w, s, 0, 0, "done");
	writer_stop(w);
	writer_session_free(s);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages "
	    "WHERE kind = 'response' AND reply_to IS NULL AND rpc_id = '0'"),
	    1, "past the byte bound the oldest request is forgotten");
	cr_assert_eq(store_test_int(db, "SELECT q.rpc_id FROM messages r "
	    "JOIN messages q ON q.id = r.reply_to WHERE r.kind = 'response'"),
	    total - 1);
	sqlite3_close(db);
	free(meth);
	free(buf);
	free(path);
}

/* A message of direction d with the fault n and role it was given. */
static struct msg *
store_test_faulted(enum dir d, const char *raw, int64_t n, int role)
{
	struct msg	*m = msg_new(d, raw, strlen(raw));

	m->fault = n;
	m->fault_role = role;
	return m;
}

/*
 * Faults are rows of their own, numbered per session, written in queue
 * order with the messages that carry their n; each message keeps its
 * fault and role (NULL for untouched traffic and for role none), an HTTP
 * exchange the fault that made its response; deleting the session takes
 * its faults with it.
 */
Test(store, writer_records_faults, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		int64_t		 fault;		/* 0: NULL */
		const char	*role;
	} want[] = {
		{ 1, "original" }, { 1, "injected" }, { 0, NULL },
		{ 2, "delayed" },
	};
	struct writer		*w;
	struct wsession		*s, *s2;
	struct wexchange	*x, *x2;
	struct wexchange_info	 info = { 1, "POST", "/mcp", "[]", 1, 1 };
	struct wfault		 f;
	struct store		*st;
	sqlite3			*db;
	sqlite3_stmt		*stmt;
	char			*path = store_test_path("faults.db");
	char			*cause = NULL;
	int64_t			 id, n1, n2;
	size_t			 i;

	w = store_test_writer(path);
	s = writer_session_begin(w, "faulty", "http", "http://x/");
	s2 = writer_session_begin(w, "other", "stdio", "[\"srv\"]");
	n1 = writer_session_next_fault(s);
	cr_assert_eq(n1, 1);
	cr_assert_eq(writer_session_next_fault(s2), 1, "numbered per session");
	memset(&f, 0, sizeof f);
	f.n = n1;
	f.ts_ns = 1000;
	f.mono_ns = 2000;
	f.rule_index = 1;
	f.rule = "tool=search error code=-32001";
	f.action = "error";
	f.has_dir = 1;
	f.dir = DIR_C2S;
	f.method = "tools/call";
	f.rpc_id = "7";
	f.detail = "answered tools/call 7 with an error";
	writer_fault(w, s, &f);
	x = writer_exchange_begin(w, s, &info);
	(void)writer_message(w, s, x, store_test_faulted(DIR_C2S,
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\"}", n1,
	    FAULT_ROLE_ORIGINAL));
	(void)writer_message(w, s, x, store_test_faulted(DIR_S2C,
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32001,"
	    "\"message\":\"x\"}}", n1, FAULT_ROLE_INJECTED));
	writer_exchange_end(w, x, "complete", NULL, 0);
	(void)writer_message(w, s, NULL, store_test_faulted(DIR_C2S,
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}", 0,
	    FAULT_ROLE_NONE));
	/* A fault that selected no message: the optional columns NULL. */
	n2 = writer_session_next_fault(s);
	cr_assert_eq(n2, 2);
	memset(&f, 0, sizeof f);
	f.n = n2;
	f.ts_ns = 3000;
	f.mono_ns = 4000;
	f.rule_index = 3;
	f.rule = "delay=200ms";
	f.action = "delay";
	writer_fault(w, s, &f);
	(void)writer_message(w, s, NULL, store_test_faulted(DIR_S2C,
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}", n2,
	    FAULT_ROLE_DELAYED));
	(void)writer_message(w, s2, NULL, store_test_faulted(DIR_C2S,
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", 0, 0));
	x2 = writer_exchange_begin(w, s, &info);
	writer_exchange_fault(w, x2, n2);
	writer_exchange_end(w, x2, "reset by fault", NULL, 0);
	/* A faults row that cannot be written (n taken) is counted. */
	writer_fault(w, s2, &f);
	writer_fault(w, s2, &f);
	writer_session_end(w, s, -1, 0, "done");
	writer_session_end(w, s2, -1, 0, "done");
	writer_stop(w);
	id = writer_session_id(s);
	cr_assert_eq(writer_session_lost(s), 0);
	cr_assert_eq(writer_session_faults_lost(s), 0);
	cr_assert_eq(writer_session_faults_lost(s2), 1);
	writer_session_free(s);
	writer_session_free(s2);

	db = store_test_sqlite(path);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT n, ts_ns, mono_ns, "
	    "rule_index, rule, action, direction, method, rpc_id, detail "
	    "FROM faults WHERE session_id = ?1 ORDER BY n", -1, &stmt, NULL),
	    SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_bind_int64(stmt, 1, id);
	cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int64(stmt, 0), 1);
	cr_assert_eq(sqlite3_column_int64(stmt, 1), 1000);
	cr_assert_eq(sqlite3_column_int64(stmt, 2), 2000);
	cr_assert_eq(sqlite3_column_int(stmt, 3), 1);
	store_test_text(stmt, 4, "tool=search error code=-32001", 1);
	store_test_text(stmt, 5, "error", 1);
	store_test_text(stmt, 6, "c2s", 1);
	store_test_text(stmt, 7, "tools/call", 1);
	store_test_text(stmt, 8, "7", 1);
	store_test_text(stmt, 9, "answered tools/call 7 with an error", 1);
	cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int64(stmt, 0), 2);
	cr_assert_eq(sqlite3_column_int(stmt, 3), 3);
	store_test_text(stmt, 5, "delay", 2);
	store_test_text(stmt, 6, NULL, 2);
	store_test_text(stmt, 7, NULL, 2);
	store_test_text(stmt, 8, NULL, 2);
	store_test_text(stmt, 9, NULL, 2);
	cr_assert_eq(sqlite3_step(stmt), SQLITE_DONE);
	sqlite3_finalize(stmt);

	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT fault, fault_role FROM "
	    "messages WHERE session_id = ?1 ORDER BY seq", -1, &stmt, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(stmt, 1, id);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW, "message %zu", i);
		if (want[i].fault == 0)
			cr_assert_eq(sqlite3_column_type(stmt, 0),
			    SQLITE_NULL, "message %zu", i);
		else
			cr_assert_eq(sqlite3_column_int64(stmt, 0),
			    want[i].fault, "message %zu", i);
		store_test_text(stmt, 1, want[i].role, i);
	}
	cr_assert_eq(sqlite3_step(stmt), SQLITE_DONE);
	sqlite3_finalize(stmt);
	cr_assert_eq(store_test_int(db, "SELECT group_concat(coalesce(fault, "
	    "0), ',') = '0,2' FROM (SELECT fault FROM http_exchanges ORDER "
	    "BY id)"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages WHERE "
	    "fault IS NOT NULL AND session_id <> (SELECT min(id) FROM "
	    "sessions)"), 0);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM faults"), 3,
	    "s's two and s2's first");
	sqlite3_close(db);

	st = store_open(path, 0, &cause);
	cr_assert_not_null(st, "store_open: %s", cause);
	cr_assert_eq(maint_delete_sessions(st, &id, 1, &cause), 0, "%s",
	    cause);
	store_close(st);
	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM faults"), 1);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages"), 1);
	sqlite3_close(db);
	free(path);
}

/* Round trips a side of the item reuse test sends: pools over and over. */
#define STORE_REUSE_N	(3 * WRITER_BATCH)

/*
 * Message items are reused once written (a spare pool between the
 * threads): a reused item carries nothing of its last message.  Requests
 * classified by the producer, all committed, then answers it did not
 * classify: each answer must be scanned afresh (a response answering its
 * request, with its method), and every row holds its own bytes.
 */
Test(store, writer_reuses_items, .timeout = UNIT_TIMEOUT)
{
	struct writer	*w;
	struct wsession	*s;
	struct msg	*m;
	struct scan	 sc;
	sqlite3		*db;
	char		*path = store_test_path("reuse.db"), *text;
	int		 i, len;

	w = store_test_writer(path);
	s = writer_session_begin(w, "reuse", "stdio", "[]");
	for (i = 0; i < STORE_REUSE_N; i++) {
		len = asprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"tools/call\"}", i);
		cr_assert_gt(len, 0);
		m = msg_new(DIR_C2S, text, (size_t)len);
		free(text);
		writer_scan(m, &sc);
		(void)writer_message_scanned(w, s, NULL, m, &sc);
	}
	writer_sync(w);
	for (i = 0; i < STORE_REUSE_N; i++) {
		len = asprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"result\":{}}", i);
		cr_assert_gt(len, 0);
		(void)writer_message(w, s, NULL, msg_new(DIR_S2C, text,
		    (size_t)len));
		free(text);
	}
	writer_stop(w);
	cr_assert_eq(writer_session_lost(s), 0);
	writer_session_free(s);

	db = store_test_sqlite(path);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages "
	    "WHERE kind = 'request' AND method = 'tools/call' AND "
	    "reply_to IS NULL AND raw = CAST('{\"jsonrpc\":\"2.0\",\"id\":' || "
	    "rpc_id || ',\"method\":\"tools/call\"}' AS BLOB)"),
	    STORE_REUSE_N);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages m "
	    "JOIN messages q ON q.id = m.reply_to WHERE m.kind = 'response' "
	    "AND m.method = 'tools/call' AND m.rpc_id = q.rpc_id AND m.raw = "
	    "CAST('{\"jsonrpc\":\"2.0\",\"id\":' || m.rpc_id || "
	    "',\"result\":{}}' AS BLOB)"), STORE_REUSE_N);
	cr_assert_eq(store_test_int(db, "SELECT count(*) FROM messages"),
	    2 * STORE_REUSE_N);
	sqlite3_close(db);
	free(path);
}
