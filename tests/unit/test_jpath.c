/*
 * JSONPath patterns: what each kind of step matches (whole paths, never a
 * prefix), where a bad pattern is wrong, and how concrete paths are
 * written, including keys that need quoting and steps into the JSON held
 * by a string.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "core.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* Most steps in a test path. */
#define JPATH_TEST_SEGS	8

/* Steps of a concrete path: a key, an index, a step into a string's JSON. */
#define K(k)	{ (k), 0, 0 }
#define I(i)	{ NULL, (i), 0 }
#define J	{ NULL, 0, 1 }

struct jpath_path {
	size_t		n;
	struct jseg	seg[JPATH_TEST_SEGS];
};

struct jpath_match_case {
	const char		*pattern;
	struct jpath_path	 path;
	int			 want;
};

static const struct jpath_match_case jpath_match_cases[] = {
	/* A leading step implies "$", as replay's help writes them. */
	{ ".a", { 1, { K("a") } }, 1 },
	{ ".a", { 2, { K("a"), K("b") } }, 0 },
	{ "..b", { 3, { K("a"), I(1), K("b") } }, 1 },
	{ "..b", { 1, { K("c") } }, 0 },
	{ "[1].a", { 2, { I(1), K("a") } }, 1 },
	{ "..['x y']", { 2, { K("a"), K("x y") } }, 1 },

	/* "$" is the whole message, and only that. */
	{ "$", { 0, { K("a") } }, 1 },
	{ "$", { 1, { K("a") } }, 0 },

	/* Keys: the whole path, not a prefix, not a longer one. */
	{ "$.a.b", { 2, { K("a"), K("b") } }, 1 },
	{ "$.a.b", { 1, { K("a") } }, 0 },
	{ "$.a.b", { 3, { K("a"), K("b"), K("c") } }, 0 },
	{ "$.a.b", { 2, { K("a"), K("c") } }, 0 },
	{ "$.a.b", { 2, { K("b"), K("a") } }, 0 },
	{ "$.a-b/c.d1", { 2, { K("a-b/c"), K("d1") } }, 1 },
	{ "$['x y'].z", { 2, { K("x y"), K("z") } }, 1 },
	{ "$[\"a.b\"]", { 1, { K("a.b") } }, 1 },
	{ "$[\"a.b\"]", { 2, { K("a"), K("b") } }, 0 },
	{ "$['it\\'s']", { 1, { K("it's") } }, 1 },
	{ "$[\"q\\\"\\\\\"]", { 1, { K("q\"\\") } }, 1 },
	{ "$['*']", { 1, { K("*") } }, 1 },
	{ "$['*']", { 1, { K("x") } }, 0 },
	/* A key step never matches an index. */
	{ "$.a", { 1, { I(0) } }, 0 },

	/* Indices. */
	{ "$.a[2]", { 2, { K("a"), I(2) } }, 1 },
	{ "$.a[2]", { 2, { K("a"), I(3) } }, 0 },
	{ "$.a[2]", { 2, { K("a"), K("2") } }, 0 },
	{ "$[0][10]", { 2, { I(0), I(10) } }, 1 },
	{ "$.a[*]", { 2, { K("a"), I(0) } }, 1 },
	{ "$.a[*]", { 2, { K("a"), I(7) } }, 1 },
	{ "$.a[*]", { 2, { K("a"), K("x") } }, 0 },
	{ "$.a[*]", { 1, { K("a") } }, 0 },
	{ "$.a[*].t", { 3, { K("a"), I(4), K("t") } }, 1 },

	/* Any key. */
	{ "$.*.b", { 2, { K("x"), K("b") } }, 1 },
	{ "$.*.b", { 2, { I(0), K("b") } }, 0 },
	{ "$.*", { 0, { K("x") } }, 0 },

	/* Descendants: at any depth of one or more, through anything. */
	{ "$..b", { 1, { K("b") } }, 1 },
	{ "$..b", { 2, { K("a"), K("b") } }, 1 },
	{ "$..b", { 4, { K("a"), I(3), K("c"), K("b") } }, 1 },
	{ "$..b", { 3, { K("a"), K("b"), K("c") } }, 0 },
	{ "$..b", { 1, { K("a") } }, 0 },
	{ "$..b", { 0, { K("b") } }, 0 },
	{ "$..b", { 2, { K("b"), I(0) } }, 0 },
	{ "$.a..b..c", { 5, { K("a"), K("x"), K("b"), K("y"), K("c") } }, 1 },
	{ "$.a..b..c", { 3, { K("a"), K("b"), K("c") } }, 1 },
	{ "$.a..b..c", { 2, { K("a"), K("c") } }, 0 },
	{ "$.a..b", { 1, { K("b") } }, 0 },
	{ "$.._meta.progressToken",
	    { 3, { K("params"), K("_meta"), K("progressToken") } }, 1 },
	{ "$.._meta.progressToken", { 6, { K("result"), K("content"), I(0),
	    K("_meta"), K("progressToken"), I(0) } }, 0 },
	{ "$.._meta.progressToken", { 5, { K("result"), K("content"), I(0),
	    K("_meta"), K("progressToken") } }, 1 },
	{ "$.._meta.progressToken", { 2, { K("params"), K("_meta") } }, 0 },
	{ "$..['x y']", { 2, { K("a"), K("x y") } }, 1 },
	{ "$..*", { 2, { I(0), K("x") } }, 1 },
	{ "$..*", { 1, { I(0) } }, 0 },

	/* Steps into the JSON a string holds. */
	{ "$.text{json}.t", { 3, { K("text"), J, K("t") } }, 1 },
	{ "$.text{json}.t", { 2, { K("text"), K("t") } }, 0 },
	{ "$.text{json}", { 2, { K("text"), J } }, 1 },
	{ "$.text{json}[*]", { 3, { K("text"), J, I(1) } }, 1 },
	{ "$..t", { 6, { K("result"), K("content"), I(0), K("text"), J,
	    K("t") } }, 1 },
	{ "$.text[*]", { 2, { K("text"), J } }, 0 },
	{ "$.text[0]", { 2, { K("text"), J } }, 0 },
	{ "$.text.*", { 2, { K("text"), J } }, 0 },
	{ "$.text{json}", { 2, { K("text"), I(0) } }, 0 },
};

/* Whether a pattern matches a path, one jpath_advance() a segment. */
static int
jpath_match_walk(const struct jpath *jp, const struct jseg *path, size_t n)
{
	unsigned char	*a, *b, *t;
	size_t		 i;
	int		 r;

	a = xmalloc(jpath_nstates(jp));
	b = xmalloc(jpath_nstates(jp));
	jpath_start(jp, a);
	for (i = 0; i < n; i++) {
		jpath_advance(jp, a, &path[i], b);
		t = a;
		a = b;
		b = t;
	}
	r = jpath_accepts(jp, a);
	free(a);
	free(b);
	return r;
}

/* Each pattern matches exactly the paths it names, whole or stepwise. */
Test(jpath, match, .timeout = UNIT_TIMEOUT)
{
	const struct jpath_match_case	*c;
	struct jpath			*jp;
	char				*cause = NULL, *text;
	size_t				 i;

	for (i = 0; i < nitems(jpath_match_cases); i++) {
		c = &jpath_match_cases[i];
		jp = jpath_compile(c->pattern, &cause);
		cr_assert_not_null(jp, "%s: %s", c->pattern, cause);
		text = jpath_format(c->path.seg, c->path.n);
		cr_expect_eq(jpath_match(jp, c->path.seg, c->path.n), c->want,
		    "case %zu: %s against %s: want %d", i, c->pattern, text,
		    c->want);
		cr_expect_eq(jpath_match_walk(jp, c->path.seg, c->path.n),
		    c->want, "case %zu: %s against %s step by step: want %d",
		    i, c->pattern, text, c->want);
		free(text);
		jpath_free(jp);
	}
}

struct jpath_error_case {
	const char	*pattern;
	const char	*want;		/* a fragment of the error */
};

static const struct jpath_error_case jpath_error_cases[] = {
	{ "", "must start with $" },
	{ "a.b", "must start with $" },
	{ "*.b", "must start with $" },
	{ ".", "empty key at 1" },
	{ "$.a[", "unclosed [ at 3" },
	{ "$[1", "unclosed [ at 1" },
	{ "$[*", "unclosed [ at 1" },
	{ "$['a'", "unclosed [ at 1" },
	{ "$[1x]", "expected ] at 3" },
	{ "$[*x]", "expected ] at 3" },
	{ "$['a'x]", "expected ] at 5" },
	{ "$['a", "unterminated string at 2" },
	{ "$[\"a'", "unterminated string at 2" },
	{ "$['a\\n']", "bad escape" },
	{ "$[abc]", "expected an index, * or a quoted key after [ at 2" },
	{ "$[-1]", "expected an index, * or a quoted key after [ at 2" },
	{ "$[]", "expected an index, * or a quoted key after [ at 2" },
	{ "$[99999999999999999999999]", "index too large at 2" },
	{ "$.", "empty key at 2" },
	{ "$.a.", "empty key at 4" },
	{ "$.a..", "empty key at 5" },
	{ "$...a", "empty key at 3" },
	{ "$.[0]", "empty key at 2" },
	{ "$..[0]", "expected a quoted key after ..[ at 4" },
	{ "$..['a'", "expected ] at 7" },
	{ "$a", "expected . or [ or {json} at 1" },
	{ "$ .a", "expected . or [ or {json} at 1" },
	{ "$.a{js}", "expected {json} at 3" },
	{ "$.a{json", "expected {json} at 3" },
};

/* A bad pattern is refused with its text and where it goes wrong. */
Test(jpath, compile_errors, .timeout = UNIT_TIMEOUT)
{
	const struct jpath_error_case	*c;
	struct jpath			*jp;
	char				*cause, *quoted;
	size_t				 i;

	for (i = 0; i < nitems(jpath_error_cases); i++) {
		c = &jpath_error_cases[i];
		cause = NULL;
		jp = jpath_compile(c->pattern, &cause);
		cr_assert_null(jp, "'%s' compiled", c->pattern);
		cr_assert_not_null(cause, "'%s': no cause", c->pattern);
		cr_expect(strstr(cause, c->want) != NULL,
		    "'%s': cause \"%s\" lacks \"%s\"", c->pattern, cause,
		    c->want);
		xasprintf(&quoted, "bad JSONPath '%s': ", c->pattern);
		cr_expect(strncmp(cause, quoted, strlen(quoted)) == 0,
		    "'%s': cause \"%s\" does not start \"%s\"", c->pattern,
		    cause, quoted);
		free(quoted);
		free(cause);
	}

	/* No cause asked for: still refused. */
	cr_assert_null(jpath_compile("$.a[", NULL));
}

/* A pattern remembers the text it was compiled from. */
Test(jpath, text, .timeout = UNIT_TIMEOUT)
{
	static const char	*patterns[] = { "$", "$.a['b c'][*]..d",
	    "$.text{json}.t", "$[\"x\"]" };
	struct jpath		*jp;
	char			*cause = NULL;
	size_t			 i;

	for (i = 0; i < nitems(patterns); i++) {
		jp = jpath_compile(patterns[i], &cause);
		cr_assert_not_null(jp, "%s: %s", patterns[i], cause);
		cr_expect_str_eq(jpath_text(jp), patterns[i]);
		jpath_free(jp);
	}
}

struct jpath_format_case {
	struct jpath_path	 path;
	const char		*want;
};

static const struct jpath_format_case jpath_format_cases[] = {
	{ { 0, { K("x") } }, "$" },
	{ { 4, { K("result"), K("content"), I(0), K("text") } },
	    "$.result.content[0].text" },
	{ { 2, { I(3), I(12) } }, "$[3][12]" },
	{ { 1, { K("_ok9") } }, "$._ok9" },
	{ { 1, { K("x-y") } }, "$['x-y']" },
	{ { 1, { K("a/b") } }, "$['a/b']" },
	{ { 1, { K("a b") } }, "$['a b']" },
	{ { 1, { K("a.b") } }, "$['a.b']" },
	{ { 1, { K("0a") } }, "$['0a']" },
	{ { 1, { K("") } }, "$['']" },
	{ { 1, { K("*") } }, "$['*']" },
	{ { 1, { K("it's") } }, "$['it\\'s']" },
	{ { 1, { K("back\\slash") } }, "$['back\\\\slash']" },
	{ { 1, { K("{json}") } }, "$['{json}']" },
	{ { 1, { K("caf\xc3\xa9") } }, "$['caf\xc3\xa9']" },
	{ { 3, { K("text"), J, K("t") } }, "$.text{json}.t" },
	{ { 4, { K("text"), J, I(1), K("a b") } }, "$.text{json}[1]['a b']" },
	{ { 2, { K("text"), J } }, "$.text{json}" },
	{ { 7, { K("a very long key indeed, long enough to grow the buffer"),
	    K("and another one, just as long, if not longer than it"),
	    I(123456789), K("x"), J, K("'''''''''''''''''''''''''''''''"),
	    K("end") } },
	    "$['a very long key indeed, long enough to grow the buffer']"
	    "['and another one, just as long, if not longer than it']"
	    "[123456789].x{json}"
	    "['\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'"
	    "\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'\\'']"
	    ".end" },
};

/*
 * Concrete paths are written with identifiers after dots and every other
 * key quoted, and each reads back as a pattern naming just that path.
 */
Test(jpath, format, .timeout = UNIT_TIMEOUT)
{
	const struct jpath_format_case	*c;
	struct jpath			*jp;
	char				*text, *cause = NULL;
	size_t				 i;

	for (i = 0; i < nitems(jpath_format_cases); i++) {
		c = &jpath_format_cases[i];
		text = jpath_format(c->path.seg, c->path.n);
		cr_expect_str_eq(text, c->want, "case %zu", i);

		jp = jpath_compile(text, &cause);
		cr_assert_not_null(jp, "%s does not compile: %s", text, cause);
		cr_expect(jpath_match(jp, c->path.seg, c->path.n),
		    "%s does not match its own path", text);
		if (c->path.n > 0)
			cr_expect(!jpath_match(jp, c->path.seg, c->path.n - 1),
			    "%s matches its parent", text);
		jpath_free(jp);
		free(text);
	}
}
