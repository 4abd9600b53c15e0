/*
 * Reading an ECMA-262 pattern (the u flag's syntax, the subset jsre.c
 * matches) into a parse tree: jsparse_alt() is the whole pattern.  What
 * the matcher lacks (lookaround, back-references, \p{...}) or what is
 * malformed fails with a reason in ps->why, so that the keyword using the
 * pattern is left out with a note.
 */

#include <stdlib.h>
#include <string.h>

#include "jsonschema_int.h"

static const struct jsre_range jsparse_digit[] = { { '0', '9' } };
static const struct jsre_range jsparse_word[] = {
	{ '0', '9' }, { 'A', 'Z' }, { '_', '_' }, { 'a', 'z' }
};
/* ECMA-262 WhiteSpace and LineTerminator. */
static const struct jsre_range jsparse_space[] = {
	{ 0x09, 0x0d }, { 0x20, 0x20 }, { 0xa0, 0xa0 }, { 0x1680, 0x1680 },
	{ 0x2000, 0x200a }, { 0x2028, 0x2029 }, { 0x202f, 0x202f },
	{ 0x205f, 0x205f }, { 0x3000, 0x3000 }, { 0xfeff, 0xfeff }
};
#define JSPARSE_NELEM(a)	(sizeof (a) / sizeof (a)[0])


/* Note the first reason the pattern cannot be used. */
int
jsparse_fail(struct jsre_parse *ps, const char *why)
{
	if (ps->why == NULL)
		ps->why = xstrdup(why);
	return -1;
}

/* A new parse-tree node of a kind, its index; -1 past JSRE_MAX_NODES. */
static int
jsparse_node_new(struct jsre_parse *ps, enum jsre_kind kind)
{
	struct jsre_node	*n;

	if (ps->nnodes >= JSRE_MAX_NODES)
		return jsparse_fail(ps, "a pattern too large");
	if (ps->nnodes == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 16;
		ps->nodes = xreallocarray(ps->nodes, ps->cap, sizeof *n);
	}
	n = &ps->nodes[ps->nnodes];
	memset(n, 0, sizeof *n);
	n->kind = kind;
	n->a = n->b = n->next = -1;
	/* Every kind but these is one instruction. */
	n->size = kind == JK_EMPTY || kind == JK_CAT || kind == JK_ALT ||
	    kind == JK_REPEAT ? 0 : 1;
	return (int)ps->nnodes++;
}

/*
 * Set node id's program size (saturated just past the bound), failing
 * when it is over JSCHEMA_RE_MAX_INSNS: checked before any code is
 * generated, so that counted repeats within counted repeats are refused
 * without being expanded.
 */
static int
jsparse_size(struct jsre_parse *ps, int id, uint64_t size)
{
	if (size > JSCHEMA_RE_MAX_INSNS) {
		ps->nodes[id].size = JSCHEMA_RE_MAX_INSNS + 1;
		return jsparse_fail(ps, "a pattern too large once its counts "
		    "are expanded");
	}
	ps->nodes[id].size = (size_t)size;
	return id;
}

/* Append child to list node id (JK_CAT or JK_ALT). */
static void
jsparse_list_add(struct jsre_parse *ps, int id, int child)
{
	if (ps->nodes[id].a < 0)
		ps->nodes[id].a = child;
	else
		ps->nodes[ps->nodes[id].b].next = child;
	ps->nodes[id].b = child;
}

/* Add one range of code points to the pattern's class ranges. */
static int
jsparse_range_add(struct jsre *re, uint32_t lo, uint32_t hi)
{
	if (re->nranges == re->rangecap) {
		re->rangecap = re->rangecap ? re->rangecap * 2 : 16;
		re->ranges = xreallocarray(re->ranges, re->rangecap,
		    sizeof *re->ranges);
	}
	re->ranges[re->nranges].lo = lo;
	re->ranges[re->nranges].hi = hi;
	re->nranges++;
	return 0;
}

/* Add a set of ranges (sorted, disjoint) or their complement. */
static void
jsparse_ranges_add(struct jsre *re, const struct jsre_range *r, size_t n,
    int neg)
{
	uint32_t	next = 0;
	size_t		i;

	if (!neg) {
		for (i = 0; i < n; i++)
			jsparse_range_add(re, r[i].lo, r[i].hi);
		return;
	}
	for (i = 0; i < n; i++) {
		if (r[i].lo > next)
			jsparse_range_add(re, next, r[i].lo - 1);
		next = r[i].hi + 1;
	}
	if (next <= JSRE_CP_MAX)
		jsparse_range_add(re, next, JSRE_CP_MAX);
}

/* A hex digit's value, or -1. */
static int
jsparse_hex(uint32_t c)
{
	if (c >= '0' && c <= '9')
		return (int)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (int)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (int)(c - 'A' + 10);
	return -1;
}

/* n hex digits at ps->p, or -1. */
static int32_t
jsparse_hexn(struct jsre_parse *ps, int n)
{
	int32_t	v = 0;
	int	i, h;

	for (i = 0; i < n; i++) {
		if (ps->p >= ps->end || (h = jsparse_hex((unsigned char)
		    ps->p[0])) < 0)
			return -1;
		v = v * 16 + h;
		ps->p++;
	}
	return v;
}

/*
 * After a backslash: a class escape (\d \w \s and negations: *cls set,
 * ranges added), or one code point in *cp.  in_class: \b is backspace,
 * \- a hyphen.  -1 for what is not supported.
 */
static int
jsparse_escape(struct jsre_parse *ps, int in_class, uint32_t *cp, int *cls)
{
	uint32_t	c;
	int32_t		v, lo;

	*cls = 0;
	if (ps->p >= ps->end)
		return jsparse_fail(ps, "the pattern ends in a backslash");
	c = jsre_decode(&ps->p, ps->end);
	switch (c) {
	case 'd': case 'D':
		jsparse_ranges_add(ps->re, jsparse_digit, JSPARSE_NELEM(jsparse_digit),
		    c == 'D');
		*cls = 1;
		return 0;
	case 'w': case 'W':
		jsparse_ranges_add(ps->re, jsparse_word, JSPARSE_NELEM(jsparse_word),
		    c == 'W');
		*cls = 1;
		return 0;
	case 's': case 'S':
		jsparse_ranges_add(ps->re, jsparse_space, JSPARSE_NELEM(jsparse_space),
		    c == 'S');
		*cls = 1;
		return 0;
	case 't': *cp = '\t'; return 0;
	case 'n': *cp = '\n'; return 0;
	case 'r': *cp = '\r'; return 0;
	case 'f': *cp = '\f'; return 0;
	case 'v': *cp = '\v'; return 0;
	case 'b':
		if (!in_class)
			break;
		*cp = '\b';
		return 0;
	case '0':
		if (ps->p < ps->end && ps->p[0] >= '0' && ps->p[0] <= '9')
			return jsparse_fail(ps, "an octal escape");
		*cp = 0;
		return 0;
	case 'c':
		if (ps->p < ps->end && ((ps->p[0] >= 'a' && ps->p[0] <= 'z') ||
		    (ps->p[0] >= 'A' && ps->p[0] <= 'Z'))) {
			*cp = (unsigned char)ps->p[0] % 32;
			ps->p++;
			return 0;
		}
		return jsparse_fail(ps, "a \\c escape without a letter");
	case 'x':
		if ((v = jsparse_hexn(ps, 2)) < 0)
			return jsparse_fail(ps, "a \\x escape without two hex "
			    "digits");
		*cp = (uint32_t)v;
		return 0;
	case 'u':
		if (ps->p < ps->end && ps->p[0] == '{') {
			ps->p++;
			for (v = 0, lo = 0; ps->p < ps->end && ps->p[0] != '}';
			    ps->p++, lo++) {
				if (jsparse_hex((unsigned char)ps->p[0]) < 0 ||
				    lo > 6)
					return jsparse_fail(ps, "a bad \\u{...} "
					    "escape");
				v = v * 16 + jsparse_hex((unsigned char)ps->p[0]);
			}
			if (ps->p >= ps->end || lo == 0 || v > JSRE_CP_MAX)
				return jsparse_fail(ps, "a bad \\u{...} escape");
			ps->p++;
			*cp = (uint32_t)v;
			return 0;
		}
		if ((v = jsparse_hexn(ps, 4)) < 0)
			return jsparse_fail(ps, "a \\u escape without four hex "
			    "digits");
		/* A surrogate pair written as two escapes is one code point. */
		if (v >= 0xd800 && v <= 0xdbff && ps->end - ps->p >= 6 &&
		    ps->p[0] == '\\' && ps->p[1] == 'u') {
			const char	*save = ps->p;

			ps->p += 2;
			lo = jsparse_hexn(ps, 4);
			if (lo >= 0xdc00 && lo <= 0xdfff) {
				*cp = 0x10000 + (((uint32_t)v - 0xd800) << 10) +
				    ((uint32_t)lo - 0xdc00);
				return 0;
			}
			ps->p = save;
		}
		*cp = (uint32_t)v;
		return 0;
	case 'p': case 'P':
		return jsparse_fail(ps, "a Unicode property escape (\\p{...})");
	case 'k':
		return jsparse_fail(ps, "a named back-reference (\\k<...>)");
	default:
		break;
	}
	if (c >= '1' && c <= '9')
		return jsparse_fail(ps, "a back-reference (\\1 to \\9)");
	/*
	 * Any other ASCII punctuation stands for itself: what the u flag
	 * allows (^$\.*+?()[]{}|/ and - in a class) and what it refuses but
	 * people write (\- \" \:), whose meaning is not in doubt.
	 */
	if (c < 0x80 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))) {
		*cp = c;
		return 0;
	}
	return jsparse_fail(ps, "an escape ECMA-262 does not define");
}

/* qsort() order of ranges: by their first code point. */
static int
jsparse_range_cmp(const void *a, const void *b)
{
	const struct jsre_range	*x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Sort the ranges from start on and merge those that overlap or touch,
 * so that the matcher can binary-search a class (jsre_in_class()).
 */
static void
jsparse_ranges_merge(struct jsre *re, size_t start)
{
	struct jsre_range	*r;
	size_t			 n = re->nranges - start, i, o = 0;

	if (n < 2)
		return;
	r = re->ranges + start;
	qsort(r, n, sizeof *r, jsparse_range_cmp);
	for (i = 1; i < n; i++) {
		if (r[o].hi == JSRE_CP_MAX || r[i].lo <= r[o].hi + 1) {
			if (r[i].hi > r[o].hi)
				r[o].hi = r[i].hi;
		} else
			r[++o] = r[i];
	}
	re->nranges = start + o + 1;
}

/* A class after its '['; one JK_CLASS node. */
static int
jsparse_class(struct jsre_parse *ps)
{
	struct jsre_node	*n;
	size_t			 start = ps->re->nranges;
	uint32_t		 lo, hi;
	int			 id, neg = 0, cls, cls2;

	if (ps->p < ps->end && ps->p[0] == '^') {
		neg = 1;
		ps->p++;
	}
	for (;;) {
		if (ps->p >= ps->end)
			return jsparse_fail(ps, "a class without its ']'");
		if (ps->p[0] == ']')
			break;
		cls = 0;
		if (ps->p[0] == '\\') {
			ps->p++;
			if (jsparse_escape(ps, 1, &lo, &cls) != 0)
				return -1;
		} else
			lo = jsre_decode(&ps->p, ps->end);
		if (cls)
			goto check;
		hi = lo;
		if (ps->end - ps->p >= 2 && ps->p[0] == '-' && ps->p[1] != ']') {
			ps->p++;
			cls2 = 0;
			if (ps->p[0] == '\\') {
				ps->p++;
				if (jsparse_escape(ps, 1, &hi, &cls2) != 0)
					return -1;
				if (cls2)
					return jsparse_fail(ps, "a class escape "
					    "as the end of a range");
			} else
				hi = jsre_decode(&ps->p, ps->end);
			if (hi < lo)
				return jsparse_fail(ps, "a range out of order");
		}
		jsparse_range_add(ps->re, lo, hi);
check:
		if (ps->re->nranges - start > JSRE_MAX_RANGES)
			return jsparse_fail(ps, "a class too large");
	}
	ps->p++;
	jsparse_ranges_merge(ps->re, start);
	if ((id = jsparse_node_new(ps, JK_CLASS)) < 0)
		return -1;
	n = &ps->nodes[id];
	n->rlo = start;
	n->rhi = ps->re->nranges;
	n->neg = neg;
	return id;
}


/* A decimal count in a {n,m}, or -1. */
static int
jsparse_count(struct jsre_parse *ps)
{
	int	v = 0, any = 0;

	while (ps->p < ps->end && ps->p[0] >= '0' && ps->p[0] <= '9') {
		if (v <= JSRE_MAX_COUNT)
			v = v * 10 + (ps->p[0] - '0');
		ps->p++;
		any = 1;
	}
	return any ? v : -1;
}

/* An atom; -2 when there is none here (the end of a sequence). */
static int
jsparse_atom(struct jsre_parse *ps)
{
	uint32_t	c;
	int		id, cls;

	if (ps->p >= ps->end || ps->p[0] == '|' || ps->p[0] == ')')
		return -2;
	switch (ps->p[0]) {
	case '^':
		ps->p++;
		return jsparse_node_new(ps, JK_BOL);
	case '$':
		ps->p++;
		return jsparse_node_new(ps, JK_EOL);
	case '.':
		ps->p++;
		return jsparse_node_new(ps, JK_ANY);
	case '[':
		ps->p++;
		return jsparse_class(ps);
	case '*': case '+': case '?': case '{':
		return jsparse_fail(ps, "a quantifier with nothing to repeat");
	case '(':
		ps->p++;
		if (ps->p < ps->end && ps->p[0] == '?') {
			if (ps->end - ps->p >= 2 && ps->p[1] == ':')
				ps->p += 2;
			else if (ps->end - ps->p >= 3 && ps->p[1] == '<' &&
			    ps->p[2] != '=' && ps->p[2] != '!') {
				/* A named group: the name does not matter. */
				while (ps->p < ps->end && ps->p[0] != '>')
					ps->p++;
				if (ps->p >= ps->end)
					return jsparse_fail(ps, "a group name "
					    "without its '>'");
				ps->p++;
			} else if (ps->end - ps->p >= 2 && (ps->p[1] == '=' ||
			    ps->p[1] == '!' || ps->p[1] == '<'))
				return jsparse_fail(ps, "a lookahead or "
				    "lookbehind");
			else
				return jsparse_fail(ps, "a group kind ECMA-262 "
				    "does not have ((?i), (?P...)...)");
		}
		if (++ps->depth > JSRE_MAX_NEST)
			return jsparse_fail(ps, "groups nested too deep");
		id = jsparse_alt(ps);
		ps->depth--;
		if (id < 0)
			return -1;
		if (ps->p >= ps->end || ps->p[0] != ')')
			return jsparse_fail(ps, "a group without its ')'");
		ps->p++;
		return id;
	case '\\':
		ps->p++;
		if (ps->p < ps->end && (ps->p[0] == 'b' || ps->p[0] == 'B')) {
			id = jsparse_node_new(ps, ps->p[0] == 'b' ? JK_WORDB :
			    JK_NWORDB);
			ps->p++;
			return id;
		}
		{
			size_t	start = ps->re->nranges;

			if (jsparse_escape(ps, 0, &c, &cls) != 0)
				return -1;
			if (cls) {
				if ((id = jsparse_node_new(ps, JK_CLASS)) < 0)
					return -1;
				ps->nodes[id].rlo = start;
				ps->nodes[id].rhi = ps->re->nranges;
				return id;
			}
		}
		break;
	default:
		c = jsre_decode(&ps->p, ps->end);
		break;
	}
	if ((id = jsparse_node_new(ps, JK_CHAR)) < 0)
		return -1;
	ps->nodes[id].c = c;
	return id;
}

/* An atom with its quantifier, if any. */
static int
jsparse_piece(struct jsre_parse *ps)
{
	const char	*save;
	uint64_t	 body, size;
	int		 a, id, min, max;
	enum jsre_kind	 k;

	if ((a = jsparse_atom(ps)) < 0)
		return a;
	if (ps->p >= ps->end)
		return a;
	switch (ps->p[0]) {
	case '*': min = 0; max = -1; ps->p++; break;
	case '+': min = 1; max = -1; ps->p++; break;
	case '?': min = 0; max = 1; ps->p++; break;
	case '{':
		save = ps->p++;
		if ((min = jsparse_count(ps)) < 0) {
			ps->p = save;
			return jsparse_fail(ps, "a '{' that is no quantifier");
		}
		max = min;
		if (ps->p < ps->end && ps->p[0] == ',') {
			ps->p++;
			max = -1;
			if (ps->p < ps->end && ps->p[0] != '}')
				max = jsparse_count(ps);
		}
		if (ps->p >= ps->end || ps->p[0] != '}')
			return jsparse_fail(ps, "a '{' that is no quantifier");
		ps->p++;
		if (min > JSRE_MAX_COUNT || max > JSRE_MAX_COUNT)
			return jsparse_fail(ps, "a count over 1000");
		if (max >= 0 && max < min)
			return jsparse_fail(ps, "a count range out of order");
		break;
	default:
		return a;
	}
	/* Lazy or greedy: the same for whether it matches at all. */
	if (ps->p < ps->end && ps->p[0] == '?')
		ps->p++;
	k = ps->nodes[a].kind;
	if (k == JK_BOL || k == JK_EOL || k == JK_WORDB || k == JK_NWORDB)
		return jsparse_fail(ps, "a quantifier on an assertion");
	/* Nothing repeated, or nothing to repeat, is nothing: (?:){1000}. */
	body = ps->nodes[a].size;
	if (body == 0 || max == 0)
		return jsparse_node_new(ps, JK_EMPTY);
	if ((id = jsparse_node_new(ps, JK_REPEAT)) < 0)
		return -1;
	ps->nodes[id].a = a;
	ps->nodes[id].min = min;
	ps->nodes[id].max = max;
	/* min copies, then a loop (split, body, jmp) or optional copies. */
	size = (uint64_t)min * body + (max < 0 ? body + 2 :
	    (uint64_t)(max - min) * (body + 1));
	return jsparse_size(ps, id, size);
}

/* A sequence of pieces: one JK_CAT of those that are not empty. */
static int
jsparse_seq(struct jsre_parse *ps)
{
	int		cur = -1, cat = -1, p;
	uint64_t	size = 0;

	while ((p = jsparse_piece(ps)) >= 0) {
		if (ps->nodes[p].size == 0)
			continue;
		size += ps->nodes[p].size;
		if (cur < 0) {
			cur = p;
			continue;
		}
		if (cat < 0) {
			if ((cat = jsparse_node_new(ps, JK_CAT)) < 0)
				return -1;
			jsparse_list_add(ps, cat, cur);
			cur = cat;
		}
		jsparse_list_add(ps, cat, p);
		if (jsparse_size(ps, cat, size) < 0)
			return -1;
	}
	if (p == -1)
		return -1;
	return cur < 0 ? jsparse_node_new(ps, JK_EMPTY) : cur;
}

/* Alternatives: one JK_ALT of the sequences, or the only one. */
int
jsparse_alt(struct jsre_parse *ps)
{
	int		a, b, alt = -1;
	uint64_t	size;

	if ((a = jsparse_seq(ps)) < 0)
		return -1;
	size = ps->nodes[a].size;
	while (ps->p < ps->end && ps->p[0] == '|') {
		ps->p++;
		if ((b = jsparse_seq(ps)) < 0)
			return -1;
		if (alt < 0) {
			if ((alt = jsparse_node_new(ps, JK_ALT)) < 0)
				return -1;
			jsparse_list_add(ps, alt, a);
			a = alt;
		}
		jsparse_list_add(ps, alt, b);
		/* A split and a jump per alternative but the last. */
		size += ps->nodes[b].size + 2;
		if (jsparse_size(ps, alt, size) < 0)
			return -1;
	}
	return a;
}
