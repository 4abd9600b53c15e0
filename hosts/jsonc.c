/*
 * A span-keeping scanner for JSON (RFC 8259) and JSONC (JSON with // and
 * block comments and trailing commas, as VS Code reads it).  It builds a
 * small tree of the values on the layout's container paths and of the
 * server entries below them, each with the byte span of its key and
 * value, and fills a struct hdoc for cfg.c.  Values off those paths are
 * checked and skipped, not kept, so memory follows what a layout names,
 * not the size of the file (~/.claude.json holds long histories).
 * Linear time; nesting bounded by HCFG_MAX_DEPTH.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

static int	jsonc_value(struct jscan *, int, long, uint32_t, int, long *);

/* Records the first error, at offset pos. */
static void PRINTFLIKE(3, 4)
jsonc_error(struct jscan *js, size_t pos, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (js->err != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	js->err = hcfg_errat(js->buf, pos, "%s", msg);
	free(msg);
}

/* Skips white space and, in JSONC, comments (strict JSON refuses them). */
static int
jsonc_ws(struct jscan *js)
{
	const char	*b = js->buf;
	size_t		 p;

	js->saw_comment = 0;
	while (js->pos < js->len) {
		switch (b[js->pos]) {
		case ' ': case '\t': case '\r': case '\n':
			js->pos++;
			continue;
		case '/':
			if (js->pos + 1 >= js->len || (b[js->pos + 1] != '/' &&
			    b[js->pos + 1] != '*')) {
				jsonc_error(js, js->pos, "unexpected '/'");
				return -1;
			}
			if (!js->comments) {
				jsonc_error(js, js->pos, "a comment, which "
				    "JSON does not allow");
				return -1;
			}
			js->saw_comment = 1;
			if (b[js->pos + 1] == '/') {
				while (js->pos < js->len && b[js->pos] != '\n')
					js->pos++;
				continue;
			}
			p = js->pos;
			js->pos += 2;
			while (js->pos + 1 < js->len && !(b[js->pos] == '*' &&
			    b[js->pos + 1] == '/'))
				js->pos++;
			if (js->pos + 1 >= js->len) {
				jsonc_error(js, p, "a comment that never ends");
				return -1;
			}
			js->pos += 2;
			continue;
		}
		break;
	}
	return 0;
}

/* Checks a string at pos (a '"'), leaving pos just past its end. */
static int
jsonc_string(struct jscan *js)
{
	const char	*b = js->buf;
	size_t		 start = js->pos, i;
	unsigned char	 c;

	js->pos++;
	while (js->pos < js->len) {
		c = (unsigned char)b[js->pos];
		if (c == '"') {
			js->pos++;
			return 0;
		}
		if (c < 0x20) {
			jsonc_error(js, js->pos, "a control character in a "
			    "string (write it as an escape)");
			return -1;
		}
		if (c != '\\') {
			js->pos++;
			continue;
		}
		if (js->pos + 1 >= js->len)
			break;
		c = (unsigned char)b[js->pos + 1];
		if (strchr("\"\\/bfnrt", c) != NULL && c != '\0') {
			js->pos += 2;
			continue;
		}
		if (c != 'u') {
			jsonc_error(js, js->pos, "an unknown escape \\%c",
			    c >= 0x20 && c < 0x7f ? c : '?');
			return -1;
		}
		for (i = 2; i < 6; i++) {
			if (js->pos + i >= js->len ||
			    scan_hex_value((unsigned char)b[js->pos + i]) < 0) {
				jsonc_error(js, js->pos, "a \\u escape without "
				    "four hex digits");
				return -1;
			}
		}
		js->pos += 6;
	}
	jsonc_error(js, start, "a string that never ends");
	return -1;
}

/* Checks a number at pos by JSON's grammar. */
static int
jsonc_number(struct jscan *js)
{
	const char	*b = js->buf;
	size_t		 start = js->pos, d;

	if (js->pos < js->len && b[js->pos] == '-')
		js->pos++;
	if (js->pos < js->len && b[js->pos] == '0')
		js->pos++;
	else {
		for (d = js->pos; js->pos < js->len && b[js->pos] >= '0' &&
		    b[js->pos] <= '9'; js->pos++)
			;
		if (js->pos == d)
			goto bad;
	}
	if (js->pos < js->len && b[js->pos] == '.') {
		js->pos++;
		for (d = js->pos; js->pos < js->len && b[js->pos] >= '0' &&
		    b[js->pos] <= '9'; js->pos++)
			;
		if (js->pos == d)
			goto bad;
	}
	if (js->pos < js->len && (b[js->pos] == 'e' || b[js->pos] == 'E')) {
		js->pos++;
		if (js->pos < js->len && (b[js->pos] == '+' ||
		    b[js->pos] == '-'))
			js->pos++;
		for (d = js->pos; js->pos < js->len && b[js->pos] >= '0' &&
		    b[js->pos] <= '9'; js->pos++)
			;
		if (js->pos == d)
			goto bad;
	}
	return 0;
bad:
	jsonc_error(js, start, "a malformed number");
	return -1;
}

/* Adds a node; returns its index. */
static long
jsonc_node(struct jscan *js)
{
	struct jnode	*n;

	if (js->nn == js->cap) {
		js->cap = js->cap == 0 ? 64 : js->cap * 2;
		js->n = xreallocarray(js->n, js->cap, sizeof *js->n);
	}
	n = &js->n[js->nn];
	memset(n, 0, sizeof *n);
	n->parent = n->first = n->last = n->next = n->prev = -1;
	n->comma = SIZE_MAX;
	return (long)js->nn++;
}

/* Links child c as the last child of p. */
static void
jsonc_link(struct jscan *js, long p, long c)
{
	js->n[c].parent = p;
	if (js->n[p].last >= 0) {
		js->n[js->n[p].last].next = c;
		js->n[c].prev = js->n[p].last;
	} else
		js->n[p].first = c;
	js->n[p].last = c;
}

/*
 * Which containers a member with decoded key k at depth d (1 the root's
 * members) stays on, given its parent's mask.
 */
static uint32_t
jsonc_mask(struct jscan *js, uint32_t pmask, int d, const char *k)
{
	uint32_t	 m = 0;
	size_t		 i;

	for (i = 0; i < js->nconts; i++) {
		if (!(pmask & (1u << i)) || (size_t)d > js->conts[i].n)
			continue;
		if (k != NULL && (strcmp(js->conts[i].comp[d - 1], "*") == 0 ||
		    strcmp(js->conts[i].comp[d - 1], k) == 0))
			m |= 1u << i;
	}
	return m;
}

/* Whether a node on mask at depth d is a whole container. */
static int
jsonc_whole(struct jscan *js, uint32_t mask, int d)
{
	size_t	i;

	for (i = 0; i < js->nconts; i++)
		if ((mask & (1u << i)) && js->conts[i].n == (size_t)d)
			return 1;
	return 0;
}

/* An object or array at pos; kept is -1 or its node. */
static int
jsonc_compound(struct jscan *js, int depth, long kept)
{
	int		 obj = js->buf[js->pos] == '{';
	char		 close = obj ? '}' : ']';
	size_t		 ks, ke, open = js->pos;
	long		 child;
	uint32_t	 cmask;
	int		 cbelow, count = 0;
	char		*key;
	struct jnode	*pn;

	if (depth >= HCFG_MAX_DEPTH) {
		jsonc_error(js, js->pos, "nested deeper than %d",
		    HCFG_MAX_DEPTH);
		return -1;
	}
	js->pos++;
	for (;;) {
		if (jsonc_ws(js) == -1)
			return -1;
		if (js->pos >= js->len) {
			jsonc_error(js, open, "'%c' never closed",
			    js->buf[open]);
			return -1;
		}
		if (js->buf[js->pos] == close && count == 0)
			break;
		key = NULL;
		ks = ke = 0;
		if (obj) {
			if (js->buf[js->pos] != '"') {
				jsonc_error(js, js->pos, "expected a key (a "
				    "string in double quotes)");
				return -1;
			}
			ks = js->pos;
			if (jsonc_string(js) == -1)
				return -1;
			ke = js->pos;
			if (jsonc_ws(js) == -1)
				return -1;
			if (js->pos >= js->len || js->buf[js->pos] != ':') {
				jsonc_error(js, js->pos, "expected ':'");
				return -1;
			}
			js->pos++;
			if (jsonc_ws(js) == -1)
				return -1;
		}
		cmask = 0;
		cbelow = 0;
		if (kept >= 0) {
			pn = &js->n[kept];
			if (pn->below > 0)
				cbelow = pn->below + 1;
			else if (jsonc_whole(js, pn->mask, depth))
				cbelow = 1;
			if (obj && pn->mask != 0 && pn->below == 0) {
				key = jsonc_decode(js->buf + ks + 1,
				    ke - ks - 2);
				cmask = jsonc_mask(js, pn->mask, depth + 1,
				    key);
			}
			if (cbelow > JSONC_BELOW)
				cbelow = 0;
			if (cmask == 0 && cbelow == 0) {
				free(key);
				key = NULL;
			}
		}
		if (jsonc_value(js, depth + 1, kept, cmask, cbelow,
		    &child) == -1) {
			free(key);
			return -1;
		}
		if (child >= 0) {
			if (obj) {
				js->n[child].haskey = 1;
				js->n[child].ks = ks;
				js->n[child].ke = ke;
				if (key == NULL)
					key = jsonc_decode(js->buf + ks + 1,
					    ke - ks - 2);
				js->n[child].key = key;
			} else
				free(key);
			jsonc_link(js, kept, child);
		} else
			free(key);
		count++;
		if (jsonc_ws(js) == -1)
			return -1;
		if (child >= 0 && js->saw_comment)
			js->n[child].comments_after = 1;
		if (js->pos < js->len && js->buf[js->pos] == ',') {
			if (child >= 0)
				js->n[child].comma = js->pos;
			js->pos++;
			if (jsonc_ws(js) == -1)
				return -1;
			if (child >= 0 && js->saw_comment)
				js->n[child].comments_after = 1;
			if (js->pos < js->len && js->buf[js->pos] == close &&
			    !js->comments) {
				jsonc_error(js, js->pos, "a trailing comma, "
				    "which JSON does not allow");
				return -1;
			}
			if (js->pos < js->len && js->buf[js->pos] == close)
				break;
			continue;
		}
		if (js->pos < js->len && js->buf[js->pos] == close)
			break;
		if (js->pos >= js->len) {
			jsonc_error(js, open, "'%c' never closed",
			    js->buf[open]);
			return -1;
		}
		jsonc_error(js, js->pos, "expected ',' or '%c'", close);
		return -1;
	}
	js->pos++;
	return 0;
}

/* A value at pos (after white space); *out its node, or -1 if not kept. */
static int
jsonc_value(struct jscan *js, int depth, long parent, uint32_t mask,
    int below, long *out)
{
	const char	*b = js->buf;
	size_t		 start = js->pos;
	long		 self = -1;
	enum jtype	 t;
	int		 r;

	*out = -1;
	if (js->pos >= js->len) {
		jsonc_error(js, js->pos, "unexpected end of the file");
		return -1;
	}
	switch (b[js->pos]) {
	case '{': t = J_OBJECT; break;
	case '[': t = J_ARRAY; break;
	case '"': t = J_STRING; break;
	case 't': case 'f': case 'n': t = J_LITERAL; break;
	default:
		if (b[js->pos] == '-' || (b[js->pos] >= '0' &&
		    b[js->pos] <= '9')) {
			t = J_NUMBER;
			break;
		}
		jsonc_error(js, js->pos, "unexpected '%c'",
		    (unsigned char)b[js->pos] >= 0x20 &&
		    (unsigned char)b[js->pos] < 0x7f ? b[js->pos] : '?');
		return -1;
	}
	if (parent == -2 || mask != 0 || below > 0) {
		self = jsonc_node(js);
		js->n[self].type = t;
		js->n[self].s = start;
		js->n[self].mask = parent == -2 ? (1u << js->nconts) - 1 : mask;
		if (parent == -2 && js->nconts == JSONC_MAX_CONTAINERS)
			js->n[self].mask = UINT32_MAX;
		js->n[self].below = below;
	}
	switch (t) {
	case J_OBJECT:
	case J_ARRAY:
		r = jsonc_compound(js, depth, self);
		break;
	case J_STRING:
		r = jsonc_string(js);
		break;
	case J_NUMBER:
		r = jsonc_number(js);
		break;
	default:
		if (js->len - js->pos >= 4 && memcmp(b + js->pos, "true", 4) ==
		    0)
			js->pos += 4;
		else if (js->len - js->pos >= 5 && memcmp(b + js->pos,
		    "false", 5) == 0)
			js->pos += 5;
		else if (js->len - js->pos >= 4 && memcmp(b + js->pos, "null",
		    4) == 0)
			js->pos += 4;
		else {
			jsonc_error(js, js->pos, "unexpected '%c'", b[js->pos]);
			return -1;
		}
		r = 0;
		break;
	}
	if (r == -1)
		return -1;
	if (self >= 0)
		js->n[self].e = js->pos;
	*out = self;
	return 0;
}

/*
 * Decodes the text between a JSON string's quotes (already checked):
 * a new NUL-terminated string, or NULL when it holds a NUL.
 */
char *
jsonc_decode(const char *s, size_t len)
{
	char		*out, *o;
	size_t		 i;
	unsigned int	 cp, lo;
	int		 k;

	out = o = xmalloc(len + 1);
	for (i = 0; i < len; i++) {
		if (s[i] != '\\') {
			if (s[i] == '\0')
				goto nul;
			*o++ = s[i];
			continue;
		}
		if (i + 1 >= len)
			break;
		switch (s[++i]) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			cp = 0;
			for (k = 1; k <= 4 && i + k < len; k++)
				cp = cp * 16 + (unsigned)scan_hex_value(
				    (unsigned char)s[i + k]);
			i += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < len + 0 &&
			    s[i + 1] == '\\' && s[i + 2] == 'u') {
				lo = 0;
				for (k = 3; k <= 6; k++)
					lo = lo * 16 + (unsigned)(scan_hex_value(
					    (unsigned char)s[i + k]) & 0xf);
				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					    (lo - 0xdc00);
					i += 6;
				}
			}
			if (cp == 0)
				goto nul;
			o += scan_put_utf8(o, cp);
			break;
		default:
			*o++ = s[i];
			break;
		}
	}
	*o = '\0';
	return out;
nul:
	free(out);
	return NULL;
}

/* Splits a container path into its components. */
static void
jsonc_split(const char *path, struct jcont *c)
{
	const char	*p = path, *q;

	c->comp = NULL;
	c->n = 0;
	for (;;) {
		q = strchr(p, '\x1f');
		c->comp = xreallocarray(c->comp, c->n + 1, sizeof *c->comp);
		c->comp[c->n++] = q == NULL ? xstrdup(p) :
		    xstrndup(p, (size_t)(q - p));
		if (q == NULL)
			break;
		p = q + 1;
	}
}

/*
 * Scans buf as JSON (comments 0) or JSONC (1) and fills doc with the
 * entries of the layout's containers.  Returns 0, or -1 with *cause
 * "line L column C: what".
 */
int
jsonc_parse(const char *buf, size_t len, int comments,
    const struct hcfg_layout *layout, struct hdoc *doc, char **cause)
{
	struct jscan	 js;
	long		 root;
	size_t		 i, j;
	int		 rc = -1;

	memset(&js, 0, sizeof js);
	js.buf = buf;
	js.len = len;
	js.comments = comments;
	if (len > HCFG_MAX_BYTES) {
		*cause = xstrdup("the file is larger than 16 MiB");
		return -1;
	}
	for (i = 0; layout->containers[i] != NULL &&
	    i < JSONC_MAX_CONTAINERS; i++)
		jsonc_split(layout->containers[i], &js.conts[js.nconts++]);
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		js.pos = 3;
	if (jsonc_ws(&js) == -1)
		goto out;
	if (jsonc_value(&js, 0, -2, 0, 0, &root) == -1)
		goto out;
	if (jsonc_ws(&js) == -1)
		goto out;
	if (js.pos < js.len) {
		jsonc_error(&js, js.pos, "more after the end of the JSON "
		    "value");
		goto out;
	}
	jsonc_entries(&js, layout, doc);
	rc = 0;
out:
	if (rc == -1)
		*cause = js.err != NULL ? js.err : xstrdup("cannot parse");
	else
		free(js.err);
	for (i = 0; i < js.nconts; i++) {
		for (j = 0; j < js.conts[i].n; j++)
			free(js.conts[i].comp[j]);
		free(js.conts[i].comp);
	}
	for (i = 0; i < js.nn; i++)
		free(js.n[i].key);
	free(js.n);
	return rc;
}
