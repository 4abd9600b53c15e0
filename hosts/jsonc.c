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

/* How many containers a layout may name (a bit each in a mask). */
#define JSONC_MAX_CONTAINERS	32
/* How far below a container nodes are kept: entry, member, element. */
#define JSONC_BELOW		3

enum jtype { J_OBJECT, J_ARRAY, J_STRING, J_NUMBER, J_LITERAL };

struct jnode {
	size_t		 s, e;		/* the value's text */
	size_t		 ks, ke;	/* its key with the quotes, members */
	char		*key;		/* decoded key, or NULL */
	int		 haskey;
	enum jtype	 type;
	long		 parent, first, last, next, prev;
	size_t		 comma;		/* the comma after it, or SIZE_MAX */
	int		 comments_after; /* a comment between it and the next */
	uint32_t	 mask;		/* containers whose path it is on */
	int		 done;		/* its entries were read */
	int		 below;		/* levels below a whole container */
};

struct jcont {
	char	**comp;
	size_t	  n;
};

struct jscan {
	const char		*buf;
	size_t			 len, pos;
	int			 comments;	/* JSONC */
	struct jcont		 conts[JSONC_MAX_CONTAINERS];
	size_t			 nconts;
	struct jnode		*n;
	size_t			 nn, cap;
	char			*err;
	int			 saw_comment;
};

static int	jsonc_value(struct jscan *, int, long, uint32_t, int, long *);
static long	*jsonc_members(struct jscan *, long, size_t *);

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

/* The nodes a container path names, last-wins per key; *nout of them. */
static long *
jsonc_resolve(struct jscan *js, const struct jcont *c, size_t *nout)
{
	long	*cur, *nxt, *mem, k, last;
	size_t	 ncur, nnxt, d, j, nm, i;

	cur = xmalloc(sizeof *cur);
	cur[0] = 0;
	ncur = 1;
	for (d = 0; d < c->n && ncur > 0; d++) {
		nxt = NULL;
		nnxt = 0;
		for (j = 0; j < ncur; j++) {
			if (js->n[cur[j]].type != J_OBJECT)
				continue;
			if (strcmp(c->comp[d], "*") == 0) {
				mem = jsonc_members(js, cur[j], &nm);
				for (i = 0; i < nm; i++) {
					nxt = hcfg_grow(nxt, nnxt, sizeof *nxt);
					nxt[nnxt++] = mem[i];
				}
				free(mem);
				continue;
			}
			last = -1;
			for (k = js->n[cur[j]].first; k >= 0;
			    k = js->n[k].next)
				if (js->n[k].key != NULL &&
				    strcmp(c->comp[d], js->n[k].key) == 0)
					last = k;
			if (last >= 0) {
				nxt = hcfg_grow(nxt, nnxt, sizeof *nxt);
				nxt[nnxt++] = last;
			}
		}
		free(cur);
		cur = nxt;
		ncur = nnxt;
	}
	*nout = ncur;
	return cur;
}

/*
 * The members of object o that count (the last of each key, as
 * JSON.parse keeps), in order of position; *nout of them.
 */
struct jkey {
	const char	*key;
	long		 idx;
};

/* Orders by key, then position (qsort). */
static int
jsonc_keycmp(const void *a, const void *b)
{
	const struct jkey	*x = a, *y = b;
	int			 r;

	if ((r = strcmp(x->key, y->key)) != 0)
		return r;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Orders longs (qsort). */
static int
jsonc_longcmp(const void *a, const void *b)
{
	long	x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

static long *
jsonc_members(struct jscan *js, long o, size_t *nout)
{
	struct jkey	*all;
	long		*keep, k;
	size_t		 n = 0, i, nk = 0;

	for (k = js->n[o].first; k >= 0; k = js->n[k].next)
		if (js->n[k].key != NULL)
			n++;
	all = xcalloc(n + 1, sizeof *all);
	keep = xcalloc(n + 1, sizeof *keep);
	i = 0;
	for (k = js->n[o].first; k >= 0; k = js->n[k].next)
		if (js->n[k].key != NULL) {
			all[i].key = js->n[k].key;
			all[i++].idx = k;
		}
	if (n > 0)
		qsort(all, n, sizeof *all, jsonc_keycmp);
	for (i = 0; i < n; i++)
		if (i + 1 == n || strcmp(all[i].key, all[i + 1].key) != 0)
			keep[nk++] = all[i].idx;
	if (nk > 0)
		qsort(keep, nk, sizeof *keep, jsonc_longcmp);
	free(all);
	*nout = nk;
	return keep;
}

/* The raw bytes [s, e) as a new string. */
static char *
jsonc_raw(struct jscan *js, size_t s, size_t e)
{
	return xstrndup(js->buf + s, e - s);
}

/* Fills m from member node k. */
static void
jsonc_mem(struct jscan *js, long k, struct hmem *m)
{
	struct jnode	*n = &js->n[k];

	m->present = 1;
	m->ks = n->ks;
	m->ke = n->ke;
	m->vs = n->s;
	m->ve = n->e;
	m->is_str = n->type == J_STRING;
	m->is_arr = n->type == J_ARRAY;
	m->is_obj = n->type == J_OBJECT;
	if (m->is_str)
		m->str = jsonc_decode(js->buf + n->s + 1, n->e - n->s - 2);
	/* deleting the member: up to the next key, or from the previous
	   value when it is the last */
	if (n->next >= 0 && !n->comments_after) {
		m->rm_s = n->ks;
		m->rm_e = js->n[n->next].ks;
	} else if (n->next >= 0) {
		m->rm_s = n->ks;
		m->rm_e = n->comma + 1;
	} else if (n->prev >= 0) {
		m->rm_s = js->n[n->prev].e;
		m->rm_e = n->e;
	} else {
		m->rm_s = n->ks;
		m->rm_e = n->comma != SIZE_MAX ? n->comma + 1 : n->e;
	}
}

/*
 * What goes after the comma before a member wrap adds next to the member
 * at ks: the white space before ks, or one space when there is none
 * ({"command": "x"}).
 */
static char *
jsonc_msep(struct jscan *js, size_t lo, size_t ks)
{
	char	*ws = hcfg_ws_before(js->buf, lo, ks);

	if (*ws == '\0') {
		free(ws);
		ws = xstrdup(" ");
	}
	return ws;
}

/* Whether a header name is an HTTP token (what --header can carry). */
static int
jsonc_token(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (strchr("!#$%&'*+-.^_`|~", *s) == NULL &&
		    !(*s >= '0' && *s <= '9') && !(*s >= 'a' && *s <= 'z') &&
		    !(*s >= 'A' && *s <= 'Z'))
			return 0;
	return 1;
}

/* Fills one struct hent from entry node k of container path cpath. */
static void
jsonc_entry(struct jscan *js, const struct hcfg_layout *layout,
    const char *cpath, long k, struct hdoc *doc)
{
	struct hent	*h;
	struct jnode	*n = &js->n[k];
	long		*mem, a;
	size_t		 nm, i, j;
	const char	*key, *blk;
	char		*ws;
	struct hhdr	*hd;
	struct hbuf	 sb = { 0 };

	h = hdoc_add(doc);
	h->container = xstrdup(cpath);
	h->name = xstrdup(n->key);
	h->s = n->s;
	h->e = n->e;
	h->url_i = -1;
	h->can_bridge = 1;
	if (n->type != J_OBJECT)
		return;
	h->is_table = 1;
	mem = jsonc_members(js, k, &nm);
	for (i = 0; i < nm; i++) {
		key = js->n[mem[i]].key;
		if (strcmp(key, "command") == 0)
			jsonc_mem(js, mem[i], &h->cmd);
		else if (strcmp(key, "args") == 0)
			jsonc_mem(js, mem[i], &h->args);
		else if (strcmp(key, "type") == 0)
			jsonc_mem(js, mem[i], &h->type);
		else if (strcmp(key, "headers") == 0)
			jsonc_mem(js, mem[i], &h->headers);
		else if ((blk = hcfg_blocker(key)) != NULL)
			h->block = blk;
		for (j = 0; layout->url_keys != NULL &&
		    layout->url_keys[j] != NULL; j++)
			if (strcmp(key, layout->url_keys[j]) == 0 &&
			    (h->url_i == -1 || (int)j < h->url_i)) {
				if (h->url.present)
					free(h->url.str);
				memset(&h->url, 0, sizeof h->url);
				jsonc_mem(js, mem[i], &h->url);
				h->url_i = (int)j;
			}
	}
	if (h->args.present && h->args.is_arr) {
		a = -1;
		for (i = 0; i < nm; i++)
			if (strcmp(js->n[mem[i]].key, "args") == 0)
				a = mem[i];
		h->arr_in = h->args.vs + 1;
		for (k = js->n[a].first; k >= 0; k = js->n[k].next) {
			h->el = hcfg_grow(h->el, h->nel, sizeof *h->el);
			h->el[h->nel].s = js->n[k].s;
			h->el[h->nel].e = js->n[k].e;
			h->el[h->nel].str = js->n[k].type == J_STRING ?
			    jsonc_decode(js->buf + js->n[k].s + 1,
			    js->n[k].e - js->n[k].s - 2) : NULL;
			h->nel++;
		}
		/* the separator the array uses */
		hbuf_addc(&sb, ',');
		ws = NULL;
		if (h->nel >= 2)
			ws = hcfg_ws_before(js->buf, h->arr_in, h->el[1].s);
		else if (h->nel == 1 && memchr(js->buf + h->arr_in, '\n',
		    h->el[0].s - h->arr_in) != NULL)
			ws = hcfg_ws_before(js->buf, h->arr_in, h->el[0].s);
		/* an empty array: "," alone, so that unwrap without the
		   ledger can tell it from the ", " of args wrap added */
		hbuf_adds(&sb, ws != NULL ? ws : h->nel == 0 ? "" : " ");
		free(ws);
		h->sep = hbuf_take(&sb, NULL);
	}
	if (h->cmd.present) {
		h->colon_cmd = jsonc_raw(js, h->cmd.ke, h->cmd.vs);
		h->msep_cmd = jsonc_msep(js, h->s + 1, h->cmd.ks);
		h->ins_at = h->cmd.ve;
		hbuf_addc(&sb, ',');
		hbuf_adds(&sb, h->msep_cmd);
		hbuf_adds(&sb, "\"args\"");
		hbuf_adds(&sb, h->colon_cmd);
		h->ins_pre = hbuf_take(&sb, NULL);
		h->ins_post = xstrdup("");
	}
	if (h->url.present) {
		h->colon_url = jsonc_raw(js, h->url.ke, h->url.vs);
		h->msep_url = jsonc_msep(js, h->s + 1, h->url.ks);
	}
	if (h->headers.present && h->headers.is_obj) {
		for (i = 0; i < nm; i++)
			if (strcmp(js->n[mem[i]].key, "headers") == 0)
				a = mem[i];
		free(mem);
		mem = jsonc_members(js, a, &nm);
		for (i = 0; i < nm; i++) {
			struct jnode	*hn = &js->n[mem[i]];

			h->hd = hcfg_grow(h->hd, h->nhd, sizeof *h->hd);
			hd = &h->hd[h->nhd++];
			memset(hd, 0, sizeof *hd);
			hd->ks = hn->ks + 1;
			hd->ke = hn->ke - 1;
			hd->key = xstrdup(hn->key);
			if (hn->type == J_STRING) {
				hd->vs = hn->s + 1;
				hd->ve = hn->e - 1;
				hd->val = jsonc_decode(js->buf + hd->vs,
				    hd->ve - hd->vs);
			}
			if (hd->val == NULL || !jsonc_token(hd->key) ||
			    strpbrk(hd->val, "\r\n") != NULL)
				h->hd_bad = 1;
		}
	} else if (h->headers.present)
		h->hd_bad = 1;
	free(mem);
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
	long		 root, *cont, k, *ents;
	size_t		 i, j, nc, ne, d;
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
	for (i = 0; i < js.nconts; i++) {
		cont = jsonc_resolve(&js, &js.conts[i], &nc);
		for (j = 0; j < nc; j++) {
			struct hbuf	 pb = { 0 };
			char		*cpath;
			long		 m;
			int		 ok = 1;

			if (js.n[cont[j]].type != J_OBJECT)
				continue;
			/* a node two container paths name: once */
			if (js.n[cont[j]].done)
				continue;
			js.n[cont[j]].done = 1;
			/* the container's real path, from its ancestors */
			{
				long	 chain[HCFG_MAX_DEPTH + 1];
				size_t	 nch = 0;

				for (m = cont[j]; m > 0 && nch <
				    HCFG_MAX_DEPTH; m = js.n[m].parent)
					chain[nch++] = m;
				while (nch > 0) {
					k = chain[--nch];
					if (js.n[k].key == NULL ||
					    strchr(js.n[k].key, '\x1f') !=
					    NULL)
						ok = 0;
					else {
						if (pb.p != NULL)
							hbuf_addc(&pb, '\x1f');
						hbuf_adds(&pb, js.n[k].key);
					}
				}
			}
			cpath = hbuf_take(&pb, NULL);
			if (ok) {
				ents = jsonc_members(&js, cont[j], &ne);
				for (d = 0; d < ne; d++)
					jsonc_entry(&js, layout, cpath,
					    ents[d], doc);
				free(ents);
			}
			free(cpath);
		}
		free(cont);
	}
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
