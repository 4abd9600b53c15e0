/*
 * Opening a database: creating it private to its owner, applying schema.sql
 * and migrating files written by older versions.
 */

#include <sys/stat.h>

#include <dirent.h>
#include <libgen.h>
#include <signal.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

extern const char store_schema_sql[];

static pthread_once_t store_once = PTHREAD_ONCE_INIT;

static void	store_fix_mode(const char *, int);

/*
 * Migrations: migrations[N] takes a file from version N + 1 to N + 2.
 * schema.sql is always the newest schema whole, for new files.
 */
static const char *migrations[] = {
	/* 1 -> 2: HTTP recording. */
	"CREATE TABLE http_exchanges ("
	"  id INTEGER PRIMARY KEY,"
	"  session_id INTEGER NOT NULL REFERENCES sessions(id)"
	"    ON DELETE CASCADE,"
	"  connection INTEGER NOT NULL, method TEXT NOT NULL,"
	"  path TEXT NOT NULL, request_headers TEXT NOT NULL,"
	"  started_ns INTEGER NOT NULL, mono_ns INTEGER NOT NULL,"
	"  status INTEGER, response_headers TEXT, response_mono_ns INTEGER,"
	"  ended_ns INTEGER, outcome TEXT, body BLOB);"
	"CREATE INDEX http_exchanges_session ON http_exchanges(session_id);"
	"ALTER TABLE messages ADD COLUMN http_exchange_id INTEGER"
	"  REFERENCES http_exchanges(id);"
	"ALTER TABLE messages ADD COLUMN sse_event_id TEXT;",

	/*
	 * 2 -> 3: raw becomes the last column of messages (a huge message is
	 * then written in pieces, see writer.c), after new columns for
	 * messages recorded as a prefix or redacted; the reply_to index
	 * leaves out rows without one; sessions say why recording stopped
	 * and where an imported one came from.  SQLite cannot move a
	 * column: the table is copied, ids kept, with the view over it.
	 */
	"DROP VIEW exchanges;"
	"CREATE TABLE messages_v3 ("
	"  id INTEGER PRIMARY KEY,"
	"  session_id INTEGER NOT NULL REFERENCES sessions(id)"
	"    ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  direction TEXT NOT NULL CHECK (direction = 'c2s' OR"
	"    direction = 's2c'),"
	"  ts_ns INTEGER NOT NULL, mono_ns INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind = 'request' OR kind = 'response'"
	"    OR kind = 'error' OR kind = 'notification' OR kind = 'batch'"
	"    OR kind = 'invalid'),"
	"  method TEXT, rpc_id TEXT,"
	"  reply_to INTEGER REFERENCES messages(id),"
	"  size INTEGER NOT NULL,"
	"  http_exchange_id INTEGER REFERENCES http_exchanges(id),"
	"  sse_event_id TEXT, wire_size INTEGER, sha256 TEXT,"
	"  truncated INTEGER NOT NULL DEFAULT 0,"
	"  redacted INTEGER NOT NULL DEFAULT 0,"
	"  raw BLOB NOT NULL,"
	"  UNIQUE (session_id, seq));"
	"INSERT INTO messages_v3 (id, session_id, seq, direction, ts_ns,"
	"  mono_ns, kind, method, rpc_id, reply_to, size, http_exchange_id,"
	"  sse_event_id, raw)"
	"  SELECT id, session_id, seq, direction, ts_ns, mono_ns, kind,"
	"  method, rpc_id, reply_to, size, http_exchange_id, sse_event_id, raw"
	"  FROM messages;"
	"DROP TABLE messages;"
	"ALTER TABLE messages_v3 RENAME TO messages;"
	"CREATE INDEX messages_reply_to ON messages(reply_to)"
	"  WHERE reply_to IS NOT NULL;"
	"CREATE VIEW exchanges AS"
	"  SELECT q.session_id AS session_id, q.direction AS direction,"
	"  q.method AS method, q.rpc_id AS rpc_id, q.seq AS request_seq,"
	"  r.seq AS response_seq, r.kind AS outcome,"
	"  q.ts_ns AS request_ts_ns, r.mono_ns - q.mono_ns AS latency_ns,"
	"  q.raw AS request, r.raw AS response"
	"  FROM messages q LEFT JOIN messages r ON r.reply_to = q.id"
	"  WHERE q.kind = 'request';"
	"ALTER TABLE sessions ADD COLUMN store_error TEXT;"
	"ALTER TABLE sessions ADD COLUMN imported_from TEXT;",

	/*
	 * 3 -> 4: sessions say what made them, so that 'last' is the last
	 * recording and not a replay's or a mock's own session.  Older
	 * files said so only in words, which identify them here.
	 */
	"ALTER TABLE sessions ADD COLUMN origin TEXT NOT NULL"
	"  DEFAULT 'record';"
	"UPDATE sessions SET origin = 'import'"
	"  WHERE imported_from IS NOT NULL;"
	"UPDATE sessions SET origin = 'replay' WHERE imported_from IS NULL"
	"  AND (target = '(replay)' OR end_reason = 'replay finished'"
	"  OR end_reason = 'replay could not run');"
	"UPDATE sessions SET origin = 'mock' WHERE imported_from IS NULL"
	"  AND name LIKE 'mock fallback of %' AND (end_reason = 'mock stopped'"
	"  OR (transport = 'stdio' AND target NOT LIKE '[%'));",

	/* 4 -> 5: the trailer fields of chunked HTTP bodies. */
	"ALTER TABLE http_exchanges ADD COLUMN request_trailers TEXT;"
	"ALTER TABLE http_exchanges ADD COLUMN response_trailers TEXT;",

	/*
	 * 5 -> 6: faults injected (record --fault, mock --fault), and what
	 * each message or HTTP response is to one.  The two columns of
	 * messages go before raw, which must stay last (see 2 -> 3): added
	 * with ALTER TABLE they would follow it, and every message of 1 MiB
	 * or more written later would have its zeroblob built in memory.
	 * So messages is copied once more, ids kept.
	 */
	"CREATE TABLE faults ("
	"  id INTEGER PRIMARY KEY,"
	"  session_id INTEGER NOT NULL REFERENCES sessions(id)"
	"    ON DELETE CASCADE,"
	"  n INTEGER NOT NULL, ts_ns INTEGER NOT NULL,"
	"  mono_ns INTEGER NOT NULL, rule_index INTEGER NOT NULL,"
	"  rule TEXT NOT NULL, action TEXT NOT NULL, direction TEXT,"
	"  method TEXT, rpc_id TEXT, detail TEXT,"
	"  UNIQUE (session_id, n));"
	"ALTER TABLE http_exchanges ADD COLUMN fault INTEGER;"
	"DROP VIEW exchanges;"
	"CREATE TABLE messages_v6 ("
	"  id INTEGER PRIMARY KEY,"
	"  session_id INTEGER NOT NULL REFERENCES sessions(id)"
	"    ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  direction TEXT NOT NULL CHECK (direction = 'c2s' OR"
	"    direction = 's2c'),"
	"  ts_ns INTEGER NOT NULL, mono_ns INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind = 'request' OR kind = 'response'"
	"    OR kind = 'error' OR kind = 'notification' OR kind = 'batch'"
	"    OR kind = 'invalid'),"
	"  method TEXT, rpc_id TEXT,"
	"  reply_to INTEGER REFERENCES messages(id),"
	"  size INTEGER NOT NULL,"
	"  http_exchange_id INTEGER REFERENCES http_exchanges(id),"
	"  sse_event_id TEXT, wire_size INTEGER, sha256 TEXT,"
	"  truncated INTEGER NOT NULL DEFAULT 0,"
	"  redacted INTEGER NOT NULL DEFAULT 0,"
	"  fault INTEGER,"
	"  fault_role TEXT CHECK (fault_role IS NULL OR"
	"    fault_role = 'original' OR fault_role = 'injected' OR"
	"    fault_role = 'delayed'),"
	"  raw BLOB NOT NULL,"
	"  UNIQUE (session_id, seq));"
	"INSERT INTO messages_v6 (id, session_id, seq, direction, ts_ns,"
	"  mono_ns, kind, method, rpc_id, reply_to, size, http_exchange_id,"
	"  sse_event_id, wire_size, sha256, truncated, redacted, raw)"
	"  SELECT id, session_id, seq, direction, ts_ns, mono_ns, kind,"
	"  method, rpc_id, reply_to, size, http_exchange_id, sse_event_id,"
	"  wire_size, sha256, truncated, redacted, raw FROM messages;"
	"DROP TABLE messages;"
	"ALTER TABLE messages_v6 RENAME TO messages;"
	"CREATE INDEX messages_reply_to ON messages(reply_to)"
	"  WHERE reply_to IS NOT NULL;"
	"CREATE VIEW exchanges AS"
	"  SELECT q.session_id AS session_id, q.direction AS direction,"
	"  q.method AS method, q.rpc_id AS rpc_id, q.seq AS request_seq,"
	"  r.seq AS response_seq, r.kind AS outcome,"
	"  q.ts_ns AS request_ts_ns, r.mono_ns - q.mono_ns AS latency_ns,"
	"  q.raw AS request, r.raw AS response"
	"  FROM messages q LEFT JOIN messages r ON r.reply_to = q.id"
	"  WHERE q.kind = 'request';",

	/*
	 * 6 -> 7: what OpenTelemetry export (--otlp) did not deliver of a
	 * session, NULL for a session not exported; over HTTP the client
	 * that began the session (its spans name it, live and exported).
	 */
	"ALTER TABLE sessions ADD COLUMN otlp_dropped INTEGER;"
	"ALTER TABLE sessions ADD COLUMN client_address TEXT;"
	"ALTER TABLE sessions ADD COLUMN client_port INTEGER;",
};

/* Create every missing directory above path, private to the owner. */
static int
store_mkdirs(const char *path, char **cause)
{
	char	*dir = xstrdup(path), *p;

	for (p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			xasprintf(cause, "cannot create directory %s: %s",
			    dir, strerror(errno));
			free(dir);
			return -1;
		}
		*p = '/';
	}
	free(dir);
	return 0;
}

/*
 * Create the file ourselves with mode 0600 before SQLite opens it: SQLite
 * would use 0644 less umask, and gives its -wal and -shm files the mode of
 * the database file.
 */
static int
store_create_file(const char *path, char **cause)
{
	struct stat	sb;
	int		fd;

	if (store_mkdirs(path, cause) != 0)
		return -1;
	/*
	 * O_EXCL: the file was missing a moment ago, so anything there now
	 * (a dangling symlink planted in a shared directory, a racing
	 * creator) is not ours to write through.
	 */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	/*
	 * Another process created it meanwhile (another recorder, or someone
	 * racing us in a shared directory): a plain file of our own is fine,
	 * its mode fixed as for any file we write; one of another user would
	 * get all we record, so it is refused.
	 */
	if (fd == -1 && errno == EEXIST && (fd = open(path, O_RDONLY |
	    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) != -1) {
		if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			xasprintf(cause, "cannot create database %s: something "
			    "other than a file appeared at that name (remove "
			    "it or give another --db)", path);
			close(fd);
			return -1;
		}
		close(fd);
		if (sb.st_uid != geteuid()) {
			xasprintf(cause, "cannot create database %s: a file "
			    "of another user (uid %lu) appeared at that name "
			    "while it was being created (remove it or give "
			    "another --db)", path, (unsigned long)sb.st_uid);
			return -1;
		}
		store_fix_mode(path, 1);
		return 0;
	}
	if (fd == -1) {
		xasprintf(cause, "cannot create database %s: %s%s", path,
		    strerror(errno), errno == EEXIST || errno == ELOOP ?
		    " (a symlink or a file appeared at that name: remove it "
		    "or give another --db)" : "");
		return -1;
	}
	close(fd);
	return 0;
}

static int
store_user_version(struct store *st, int *version, char **cause)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	rc = sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &stmt,
	    NULL);
	if (rc != SQLITE_OK || sqlite3_step(stmt) != SQLITE_ROW) {
		xasprintf(cause, "cannot read the schema version of %s: %s",
		    st->path, sqlite3_errmsg(st->db));
		sqlite3_finalize(stmt);
		return -1;
	}
	*version = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return 0;
}

/* Bring the schema to STORE_SCHEMA_VERSION in one transaction. */
static int
store_migrate(struct store *st, char **cause)
{
	char	*sql;
	int	 version;

	/* Readers of an up-to-date file take no write lock. */
	if (store_user_version(st, &version, cause) != 0)
		return -1;
	if (version == STORE_SCHEMA_VERSION)
		return 0;
	if (store_exec(st, "BEGIN IMMEDIATE", cause) != 0)
		return -1;
	if (store_user_version(st, &version, cause) != 0)
		goto fail;
	if (version > STORE_SCHEMA_VERSION) {
		xasprintf(cause, "%s has schema version %d, newer than this "
		    "mcpreel understands (%d): use a newer mcpreel", st->path,
		    version, STORE_SCHEMA_VERSION);
		goto fail;
	}
	if (version == 0) {
		if (store_exec(st, store_schema_sql, cause) != 0)
			goto fail;
	} else {
		for (; version < STORE_SCHEMA_VERSION; version++) {
			if (store_exec(st, migrations[version - 1],
			    cause) != 0)
				goto fail;
		}
	}
	xasprintf(&sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
	if (store_exec(st, sql, cause) != 0) {
		free(sql);
		goto fail;
	}
	free(sql);
	return store_exec(st, "COMMIT", cause);
fail:
	store_exec(st, "ROLLBACK", NULL);
	return -1;
}

/*
 * A database that others can read (or write) leaks every message recorded
 * in it, and SQLite gives its -wal and -shm files the same mode.  A writer
 * (private: record, import, replay and mock, which record sessions) sets
 * the files it owns that others or the group can use to 0600 and says so;
 * for one it does not own, it says what to do.  A reader changes nothing
 * (a file shared with a group on purpose stays shared) and warns only of
 * one that every user can read.  Each file is opened without following a
 * symlink and changed through its descriptor: a symlink planted at
 * <db>-wal does not get its target's mode changed, and what is changed is
 * what was looked at.
 */
static void
store_fix_mode(const char *path, int private)
{
	static const char	*suffixes[] = { "", "-wal", "-shm" };
	struct stat		 sb;
	char			*file;
	unsigned		 mode;
	size_t			 i;
	int			 fd;

	for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		xasprintf(&file, "%s%s", path, suffixes[i]);
		/* O_NONBLOCK: a FIFO planted there does not hang us. */
		fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		if (fd == -1 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    (sb.st_mode & (private ? 077 : 004)) == 0) {
			if (fd != -1)
				close(fd);
			free(file);
			continue;
		}
		mode = (unsigned)(sb.st_mode & 07777);
		if (!private)
			log_warnx("%s is readable by every user (mode %04o): "
			    "%s chmod 600 on it", file, mode, sb.st_uid ==
			    geteuid() ? "run" : "ask its owner to run");
		else if (sb.st_uid != geteuid())
			log_warnx("%s is readable by other users (mode %04o) "
			    "and not ours to change: ask its owner to run "
			    "chmod 600 on it", file, mode);
		else if (fchmod(fd, 0600) != 0)
			log_warnx("%s is readable by other users (mode %04o) "
			    "and cannot be made private: %s (run chmod 600 "
			    "on it)", file, mode, strerror(errno));
		else
			log_warnx("%s was readable by other users (mode %04o): "
			    "set to 0600", file, mode);
		close(fd);
		free(file);
	}
}

/*
 * MCPREEL_TEST_SQLITE_LENGTH (bytes): lower SQLite's limit on one string,
 * blob or row on this connection, so that the tests can try a message
 * longer than SQLite can store without pushing a gigabyte.  Not for use.
 */
static void
store_test_limit(struct store *st)
{
	const char	*v = getenv("MCPREEL_TEST_SQLITE_LENGTH");
	char		*end;
	long long	 n;

	if (v == NULL || *v == '\0')
		return;
	n = strtoll(v, &end, 10);
	if (*end == '\0' && n > 0 && n <= INT32_MAX)
		sqlite3_limit(st->db, SQLITE_LIMIT_LENGTH, (int)n);
}

/*
 * The longest message this database can take in one row: SQLite refuses a
 * blob (and a row) longer than its SQLITE_LIMIT_LENGTH (1 GB unless
 * built otherwise), so the record keeps at most that, less room for the
 * row's other columns.
 */
size_t
store_max_message(struct store *st)
{
	size_t	limit = (size_t)sqlite3_limit(st->db, SQLITE_LIMIT_LENGTH, -1);
	size_t	margin = STORE_ROW_MARGIN;

	if (margin > limit / 4)
		margin = limit / 4;
	return limit - margin;
}

/*
 * Process-wide SQLite settings, before the first connection: no memory
 * statistics (they take a global mutex on every allocation SQLite makes,
 * a few per inserted row).
 */
static void
store_init_once(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/*
 * Open the database at path.  With STORE_CREATE, create it (and its
 * directories) if missing; without, a missing file is an error.
 */
struct store *
store_open(const char *path, int flags, char **cause)
{
	struct store	*st;
	struct stat	 sb;
	int		 rc, fresh = 0;

	if (stat(path, &sb) == 0) {
		fresh = (sb.st_size == 0);
		store_fix_mode(path, (flags & STORE_PRIVATE) != 0);
	} else {
		if (!(flags & STORE_CREATE)) {
			xasprintf(cause, "no database at %s (record a session "
			    "first, or give --db)", path);
			return NULL;
		}
		if (store_create_file(path, cause) != 0)
			return NULL;
		fresh = 1;
	}

	pthread_once(&store_once, store_init_once);
	st = xcalloc(1, sizeof *st);
	st->path = xstrdup(path);
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		xasprintf(cause, "cannot open database %s: %s", path,
		    st->db != NULL ? sqlite3_errmsg(st->db) :
		    sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
	store_test_limit(st);
	/*
	 * A new file gets 16 KiB pages (set before WAL, which fixes it): rows
	 * go in ~20% faster than with 4 KiB.  Foreign keys are checked once
	 * the schema is current: a migration that copies a table must not
	 * check them half way.
	 */
	if ((fresh && store_exec(st, "PRAGMA page_size = 16384", cause) !=
	    0) || store_exec(st, (flags & STORE_SCRATCH) ?
	    "PRAGMA journal_mode = MEMORY" : "PRAGMA journal_mode = WAL",
	    cause) != 0 || store_exec(st, (flags & STORE_SCRATCH) ?
	    "PRAGMA synchronous = OFF" : "PRAGMA synchronous = NORMAL",
	    cause) != 0)
		goto fail;
	if (store_migrate(st, cause) != 0)
		goto fail;
	if (store_exec(st, "PRAGMA foreign_keys = ON", cause) != 0)
		goto fail;
	return st;
fail:
	store_close(st);
	return NULL;
}

void
store_close(struct store *st)
{
	if (st == NULL)
		return;
	if (st->db != NULL)
		sqlite3_close(st->db);
	free(st->path);
	free(st);
}

const char *
store_path(const struct store *st)
{
	return st->path;
}

/*
 * Room kept next to the database, <path>-reserve.<pid>, for a recorder to
 * say that the disk is full: released, it lets the session row take its
 * store_error and messages_lost (a few WAL frames of 16 KiB) when nothing
 * else fits.  One a process, so that others on the same file (a second
 * recorder, an import) leave it alone; those of processes that are gone
 * (killed) are removed here.  Best effort: a disk already too full for it
 * gets none.
 */
void
store_reserve(struct store *st)
{
	char		*path, *dir, *base, *copy1, *copy2, *end, *stale;
	DIR		*d;
	struct dirent	*de;
	size_t		 blen;
	long		 pid;
	int		 fd, rc;

	copy1 = xstrdup(st->path);
	copy2 = xstrdup(st->path);
	dir = dirname(copy1);
	base = basename(copy2);
	blen = strlen(base);
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strncmp(de->d_name, base, blen) != 0 ||
			    strncmp(de->d_name + blen, "-reserve.", 9) != 0)
				continue;
			pid = strtol(de->d_name + blen + 9, &end, 10);
			/* Only a process that is gone leaves it for good. */
			if (*end != '\0' || pid <= 0 ||
			    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			xasprintf(&stale, "%s/%s", dir, de->d_name);
			unlink(stale);
			free(stale);
		}
		closedir(d);
	}
	free(copy1);
	free(copy2);

	/*
	 * The name is predictable and the directory may be shared: never
	 * follow or reuse what is there (a planted symlink would get its
	 * target truncated and filled).  A name already taken means no
	 * reserve, which is only a debug line.  Whatever has our name is
	 * left by an earlier process with our pid (killed, its pid reused:
	 * usual in a container) or planted: unlink removes the name, never
	 * a symlink's target.
	 */
	xasprintf(&path, "%s-reserve.%ld", st->path, (long)getpid());
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1) {
		log_debug("no reserve for %s: %s", st->path, strerror(errno));
		free(path);
		return;
	}
	if ((rc = posix_fallocate(fd, 0, STORE_RESERVE)) != 0) {
		log_debug("no reserve for %s: %s", st->path, strerror(rc));
		unlink(path);
	} else
		st->reserved = 1;
	close(fd);
	free(path);
}

/* Give this process's reserve back to the file system. */
void
store_release(struct store *st)
{
	char	*path;

	if (!st->reserved)
		return;
	xasprintf(&path, "%s-reserve.%ld", st->path, (long)getpid());
	unlink(path);
	free(path);
	st->reserved = 0;
}

/*
 * The SQLite connection of st, for bench/sqlite_floor.c: it inserts rows
 * on the connection the writer would get, set up the same way.
 */
struct sqlite3 *
store_sqlite(struct store *st)
{
	return st->db;
}

/* Run SQL that returns no rows; on failure say which database and why. */
int
store_exec(struct store *st, const char *sql, char **cause)
{
	char	*err = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		if (cause != NULL)
			xasprintf(cause, "database %s: %s", st->path,
			    err != NULL ? err : sqlite3_errmsg(st->db));
		sqlite3_free(err);
		return -1;
	}
	return 0;
}
