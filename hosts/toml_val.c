/*
 * TOML values as toml.c meets them: strings of the four kinds (decoded
 * when asked), dotted keys, bare values, inline tables and arrays (their
 * elements' spans kept when asked), all within HCFG_MAX_DEPTH.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

static int	toml_inline(struct tscan *, int);
static int	toml_array(struct tscan *, int);

/* Records the first error, at offset pos. */
void PRINTFLIKE(3, 4)
toml_error(struct tscan *ts, size_t pos, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (ts->err != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	ts->err = hcfg_errat(ts->buf, pos, "%s", msg);
	free(msg);
}

/* Frees a key's components. */
void
toml_key_clear(struct tkey *k)
{
	size_t	i;

	for (i = 0; i < k->n; i++)
		free(k->v[i]);
	k->n = 0;
}

/* Skips spaces and tabs. */
void
toml_sp(struct tscan *ts)
{
	while (ts->pos < ts->len && (ts->buf[ts->pos] == ' ' ||
	    ts->buf[ts->pos] == '\t'))
		ts->pos++;
}

/* Skips white space, line ends and comments (inside arrays). */
int
toml_ws_nl(struct tscan *ts)
{
	for (;;) {
		toml_sp(ts);
		if (ts->pos >= ts->len)
			return 0;
		if (ts->buf[ts->pos] == '\n')
			ts->pos++;
		else if (ts->buf[ts->pos] == '\r' && ts->pos + 1 < ts->len &&
		    ts->buf[ts->pos + 1] == '\n')
			ts->pos += 2;
		else if (ts->buf[ts->pos] == '#') {
			while (ts->pos < ts->len && ts->buf[ts->pos] != '\n')
				ts->pos++;
		} else
			return 0;
	}
}

/* Appends code point cp as UTF-8. */
static void
toml_utf8(struct hbuf *b, unsigned long cp)
{
	char	u[8];
	size_t	n;

	n = scan_put_utf8(u, (unsigned int)cp);
	hbuf_add(b, u, n);
}

/*
 * Scans a string at pos (any of the four kinds); *out its decoded value
 * (NULL if it holds a NUL or out is NULL).
 */
int
toml_string(struct tscan *ts, char **out)
{
	const char	*b = ts->buf;
	size_t		 start = ts->pos, i;
	char		 q = b[ts->pos];
	int		 multi = 0, nul = 0, k, nd;
	unsigned long	 cp;
	struct hbuf	 d = { 0 };

	if (ts->len - ts->pos >= 3 && b[ts->pos + 1] == q &&
	    b[ts->pos + 2] == q) {
		multi = 1;
		ts->pos += 3;
		/* a line end right after the opening quotes is trimmed */
		if (ts->pos < ts->len && b[ts->pos] == '\n')
			ts->pos++;
		else if (ts->len - ts->pos >= 2 && b[ts->pos] == '\r' &&
		    b[ts->pos + 1] == '\n')
			ts->pos += 2;
	} else
		ts->pos++;
	for (;;) {
		if (ts->pos >= ts->len) {
			toml_error(ts, start, "a string that never ends");
			goto fail;
		}
		if (b[ts->pos] == q) {
			if (!multi) {
				ts->pos++;
				break;
			}
			if (ts->len - ts->pos >= 3 && b[ts->pos + 1] == q &&
			    b[ts->pos + 2] == q) {
				/* up to two more quotes belong to the text */
				k = 0;
				while (k < 2 && ts->len - ts->pos >= 4 &&
				    b[ts->pos + 3] == q) {
					hbuf_addc(&d, q);
					ts->pos++;
					k++;
				}
				ts->pos += 3;
				break;
			}
			hbuf_addc(&d, q);
			ts->pos++;
			continue;
		}
		if (b[ts->pos] == '\n' || (b[ts->pos] == '\r' &&
		    ts->pos + 1 < ts->len && b[ts->pos + 1] == '\n')) {
			if (!multi) {
				toml_error(ts, ts->pos, "a line end in a "
				    "one-line string");
				goto fail;
			}
			hbuf_addc(&d, b[ts->pos]);
			ts->pos++;
			continue;
		}
		if (b[ts->pos] == '\0')
			nul = 1;
		if ((unsigned char)b[ts->pos] < 0x20 && b[ts->pos] != '\t') {
			toml_error(ts, ts->pos, "a control character in a "
			    "string");
			goto fail;
		}
		if (q == '\'' || b[ts->pos] != '\\') {
			hbuf_addc(&d, b[ts->pos]);
			ts->pos++;
			continue;
		}
		/* an escape in a basic string */
		if (ts->pos + 1 >= ts->len) {
			toml_error(ts, start, "a string that never ends");
			goto fail;
		}
		i = ts->pos + 1;
		switch (b[i]) {
		case 'b': hbuf_addc(&d, '\b'); ts->pos += 2; continue;
		case 't': hbuf_addc(&d, '\t'); ts->pos += 2; continue;
		case 'n': hbuf_addc(&d, '\n'); ts->pos += 2; continue;
		case 'f': hbuf_addc(&d, '\f'); ts->pos += 2; continue;
		case 'r': hbuf_addc(&d, '\r'); ts->pos += 2; continue;
		case 'e': hbuf_addc(&d, '\033'); ts->pos += 2; continue;
		case '"': hbuf_addc(&d, '"'); ts->pos += 2; continue;
		case '\\': hbuf_addc(&d, '\\'); ts->pos += 2; continue;
		case 'u': nd = 4; break;
		case 'U': nd = 8; break;
		case 'x': nd = 2; break;
		default:
			if (multi) {
				/* a line-ending backslash: trim to the next
				   non-blank */
				size_t	j = i;

				while (j < ts->len && (b[j] == ' ' ||
				    b[j] == '\t'))
					j++;
				if (j < ts->len && (b[j] == '\n' ||
				    b[j] == '\r')) {
					while (j < ts->len && strchr(
					    " \t\r\n", b[j]) != NULL &&
					    b[j] != '\0')
						j++;
					ts->pos = j;
					continue;
				}
			}
			toml_error(ts, ts->pos, "an unknown escape in a "
			    "string");
			goto fail;
		}
		cp = 0;
		for (k = 1; k <= nd; k++) {
			if (i + (size_t)k >= ts->len ||
			    scan_hex_value((unsigned char)b[i + k]) < 0) {
				toml_error(ts, ts->pos, "a \\%c escape without "
				    "%d hex digits", b[i], nd);
				goto fail;
			}
			cp = cp * 16 + (unsigned long)scan_hex_value(
			    (unsigned char)b[i + k]);
		}
		if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) {
			toml_error(ts, ts->pos, "an escape that is no Unicode "
			    "scalar value");
			goto fail;
		}
		if (cp == 0)
			nul = 1;
		toml_utf8(&d, cp);
		ts->pos = i + 1 + (size_t)nd;
	}
	if (out != NULL) {
		*out = hbuf_take(&d, NULL);
		if (nul) {
			free(*out);
			*out = NULL;
		}
	} else
		free(hbuf_take(&d, NULL));
	return 0;
fail:
	free(hbuf_take(&d, NULL));
	return -1;
}

/* Scans a dotted key at pos into k (decoded components). */
int
toml_key(struct tscan *ts, struct tkey *k)
{
	const char	*b = ts->buf;
	size_t		 s;
	char		*v;

	k->n = 0;
	for (;;) {
		toml_sp(ts);
		if (ts->pos >= ts->len) {
			toml_error(ts, ts->pos, "expected a key");
			return -1;
		}
		k->last = ts->pos;
		if (b[ts->pos] == '"' || b[ts->pos] == '\'') {
			if (ts->len - ts->pos >= 3 && b[ts->pos + 1] ==
			    b[ts->pos] && b[ts->pos + 2] == b[ts->pos]) {
				toml_error(ts, ts->pos, "a multi-line string "
				    "as a key");
				return -1;
			}
			if (toml_string(ts, &v) == -1)
				return -1;
			if (v == NULL) {
				toml_error(ts, k->last, "a key holding a NUL");
				return -1;
			}
		} else {
			s = ts->pos;
			while (ts->pos < ts->len && ((b[ts->pos] >= 'A' &&
			    b[ts->pos] <= 'Z') || (b[ts->pos] >= 'a' &&
			    b[ts->pos] <= 'z') || (b[ts->pos] >= '0' &&
			    b[ts->pos] <= '9') || b[ts->pos] == '_' ||
			    b[ts->pos] == '-'))
				ts->pos++;
			if (ts->pos == s) {
				toml_error(ts, s, "expected a key");
				return -1;
			}
			v = xstrndup(b + s, ts->pos - s);
		}
		if (k->n == TOML_MAX_KEYS) {
			free(v);
			toml_error(ts, k->last, "a key of more than %d parts",
			    TOML_MAX_KEYS);
			return -1;
		}
		k->v[k->n++] = v;
		toml_sp(ts);
		if (ts->pos < ts->len && b[ts->pos] == '.') {
			ts->pos++;
			continue;
		}
		return 0;
	}
}

/* Scans a bare value (number, boolean, date) at pos. */
static int
toml_bare(struct tscan *ts)
{
	const char	*b = ts->buf;
	size_t		 s = ts->pos;

	while (ts->pos < ts->len && strchr(" \t\r\n,]}#", b[ts->pos]) ==
	    NULL)
		ts->pos++;
	if (ts->pos == s) {
		toml_error(ts, s, "expected a value");
		return -1;
	}
	/* a date and a time separated by one space */
	if (ts->pos - s == 10 && b[s + 4] == '-' && b[s + 7] == '-' &&
	    ts->pos + 1 < ts->len && b[ts->pos] == ' ' &&
	    b[ts->pos + 1] >= '0' && b[ts->pos + 1] <= '9') {
		ts->pos++;
		while (ts->pos < ts->len && strchr(" \t\r\n,]}#",
		    b[ts->pos]) == NULL)
			ts->pos++;
	}
	return 0;
}

/* Scans an inline table at pos ('{'). */
static int
toml_inline(struct tscan *ts, int depth)
{
	struct tkey	 k = { 0 };
	size_t		 open = ts->pos, ks, ke, vs;
	long		 cap = ts->inl;
	int		 t, rc = -1;

	/* only the entry's own table is read, not tables inside it */
	ts->inl = -1;
	ts->pos++;
	for (;;) {
		if (toml_ws_nl(ts) == -1)
			goto out;
		if (ts->pos >= ts->len) {
			toml_error(ts, open, "'{' never closed");
			goto out;
		}
		if (ts->buf[ts->pos] == '}') {
			ts->pos++;
			rc = 0;
			goto out;
		}
		ks = ts->pos;
		if (toml_key(ts, &k) == -1)
			goto out;
		ke = ts->pos;
		while (ke > ks && (ts->buf[ke - 1] == ' ' ||
		    ts->buf[ke - 1] == '\t'))
			ke--;
		if (ts->pos >= ts->len || ts->buf[ts->pos] != '=') {
			toml_error(ts, ts->pos, "expected '='");
			goto out;
		}
		ts->pos++;
		toml_sp(ts);
		vs = ts->pos;
		ts->want_el = cap >= 0 && k.n == 1 && strcmp(k.v[0], "args") ==
		    0;
		if (toml_value(ts, depth + 1, &t) == -1)
			goto out;
		if (cap >= 0 && k.n == 1 && toml_inline_member(ts, cap,
		    k.v[0], ks, ke, vs, ts->pos, t) == -1)
			goto out;
		toml_key_clear(&k);
		if (toml_ws_nl(ts) == -1)
			goto out;
		if (ts->pos < ts->len && ts->buf[ts->pos] == ',')
			ts->pos++;
		else if (ts->pos < ts->len && ts->buf[ts->pos] == '}')
			continue;
		else {
			toml_error(ts, ts->pos, "expected ',' or '}'");
			goto out;
		}
	}
out:
	toml_key_clear(&k);
	return rc;
}

/* Scans an array at pos ('['), keeping its elements when wanted. */
static int
toml_array(struct tscan *ts, int depth)
{
	size_t		 open = ts->pos, s;
	int		 want = ts->want_el, t;
	char		*str;

	ts->want_el = 0;
	ts->pos++;
	for (;;) {
		if (toml_ws_nl(ts) == -1)
			return -1;
		if (ts->pos >= ts->len) {
			toml_error(ts, open, "'[' never closed");
			return -1;
		}
		if (ts->buf[ts->pos] == ']') {
			ts->pos++;
			return 0;
		}
		s = ts->pos;
		str = NULL;
		if (want && (ts->buf[s] == '"' || ts->buf[s] == '\'')) {
			if (toml_string(ts, &str) == -1)
				return -1;
		} else if (toml_value(ts, depth + 1, &t) == -1)
			return -1;
		if (want) {
			ts->el = hcfg_grow(ts->el, ts->nel, sizeof *ts->el);
			ts->el[ts->nel].s = s;
			ts->el[ts->nel].e = ts->pos;
			ts->el[ts->nel++].str = str;
		}
		if (toml_ws_nl(ts) == -1)
			return -1;
		if (ts->pos < ts->len && ts->buf[ts->pos] == ',')
			ts->pos++;
		else if (ts->pos < ts->len && ts->buf[ts->pos] == ']')
			continue;
		else {
			toml_error(ts, ts->pos, "expected ',' or ']'");
			return -1;
		}
	}
}

/* Scans any value at pos; *type 's' string, 'a' array, 't' table, 'o'. */
int
toml_value(struct tscan *ts, int depth, int *type)
{
	if (depth >= HCFG_MAX_DEPTH) {
		toml_error(ts, ts->pos, "nested deeper than %d",
		    HCFG_MAX_DEPTH);
		return -1;
	}
	if (ts->pos >= ts->len) {
		toml_error(ts, ts->pos, "expected a value");
		return -1;
	}
	switch (ts->buf[ts->pos]) {
	case '"':
	case '\'':
		*type = 's';
		return toml_string(ts, NULL);
	case '[':
		*type = 'a';
		return toml_array(ts, depth);
	case '{':
		*type = 't';
		ts->want_el = 0;
		return toml_inline(ts, depth);
	default:
		*type = 'o';
		ts->want_el = 0;
		return toml_bare(ts);
	}
}
