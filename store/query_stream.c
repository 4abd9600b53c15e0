/*
 * A session's messages read one at a time, in the order they happened,
 * for a reader that must not hold the session (replay of a million
 * messages).  One statement steps through the messages' ids in order
 * (only the ids and times are sorted, never the bytes; SQLite's sorter
 * spills to a temporary file past its cache), and each message is read
 * by id when asked for.  The caller gives the stream its own read
 * connection: the statement holds one snapshot from the first row to the
 * last, so what a writer adds meanwhile (replay recording its own run in
 * the same database) is not seen and does not disturb it.
 */

#include <stdlib.h>
#include <string.h>

#include "store_int.h"

struct query_stream {
	struct store		*st;
	sqlite3_stmt		*order;
	sqlite3_stmt		*one;
	struct timeline_row	 row;
	int			 done;
};

/*
 * Open a stream of session's messages on st (QUERY_UNFAULTED in flags
 * leaves faults' messages out, as query_timeline() does).  st must
 * outlive the stream and is not used by anything else meanwhile.
 */
struct query_stream *
query_stream_open(struct store *st, int64_t session, int flags, char **cause)
{
	struct query_stream	*qs = xcalloc(1, sizeof *qs);

	qs->st = st;
	if (query_prepare(st, QUERY_ORDER_SQL, &qs->order, cause) != 0 ||
	    query_prepare(st, QUERY_ONE_SQL, &qs->one, cause) != 0) {
		query_stream_close(qs);
		return NULL;
	}
	sqlite3_bind_int64(qs->order, 1, session);
	sqlite3_bind_int(qs->order, 2, (flags & QUERY_UNFAULTED) != 0);
	return qs;
}

/*
 * The next message in *r: 1, 0 at the end, -1 on a read error (cause
 * set).  *r and what it points to stay valid until the next call.
 */
int
query_stream_next(struct query_stream *qs, const struct timeline_row **r,
    char **cause)
{
	int	rc;

	if (qs->done)
		return 0;
	sqlite3_reset(qs->one);
	if ((rc = sqlite3_step(qs->order)) == SQLITE_DONE) {
		qs->done = 1;
		return 0;
	}
	if (rc != SQLITE_ROW)
		goto failed;
	sqlite3_bind_int64(qs->one, 1, sqlite3_column_int64(qs->order, 0));
	if ((rc = sqlite3_step(qs->one)) == SQLITE_DONE) {
		xasprintf(cause, "database %s: a message went away while "
		    "being read", qs->st->path);
		qs->done = 1;
		return -1;
	}
	if (rc != SQLITE_ROW)
		goto failed;
	query_message_row(qs->one, &qs->row);
	*r = &qs->row;
	return 1;

failed:
	xasprintf(cause, "database %s: %s", qs->st->path,
	    sqlite3_errmsg(qs->st->db));
	qs->done = 1;
	return -1;
}

/* Let the stream go (its store stays open). */
void
query_stream_close(struct query_stream *qs)
{
	if (qs == NULL)
		return;
	sqlite3_finalize(qs->order);
	sqlite3_finalize(qs->one);
	free(qs);
}
