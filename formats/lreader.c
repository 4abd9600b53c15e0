/*
 * The importer's line reader: the lines of a file, read in chunks into
 * one buffer that grows as needed, up to IMPORT_LINE_MAX; a line past
 * --max-record-size (and the slack) goes through import_long.c instead,
 * in bounded memory.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats_int.h"

/*
 * The longest line read: a message of several hundred MiB still fits, as
 * base64; past it the file is refused rather than read into memory
 * without end.
 */
#define IMPORT_LINE_MAX		((size_t)1 << 30)
/* How much of the file is read at once. */
#define IMPORT_READ_CHUNK	(64 * 1024)

/*
 * Read what fits into lr's buffer from off on: 0 with the bytes read in
 * *n (none at the end of the file, lr->eof then), or -1 when the file
 * cannot be read.
 */
static int
lreader_read(struct import *imp, struct lreader *lr, size_t off, size_t *n)
{
	*n = fread(lr->buf + off, 1, lr->cap - off, lr->f);
	if (*n != 0)
		return 0;
	if (ferror(lr->f)) {
		import_bad(imp, "cannot read: %s", strerror(errno));
		return -1;
	}
	lr->eof = 1;
	return 0;
}

/*
 * The rest of a line that has passed the cap (its start is at the front
 * of lr), through import_long.c: what it hands on, or NULL on an error.
 */
static const char *
lreader_long(struct import *imp, struct lreader *lr, size_t *len)
{
	size_t	used, n;
	int	rc;

	lr->ll = imp->long_line = import_long_new(imp);
	imp->lineno++;		/* for errors: the line being read */
	for (;;) {
		rc = import_long_feed(lr->ll, lr->buf + lr->start, lr->end -
		    lr->start, &used);
		lr->start += used;
		if (rc != 0)
			break;
		lr->start = lr->end = 0;
		if (lreader_read(imp, lr, 0, &n) != 0)
			return NULL;
		if (n == 0)
			break;
		lr->end = n;
	}
	lr->scanned = 0;
	if (rc == -1)
		return NULL;
	imp->lineno--;		/* import_read() counts it */
	return import_long_line(lr->ll, len);
}

/* The next line without its newline (NULL at the end or on error). */
const char *
lreader_next(struct import *imp, struct lreader *lr, size_t *len)
{
	char	*nl, *line;
	size_t	 n;

	import_long_free(lr->ll);
	lr->ll = imp->long_line = NULL;
	for (;;) {
		nl = (lr->buf == NULL) ? NULL : memchr(lr->buf + lr->start +
		    lr->scanned, '\n', lr->end - lr->start - lr->scanned);
		if (nl != NULL || (lr->eof && lr->end > lr->start)) {
			line = lr->buf + lr->start;
			*len = (nl != NULL) ? (size_t)(nl - line) :
			    lr->end - lr->start;
			lr->cut = nl == NULL;
			lr->start += *len + (nl != NULL);
			lr->scanned = 0;
			return line;
		}
		if (lr->eof)
			return NULL;
		lr->scanned = lr->end - lr->start;
		if (imp->o.max_record != 0 && lr->scanned > imp->o.max_record +
		    IMPORT_LONG_SLACK)
			return lreader_long(imp, lr, len);
		if (lr->scanned > IMPORT_LINE_MAX) {
			imp->lineno++;
			import_bad(imp, "a line longer than %zu bytes: this is "
			    "no file mcpreel can import",
			    (size_t)IMPORT_LINE_MAX);
			return NULL;
		}
		/* Keep the partial line at the front, with room to read. */
		if (lr->start > 0) {
			memmove(lr->buf, lr->buf + lr->start, lr->end -
			    lr->start);
			lr->end -= lr->start;
			lr->start = 0;
		}
		if (lr->cap - lr->end < IMPORT_READ_CHUNK) {
			lr->cap = lr->cap * 2 + IMPORT_READ_CHUNK;
			lr->buf = xreallocarray(lr->buf, lr->cap, 1);
		}
		if (lreader_read(imp, lr, lr->end, &n) != 0)
			return NULL;
		lr->end += n;
	}
}

/* Free what lr holds (its file is the caller's). */
void
lreader_free(struct import *imp, struct lreader *lr)
{
	import_long_free(lr->ll);
	imp->long_line = NULL;
	free(lr->buf);
	memset(lr, 0, sizeof *lr);
}
