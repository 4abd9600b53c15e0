/*
 * The session a command was given as SESSION: a cassette file, or an id,
 * a name or 'last' in the database.
 */

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "store.h"
#include "replay.h"

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

/* The session's name into *(char **)arg (query_sessions() callback). */
int
session_arg_name_cb(const struct session_row *r, void *arg)
{
	char	**name = arg;

	free(*name);
	*name = r->name != NULL ? xstrdup(r->name) : NULL;
	return 0;
}

/*
 * Load the plan of SESSION arg for cmd (replay, mock, diff): a cassette
 * straight from the file, a session from the database (db, or the
 * default).  *id and *name (NULL for none; name may be NULL) get what it
 * is.  With rec not NULL, *rec gets the store cmd records its own run in:
 * the session's database; for a cassette, read-only input, the database
 * --db names (db), or NULL when none was given: the run is not recorded.
 */
int
session_arg_plan(const char *db, const char *arg, int include_faults,
    const char *cmd, struct plan *p, int64_t *id, char **name,
    struct store **rec, char **cause)
{
	struct session_arg	 sa;
	int			 rc = -1;

	if (rec != NULL)
		*rec = NULL;
	if (cassette_is(arg)) {
		if (cassette_plan(arg, include_faults, cmd, p, id, name,
		    cause) != 0)
			return -1;
		if (rec != NULL && cassette_recorder(db, rec, cause) != 0) {
			plan_clear(p);
			if (name != NULL) {
				free(*name);
				*name = NULL;
			}
			return -1;
		}
		return 0;
	}
	/* Only a command that records its run makes the database private. */
	if (session_arg_open(db, arg, rec != NULL ? STORE_PRIVATE : 0, &sa,
	    cause) != 0)
		return -1;
	*id = sa.id;
	if ((name == NULL || query_sessions(sa.st, sa.id,
	    session_arg_name_cb, name, cause) == 0) &&
	    cli_load_plan(sa.st, sa.id, include_faults, cmd, p, cause) == 0 &&
	    (rec == NULL || session_arg_recorder(db, &sa, rec, cause) == 0))
		rc = 0;
	session_arg_close(&sa);
	if (rc != 0 && name != NULL) {
		free(*name);
		*name = NULL;
	}
	return rc;
}
