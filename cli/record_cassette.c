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
#include "store.h"

/*
 * Whether a cassette can go to path: not a directory or a device, and a
 * file can be made beside it.  Asked before recording starts, so a typo
 * costs nothing; the write at the end can still fail (a full disk).
 */
int
record_cassette_check(const char *path, char **cause)
{
	struct stat	 sb;
	char		*tmp;
	int		 fd;

	if (*path == '\0') {
		xasprintf(cause, "--cassette needs a file name");
		return -1;
	}
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		xasprintf(cause, "--cassette %s: not a regular file (give the "
		    "path of the cassette file to write)", path);
		return -1;
	}
	xasprintf(&tmp, "%s.XXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		xasprintf(cause, "--cassette %s: cannot create a file there: "
		    "%s (is its directory there and writable?)", path,
		    strerror(errno));
		free(tmp);
		return -1;
	}
	close(fd);
	unlink(tmp);
	free(tmp);
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

/* What record_cassette_write() reads of a session: its message count. */
static int
record_cassette_count_cb(const struct session_row *r, void *arg)
{
	*(int64_t *)arg = r->messages;
	return 0;
}

/* Sort session ids, oldest first. */
static int
record_cassette_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The signals that ask a recording to stop, and what they did before. */
static const int	 record_cassette_sigs[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction	 record_cassette_old[3];
static int		 record_cassette_held;

/*
 * Once recording has stopped (on = 1) until the cassette is written (on =
 * 0), a second SIGINT, SIGTERM or SIGHUP is ignored: the user asked to
 * stop, and what is under way is the writer's drain and the cassette.
 * SIGKILL still ends it, leaving FILE as it was.
 */
void
record_cassette_hold(int on)
{
	struct sigaction	 ign;
	size_t			 i;

	if (on == record_cassette_held)
		return;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (i = 0; i < 3; i++) {
		if (on)
			sigaction(record_cassette_sigs[i], &ign,
			    &record_cassette_old[i]);
		else
			sigaction(record_cassette_sigs[i],
			    &record_cassette_old[i], NULL);
	}
	record_cassette_held = on;
}

/*
 * Write the sessions ids[0..n) of the store at db as cassettes at path
 * (and path-2, ... for more than one), oldest first.  With skip_empty, a
 * session without a message (an HTTP request outside any MCP session) is
 * not written.  Returns how many were written, or -1 with *cause (files
 * written before the failure stay: each is whole).
 */
int
record_cassette_write(const char *db, int64_t *ids, size_t n, int skip_empty,
    const char *path, char **cause)
{
	struct store		*st;
	char			*file, *why = NULL;
	size_t			 i, written = 0;
	int64_t			 messages;
	int			 rc = 0;

	if ((st = store_open(db, 0, &why)) == NULL) {
		xasprintf(cause, "the cassette %s was not written: %s", path,
		    why);
		free(why);
		return -1;
	}
	if (n > 1)
		qsort(ids, n, sizeof *ids, record_cassette_cmp);
	for (i = 0; i < n; i++) {
		messages = 0;
		if (query_sessions(st, ids[i], record_cassette_count_cb,
		    &messages, &why) != 0) {
			xasprintf(cause, "the cassette %s was not written: %s",
			    path, why);
			free(why);
			rc = -1;
			break;
		}
		if (skip_empty && messages == 0) {
			log_debug("session %lld holds no message: no cassette",
			    (long long)ids[i]);
			continue;
		}
		file = record_cassette_path(path, written + 1);
		if (cassette_save(st, ids[i], file, &why) != 0) {
			xasprintf(cause, "the cassette %s (session %lld) was "
			    "not written: %s", file, (long long)ids[i], why);
			free(why);
			free(file);
			rc = -1;
			break;
		}
		log_info("cassette %s: session %lld, %lld messages", file,
		    (long long)ids[i], (long long)messages);
		free(file);
		written++;
	}
	store_close(st);
	return rc != 0 ? -1 : (int)written;
}
