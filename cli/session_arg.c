/*
 * The session a command was given as SESSION: a cassette file, or an id,
 * a name or 'last' in the database.
 */

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "store.h"

/* Whether arg names a regular file. */
static int
session_arg_file(const char *arg)
{
	struct stat	sb;

	return stat(arg, &sb) == 0 && S_ISREG(sb.st_mode);
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
	char	*why = NULL;

	memset(sa, 0, sizeof *sa);
	/*
	 * A word that is also a file's name (last, 12, a session's name) is
	 * the session when there is one; the file only when there is none.
	 */
	if (!cassette_is(arg)) {
		if ((sa->db = dbpath_resolve(db, cause)) == NULL)
			return -1;
		if ((sa->st = store_open(sa->db, flags, &why)) != NULL &&
		    query_find_session(sa->st, arg, &sa->id, &why) == 0)
			return 0;
		if (!session_arg_file(arg)) {
			*cause = why;
			goto fail;
		}
		free(why);
		session_arg_close(sa);
	}
	if ((sa->cassette = cassette_load(arg, cause)) == NULL)
		return -1;
	sa->db = xstrdup(cassette_db(sa->cassette));
	sa->id = cassette_session(sa->cassette);
	if ((sa->st = store_open(sa->db, STORE_PRIVATE | STORE_SCRATCH,
	    cause)) == NULL)
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
	*st = NULL;
	if (sa->cassette == NULL) {
		*st = sa->st;
		sa->st = NULL;
		return 0;
	}
	return cassette_recorder(db, st, cause);
}
