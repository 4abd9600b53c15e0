/*
 * What the store's unit tests share: a fresh directory for each test,
 * removed after it, and reading back what was written through the plain
 * SQLite API.
 */

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "store.h"
#include "store_util.h"

/* The directory of the running test, removed after it. */
char	store_dir[64];

/* Make a fresh private directory for one test. */
void
store_setup(void)
{
	snprintf(store_dir, sizeof store_dir, "/tmp/mcpreel-unit-XXXXXX");
	cr_assert_not_null(mkdtemp(store_dir), "mkdtemp failed");
}

/* Remove one entry, deepest first (an nftw callback). */
static int
store_rm_cb(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	return remove(path);
}

/* Remove the test's directory and everything in it. */
void
store_teardown(void)
{
	if (store_dir[0] != '\0')
		nftw(store_dir, store_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* A path under the test's directory (the caller frees it). */
char *
store_test_path(const char *rel)
{
	char	*path;

	xasprintf(&path, "%s/%s", store_dir, rel);
	return path;
}

/* Open a database read-only through SQLite itself. */
sqlite3 *
store_test_sqlite(const char *path)
{
	sqlite3	*db = NULL;

	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
	    SQLITE_OK, "sqlite3 cannot open %s", path);
	return db;
}

/* Run a query that returns one integer. */
int64_t
store_test_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*stmt;
	int64_t		 v;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(stmt), SQLITE_ROW, "%s: no row", sql);
	v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

/* A new database opened with STORE_CREATE and a writer on it. */
struct writer *
store_test_writer(const char *path)
{
	struct store	*st;
	struct writer	*w;
	char		*cause = NULL;

	st = store_open(path, STORE_CREATE, &cause);
	cr_assert_not_null(st, "store_open: %s", cause);
	w = writer_start(st, &cause);
	cr_assert_not_null(w, "writer_start: %s", cause);
	return w;
}
