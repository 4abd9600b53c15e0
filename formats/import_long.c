/*
 * A line of a file to import that is longer than --max-record-size allows
 * one message to be: instead of holding it whole, its bytes go through a
 * small tokenizer of one JSON object as they are read.  Each member is
 * kept as it is, except a value that grows past the cap: of that one only
 * its first bytes are kept, with its length and SHA-256, and the line
 * handed on has "null" in its place.  The importer then takes the message
 * from here (import_long_msg()).  Memory is the cap and the small members,
 * whatever the line's length.
 */

#include <stdlib.h>
#include <string.h>

#include "formats_int.h"

/* Where the tokenizer is in the line's one object. */
enum long_state {
	LONG_START,		/* before '{' */
	LONG_KEY_OR_END,	/* before a key or '}' */
	LONG_KEY,		/* in a key */
	LONG_COLON,		/* before ':' */
	LONG_VALUE_START,	/* before a value */
	LONG_VALUE,		/* in a value */
	LONG_AFTER_VALUE,	/* before ',' or '}' */
	LONG_END,		/* after '}' */
	LONG_STATE_MAX
};

/* A value cut at the cap: its placeholder's place, first bytes, size, hash. */
struct long_big {
	size_t		 off;		/* of "null" in the line handed on */
	char		*prefix;	/* cap bytes */
	uint64_t	 len;
	char		*sha256;
};

/*
 * The most values of one line cut at the cap: a line has one message;
 * more is no file mcpreel wrote.
 */
#define LONG_BIG_MAX	4

struct import_long {
	struct import	*imp;
	size_t		 cap;
	enum long_state	 state;
	int		 in_str, esc, depth;
	char		*out;		/* the line handed on */
	size_t		 len, size;
	size_t		 val_off;	/* where the value began in out */
	uint64_t	 val_len;	/* its bytes, kept or not */
	struct digest	*dg;		/* set while a value is past the cap */
	char		*prefix;
	struct long_big	 bigs[LONG_BIG_MAX];
	size_t		 nbig;
};

/*
 * Keep n bytes of the line handed on: -1 (import_bad) once they pass the
 * cap and the slack for the other members, whatever they are (keys,
 * spaces, many small values), so memory stays bounded by the line's
 * length being no concern.
 */
static int
long_put(struct import_long *l, const char *p, size_t n)
{
	if (l->len + n > l->cap + IMPORT_LONG_SLACK)
		return import_bad(l->imp, "a line over --max-record-size "
		    "whose other members are over %d bytes: this is no file "
		    "mcpreel wrote", IMPORT_LONG_SLACK);
	if (l->len + n > l->size) {
		l->size = l->size * 2 + n + 256;
		l->out = xreallocarray(l->out, l->size, 1);
	}
	memcpy(l->out + l->len, p, n);
	l->len += n;
	return 0;
}

/* Start a line that has passed imp's cap. */
struct import_long *
import_long_new(struct import *imp)
{
	struct import_long	*l = xcalloc(1, sizeof *l);

	l->imp = imp;
	l->cap = imp->o.max_record;
	return l;
}

void
import_long_free(struct import_long *l)
{
	size_t	i;

	if (l == NULL)
		return;
	for (i = 0; i < l->nbig; i++) {
		free(l->bigs[i].prefix);
		free(l->bigs[i].sha256);
	}
	if (l->dg != NULL)
		digest_free(l->dg);
	free(l->prefix);
	free(l->out);
	free(l);
}

/* One byte of a value: kept, or past the cap, only counted and hashed. */
static int
long_value_byte(struct import_long *l, char c)
{
	l->val_len++;
	if (l->dg != NULL) {
		digest_update(l->dg, &c, 1);
		return 0;
	}
	if (long_put(l, &c, 1) != 0)
		return -1;
	if (l->val_len <= l->cap)
		return 0;
	/* Past the cap: keep its first bytes, put "null" in its place. */
	if (l->nbig == LONG_BIG_MAX)
		return import_bad(l->imp, "more than %d values over "
		    "--max-record-size in one line", LONG_BIG_MAX);
	l->prefix = xmalloc(l->cap);
	memcpy(l->prefix, l->out + l->val_off, l->cap);
	l->dg = digest_new();
	digest_update(l->dg, l->out + l->val_off, l->len - l->val_off);
	l->len = l->val_off;
	return long_put(l, "null", 4);
}

/* The value ended. */
static void
long_value_end(struct import_long *l)
{
	struct long_big	*b;

	l->state = LONG_AFTER_VALUE;
	if (l->dg == NULL)
		return;
	b = &l->bigs[l->nbig++];
	b->off = l->val_off;
	b->prefix = l->prefix;
	b->len = l->val_len;
	b->sha256 = digest_hex_free(l->dg);
	l->prefix = NULL;
	l->dg = NULL;
}

static int
long_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One byte of the line (not its newline); -1 when it is no JSON object. */
static int
long_byte(struct import_long *l, char c)
{
	switch (l->state) {
	case LONG_START:
	case LONG_KEY_OR_END:
	case LONG_COLON:
	case LONG_AFTER_VALUE:
	case LONG_END:
		if (long_is_space(c))
			break;
		if ((l->state == LONG_START && c == '{') ||
		    (l->state == LONG_COLON && c == ':') ||
		    (l->state == LONG_AFTER_VALUE && c == ','))
			l->state = l->state == LONG_COLON ? LONG_VALUE_START :
			    LONG_KEY_OR_END;
		else if ((l->state == LONG_KEY_OR_END ||
		    l->state == LONG_AFTER_VALUE) && c == '}')
			l->state = LONG_END;
		else if (l->state == LONG_KEY_OR_END && c == '"') {
			l->state = LONG_KEY;
			l->esc = 0;
		} else
			return import_bad(l->imp, "a line over "
			    "--max-record-size that is not one JSON object");
		break;
	case LONG_KEY:
		if (l->esc)
			l->esc = 0;
		else if (c == '\\')
			l->esc = 1;
		else if (c == '"')
			l->state = LONG_COLON;
		break;
	case LONG_VALUE_START:
		if (long_is_space(c))
			break;
		l->state = LONG_VALUE;
		l->val_off = l->len;
		l->val_len = 0;
		l->in_str = l->esc = 0;
		l->depth = 0;
		/* FALLTHROUGH */
	case LONG_VALUE:
		if (!l->in_str && l->depth == 0 && l->val_len > 0 &&
		    (c == ',' || c == '}' || long_is_space(c))) {
			/* A number, true, false or null ended. */
			long_value_end(l);
			return long_byte(l, c);
		}
		if (long_value_byte(l, c) != 0)
			return -1;
		if (l->in_str) {
			if (l->esc)
				l->esc = 0;
			else if (c == '\\')
				l->esc = 1;
			else if (c == '"') {
				l->in_str = 0;
				if (l->depth == 0)
					long_value_end(l);
			}
		} else if (c == '"')
			l->in_str = 1;
		else if (c == '{' || c == '[')
			l->depth++;
		else if (c == '}' || c == ']') {
			if (--l->depth <= 0)
				long_value_end(l);
		}
		return 0;
	default:
		break;
	}
	/* Outside values every byte is kept as it is. */
	return long_put(l, &c, 1);
}

/*
 * Take bytes of the line: 1 when its newline came (*used counts it), 0
 * when all n were taken and more is needed, -1 on an error (import_bad).
 */
int
import_long_feed(struct import_long *l, const char *p, size_t n, size_t *used)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (p[i] == '\n') {
			*used = i + 1;
			return 1;
		}
		if (long_byte(l, p[i]) != 0)
			return -1;
	}
	*used = n;
	return 0;
}

/* The line handed on: its small members, "null" for values cut. */
const char *
import_long_line(struct import_long *l, size_t *len)
{
	if (l->state == LONG_VALUE)
		long_value_end(l);
	*len = l->len;
	return l->out != NULL ? l->out : "";
}

/*
 * The message of the member at off of the line handed on, when it was cut
 * there: its first bytes, size and SHA-256, truncated.  NULL when that
 * member was kept whole.
 */
struct msg *
import_long_msg(struct import_long *l, size_t off, enum dir d)
{
	struct long_big	*b = NULL;
	struct msg	*m;
	size_t		 i;

	for (i = 0; i < l->nbig; i++)
		if (l->bigs[i].off == off)
			b = &l->bigs[i];
	if (b == NULL)
		return NULL;
	m = msg_new(d, b->prefix, l->cap);
	m->sha256 = xstrdup(b->sha256);
	m->wire_size = (int64_t)b->len;
	m->flags |= MSG_TRUNCATED;
	log_warnx("%s line %zu: a message of %llu bytes, over "
	    "--max-record-size: stored as its first %zu bytes, its size and "
	    "SHA-256", l->imp->o.path, l->imp->lineno,
	    (unsigned long long)b->len, l->cap);
	return m;
}

/* Whether the member at off of the line handed on was cut. */
int
import_long_cut(const struct import_long *l, size_t off)
{
	size_t	i;

	for (i = 0; l != NULL && i < l->nbig; i++)
		if (l->bigs[i].off == off)
			return 1;
	return 0;
}
