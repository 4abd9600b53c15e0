/* Where the database lives when --db is not given. */

#include <stdlib.h>

#include "cli.h"

/*
 * $MCPREEL_DB, else $XDG_DATA_HOME/mcpreel/mcpreel.db, else
 * ~/.local/share/mcpreel/mcpreel.db.
 */
char *
dbpath_default(char **cause)
{
	const char	*env, *home;
	char		*path;

	if ((env = getenv("MCPREEL_DB")) != NULL && *env != '\0')
		return xstrdup(env);
	if ((env = getenv("XDG_DATA_HOME")) != NULL && *env == '/') {
		xasprintf(&path, "%s/mcpreel/mcpreel.db", env);
		return path;
	}
	if ((home = getenv("HOME")) == NULL || *home == '\0') {
		xasprintf(cause, "no database given and HOME is not set: use "
		    "--db PATH or set MCPREEL_DB");
		return NULL;
	}
	xasprintf(&path, "%s/.local/share/mcpreel/mcpreel.db", home);
	return path;
}

/* The --db argument if given, else the default. */
char *
dbpath_resolve(const char *opt, char **cause)
{
	if (opt != NULL)
		return xstrdup(opt);
	return dbpath_default(cause);
}
