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

#include "jsonschema_int.h"

/* Decode one code point of UTF-8 at *p (not past end); bad bytes: U+FFFD. */
uint32_t
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

/* Append an instruction; -1 when the program would be too large. */
static int
jsre_emit(struct jsre_parse *ps, size_t *cap, enum jsre_op op)
{
	struct jsre	*re = ps->re;

	if (re->ninsn >= JSCHEMA_RE_MAX_INSNS)
		return jsparse_fail(ps, "a pattern too large once its counts "
		    "are expanded");
	if (re->ninsn == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		re->insn = xreallocarray(re->insn, *cap, sizeof *re->insn);
	}
	memset(&re->insn[re->ninsn], 0, sizeof re->insn[0]);
	re->insn[re->ninsn].op = op;
	return (int)re->ninsn++;
}

/*
 * Compile node id into the program.  Lists (sequences, alternatives) are
 * loops; the recursion is into a repeat's body and a list's members, so
 * it is bounded by the groups' nesting (JSRE_MAX_NEST); every call but
 * an empty alternative's emits code (the parser drops empty pieces), so
 * the work is bounded by the program's size, checked before
 * (jsparse_size()).
 */
static int
jsre_gen(struct jsre_parse *ps, size_t *cap, int id)
{
	const struct jsre_node	*n = &ps->nodes[id];
	struct jsre_insn	*in;
	int			 i, s, j, k, ch, nopt, *splits;
	uint32_t		 jmps, next;

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
		for (ch = n->a; ch >= 0; ch = ps->nodes[ch].next) {
			if (jsre_gen(ps, cap, ch) != 0)
				return -1;
		}
		return 0;
	case JK_ALT:
		/*
		 * Per alternative but the last: split to it or on; it; a
		 * jump to the end.  The jumps wait in a chain through
		 * their x (UINT32_MAX ends it) until the end is known.
		 */
		jmps = UINT32_MAX;
		for (ch = n->a; ch >= 0; ch = ps->nodes[ch].next) {
			if (ps->nodes[ch].next < 0) {
				if (jsre_gen(ps, cap, ch) != 0)
					return -1;
				break;
			}
			if ((s = jsre_emit(ps, cap, JSRE_SPLIT)) < 0)
				return -1;
			ps->re->insn[s].x = (uint32_t)s + 1;
			if (jsre_gen(ps, cap, ch) != 0 ||
			    (j = jsre_emit(ps, cap, JSRE_JMP)) < 0)
				return -1;
			ps->re->insn[j].x = jmps;
			jmps = (uint32_t)j;
			ps->re->insn[s].y = (uint32_t)j + 1;
		}
		while (jmps != UINT32_MAX) {
			next = ps->re->insn[jmps].x;
			ps->re->insn[jmps].x = (uint32_t)ps->re->ninsn;
			jmps = next;
		}
		return 0;
	case JK_REPEAT:
		break;
	default:
		return jsparse_fail(ps, "an internal error");
	}
	for (k = 0; k < n->min; k++) {
		if (jsre_gen(ps, cap, n->a) != 0)
			return -1;
	}
	if (n->max < 0) {
		/* L: split body, out; body; jmp L */
		if ((s = jsre_emit(ps, cap, JSRE_SPLIT)) < 0)
			return -1;
		ps->re->insn[s].x = (uint32_t)s + 1;
		if (jsre_gen(ps, cap, n->a) != 0 ||
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
		if (jsre_gen(ps, cap, n->a) != 0)
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
	root = jsparse_alt(&ps);
	if (root >= 0 && ps.p < ps.end)
		jsparse_fail(&ps, "a ')' without its '('");
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

/* Free a compiled pattern. */
void
jsre_free(struct jsre *re)
{
	if (re == NULL)
		return;
	free(re->insn);
	free(re->ranges);
	free(re);
}

/* Whether a code point is in \w (-1, no code point, is not). */
static int
jsre_is_word(int64_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || c == '_';
}

/*
 * Whether code point c is in a class instruction's ranges (or not,
 * inverted): a binary search, the ranges being sorted and disjoint
 * (jsparse_ranges_merge()).  *probes counts the ranges looked at.
 */
static int
jsre_in_class(const struct jsre *re, const struct jsre_insn *in, uint32_t c,
    uint64_t *probes)
{
	uint32_t	lo = in->x, hi = in->y, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		++*probes;
		if (c < re->ranges[mid].lo)
			hi = mid;
		else if (c > re->ranges[mid].hi)
			lo = mid + 1;
		else
			return !in->neg;
	}
	return in->neg;
}

/* jsre_match()'s scratch words kept on the stack (a 60-instruction program). */
#define JSRE_SMALL_WORDS	302

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
 * or class ranges looked at are a step, and a call at least one).
 */
int
jsre_match(const struct jsre *re, const char *s, size_t len,
    uint64_t *steps, uint64_t max)
{
	struct jsre_list	 a, b, t;
	const struct jsre_insn	*in;
	const char		*end = s + len, *q;
	uint32_t		*mark, *stack, *block, gen = 1;
	uint32_t		 small[JSRE_SMALL_WORDS];
	int64_t			 prev = -1, cur, next;
	size_t			 i, words;
	uint64_t		 sub = 0;
	int			 matched = 0, ok, rc = 0;

	/*
	 * The threads (a, b), the marks and the stack (each pc pushes its
	 * successors once per closure: at most 2 each) in one block, on
	 * the stack for a small program: the common pattern over a
	 * property name must not cost four allocations.
	 */
	words = 5 * re->ninsn + 2;
	if (words <= JSRE_SMALL_WORDS) {
		memset(small, 0, words * sizeof *small);
		block = small;
	} else
		block = xcalloc(words, sizeof *block);
	a.pc = block;
	b.pc = block + re->ninsn;
	mark = block + 2 * re->ninsn;
	stack = block + 3 * re->ninsn;
	a.n = b.n = 0;
	/* A call is a step at least, and setting it up touches each pc. */
	*steps += 1 + re->ninsn / JSRE_STEPS_PER_UNIT;
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
				ok = jsre_in_class(re, in, (uint32_t)cur,
				    &sub);
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
	if (block != small)
		free(block);
	return rc;
}

/* The memory a compiled pattern holds, in instructions and ranges. */
size_t
jsre_size(const struct jsre *re)
{
	return re->ninsn + re->nranges;
}
