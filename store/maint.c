/*
 * Looking after a database: deleting sessions with everything recorded
 * in them, and giving the space back to the file system.
 */

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store_int.h"

/*
 * Every table with a session's rows, children first.  Deleting by
 * session_id through each one's index is what makes this fast: left to
 * ON DELETE CASCADE with foreign keys on, each http_exchanges row deleted
 * would be looked for in messages.http_exchange_id, which has no index (a
 * scan of all messages per exchange).  Every reference stays within one
 * session, so the deletes leave none dangling.
 */
static const char *maint_deletes[] = {
	"DELETE FROM messages WHERE session_id = ?1",
	"DELETE FROM events WHERE session_id = ?1",
	"DELETE FROM http_exchanges WHERE session_id = ?1",
	"DELETE FROM faults WHERE session_id = ?1",
	"DELETE FROM sessions WHERE id = ?1",
};

/* Delete the sessions in ids (n of them) and all their rows, at once. */
int
maint_delete_sessions(struct store *st, const int64_t *ids, size_t n,
    char **cause)
{
	sqlite3_stmt	*stmt[sizeof maint_deletes / sizeof maint_deletes[0]];
	size_t		 i, j, nstmt = sizeof stmt / sizeof stmt[0];
	int		 rc = -1;

	memset(stmt, 0, sizeof stmt);
	/* (The pragma does nothing inside a transaction: before BEGIN.) */
	if (store_exec(st, "PRAGMA foreign_keys = OFF", cause) != 0)
		return -1;
	if (store_exec(st, "BEGIN IMMEDIATE", cause) != 0)
		goto out;
	for (j = 0; j < nstmt; j++) {
		if (sqlite3_prepare_v2(st->db, maint_deletes[j], -1, &stmt[j],
		    NULL) != SQLITE_OK)
			goto fail;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < nstmt; j++) {
			sqlite3_bind_int64(stmt[j], 1, ids[i]);
			if (sqlite3_step(stmt[j]) != SQLITE_DONE)
				goto fail;
			sqlite3_reset(stmt[j]);
		}
	}
	for (j = 0; j < nstmt; j++)
		sqlite3_finalize(stmt[j]);
	rc = store_exec(st, "COMMIT", cause);
	goto out;
fail:
	xasprintf(cause, "cannot delete from %s: %s", st->path,
	    sqlite3_errmsg(st->db));
	for (j = 0; j < nstmt; j++)
		sqlite3_finalize(stmt[j]);
	store_exec(st, "ROLLBACK", NULL);
out:
	store_exec(st, "PRAGMA foreign_keys = ON", NULL);
	return rc;
}

/* Run a pragma that returns one integer. */
static int
maint_pragma(struct store *st, const char *sql, int64_t *v, char **cause)
{
	sqlite3_stmt	*stmt;

	if (sqlite3_prepare_v2(st->db, sql, -1, &stmt, NULL) != SQLITE_OK ||
	    sqlite3_step(stmt) != SQLITE_ROW) {
		xasprintf(cause, "database %s: %s", st->path,
		    sqlite3_errmsg(st->db));
		sqlite3_finalize(stmt);
		return -1;
	}
	*v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return 0;
}

/* How big the database is, in bytes, and how much of it is free pages. */
int
maint_space(struct store *st, int64_t *size, int64_t *free_bytes,
    char **cause)
{
	int64_t	page, pages, freelist;

	if (maint_pragma(st, "PRAGMA page_size", &page, cause) != 0 ||
	    maint_pragma(st, "PRAGMA page_count", &pages, cause) != 0 ||
	    maint_pragma(st, "PRAGMA freelist_count", &freelist, cause) != 0)
		return -1;
	*size = page * pages;
	*free_bytes = page * freelist;
	return 0;
}

/*
 * Rewrite the database without its free pages, then checkpoint the WAL
 * into it and truncate the WAL, so the files shrink.  It holds the write
 * lock while it runs: writers wait (up to STORE_BUSY_TIMEOUT_MS).
 */
int
maint_vacuum(struct store *st, char **cause)
{
	if (store_exec(st, "VACUUM", cause) != 0)
		return -1;
	return store_exec(st, "PRAGMA wal_checkpoint(TRUNCATE)", cause);
}
