/*
 * Handing a recording session back to the writer before it stops
 * (writer_session_release): the writer frees it after every item of it
 * queued earlier, its rows all written, and once only, also when
 * recording has stopped for good.  ASan (the unit build) reports a use
 * after free or a leak.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "store.h"
#include "store_int.h"
#include "store_util.h"
#include "unit.h"

/* Messages queued in the session released. */
#define RELEASE_MSGS	2000
/* Pages the database may grow by in the broken-writer test. */
#define RELEASE_PAGES	16

TestSuite(release, .init = store_setup, .fini = store_teardown,
    .timeout = UNIT_TIMEOUT);

/* A JSON-RPC notification of about size bytes, numbered n. */
static struct msg *
release_msg(int n, size_t size)
{
	struct msg	*m;
	char		*buf = xmalloc(size + 128);
	int		 len;

	len = snprintf(buf, size + 128, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progress\":%d,"
	    "\"pad\":\"%*s\"}}", n, (int)size, "");
	cr_assert(len > 0 && (size_t)len < size + 128);
	m = msg_new(n % 2 ? DIR_S2C : DIR_C2S, buf, (size_t)len);
	free(buf);
	return m;
}

/*
 * A session released with its messages and end still queued: all are
 * written, its row id is handed out, and the session freed (ASan: no
 * leak, no use after free), while another session goes on.
 */
Test(release, queued_rows_written, .timeout = UNIT_TIMEOUT)
{
	struct writer_ids	 ids;
	struct writer		*w;
	struct wsession		*s, *t;
	sqlite3			*db;
	char			*path = store_test_path("rel.db"), sql[160];
	int			 i;
	int64_t			 tid;

	memset(&ids, 0, sizeof ids);
	w = store_test_writer(path);
	s = writer_session_begin(w, "released", "http", "t");
	t = writer_session_begin(w, "kept", "http", "t");
	for (i = 0; i < RELEASE_MSGS; i++) {
		writer_message(w, s, NULL, release_msg(i, 64));
		if (i % 100 == 0)
			writer_message(w, t, NULL, release_msg(i, 64));
	}
	writer_session_end(w, s, -1, 0, "done");
	writer_session_release(w, s, &ids);
	for (i = 0; i < 10; i++)
		writer_message(w, t, NULL, release_msg(i, 64));
	writer_session_end(w, t, -1, 0, "kept done");
	writer_stop(w);
	tid = writer_session_id(t);
	writer_session_free(t);

	cr_assert_eq(ids.n, 1, "the released session's id: %zu", ids.n);
	cr_assert_neq(ids.ids[0], tid);
	db = store_test_sqlite(path);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM messages WHERE "
	    "session_id = %lld", (long long)ids.ids[0]);
	cr_assert_eq(store_test_int(db, sql), RELEASE_MSGS);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM sessions WHERE id = "
	    "%lld AND name = 'released' AND end_reason = 'done' AND "
	    "messages_lost = 0", (long long)ids.ids[0]);
	cr_assert_eq(store_test_int(db, sql), 1);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM messages WHERE "
	    "session_id = %lld", (long long)tid);
	cr_assert_eq(store_test_int(db, sql), RELEASE_MSGS / 100 + 10);
	sqlite3_close(db);
	free(ids.ids);
	free(path);
}

/*
 * Recording stopped for good (the database is full) before a session is
 * released, with more of its messages queued: it is still freed, once,
 * and a session never released is freed by its producer as before.
 */
Test(release, after_broken_writer, .timeout = UNIT_TIMEOUT)
{
	struct writer_ids	 ids;
	struct store		*st;
	struct writer		*w;
	struct wsession		*s, *t;
	char			*path, *cause = NULL, sql[96];
	int			 i;
	int64_t			 pages;

	memset(&ids, 0, sizeof ids);
	path = store_test_path("full.db");
	cr_assert_not_null(st = store_open(path, STORE_CREATE, &cause), "%s",
	    cause);
	pages = store_test_int(st->db, "PRAGMA page_count");
	snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld",
	    (long long)(pages + RELEASE_PAGES));
	cr_assert_eq(sqlite3_exec(st->db, sql, NULL, NULL, NULL), SQLITE_OK);
	cr_assert_not_null(w = writer_start(st, &cause), "%s", cause);
	s = writer_session_begin(w, "full", "http", "t");
	t = writer_session_begin(w, "other", "http", "t");
	for (i = 0; i < 200; i++)
		writer_message(w, s, NULL, release_msg(i, 4096));
	writer_sync(w);
	/* Published under the queue's lock with the batch's count. */
	cr_assert_not_null(w->broken, "the database never filled up");
	for (i = 0; i < 10; i++)
		writer_message(w, s, NULL, release_msg(i, 64));
	writer_session_end(w, s, -1, 0, "done");
	writer_session_release(w, s, &ids);
	writer_message(w, t, NULL, release_msg(1, 64));
	writer_session_end(w, t, -1, 0, "done");
	writer_stop(w);
	cr_assert_gt(writer_session_lost(t), 0);
	writer_session_free(t);
	cr_assert_eq(ids.n, 1, "its row id is handed out all the same");
	free(ids.ids);
	free(path);
}
