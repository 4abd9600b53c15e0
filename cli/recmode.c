/*
 * mock --record-mode: a cassette recorded through mock's fallback.  The
 * client's side of what went through the fallback is recorded into a
 * temporary store of its own (mock.c says what goes in), and when mock
 * ends it is exported as JSON lines and written to the cassette: whole
 * (all), keeping the old file's lines where only their times changed
 * (restamp.c), or appended to the old file's bytes (new_episodes).
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "formats.h"
#include "replay.h"
#include "store.h"

/*
 * The largest cassette read whole to re-record or append to: a fixture
 * beside a test is far smaller.  Re-recording holds the old file, the new
 * recording and the result, with 48 bytes a line and a table of hashes
 * (restamp.c): about 3 to 4 times the file at most.
 */
#define RECMODE_MAX_FILE	((size_t)256 << 20)

static const char *recmode_names[RECMODE_MAX] = {
	"none", "once", "new_episodes", "all"
};

/* The mode called name; -1 when there is none. */
int
recmode_parse(const char *name, enum recmode_mode *mode)
{
	int	i;

	for (i = 0; i < RECMODE_MAX; i++) {
		if (strcmp(name, recmode_names[i]) == 0) {
			*mode = i;
			return 0;
		}
	}
	return -1;
}

/* The mode's name, as --record-mode takes it. */
const char *
recmode_name(enum recmode_mode mode)
{
	return mode < RECMODE_MAX ? recmode_names[mode] : "?";
}

/*
 * Begin recording the cassette rm->path: a temporary store and a session
 * in it, over transport to target.
 */
int
recmode_begin(struct recmode *rm, const char *transport, const char *target,
    char **cause)
{
	struct store	*st;
	char		*copy;

	if ((rm->tmp = cassette_temp(cause)) == NULL)
		return -1;
	if ((st = store_open(cassette_db(rm->tmp), STORE_CREATE |
	    STORE_PRIVATE, cause)) == NULL)
		return -1;
	if ((rm->w = writer_start(st, cause)) == NULL) {
		store_close(st);
		return -1;
	}
	copy = xstrdup(rm->path);
	rm->ws = writer_session_as(rm->w, basename(copy), transport, target,
	    ORIGIN_MOCK);
	free(copy);
	return 0;
}

/* Whether the file at path begins with a cassette's header line. */
static int
recmode_is_cassette(const char *path)
{
	char	 buf[65536];
	size_t	 n;
	char	*nl;
	json_t	*o;
	FILE	*f;
	int	 yes;

	if ((f = fopen(path, "re")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((nl = memchr(buf, '\n', n)) != NULL)
		n = (size_t)(nl - buf);
	o = json_loadb(buf, n, 0, NULL);
	yes = json_is_object(o) && json_is_string(json_object_get(o,
	    "format")) && strcmp(json_string_value(json_object_get(o,
	    "format")), "mcpreel-jsonl") == 0;
	json_decref(o);
	return yes;
}

/*
 * Before mock serves: where the cassette will be written (a symlink
 * followed), that a file can be made there, and that rewriting does not
 * replace a file that is not a cassette.
 */
int
recmode_check(struct recmode *rm, char **cause)
{
	struct stat	 sb;
	int		 error;

	free(rm->real);
	rm->real = NULL;
	if (strcmp(rm->path, "-") == 0) {
		xasprintf(cause, "--cassette -: a cassette is written to a "
		    "file, not to standard output (give a file name; ./- for "
		    "a file named -)");
		return -1;
	}
	if (lstat(rm->path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		if ((rm->real = realpath(rm->path, NULL)) == NULL) {
			xasprintf(cause, "%s is a symlink to nothing there "
			    "(%s): the cassette would not be written where it "
			    "points", rm->path, strerror(errno));
			return -1;
		}
	} else
		rm->real = xstrdup(rm->path);
	if (stat(rm->real, &sb) == 0) {
		if (!S_ISREG(sb.st_mode)) {
			xasprintf(cause, "%s is not a regular file", rm->path);
			return -1;
		}
		if (!rm->appending && !recmode_is_cassette(rm->real)) {
			xasprintf(cause, "%s is there and is not a cassette "
			    "(its first line is not a mcpreel-jsonl header): "
			    "not replacing it (rm %s to record there)",
			    rm->path, rm->path);
			return -1;
		}
	}
	if ((error = record_cassette_beside(rm->real)) != 0) {
		xasprintf(cause, "cannot create a file beside %s: %s (is its "
		    "directory there and writable?)", rm->path,
		    strerror(error));
		return -1;
	}
	return 0;
}

/* Read the file at path whole; NULL with cause (ENOENT in *missing). */
static char *
recmode_read(const char *path, size_t *len, int *missing, char **cause)
{
	struct stat	 sb;
	char		*buf;
	FILE		*f;

	*len = 0;
	if (missing != NULL)
		*missing = 0;
	if ((f = fopen(path, "re")) == NULL) {
		if (missing != NULL && errno == ENOENT)
			*missing = 1;
		xasprintf(cause, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (uintmax_t)sb.st_size > RECMODE_MAX_FILE) {
		xasprintf(cause, "%s is not a regular file of at most %zu "
		    "MiB (the most mock reads whole to rewrite or append "
		    "to)", path, RECMODE_MAX_FILE >> 20);
		fclose(f);
		return NULL;
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	*len = fread(buf, 1, (size_t)sb.st_size, f);
	if (ferror(f) || *len != (size_t)sb.st_size) {
		xasprintf(cause, "cannot read %s whole (did it change while "
		    "mock ran?)", path);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/*
 * The recording as the JSON lines export writes (*len bytes); the
 * session ended, the writer stopped.
 */
static char *
recmode_export(struct recmode *rm, size_t *len, char **cause)
{
	struct store	*st;
	char		*path, *buf = NULL;
	int64_t		 id;
	uint64_t	 lost;

	writer_session_end(rm->w, rm->ws, -1, 0, "mock stopped");
	id = writer_session_id(rm->ws);
	writer_stop(rm->w);
	lost = writer_session_lost(rm->ws);
	writer_session_free(rm->ws);
	rm->w = NULL;
	rm->ws = NULL;
	if (lost > 0) {
		xasprintf(cause, "%llu message%s could not be kept while "
		    "recording (is the temporary directory full?)",
		    (unsigned long long)lost, lost == 1 ? "" : "s");
		return NULL;
	}
	if ((st = store_open(cassette_db(rm->tmp), STORE_PRIVATE, cause)) ==
	    NULL)
		return NULL;
	xasprintf(&path, "%s.jsonl", cassette_db(rm->tmp));
	if (formats_export(st, id, FORMATS_JSONL, path, cause) == 0)
		buf = recmode_read(path, len, NULL, cause);
	store_close(st);
	unlink(path);
	free(path);
	return buf;
}

/*
 * Mock has ended: write what was recorded to the cassette.  Appending
 * (new_episodes on a file there): the new exchanges after the file's
 * bytes, numbered on, and nothing at all when there are none.  Else the
 * file rewritten, its unchanged lines kept; not written when that gives
 * its bytes.  *added: the messages written anew.
 */
int
recmode_end(struct recmode *rm, size_t *added, char **cause)
{
	const char	*parts[4];
	size_t		 lens[4], newlen, oldlen = 0, outlen, n = 0;
	char		*newbuf, *oldbuf = NULL, *out = NULL;
	int		 missing, rc = -1;

	*added = 0;
	if ((newbuf = recmode_export(rm, &newlen, cause)) == NULL)
		return -1;
	out = restamp_renumber(newbuf, newlen, 0, &outlen);
	*added = (size_t)restamp_last_seq(out, outlen);
	free(out);
	out = NULL;
	if (rm->appending) {
		if (*added == 0) {
			rc = 0;
			goto done;
		}
		if ((oldbuf = recmode_read(rm->path, &oldlen, NULL, cause)) ==
		    NULL)
			goto done;
		out = restamp_append(oldbuf, oldlen, newbuf, newlen, &outlen);
		parts[n] = oldbuf;
		lens[n++] = oldlen;
		if (oldlen > 0 && oldbuf[oldlen - 1] != '\n') {
			parts[n] = "\n";
			lens[n++] = 1;
		}
	} else {
		oldbuf = recmode_read(rm->path, &oldlen, &missing, cause);
		if (oldbuf == NULL && !missing)
			goto done;
		free(*cause);
		*cause = NULL;
		out = restamp_stable(oldbuf, oldlen, newbuf, newlen, &outlen);
		if (oldbuf != NULL && outlen == oldlen && memcmp(out, oldbuf,
		    oldlen) == 0) {
			*added = 0;
			rc = 0;
			goto done;
		}
	}
	parts[n] = out;
	lens[n++] = outlen;
	parts[n] = NULL;
	rc = formats_write_file(rm->real != NULL ? rm->real : rm->path, parts,
	    lens, cause);
done:
	free(newbuf);
	free(oldbuf);
	free(out);
	return rc;
}

/* Free what recmode_begin() made (a recording not ended is lost). */
void
recmode_clear(struct recmode *rm)
{
	if (rm->w != NULL) {
		writer_stop(rm->w);
		writer_session_free(rm->ws);
	}
	cassette_free(rm->tmp);
	rm->w = NULL;
	rm->ws = NULL;
	rm->tmp = NULL;
	free(rm->real);
	rm->real = NULL;
}
