/*
 * Cassettes: a recorded session as a file of JSON lines (what 'mcpreel
 * export' writes), kept beside the tests that use it.  Every command that
 * takes a SESSION takes a cassette too: the file is read into a temporary
 * store of the command's own and the command runs on that, so a cassette
 * goes through the same readers as a session of the database.
 */

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"

struct cassette {
	char	*dir;		/* the private temporary directory */
	char	*db;		/* the store in it */
	int64_t	 id;		/* the session read, 0 for none */
	struct cassette *next;	/* on the list removed at exit */
};

/* Temporary stores not freed yet: removed at exit whatever the way out. */
static struct cassette	*cassette_live;

/* Remove a temporary store's files and directory. */
static void
cassette_remove(struct cassette *c)
{
	static const char	*suffixes[] = { "", "-wal", "-shm", "-journal" };
	char			*p;
	size_t			 i;

	if (c->dir == NULL)
		return;
	for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		xasprintf(&p, "%s%s", c->db, suffixes[i]);
		unlink(p);
		free(p);
	}
	rmdir(c->dir);
	free(c->dir);
	c->dir = NULL;
}

static void
cassette_atexit(void)
{
	struct cassette	*c;

	for (c = cassette_live; c != NULL; c = c->next)
		cassette_remove(c);
}

/*
 * Whether a SESSION argument names a cassette rather than a session of the
 * database: a file that is there, or what only a path looks like (a '/'
 * in it, or a name ending in .jsonl), so a missing file is said to be
 * missing rather than looked for among the sessions.
 */
int
cassette_is(const char *arg)
{
	struct stat	 sb;
	size_t		 len = strlen(arg);

	if (stat(arg, &sb) == 0 && S_ISREG(sb.st_mode))
		return 1;
	return strchr(arg, '/') != NULL || (len > 6 &&
	    strcmp(arg + len - 6, ".jsonl") == 0);
}

/* An empty temporary store, private to this process. */
struct cassette *
cassette_temp(char **cause)
{
	static int	 registered;
	struct cassette	*c = xcalloc(1, sizeof *c);
	const char	*tmpdir = getenv("TMPDIR");

	if (tmpdir == NULL || *tmpdir == '\0')
		tmpdir = "/tmp";
	xasprintf(&c->dir, "%s/mcpreel-XXXXXX", tmpdir);
	if (mkdtemp(c->dir) == NULL) {
		xasprintf(cause, "cannot make a temporary directory in %s: %s "
		    "(set TMPDIR to a writable directory)", tmpdir,
		    strerror(errno));
		free(c->dir);
		free(c);
		return NULL;
	}
	xasprintf(&c->db, "%s/session.sqlite", c->dir);
	if (!registered) {
		atexit(cassette_atexit);
		registered = 1;
	}
	c->next = cassette_live;
	cassette_live = c;
	return c;
}

/*
 * Read the cassette at path into a new temporary store.  A file that is
 * not whole and well-formed is refused with the line it failed at, and
 * nothing is kept.
 */
struct cassette *
cassette_load(const char *path, char **cause)
{
	struct import	 imp;
	struct cassette	*c;
	FILE		*f;
	int64_t		 id;

	memset(&imp, 0, sizeof imp);
	if ((f = imp.file = fopen(path, "re")) == NULL) {
		xasprintf(cause, "cannot open the cassette %s: %s", path,
		    strerror(errno));
		return NULL;
	}
	if ((c = cassette_temp(cause)) == NULL) {
		fclose(imp.file);
		return NULL;
	}
	imp.path = path;
	imp.format = IMPORT_JSONL;
	imp.keep = 1;
	imp.scratch = 1;
	imp.max_record = 0;
	if (import_file(&imp, c->db, &id) != 0) {
		*cause = imp.cause;
		imp.cause = NULL;
		import_clear(&imp);
		fclose(f);
		cassette_free(c);
		return NULL;
	}
	fclose(f);
	import_clear(&imp);
	c->id = id;
	return c;
}

/* The path of the temporary store. */
const char *
cassette_db(const struct cassette *c)
{
	return c->db;
}

/* The session the cassette held, as the store numbers it. */
int64_t
cassette_session(const struct cassette *c)
{
	return c->id;
}

/* Remove the temporary store and free the cassette. */
void
cassette_free(struct cassette *c)
{
	struct cassette	**pp;

	if (c == NULL)
		return;
	for (pp = &cassette_live; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	cassette_remove(c);
	free(c->db);
	free(c);
}

/* Write session id of st to path as a cassette, whole or not at all. */
int
cassette_save(struct store *st, int64_t id, const char *path, char **cause)
{
	return export_jsonl_file(st, id, path, cause);
}

/*
 * Open the session a command was given: SESSION is an id, a name or
 * 'last' in the database (db, or the default one), or a cassette.  flags
 * are store_open()'s, for the database.
 */
int
session_arg_open(const char *db, const char *arg, int flags,
    struct session_arg *sa, char **cause)
{
	memset(sa, 0, sizeof *sa);
	if (cassette_is(arg)) {
		if ((sa->cassette = cassette_load(arg, cause)) == NULL)
			return -1;
		sa->db = xstrdup(cassette_db(sa->cassette));
		sa->id = cassette_session(sa->cassette);
	} else if ((sa->db = dbpath_resolve(db, cause)) == NULL)
		return -1;
	if ((sa->st = store_open(sa->db, sa->cassette != NULL ?
	    STORE_PRIVATE | STORE_SCRATCH : flags, cause)) == NULL)
		goto fail;
	if (sa->cassette == NULL && query_find_session(sa->st, arg, &sa->id,
	    cause) != 0)
		goto fail;
	return 0;
fail:
	session_arg_close(sa);
	return -1;
}

/* Close what session_arg_open() opened (a store handed on is NULL). */
void
session_arg_close(struct session_arg *sa)
{
	if (sa->st != NULL)
		store_close(sa->st);
	free(sa->db);
	cassette_free(sa->cassette);
	memset(sa, 0, sizeof *sa);
}

/*
 * Hand over the store a command records its own run in (replay's, mock's
 * forwarded exchanges): the database the session came from; for a
 * cassette, which is read-only input, the database --db names (db, created
 * if need be), or *st NULL when none was given: the run is not recorded.
 */
int
session_arg_recorder(const char *db, struct session_arg *sa,
    struct store **st, char **cause)
{
	char	*path;

	*st = NULL;
	if (sa->cassette == NULL) {
		*st = sa->st;
		sa->st = NULL;
		return 0;
	}
	if (db == NULL)
		return 0;
	if ((path = dbpath_resolve(db, cause)) == NULL)
		return -1;
	*st = store_open(path, STORE_CREATE | STORE_PRIVATE, cause);
	free(path);
	return *st == NULL ? -1 : 0;
}
