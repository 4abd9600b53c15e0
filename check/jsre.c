/*
 * The regular expressions of JSON Schema's "pattern" and
 * "patternProperties": ECMA-262 with the u flag, as validators run them,
 * on Unicode code points.  The subset real schemas use is supported
 * (literals, ., classes with ranges and \d \w \s and their negations,
 * ^ $ \b \B, groups, alternation, greedy and lazy quantifiers including
 * counted ones); lookaround, back-references and \p{...} are not, and
 * jsre_compile() refuses them with a reason so that the keyword can be
 * ignored rather than give a false error.
 *
 * The matcher is a Pike VM: the pattern becomes a small program, and all
 * its threads advance together one code point at a time, so the time is
 * the subject's length times the program's size, never exponential.
 * A match is a search (the pattern may match anywhere), as RegExp.test().
 */

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Groups within groups: the parser recurses once per level. */
#define JSRE_MAX_NEST		64
/* The largest count a {n,m} may name; larger is refused as unsupported. */
#define JSRE_MAX_COUNT		1000
/* Ranges one class may hold (\W and \S inside a class add several). */
#define JSRE_MAX_RANGES		1024

enum jsre_op {
	JSRE_CHAR,	/* one code point */
	JSRE_ANY,	/* any but a line terminator */
	JSRE_CLASS,	/* a class: ranges[a..b), inverted if neg */
	JSRE_SPLIT,	/* go on at x and at y (x first) */
	JSRE_JMP,	/* go on at x */
	JSRE_BOL,	/* the subject's start */
	JSRE_EOL,	/* the subject's end */
	JSRE_WORDB,	/* \b */
	JSRE_NWORDB,	/* \B */
	JSRE_MATCH,
	JSRE_OP_MAX
};

struct jsre_insn {
	enum jsre_op	op;
	uint32_t	c;		/* JSRE_CHAR */
	uint32_t	x, y;		/* targets; JSRE_CLASS: ranges [x, y) */
	int		neg;		/* JSRE_CLASS */
};

struct jsre_range {
	uint32_t	lo, hi;
};

struct jsre {
	struct jsre_insn	*insn;
	size_t			 ninsn;
	struct jsre_range	*ranges;
	size_t			 nranges, rangecap;
};

/* The parse tree, nodes in one array. */
enum jsre_kind {
	JK_EMPTY, JK_CHAR, JK_ANY, JK_CLASS, JK_BOL, JK_EOL, JK_WORDB,
	JK_NWORDB, JK_CAT, JK_ALT, JK_REPEAT, JK_MAX
};

struct jsre_node {
	enum jsre_kind	kind;
	uint32_t	c;
	size_t		rlo, rhi;	/* JK_CLASS: ranges */
	int		neg;
	int		a, b;		/* children, -1 for none */
	int		min, max;	/* JK_REPEAT; max -1: unbounded */
};

struct jsre_parse {
	const char		*p, *end;
	struct jsre		*re;
	struct jsre_node	*nodes;
	size_t			 nnodes, cap;
	int			 depth;
	char			*why;	/* set on the first failure */
};

static const struct jsre_range jsre_digit[] = { { '0', '9' } };
static const struct jsre_range jsre_word[] = {
	{ '0', '9' }, { 'A', 'Z' }, { '_', '_' }, { 'a', 'z' }
};
/* ECMA-262 WhiteSpace and LineTerminator. */
static const struct jsre_range jsre_space[] = {
	{ 0x09, 0x0d }, { 0x20, 0x20 }, { 0xa0, 0xa0 }, { 0x1680, 0x1680 },
	{ 0x2000, 0x200a }, { 0x2028, 0x2029 }, { 0x202f, 0x202f },
	{ 0x205f, 0x205f }, { 0x3000, 0x3000 }, { 0xfeff, 0xfeff }
};
#define JSRE_NELEM(a)	(sizeof (a) / sizeof (a)[0])
#define JSRE_CP_MAX	0x10ffff

/* Decode one code point of UTF-8 at *p (not past end); bad bytes: U+FFFD. */
static uint32_t
jsre_decode(const char **pp, const char *end)
{
	const unsigned char	*p = (const unsigned char *)*pp;
	uint32_t		 c;
	int			 n, i;

	if (p[0] < 0x80) {
		*pp += 1;
		return p[0];
	}
	if ((p[0] & 0xe0) == 0xc0) {
		n = 1;
		c = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 2;
		c = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 3;
		c = p[0] & 0x07;
	} else {
		*pp += 1;
		return 0xfffd;
	}
	if (end - (const char *)p <= n) {
		*pp += 1;
		return 0xfffd;
	}
	for (i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			*pp += 1;
			return 0xfffd;
		}
		c = (c << 6) | (p[i] & 0x3f);
	}
	*pp += n + 1;
	return c > JSRE_CP_MAX ? 0xfffd : c;
}

/* Note the first reason the pattern cannot be used. */
static int
jsre_fail(struct jsre_parse *ps, const char *why)
{
	if (ps->why == NULL)
		ps->why = xstrdup(why);
	return -1;
}

static int
jsre_node_new(struct jsre_parse *ps, enum jsre_kind kind)
{
	struct jsre_node	*n;

	if (ps->nnodes == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 16;
		ps->nodes = xreallocarray(ps->nodes, ps->cap, sizeof *n);
	}
	n = &ps->nodes[ps->nnodes];
	memset(n, 0, sizeof *n);
	n->kind = kind;
	n->a = n->b = -1;
	return (int)ps->nnodes++;
}

static int
jsre_range_add(struct jsre *re, uint32_t lo, uint32_t hi)
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
jsre_ranges_add(struct jsre *re, const struct jsre_range *r, size_t n,
    int neg)
{
	uint32_t	next = 0;
	size_t		i;

	if (!neg) {
		for (i = 0; i < n; i++)
			jsre_range_add(re, r[i].lo, r[i].hi);
		return;
	}
	for (i = 0; i < n; i++) {
		if (r[i].lo > next)
			jsre_range_add(re, next, r[i].lo - 1);
		next = r[i].hi + 1;
	}
	if (next <= JSRE_CP_MAX)
		jsre_range_add(re, next, JSRE_CP_MAX);
}

static int
jsre_hex(uint32_t c)
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
jsre_hexn(struct jsre_parse *ps, int n)
{
	int32_t	v = 0;
	int	i, h;

	for (i = 0; i < n; i++) {
		if (ps->p >= ps->end || (h = jsre_hex((unsigned char)
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
jsre_escape(struct jsre_parse *ps, int in_class, uint32_t *cp, int *cls)
{
	uint32_t	c;
	int32_t		v, lo;

	*cls = 0;
	if (ps->p >= ps->end)
		return jsre_fail(ps, "the pattern ends in a backslash");
	c = jsre_decode(&ps->p, ps->end);
	switch (c) {
	case 'd': case 'D':
		jsre_ranges_add(ps->re, jsre_digit, JSRE_NELEM(jsre_digit),
		    c == 'D');
		*cls = 1;
		return 0;
	case 'w': case 'W':
		jsre_ranges_add(ps->re, jsre_word, JSRE_NELEM(jsre_word),
		    c == 'W');
		*cls = 1;
		return 0;
	case 's': case 'S':
		jsre_ranges_add(ps->re, jsre_space, JSRE_NELEM(jsre_space),
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
			return jsre_fail(ps, "an octal escape");
		*cp = 0;
		return 0;
	case 'c':
		if (ps->p < ps->end && ((ps->p[0] >= 'a' && ps->p[0] <= 'z') ||
		    (ps->p[0] >= 'A' && ps->p[0] <= 'Z'))) {
			*cp = (unsigned char)ps->p[0] % 32;
			ps->p++;
			return 0;
		}
		return jsre_fail(ps, "a \\c escape without a letter");
	case 'x':
		if ((v = jsre_hexn(ps, 2)) < 0)
			return jsre_fail(ps, "a \\x escape without two hex "
			    "digits");
		*cp = (uint32_t)v;
		return 0;
	case 'u':
		if (ps->p < ps->end && ps->p[0] == '{') {
			ps->p++;
			for (v = 0, lo = 0; ps->p < ps->end && ps->p[0] != '}';
			    ps->p++, lo++) {
				if (jsre_hex((unsigned char)ps->p[0]) < 0 ||
				    lo > 6)
					return jsre_fail(ps, "a bad \\u{...} "
					    "escape");
				v = v * 16 + jsre_hex((unsigned char)ps->p[0]);
			}
			if (ps->p >= ps->end || lo == 0 || v > JSRE_CP_MAX)
				return jsre_fail(ps, "a bad \\u{...} escape");
			ps->p++;
			*cp = (uint32_t)v;
			return 0;
		}
		if ((v = jsre_hexn(ps, 4)) < 0)
			return jsre_fail(ps, "a \\u escape without four hex "
			    "digits");
		/* A surrogate pair written as two escapes is one code point. */
		if (v >= 0xd800 && v <= 0xdbff && ps->end - ps->p >= 6 &&
		    ps->p[0] == '\\' && ps->p[1] == 'u') {
			const char	*save = ps->p;

			ps->p += 2;
			lo = jsre_hexn(ps, 4);
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
		return jsre_fail(ps, "a Unicode property escape (\\p{...})");
	case 'k':
		return jsre_fail(ps, "a named back-reference (\\k<...>)");
	default:
		break;
	}
	if (c >= '1' && c <= '9')
		return jsre_fail(ps, "a back-reference (\\1 to \\9)");
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
	return jsre_fail(ps, "an escape ECMA-262 does not define");
}

/* A class after its '['; one JK_CLASS node. */
static int
jsre_class(struct jsre_parse *ps)
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
			return jsre_fail(ps, "a class without its ']'");
		if (ps->p[0] == ']')
			break;
		cls = 0;
		if (ps->p[0] == '\\') {
			ps->p++;
			if (jsre_escape(ps, 1, &lo, &cls) != 0)
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
				if (jsre_escape(ps, 1, &hi, &cls2) != 0)
					return -1;
				if (cls2)
					return jsre_fail(ps, "a class escape "
					    "as the end of a range");
			} else
				hi = jsre_decode(&ps->p, ps->end);
			if (hi < lo)
				return jsre_fail(ps, "a range out of order");
		}
		jsre_range_add(ps->re, lo, hi);
check:
		if (ps->re->nranges - start > JSRE_MAX_RANGES)
			return jsre_fail(ps, "a class too large");
	}
	ps->p++;
	id = jsre_node_new(ps, JK_CLASS);
	n = &ps->nodes[id];
	n->rlo = start;
	n->rhi = ps->re->nranges;
	n->neg = neg;
	return id;
}

static int	jsre_alt(struct jsre_parse *);

/* A decimal count in a {n,m}, or -1. */
static int
jsre_count(struct jsre_parse *ps)
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
jsre_atom(struct jsre_parse *ps)
{
	uint32_t	c;
	int		id, cls;

	if (ps->p >= ps->end || ps->p[0] == '|' || ps->p[0] == ')')
		return -2;
	switch (ps->p[0]) {
	case '^':
		ps->p++;
		return jsre_node_new(ps, JK_BOL);
	case '$':
		ps->p++;
		return jsre_node_new(ps, JK_EOL);
	case '.':
		ps->p++;
		return jsre_node_new(ps, JK_ANY);
	case '[':
		ps->p++;
		return jsre_class(ps);
	case '*': case '+': case '?': case '{':
		return jsre_fail(ps, "a quantifier with nothing to repeat");
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
					return jsre_fail(ps, "a group name "
					    "without its '>'");
				ps->p++;
			} else if (ps->end - ps->p >= 2 && (ps->p[1] == '=' ||
			    ps->p[1] == '!' || ps->p[1] == '<'))
				return jsre_fail(ps, "a lookahead or "
				    "lookbehind");
			else
				return jsre_fail(ps, "a group kind ECMA-262 "
				    "does not have ((?i), (?P...)...)");
		}
		if (++ps->depth > JSRE_MAX_NEST)
			return jsre_fail(ps, "groups nested too deep");
		id = jsre_alt(ps);
		ps->depth--;
		if (id < 0)
			return -1;
		if (ps->p >= ps->end || ps->p[0] != ')')
			return jsre_fail(ps, "a group without its ')'");
		ps->p++;
		return id;
	case '\\':
		ps->p++;
		if (ps->p < ps->end && (ps->p[0] == 'b' || ps->p[0] == 'B')) {
			id = jsre_node_new(ps, ps->p[0] == 'b' ? JK_WORDB :
			    JK_NWORDB);
			ps->p++;
			return id;
		}
		{
			size_t	start = ps->re->nranges;

			if (jsre_escape(ps, 0, &c, &cls) != 0)
				return -1;
			if (cls) {
				id = jsre_node_new(ps, JK_CLASS);
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
	id = jsre_node_new(ps, JK_CHAR);
	ps->nodes[id].c = c;
	return id;
}

/* An atom with its quantifier, if any. */
static int
jsre_piece(struct jsre_parse *ps)
{
	const char	*save;
	int		 a, id, min, max;
	enum jsre_kind	 k;

	if ((a = jsre_atom(ps)) < 0)
		return a;
	if (ps->p >= ps->end)
		return a;
	switch (ps->p[0]) {
	case '*': min = 0; max = -1; ps->p++; break;
	case '+': min = 1; max = -1; ps->p++; break;
	case '?': min = 0; max = 1; ps->p++; break;
	case '{':
		save = ps->p++;
		if ((min = jsre_count(ps)) < 0) {
			ps->p = save;
			return jsre_fail(ps, "a '{' that is no quantifier");
		}
		max = min;
		if (ps->p < ps->end && ps->p[0] == ',') {
			ps->p++;
			max = -1;
			if (ps->p < ps->end && ps->p[0] != '}')
				max = jsre_count(ps);
		}
		if (ps->p >= ps->end || ps->p[0] != '}')
			return jsre_fail(ps, "a '{' that is no quantifier");
		ps->p++;
		if (min > JSRE_MAX_COUNT || max > JSRE_MAX_COUNT)
			return jsre_fail(ps, "a count over 1000");
		if (max >= 0 && max < min)
			return jsre_fail(ps, "a count range out of order");
		break;
	default:
		return a;
	}
	/* Lazy or greedy: the same for whether it matches at all. */
	if (ps->p < ps->end && ps->p[0] == '?')
		ps->p++;
	k = ps->nodes[a].kind;
	if (k == JK_BOL || k == JK_EOL || k == JK_WORDB || k == JK_NWORDB)
		return jsre_fail(ps, "a quantifier on an assertion");
	id = jsre_node_new(ps, JK_REPEAT);
	ps->nodes[id].a = a;
	ps->nodes[id].min = min;
	ps->nodes[id].max = max;
	return id;
}

/* A sequence of pieces. */
static int
jsre_seq(struct jsre_parse *ps)
{
	int	cur = -1, p, id;

	while ((p = jsre_piece(ps)) >= 0) {
		if (cur < 0) {
			cur = p;
			continue;
		}
		id = jsre_node_new(ps, JK_CAT);
		ps->nodes[id].a = cur;
		ps->nodes[id].b = p;
		cur = id;
	}
	if (p == -1)
		return -1;
	return cur < 0 ? jsre_node_new(ps, JK_EMPTY) : cur;
}

/* Alternatives. */
static int
jsre_alt(struct jsre_parse *ps)
{
	int	a, b, id;

	if ((a = jsre_seq(ps)) < 0)
		return -1;
	while (ps->p < ps->end && ps->p[0] == '|') {
		ps->p++;
		if ((b = jsre_seq(ps)) < 0)
			return -1;
		id = jsre_node_new(ps, JK_ALT);
		ps->nodes[id].a = a;
		ps->nodes[id].b = b;
		a = id;
	}
	return a;
}

/* Append an instruction; -1 when the program would be too large. */
static int
jsre_emit(struct jsre_parse *ps, size_t *cap, enum jsre_op op)
{
	struct jsre	*re = ps->re;

	if (re->ninsn >= JSCHEMA_RE_MAX_INSNS)
		return jsre_fail(ps, "a pattern too large once its counts "
		    "are expanded");
	if (re->ninsn == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		re->insn = xreallocarray(re->insn, *cap, sizeof *re->insn);
	}
	memset(&re->insn[re->ninsn], 0, sizeof re->insn[0]);
	re->insn[re->ninsn].op = op;
	return (int)re->ninsn++;
}

/* Compile node id into the program (recursion bounded by the nesting). */
static int
jsre_gen(struct jsre_parse *ps, size_t *cap, int id)
{
	struct jsre_node	*n = &ps->nodes[id];
	struct jsre_insn	*in;
	int			 i, s, j, k, nopt, *splits;

	switch (n->kind) {
	case JK_EMPTY:
		return 0;
	case JK_CHAR:
		if ((i = jsre_emit(ps, cap, JSRE_CHAR)) < 0)
			return -1;
		ps->re->insn[i].c = n->c;
		return 0;
	case JK_ANY:
		return jsre_emit(ps, cap, JSRE_ANY) < 0 ? -1 : 0;
	case JK_CLASS:
		if ((i = jsre_emit(ps, cap, JSRE_CLASS)) < 0)
			return -1;
		in = &ps->re->insn[i];
		in->x = (uint32_t)n->rlo;
		in->y = (uint32_t)n->rhi;
		in->neg = n->neg;
		return 0;
	case JK_BOL:
		return jsre_emit(ps, cap, JSRE_BOL) < 0 ? -1 : 0;
	case JK_EOL:
		return jsre_emit(ps, cap, JSRE_EOL) < 0 ? -1 : 0;
	case JK_WORDB:
		return jsre_emit(ps, cap, JSRE_WORDB) < 0 ? -1 : 0;
	case JK_NWORDB:
		return jsre_emit(ps, cap, JSRE_NWORDB) < 0 ? -1 : 0;
	case JK_CAT:
		if (jsre_gen(ps, cap, n->a) != 0)
			return -1;
		return jsre_gen(ps, cap, ps->nodes[id].b);
	case JK_ALT:
		if ((s = jsre_emit(ps, cap, JSRE_SPLIT)) < 0)
			return -1;
		ps->re->insn[s].x = (uint32_t)s + 1;
		if (jsre_gen(ps, cap, ps->nodes[id].a) != 0 ||
		    (j = jsre_emit(ps, cap, JSRE_JMP)) < 0)
			return -1;
		ps->re->insn[s].y = (uint32_t)j + 1;
		if (jsre_gen(ps, cap, ps->nodes[id].b) != 0)
			return -1;
		ps->re->insn[j].x = (uint32_t)ps->re->ninsn;
		return 0;
	case JK_REPEAT:
		break;
	default:
		return jsre_fail(ps, "an internal error");
	}
	for (k = 0; k < n->min; k++) {
		if (jsre_gen(ps, cap, ps->nodes[id].a) != 0)
			return -1;
		n = &ps->nodes[id];
	}
	if (n->max < 0) {
		/* L: split body, out; body; jmp L */
		if ((s = jsre_emit(ps, cap, JSRE_SPLIT)) < 0)
			return -1;
		ps->re->insn[s].x = (uint32_t)s + 1;
		if (jsre_gen(ps, cap, ps->nodes[id].a) != 0 ||
		    (j = jsre_emit(ps, cap, JSRE_JMP)) < 0)
			return -1;
		ps->re->insn[j].x = (uint32_t)s;
		ps->re->insn[s].y = (uint32_t)ps->re->ninsn;
		return 0;
	}
	/* Each optional copy may be skipped, which ends the repetition. */
	nopt = n->max - n->min;
	if (nopt == 0)
		return 0;
	splits = xcalloc((size_t)nopt, sizeof *splits);
	for (k = 0; k < nopt; k++) {
		if ((s = jsre_emit(ps, cap, JSRE_SPLIT)) < 0)
			goto fail;
		splits[k] = s;
		ps->re->insn[s].x = (uint32_t)s + 1;
		if (jsre_gen(ps, cap, ps->nodes[id].a) != 0)
			goto fail;
	}
	for (k = 0; k < nopt; k++)
		ps->re->insn[splits[k]].y = (uint32_t)ps->re->ninsn;
	free(splits);
	return 0;
fail:
	free(splits);
	return -1;
}

/*
 * Compile a pattern (UTF-8, len bytes).  NULL with *cause saying which
 * construct is not supported or what is wrong with it.
 */
struct jsre *
jsre_compile(const char *pat, size_t len, char **cause)
{
	struct jsre_parse	 ps;
	struct jsre		*re;
	size_t			 cap = 0;
	int			 root;

	re = xcalloc(1, sizeof *re);
	memset(&ps, 0, sizeof ps);
	ps.p = pat;
	ps.end = pat + len;
	ps.re = re;
	root = jsre_alt(&ps);
	if (root >= 0 && ps.p < ps.end)
		jsre_fail(&ps, "a ')' without its '('");
	if (ps.why == NULL && root >= 0 && jsre_gen(&ps, &cap, root) == 0)
		jsre_emit(&ps, &cap, JSRE_MATCH);
	free(ps.nodes);
	if (ps.why != NULL || root < 0) {
		if (ps.why == NULL)
			ps.why = xstrdup("a pattern it cannot read");
		if (cause != NULL)
			*cause = ps.why;
		else
			free(ps.why);
		jsre_free(re);
		return NULL;
	}
	return re;
}

void
jsre_free(struct jsre *re)
{
	if (re == NULL)
		return;
	free(re->insn);
	free(re->ranges);
	free(re);
}

static int
jsre_is_word(int64_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || c == '_';
}

static int
jsre_in_class(const struct jsre *re, const struct jsre_insn *in, uint32_t c)
{
	uint32_t	i;

	for (i = in->x; i < in->y; i++) {
		if (c >= re->ranges[i].lo && c <= re->ranges[i].hi)
			return !in->neg;
	}
	return in->neg;
}

/* A list of threads: program counters, each at most once per step. */
struct jsre_list {
	uint32_t	*pc;
	size_t		 n;
};

/*
 * Add the thread at pc and all it reaches without consuming (jumps,
 * splits, assertions that hold between prev and cur), marking each pc
 * seen in this step.  *matched when one reaches JSRE_MATCH.
 */
static void
jsre_add(const struct jsre *re, struct jsre_list *l, uint32_t *mark,
    uint32_t gen, uint32_t *stack, uint32_t pc, int64_t prev, int64_t cur,
    int *matched)
{
	const struct jsre_insn	*in;
	size_t			 sp = 0;

	stack[sp++] = pc;
	while (sp > 0) {
		pc = stack[--sp];
		if (mark[pc] == gen)
			continue;
		mark[pc] = gen;
		in = &re->insn[pc];
		switch (in->op) {
		case JSRE_JMP:
			stack[sp++] = in->x;
			break;
		case JSRE_SPLIT:
			stack[sp++] = in->y;
			stack[sp++] = in->x;
			break;
		case JSRE_BOL:
			if (prev < 0)
				stack[sp++] = pc + 1;
			break;
		case JSRE_EOL:
			if (cur < 0)
				stack[sp++] = pc + 1;
			break;
		case JSRE_WORDB:
		case JSRE_NWORDB:
			if ((jsre_is_word(prev) != jsre_is_word(cur)) ==
			    (in->op == JSRE_WORDB))
				stack[sp++] = pc + 1;
			break;
		case JSRE_MATCH:
			*matched = 1;
			break;
		default:
			l->pc[l->n++] = pc;
			break;
		}
	}
}

/*
 * Whether the pattern matches anywhere in s (len bytes of UTF-8): 1 or 0,
 * or -1 when *steps would pass max (JSRE_STEPS_PER_UNIT threads advanced
 * are a step).
 */
int
jsre_match(const struct jsre *re, const char *s, size_t len,
    uint64_t *steps, uint64_t max)
{
	struct jsre_list	 a, b, t;
	const struct jsre_insn	*in;
	const char		*end = s + len, *q;
	uint32_t		*mark, *stack, gen = 1;
	int64_t			 prev = -1, cur, next;
	size_t			 i;
	uint64_t		 sub = 0;
	int			 matched = 0, ok, rc = 0;

	a.pc = xcalloc(re->ninsn, sizeof *a.pc);
	b.pc = xcalloc(re->ninsn, sizeof *b.pc);
	mark = xcalloc(re->ninsn, sizeof *mark);
	/* Each pc pushes its successors once per closure: at most 2 each. */
	stack = xcalloc(2 * re->ninsn + 2, sizeof *stack);
	a.n = b.n = 0;
	q = s;
	cur = q < end ? (int64_t)jsre_decode(&q, end) : -1;
	jsre_add(re, &a, mark, gen, stack, 0, prev, cur, &matched);
	for (;;) {
		if (matched) {
			rc = 1;
			break;
		}
		sub += a.n + 1;
		*steps += sub / JSRE_STEPS_PER_UNIT;
		sub %= JSRE_STEPS_PER_UNIT;
		if (*steps > max) {
			rc = -1;
			break;
		}
		if (cur < 0)
			break;
		/* q is past cur; next is the code point after it. */
		next = q < end ? (int64_t)jsre_decode(&q, end) : -1;
		gen++;
		b.n = 0;
		for (i = 0; i < a.n && !matched; i++) {
			in = &re->insn[a.pc[i]];
			switch (in->op) {
			case JSRE_CHAR:
				ok = (uint32_t)cur == in->c;
				break;
			case JSRE_ANY:
				ok = cur != '\n' && cur != '\r' &&
				    cur != 0x2028 && cur != 0x2029;
				break;
			case JSRE_CLASS:
				ok = jsre_in_class(re, in, (uint32_t)cur);
				break;
			default:
				ok = 0;
				break;
			}
			if (ok)
				jsre_add(re, &b, mark, gen, stack, a.pc[i] + 1,
				    cur, next, &matched);
		}
		/* A new thread starts at every position: a search. */
		if (!matched)
			jsre_add(re, &b, mark, gen, stack, 0, cur, next,
			    &matched);
		t = a;
		a = b;
		b = t;
		prev = cur;
		cur = next;
	}
	free(a.pc);
	free(b.pc);
	free(mark);
	free(stack);
	return rc;
}
