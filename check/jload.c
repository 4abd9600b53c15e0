/*
 * jload.c: a fast reader for the JSON most messages are, building the
 * very tree json_loadb() would (same types, same member order), for
 * check_message: jansson's reader takes half of check's time on a plain
 * session, most of it in its byte-at-a-time lexer.  It reads only the
 * plain cases (no \u escapes, no escaped keys, no numbers it could not
 * convert exactly as jansson does, nothing deeper than JLOAD_DEPTH_MAX)
 * and gives up on anything else, duplicates and errors included: the
 * caller then reads the message with json_loadb(), which says what is
 * wrong in its own words.  So a finding never depends on which reader
 * read a message.
 */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "check_int.h"

/*
 * Nesting read here, at most; deeper messages go to jansson (whose own
 * limit is 2048).  Messages nest a few levels; the bound keeps this
 * reader's recursion far below jansson's own on any thread's stack.
 */
#define JLOAD_DEPTH_MAX		64

/* Longest number token converted here (digits of an int64 are 20). */
#define JLOAD_NUMBER_MAX	40
/* An integer token this long (a sign and 17 digits) cannot overflow an
   int64, so it is summed directly; longer ones go through strtoll. */
#define JLOAD_DIGITS_EXACT	18

struct jload {
	const unsigned char	*p;
	const unsigned char	*end;
	int			 depth;
	char			*buf;		/* an unescaped string */
	size_t			 size;
};

static json_t	*jload_value(struct jload *);

/* Skip JSON whitespace. */
static void
jload_ws(struct jload *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\n' ||
	    *l->p == '\r' || *l->p == '\t'))
		l->p++;
}

/*
 * The string after an opening quote: *s and *len point into the input
 * when it has no escape, else into l->buf (only when esc_ok).  -1: give
 * up (a \u escape, a control byte, bad UTF-8, no end).
 */
static int
jload_string(struct jload *l, const char **s, size_t *len, int esc_ok)
{
	const unsigned char	*q = l->p;
	size_t			 n, o;

	while (q < l->end && *q != '"' && *q != '\\') {
		if (*q < 0x20)
			return (-1);
		if (*q < 0x80)
			q++;
		else if ((n = scan_utf8_len(q, l->end)) == 0)
			return (-1);
		else
			q += n;
	}
	if (q >= l->end)
		return (-1);
	if (*q == '"') {
		*s = (const char *)l->p;
		*len = (size_t)(q - l->p);
		l->p = q + 1;
		return (0);
	}
	if (!esc_ok)
		return (-1);
	/* Escapes: the unescaped string is never longer than the input. */
	if (l->size < (size_t)(l->end - l->p)) {
		l->size = (size_t)(l->end - l->p);
		l->buf = xreallocarray(l->buf, l->size, 1);
	}
	o = (size_t)(q - l->p);
	memcpy(l->buf, l->p, o);
	while (q < l->end && *q != '"') {
		if (*q == '\\') {
			if (++q >= l->end)
				return (-1);
			switch (*q) {
			case '"': case '\\': case '/':
				l->buf[o++] = (char)*q;
				break;
			case 'b': l->buf[o++] = '\b'; break;
			case 'f': l->buf[o++] = '\f'; break;
			case 'n': l->buf[o++] = '\n'; break;
			case 'r': l->buf[o++] = '\r'; break;
			case 't': l->buf[o++] = '\t'; break;
			default:
				return (-1);	/* \u, or not an escape */
			}
			q++;
		} else if (*q < 0x20)
			return (-1);
		else if (*q < 0x80)
			l->buf[o++] = (char)*q++;
		else if ((n = scan_utf8_len(q, l->end)) == 0)
			return (-1);
		else {
			memcpy(l->buf + o, q, n);
			o += n;
			q += n;
		}
	}
	if (q >= l->end)
		return (-1);
	*s = l->buf;
	*len = o;
	l->p = q + 1;
	return (0);
}

/*
 * A number, converted as jansson does: strtoll when it has no fraction
 * or exponent, else strtod; out of range (jansson's error) gives up.
 */
static json_t *
jload_number(struct jload *l)
{
	const unsigned char	*q = l->p;
	char			 tok[JLOAD_NUMBER_MAX + 1], *end;
	int			 real = 0;
	size_t			 n;
	long long		 i;
	double			 d;

	if (q < l->end && *q == '-')
		q++;
	if (q >= l->end || *q < '0' || *q > '9')
		return (NULL);
	if (*q == '0' && q + 1 < l->end && q[1] >= '0' && q[1] <= '9')
		return (NULL);	/* a leading zero */
	while (q < l->end && *q >= '0' && *q <= '9')
		q++;
	if (q < l->end && *q == '.') {
		real = 1;
		if (++q >= l->end || *q < '0' || *q > '9')
			return (NULL);
		while (q < l->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < l->end && (*q == 'e' || *q == 'E')) {
		real = 1;
		if (++q < l->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= l->end || *q < '0' || *q > '9')
			return (NULL);
		while (q < l->end && *q >= '0' && *q <= '9')
			q++;
	}
	if ((n = (size_t)(q - l->p)) > JLOAD_NUMBER_MAX)
		return (NULL);
	if (!real && n <= JLOAD_DIGITS_EXACT) {
		/* No overflow possible: what strtoll gives, without a copy. */
		q = l->p + (*l->p == '-');
		for (i = 0; q < l->p + n; q++)
			i = i * 10 + (*q - '0');
		if (*l->p == '-')
			i = -i;
		l->p += n;
		return (json_integer(i));
	}
	memcpy(tok, l->p, n);
	tok[n] = '\0';
	errno = 0;
	if (!real) {
		i = strtoll(tok, &end, 10);
		if (errno != 0 || end != tok + n)
			return (NULL);
		l->p = q;
		return (json_integer(i));
	}
	if (localeconv()->decimal_point[0] != '.')
		return (NULL);	/* jansson converts for the locale */
	d = strtod(tok, &end);
	if (errno != 0 || end != tok + n)
		return (NULL);
	l->p = q;
	return (json_real(d));
}

/* An object after its '{'. */
static json_t *
jload_object(struct jload *l)
{
	json_t		*o = json_object(), *v;
	const char	*key;
	size_t		 klen, size;

	jload_ws(l);
	if (l->p < l->end && *l->p == '}') {
		l->p++;
		return (o);
	}
	for (;;) {
		if (l->p >= l->end || *l->p != '"')
			goto fail;
		l->p++;
		/* A key points into the input, so reading its value cannot
		   overwrite it. */
		if (jload_string(l, &key, &klen, 0) == -1)
			goto fail;
		jload_ws(l);
		if (l->p >= l->end || *l->p != ':')
			goto fail;
		l->p++;
		if ((v = jload_value(l)) == NULL)
			goto fail;
		size = json_object_size(o);
		if (json_object_setn_new_nocheck(o, key, klen, v) == -1 ||
		    json_object_size(o) == size)
			goto fail;	/* a member twice: jansson's error */
		jload_ws(l);
		if (l->p < l->end && *l->p == ',') {
			l->p++;
			jload_ws(l);
			continue;
		}
		if (l->p < l->end && *l->p == '}') {
			l->p++;
			return (o);
		}
		goto fail;
	}
fail:
	json_decref(o);
	return (NULL);
}

/* An array after its '['. */
static json_t *
jload_array(struct jload *l)
{
	json_t	*a = json_array(), *v;

	jload_ws(l);
	if (l->p < l->end && *l->p == ']') {
		l->p++;
		return (a);
	}
	for (;;) {
		if ((v = jload_value(l)) == NULL ||
		    json_array_append_new(a, v) == -1)
			goto fail;
		jload_ws(l);
		if (l->p < l->end && *l->p == ',') {
			l->p++;
			continue;
		}
		if (l->p < l->end && *l->p == ']') {
			l->p++;
			return (a);
		}
		goto fail;
	}
fail:
	json_decref(a);
	return (NULL);
}

/* Whether the input goes on with the literal word. */
static int
jload_word(struct jload *l, const char *word, size_t len)
{
	if ((size_t)(l->end - l->p) < len || memcmp(l->p, word, len) != 0)
		return (0);
	l->p += len;
	return (1);
}

/* One value, after any whitespace; NULL: give up. */
static json_t *
jload_value(struct jload *l)
{
	json_t		*v;
	const char	*s;
	size_t		 len;

	jload_ws(l);
	if (l->p >= l->end)
		return (NULL);
	switch (*l->p) {
	case '{':
	case '[':
		if (l->depth >= JLOAD_DEPTH_MAX)
			return (NULL);
		l->depth++;
		v = *l->p++ == '{' ? jload_object(l) : jload_array(l);
		l->depth--;
		return (v);
	case '"':
		l->p++;
		if (jload_string(l, &s, &len, 1) == -1)
			return (NULL);
		return (json_stringn_nocheck(s, len));
	case 't':
		return (jload_word(l, "true", 4) ? json_true() : NULL);
	case 'f':
		return (jload_word(l, "false", 5) ? json_false() : NULL);
	case 'n':
		return (jload_word(l, "null", 4) ? json_null() : NULL);
	default:
		return (jload_number(l));
	}
}

/*
 * raw as json_loadb(raw, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES |
 * JSON_ALLOW_NUL) reads it, or NULL when this reader does not read it
 * (the caller then asks jansson, for the tree or its error).
 */
json_t *
jload(const void *raw, size_t len)
{
	struct jload	 l;
	json_t		*v;

	/* A \u escape anywhere (Go's encoders write \u003c for '<') would
	   make this reader give up part way: jansson reads it at once. */
	if (memmem(raw, len, "\\u", 2) != NULL)
		return (NULL);
	memset(&l, 0, sizeof l);
	l.p = raw;
	l.end = l.p + len;
	v = jload_value(&l);
	free(l.buf);
	if (v == NULL)
		return (NULL);
	jload_ws(&l);
	if (l.p != l.end) {
		json_decref(v);
		return (NULL);
	}
	return (v);
}
