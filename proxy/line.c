/*
 * A line being gathered for the record, from the pieces reads bring: its
 * bytes grow in one buffer (a mapping of its own for a huge one) until the
 * newline, and past the record size cap only the first bytes are kept
 * while all of them go through a SHA-256, so memory stays bounded whatever
 * the size.  The stdio relay (record.c) keeps one per direction.
 */

#include <stdlib.h>
#include <string.h>

#include "proxy.h"

/* The first room made for a line gathered in pieces. */
#define LINE_MIN	1024

/* The most of one line kept for the record (--max-record-size); 0: all. */
static size_t	 line_max = RECORD_MAX_RECORD;
/* The most the database takes in one row (store_max_message); 0: unknown. */
static size_t	 line_store_max;

void
record_set_max_record(size_t max)
{
	line_max = max;
}

void
record_set_store_max(size_t max)
{
	line_store_max = max;
}

/*
 * The record size cap in force: --max-record-size, or less when the
 * database cannot store that much in one row.  Never 0 ("all") once the
 * database's limit is known.
 */
size_t
line_cap(void)
{
	if (line_store_max != 0 && (line_max == 0 || line_max > line_store_max))
		return line_store_max;
	return line_max;
}

/* Whether the cap in force is the database's rather than the user's. */
int
line_cap_is_store(void)
{
	return line_store_max != 0 && (line_max == 0 ||
	    line_max > line_store_max);
}

void
line_init(struct line *l, enum dir d)
{
	memset(l, 0, sizeof *l);
	l->dir = d;
}

/* Add n bytes to the line; whole says they are all of it (the usual case). */
void
line_add(struct line *l, const char *src, size_t n, int whole)
{
	size_t	cap, max = line_cap();

	l->wire += n;
	if (max != 0 && l->len + n > max) {
		if (l->digest == NULL) {
			l->digest = digest_new();
			l->ident = xmalloc(sizeof *l->ident);
			ident_init(l->ident);
			if (l->cur != NULL) {
				digest_update(l->digest, l->cur->raw, l->len);
				ident_feed(l->ident, l->cur->raw, l->len);
			}
		}
		digest_update(l->digest, src, n);
		ident_feed(l->ident, src, n);
		n = max - l->len;
		whole = 0;
		if (n == 0)
			return;
	}
	if (l->cur == NULL && whole)
		cap = n;	/* exact room */
	else if (l->cur == NULL || l->len + n > l->cap) {
		/* Grow by half again: a huge line costs ~1.5x, not 2x. */
		cap = l->cap + l->cap / 2;
		if (cap < l->len + n)
			cap = l->len + n;
		if (cap < LINE_MIN)
			cap = LINE_MIN;
		if (max != 0 && cap > max)
			cap = max;
	} else
		cap = l->cap;
	if (cap != l->cap || l->cur == NULL) {
		l->cur = msg_realloc(l->cur, l->dir, cap);
		l->cap = cap;
	}
	memcpy(l->cur->raw + l->len, src, n);
	l->len += n;
	l->cur->len = l->len;	/* what msg_realloc keeps */
}

/*
 * The line is complete: its message (the caller's), stamped now.  One over
 * the cap carries its full size, its SHA-256 and MSG_TRUNCATED.
 */
struct msg *
line_finish(struct line *l)
{
	struct msg	*m;

	if (l->cur == NULL)
		l->cur = msg_realloc(NULL, l->dir, 0);
	m = msg_finish(l->cur, l->len);
	if (l->digest != NULL) {
		m->wire_size = (int64_t)l->wire;
		m->sha256 = digest_hex_free(l->digest);
		m->flags |= MSG_TRUNCATED;
		m->ident = ident_finish(l->ident, &m->ident_len);
		free(l->ident);
	}
	line_init(l, l->dir);
	return m;
}

/* Free what a line being gathered holds. */
void
line_clear(struct line *l)
{
	msg_free(l->cur);
	digest_free(l->digest);
	free(l->ident);
	line_init(l, l->dir);
}
