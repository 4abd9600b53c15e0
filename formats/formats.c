/*
 * A session written out as a file, whole or not at all: one place for
 * the temporary file beside the target, its sync and its rename, which
 * export, cassettes and mock --record-mode all write through.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats.h"
#include "store.h"

/*
 * Open path for writing (see struct formats_file): the stream, or NULL
 * with *cause.
 */
FILE *
formats_open(struct formats_file *ff, const char *path, int keep_mode,
    char **cause)
{
	struct stat	 sb;
	int		 fd, there;

	memset(ff, 0, sizeof *ff);
	ff->path = path;
	if (path == NULL || strcmp(path, "-") == 0)
		return ff->f = stdout;
	there = stat(path, &sb) == 0;
	if (there && !S_ISREG(sb.st_mode)) {
		if (S_ISDIR(sb.st_mode)) {
			xasprintf(cause, "%s is a directory: give a file name",
			    path);
			return NULL;
		}
		if ((ff->f = fopen(path, "we")) == NULL)
			xasprintf(cause, "cannot write to %s: %s", path,
			    strerror(errno));
		return ff->f;
	}
	if ((ff->real = realpath(path, NULL)) != NULL)
		path = ff->real;
	xasprintf(&ff->tmp, "%s.XXXXXX", path);
	if ((fd = mkostemp(ff->tmp, O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot create a file beside %s: %s (is its "
		    "directory there and writable?)", path, strerror(errno));
		free(ff->tmp);
		free(ff->real);
		ff->tmp = ff->real = NULL;
		return NULL;
	}
	/*
	 * A file there keeps its mode (a fixture is often 0644); a stream
	 * that cannot be made (no memory) is an error, the file removed.
	 */
	if ((keep_mode && there && fchmod(fd, sb.st_mode & 07777) != 0) ||
	    (ff->f = fdopen(fd, "w")) == NULL) {
		xasprintf(cause, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		unlink(ff->tmp);
		free(ff->tmp);
		free(ff->real);
		ff->tmp = ff->real = NULL;
		return NULL;
	}
	return ff->f;
}

/* Sync the directory of path, so that a rename in it is on disk too. */
static void
formats_sync_dir(const char *path)
{
	char	*dir = xstrdup(path);
	int	 fd;

	/* Best effort: the file itself is synced already. */
	if ((fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) !=
	    -1) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

/*
 * Finish the output: flushed and closed, renamed into place; when failed
 * (or it cannot be), the temporary file is removed and *cause says why
 * (cause may be NULL when the caller has its reason already).
 */
int
formats_close(struct formats_file *ff, int failed, char **cause)
{
	const char	*path = ff->real != NULL ? ff->real : ff->path;
	int		 rc = 0, out = (ff->f == stdout);

	if (fflush(ff->f) != 0 || ferror(ff->f))
		failed = 1;
	/* A file that replaces another is on disk before it does. */
	if (!failed && ff->tmp != NULL && fsync(fileno(ff->f)) != 0)
		failed = 1;
	if (!out && fclose(ff->f) != 0)
		failed = 1;
	if (failed) {
		if (cause != NULL)
			xasprintf(cause, "cannot write %s: %s", !out ?
			    path : "to stdout", errno != 0 ? strerror(errno) :
			    "write error");
		rc = -1;
	} else if (ff->tmp != NULL && rename(ff->tmp, path) != 0) {
		xasprintf(cause, "cannot rename %s to %s: %s", ff->tmp, path,
		    strerror(errno));
		rc = -1;
	} else if (ff->tmp != NULL)
		formats_sync_dir(path);
	if (rc != 0 && ff->tmp != NULL)
		unlink(ff->tmp);
	free(ff->tmp);
	free(ff->real);
	memset(ff, 0, sizeof *ff);
	return rc;
}

/*
 * Write the parts (pointer, length pairs; NULL ends them) to path, whole
 * or not at all, a file there keeping its mode.  Only ever a regular
 * file: "-" is not stdout here, and a device or a pipe is refused.
 */
int
formats_write_file(const char *path, const char *const *parts,
    const size_t *lens, char **cause)
{
	struct formats_file	 ff;
	struct stat		 sb;
	FILE			*f;
	size_t			 i;
	int			 failed = 0;

	if (path == NULL || strcmp(path, "-") == 0) {
		xasprintf(cause, "%s: a file name is needed, not standard "
		    "output (./- for a file named -)", path == NULL ? "(none)" :
		    path);
		return -1;
	}
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		xasprintf(cause, "%s is not a regular file", path);
		return -1;
	}
	if ((f = formats_open(&ff, path, 1, cause)) == NULL)
		return -1;
	errno = 0;
	/*
	 * fwrite() does not retry EINTR; a regular file on a local disk
	 * does not give it, and mock blocks its stop signals before this.
	 */
	for (i = 0; parts[i] != NULL && !failed; i++) {
		if (lens[i] != 0 && fwrite(parts[i], 1, lens[i], f) != lens[i])
			failed = 1;
	}
	return formats_close(&ff, failed, cause);
}

/* Keep the session's transport for the HAR check. */
static int
formats_transport_cb(const struct session_info *si, void *arg)
{
	char	**transport = arg;

	*transport = xstrdup(si->transport);
	return 0;
}

/* The session as a HAR to f; a stdio session has no HTTP to hold. */
static int
formats_har(struct store *st, int64_t id, FILE *f, int *failed,
    char **cause)
{
	char	*transport = NULL;
	int	 rc;

	if (query_session_info(st, id, formats_transport_cb, &transport,
	    cause) != 0)
		return -1;
	if (strcmp(transport, "stdio") == 0) {
		xasprintf(cause, "session %lld was recorded over stdio: a HAR "
		    "holds HTTP requests, and it has none.  Export it with "
		    "--format jsonl", (long long)id);
		free(transport);
		return -1;
	}
	free(transport);
	rc = har_write(st, id, f, cause);
	if (ferror(f))
		*failed = 1;
	return rc;
}

/*
 * Write session id of st to path (NULL or "-": stdout) as kind, whole or
 * not at all: a private file beside it replaces it once complete.
 */
int
formats_export(struct store *st, int64_t id, enum formats_kind kind,
    const char *path, char **cause)
{
	struct formats_file	 ff;
	FILE			*f;
	int			 rc, failed = 0;

	if ((f = formats_open(&ff, path, 0, cause)) == NULL)
		return -1;
	errno = 0;
	if (kind == FORMATS_HAR)
		rc = formats_har(st, id, f, &failed, cause);
	else
		rc = jsonl_export(st, id, f, &failed, cause);
	if (rc != 0) {
		formats_close(&ff, 1, NULL);
		return -1;
	}
	return formats_close(&ff, failed, cause);
}
