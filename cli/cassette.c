/*
 * Cassettes: a recorded session as a file of JSON lines (what 'mcpreel
 * export' writes), kept beside the tests that use it.  Every command that
 * takes a SESSION takes a cassette too: the file is read into a temporary
 * store of the command's own and the command runs on that, so a cassette
 * goes through the same readers as a session of the database.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"
#include "proxy.h"

/* The files SQLite and the store may make beside a database. */
static const char *cassette_suffixes[] = {
	"", "-wal", "-shm", "-journal", "-reserve."	/* and our pid */
};
#define CASSETTE_NFILES	(sizeof cassette_suffixes / sizeof cassette_suffixes[0])

struct cassette {
	char	*dir;		/* the private temporary directory */
	char	*db;		/* the store in it */
	int64_t	 id;		/* the session read, 0 for none */
	/* Made in advance: a signal handler may only unlink them. */
	char	*files[CASSETTE_NFILES];
	int	 slot;		/* in cassette_slots, -1 if none */
};

/*
 * Temporary stores not removed yet, for the exit and signal handlers: a
 * fixed table, since a handler can walk it without locks or allocation.
 * A process reads a few cassettes at most; beyond the table, only exit
 * and free remove them.
 */
#define CASSETTE_SLOTS	8
static struct cassette *volatile cassette_slots[CASSETTE_SLOTS];

/* Remove a temporary store's files and its directory (signal-safe). */
static void
cassette_unlink(struct cassette *c)
{
	size_t	i;

	for (i = 0; i < CASSETTE_NFILES; i++) {
		if (c->files[i] != NULL)
			unlink(c->files[i]);
	}
	rmdir(c->dir);
}

static void
cassette_atexit(void)
{
	int	i;

	for (i = 0; i < CASSETTE_SLOTS; i++) {
		if (cassette_slots[i] != NULL)
			cassette_unlink(cassette_slots[i]);
	}
}

/*
 * A signal that would end the process where it stands (none of mcpreel's
 * own handlers is set for it): remove the temporary stores, then die of
 * it as before.
 */
static void
cassette_signal(int sig)
{
	cassette_atexit();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Catch the signals that end a process, where nothing else catches them. */
static void
cassette_catch(void)
{
	static const int	 sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction	 sa, old;
	size_t			 i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = cassette_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
}

/*
 * Whether a SESSION argument can only be a cassette: it looks like a path
 * (a '/' in it, or a name ending in .jsonl), so a missing file is said to
 * be missing rather than looked for among the sessions.  Another word is
 * a cassette only when no session has it (session_arg_open()).
 */
int
cassette_is(const char *arg)
{
	size_t	len = strlen(arg);

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
	size_t		 i;

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
	for (i = 0; i < CASSETTE_NFILES; i++)
		xasprintf(&c->files[i], "%s%s", c->db, cassette_suffixes[i]);
	/* store_reserve() names its file after the process. */
	free(c->files[CASSETTE_NFILES - 1]);
	xasprintf(&c->files[CASSETTE_NFILES - 1], "%s-reserve.%ld", c->db,
	    (long)getpid());
	if (!registered) {
		atexit(cassette_atexit);
		cassette_catch();
		registered = 1;
	}
	c->slot = -1;
	for (i = 0; i < CASSETTE_SLOTS; i++) {
		if (cassette_slots[i] == NULL) {
			cassette_slots[i] = c;
			c->slot = (int)i;
			break;
		}
	}
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
	imp.max_record = RECORD_MAX_RECORD;
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
	size_t	i;

	if (c == NULL)
		return;
	if (c->slot != -1)
		cassette_slots[c->slot] = NULL;
	cassette_unlink(c);
	for (i = 0; i < CASSETTE_NFILES; i++)
		free(c->files[i]);
	free(c->dir);
	free(c->db);
	free(c);
}

/* Write session id of st to path as a cassette, whole or not at all. */
int
cassette_save(struct store *st, int64_t id, const char *path, char **cause)
{
	return export_jsonl_file(st, id, path, cause);
}
