/*
 * record --cassette FILE: the sessions a recording made, written as
 * cassettes once the writer has drained, each whole or not at all.  Over
 * stdio a run is one session; over HTTP each MCP session is one, and the
 * first goes to FILE, the next to FILE-2 (before its extension), and so on.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "proxy.h"
#include "store.h"

/*
 * Whether a file can be made beside path (a cassette's temporary file
 * goes there before it replaces path): 0, or the errno that says why not.
 * record --cassette and mock --cassette ask it before they start.
 */
int
record_cassette_beside(const char *path)
{
	char	*tmp;
	int	 fd, error = 0;

	xasprintf(&tmp, "%s.XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		error = errno;
	else {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	return error;
}

/*
 * Whether a file can be made beside path, which is where a cassette's
 * temporary file goes (beside what a symbolic link points to, as export
 * writes it).
 */
static int
record_cassette_probe(const char *path, char **cause)
{
	char	*real;
	int	 error;

	if ((real = realpath(path, NULL)) != NULL)
		path = real;
	if ((error = record_cassette_beside(path)) != 0) {
		xasprintf(cause, "--cassette %s: cannot create a file there: "
		    "%s (is its directory there and writable?)", path,
		    strerror(error));
		free(real);
		return -1;
	}
	free(real);
	return 0;
}

/*
 * Whether a cassette can go to path: a regular file or none yet (not "-",
 * a directory, a device or a pipe), and a file can be made beside it.
 * Asked before recording starts, so a typo costs nothing; the write at
 * the end can still fail (a full disk).
 */
int
record_cassette_check(const char *path, char **cause)
{
	struct stat	 sb;

	if (*path == '\0') {
		xasprintf(cause, "--cassette needs a file name");
		return -1;
	}
	if (strcmp(path, "-") == 0) {
		xasprintf(cause, "--cassette -: a cassette is written to a "
		    "file, not to standard output (give a file name; ./- for "
		    "a file named -)");
		return -1;
	}
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		xasprintf(cause, "--cassette %s: not a regular file (give the "
		    "path of the cassette file to write)", path);
		return -1;
	}
	return record_cassette_probe(path, cause);
}

/* Whether a and b are one file (both there, same device and inode). */
static int
record_cassette_same(const char *a, const char *b)
{
	struct stat	 sa, sb;

	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * Whether the cassette path would replace the database db (or its -wal or
 * -shm file), asked once the database is open, so that it is there.
 */
int
record_cassette_check_db(const char *path, const char *db, char **cause)
{
	static const char	*const sfx[] = { "", "-wal", "-shm" };
	char			*f;
	size_t			 i;
	int			 same;

	for (i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
		xasprintf(&f, "%s%s", db, sfx[i]);
		same = strcmp(f, path) == 0 || record_cassette_same(f, path);
		free(f);
		if (same) {
			xasprintf(cause, "--cassette %s is the database %s%s: "
			    "give another file for the cassette", path, db,
			    sfx[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * The file of the nth cassette of a run (from 1): path itself, then path
 * with -N before the extension of its last component ("a.jsonl" gives
 * "a-2.jsonl", "a" gives "a-2").
 */
char *
record_cassette_path(const char *path, size_t n)
{
	const char	*base, *dot;
	char		*p;

	if (n <= 1)
		return xstrdup(path);
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	dot = strrchr(base, '.');
	if (dot == NULL || dot == base)
		dot = base + strlen(base);
	xasprintf(&p, "%.*s-%zu%s", (int)(dot - path), path, n, dot);
	return p;
}

/* What record_cassette_write() reads of a session: its counts. */
static int
record_cassette_count_cb(const struct session_row *r, void *arg)
{
	int64_t	*c = arg;

	c[0] = r->messages;
	c[1] = r->messages_lost;
	return 0;
}

/* Sort session ids, oldest first. */
static int
record_cassette_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Once recording has stopped, until exit: a second SIGINT, SIGTERM or
 * SIGHUP is ignored (one already pending is dropped), since the user asked
 * to stop and what is under way is the writer's drain and the cassette.
 * The signals stay blocked (record_stdio() and record_http() block them
 * before they stop listening for them).  SIGKILL still ends it, leaving
 * FILE as it was.
 */
void
record_cassette_hold(void)
{
	static const int	 sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction	 ign;
	size_t			 i;

	record_stop_mask(SIG_BLOCK);
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &ign, NULL);
}

/*
 * Whether the nth cassette can be written to file: a regular file or none
 * (a directory or a pipe left there is refused: a pipe would block).
 */
static int
record_cassette_target(const char *file, char **cause)
{
	struct stat	 sb;

	if (stat(file, &sb) != 0) {
		if (errno == ENOENT)
			return 0;
		xasprintf(cause, "the cassette %s was not written: %s", file,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		xasprintf(cause, "the cassette %s was not written: it is not "
		    "a regular file", file);
		return -1;
	}
	log_info("cassette %s: replacing the file there", file);
	return 0;
}

/*
 * Write the sessions ids[0..n) of the store at db as cassettes at path
 * (and path-2, ... for more than one), oldest first.  A session without a
 * message (a server that did not answer, an HTTP request outside any MCP
 * session) is not written: FILE stays as it was.  *lost gets how many
 * messages the written sessions lack (forwarded, never recorded).
 * Returns how many were written, or -1 with *cause (files written before
 * the failure stay: each is whole).
 */
int
record_cassette_write(const char *db, int64_t *ids, size_t n,
    const char *path, int64_t *lost, char **cause)
{
	struct store		*st;
	char			*file, *why = NULL;
	size_t			 i, written = 0;
	int64_t			 c[2];
	int			 rc = 0;

	*lost = 0;
	if ((st = store_open(db, 0, &why)) == NULL) {
		xasprintf(cause, "the cassette %s was not written: %s", path,
		    why);
		free(why);
		return -1;
	}
	if (n > 1)
		qsort(ids, n, sizeof *ids, record_cassette_cmp);
	for (i = 0; i < n; i++) {
		c[0] = c[1] = 0;
		if (query_sessions(st, ids[i], record_cassette_count_cb, c,
		    &why) != 0) {
			xasprintf(cause, "the cassette %s was not written: %s",
			    path, why);
			free(why);
			rc = -1;
			break;
		}
		if (c[0] == 0) {
			log_info("session %lld holds no message: no cassette",
			    (long long)ids[i]);
			continue;
		}
		file = record_cassette_path(path, written + 1);
		if (record_cassette_target(file, cause) != 0) {
			free(file);
			rc = -1;
			break;
		}
		if (cassette_save(st, ids[i], file, &why) != 0) {
			xasprintf(cause, "the cassette %s (session %lld) was "
			    "not written: %s", file, (long long)ids[i], why);
			free(why);
			free(file);
			rc = -1;
			break;
		}
		log_info("cassette %s: session %lld, %lld messages",
		    file, (long long)ids[i], (long long)c[0]);
		if (c[1] != 0)
			log_warnx("the cassette %s lacks %lld messages that "
			    "were forwarded but could not be recorded", file,
			    (long long)c[1]);
		*lost += c[1];
		free(file);
		written++;
	}
	store_close(st);
	return rc != 0 ? -1 : (int)written;
}
