/*
 * record --cassette: the files a run's sessions go to (FILE, FILE-2, ...),
 * and the check of FILE before recording starts.
 */

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cli.h"
#include "proxy.h"
#include "unit.h"

/* record_cassette.c's writes are not asked here: they stay out. */
int
cassette_save(struct store *st, int64_t id, const char *path, char **cause)
{
	(void)st;
	(void)id;
	(void)path;
	xasprintf(cause, "not in the unit tests");
	return -1;
}

/* Nor are its signals. */
void
record_stop_mask(int how)
{
	(void)how;
}

struct path_case {
	const char	*path;
	size_t		 n;
	const char	*want;
};

static const struct path_case path_cases[] = {
	{ "a.jsonl", 1, "a.jsonl" },
	{ "a.jsonl", 0, "a.jsonl" },
	{ "a.jsonl", 2, "a-2.jsonl" },
	{ "a.jsonl", 12, "a-12.jsonl" },
	{ "a", 2, "a-2" },
	{ "dir.v1/a", 2, "dir.v1/a-2" },
	{ "dir.v1/a.jsonl", 3, "dir.v1/a-3.jsonl" },
	{ ".hidden", 2, ".hidden-2" },
	{ "d/.hidden", 2, "d/.hidden-2" },
	{ "a.tar.gz", 2, "a.tar-2.gz" },
	{ "/abs/x.jsonl", 2, "/abs/x-2.jsonl" },
	{ "./-", 2, "./--2" },
};

Test(record_cassette, path_table, .timeout = UNIT_TIMEOUT)
{
	size_t	 i;
	char	*p;

	for (i = 0; i < sizeof path_cases / sizeof path_cases[0]; i++) {
		p = record_cassette_path(path_cases[i].path, path_cases[i].n);
		cr_expect_str_eq(p, path_cases[i].want, "%s, %zu",
		    path_cases[i].path, path_cases[i].n);
		free(p);
	}
}

/* A temporary directory, and a path in it. */
static char *
rc_tmpdir(void)
{
	char	*d = strdup("/tmp/mcpreel-unit-rc-XXXXXX");

	cr_assert_not_null(mkdtemp(d));
	return d;
}

Test(record_cassette, check_refuses, .timeout = UNIT_TIMEOUT)
{
	char	*d = rc_tmpdir(), *f, *fifo, *cause = NULL;

	cr_expect_eq(record_cassette_check("-", &cause), -1);
	cr_expect_not_null(strstr(cause, "./-"), "%s", cause);
	free(cause);
	cause = NULL;
	cr_expect_eq(record_cassette_check("", &cause), -1);
	free(cause);
	cause = NULL;
	cr_expect_eq(record_cassette_check(d, &cause), -1);
	free(cause);
	cause = NULL;
	xasprintf(&fifo, "%s/fifo", d);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_expect_eq(record_cassette_check(fifo, &cause), -1);
	free(cause);
	cause = NULL;
	xasprintf(&f, "%s/none/a.jsonl", d);
	cr_expect_eq(record_cassette_check(f, &cause), -1);
	free(cause);
	cause = NULL;
	free(f);
	xasprintf(&f, "%s/a.jsonl", d);
	cr_expect_eq(record_cassette_check(f, &cause), 0, "%s",
	    cause != NULL ? cause : "");
	free(f);
	unlink(fifo);
	free(fifo);
	rmdir(d);
	free(d);
}

Test(record_cassette, check_db, .timeout = UNIT_TIMEOUT)
{
	char	*d = rc_tmpdir(), *db, *wal, *other, *link, *cause = NULL;
	FILE	*f;

	xasprintf(&db, "%s/x.db", d);
	xasprintf(&wal, "%s/x.db-wal", d);
	xasprintf(&other, "%s/c.jsonl", d);
	xasprintf(&link, "%s/link.jsonl", d);
	/* Neither there yet: the same name is still the same file. */
	cr_expect_eq(record_cassette_check_db(db, db, &cause), -1);
	free(cause);
	cause = NULL;
	cr_assert_not_null(f = fopen(db, "w"));
	fclose(f);
	cr_assert_eq(symlink(db, link), 0);
	cr_expect_eq(record_cassette_check_db(link, db, &cause), -1);
	free(cause);
	cause = NULL;
	cr_expect_eq(record_cassette_check_db(wal, db, &cause), -1);
	free(cause);
	cause = NULL;
	cr_expect_eq(record_cassette_check_db(other, db, &cause), 0);
	unlink(link);
	unlink(db);
	rmdir(d);
	free(db);
	free(wal);
	free(other);
	free(link);
	free(d);
}
