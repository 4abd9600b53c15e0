/*
 * A small JSONPath subset for naming places in a JSON-RPC message: the
 * patterns users write to say what the diff should not compare, and the
 * text of the places the diff reports.  A pattern is compiled once into
 * steps and matched against a concrete path (keys, indices and {json}
 * steps from the root) as a whole, so "$.result" names the result itself
 * and nothing below it; the diff asks about every place as it descends,
 * which is how ignoring a place ignores everything under it.
 */

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* What one compiled step matches. */
enum jpath_kind {
	JPATH_KEY,		/* ".key" or "['key']" */
	JPATH_ANY_KEY,		/* ".*" */
	JPATH_INDEX,		/* "[n]" */
	JPATH_ANY_INDEX,	/* "[*]" */
	JPATH_JSON,		/* "{json}" */
	JPATH_DESCENDANT,	/* "..key" or "..*" (key NULL) */
	JPATH_MAX
};

/* One compiled step. */
struct jpath_step {
	enum jpath_kind	 kind;
	char		*key;		/* KEY; DESCENDANT (NULL: any) */
	size_t		 index;		/* JPATH_INDEX */
};

/* A compiled pattern: its steps, and the text for messages. */
struct jpath {
	char			*text;
	struct jpath_step	*steps;
	size_t			 nsteps;
};

/* The marker for a step into the JSON held by a string. */
#define JPATH_JSON_MARK	"{json}"

/* Append a step to a pattern being compiled. */
static void
jpath_add(struct jpath *jp, enum jpath_kind kind, char *key, size_t index)
{
	struct jpath_step	*st;

	jp->steps = xreallocarray(jp->steps, jp->nsteps + 1,
	    sizeof *jp->steps);
	st = &jp->steps[jp->nsteps++];
	st->kind = kind;
	st->key = key;
	st->index = index;
}

/* Set *cause to a compile error for text at offset at. */
static void
jpath_error(char **cause, const char *text, const char *why, size_t at)
{
	if (cause != NULL)
		xasprintf(cause, "bad JSONPath '%s': %s at %zu", text, why, at);
}

/*
 * Read a quoted key starting at text[*at] (the quote); on success *at is
 * past the closing quote and the key is returned, else NULL with *cause.
 */
static char *
jpath_quoted(const char *text, size_t *at, char **cause)
{
	char	 quote = text[*at], *key;
	size_t	 start = *at, i = *at + 1, n = 0;

	key = xmalloc(strlen(text) + 1);
	for (;;) {
		if (text[i] == '\0') {
			jpath_error(cause, text, "unterminated string", start);
			goto fail;
		}
		if (text[i] == quote)
			break;
		if (text[i] == '\\') {
			if (text[i + 1] != '\'' && text[i + 1] != '"' &&
			    text[i + 1] != '\\') {
				jpath_error(cause, text, "bad escape (only "
				    "\\', \\\" and \\\\)", i);
				goto fail;
			}
			i++;
		}
		key[n++] = text[i++];
	}
	key[n] = '\0';
	*at = i + 1;
	return key;

fail:
	free(key);
	return NULL;
}

/*
 * Read a bare key at text[*at], up to the next '.', '[', '{' or the end;
 * returns NULL with *cause when it is empty.
 */
static char *
jpath_bare(const char *text, size_t *at, char **cause)
{
	size_t	len = strcspn(text + *at, ".[{");

	if (len == 0) {
		jpath_error(cause, text, "empty key", *at);
		return NULL;
	}
	*at += len;
	return xstrndup(text + *at - len, len);
}

/* Parse "[...]" at text[*at] into a step of jp. */
static int
jpath_bracket(struct jpath *jp, const char *text, size_t *at, char **cause)
{
	size_t			 open = *at, i = *at + 1, index = 0;
	char			*key;

	if (text[i] == '\'' || text[i] == '"') {
		if ((key = jpath_quoted(text, &i, cause)) == NULL)
			return -1;
		if (text[i] != ']') {
			free(key);
			jpath_error(cause, text, text[i] == '\0' ?
			    "unclosed [" : "expected ]", text[i] == '\0' ?
			    open : i);
			return -1;
		}
		jpath_add(jp, JPATH_KEY, key, 0);
	} else if (text[i] == '*') {
		if (text[++i] != ']')
			goto unclosed;
		jpath_add(jp, JPATH_ANY_INDEX, NULL, 0);
	} else if (isdigit((unsigned char)text[i])) {
		for (; isdigit((unsigned char)text[i]); i++) {
			if (index > (SIZE_MAX - 9) / 10) {
				jpath_error(cause, text, "index too large",
				    open + 1);
				return -1;
			}
			index = index * 10 + (size_t)(text[i] - '0');
		}
		if (text[i] != ']')
			goto unclosed;
		jpath_add(jp, JPATH_INDEX, NULL, index);
	} else if (text[i] == '\0') {
		jpath_error(cause, text, "unclosed [", open);
		return -1;
	} else {
		jpath_error(cause, text, "expected an index, * or a quoted "
		    "key after [", i);
		return -1;
	}
	*at = i + 1;
	return 0;

unclosed:
	if (text[i] == '\0')
		jpath_error(cause, text, "unclosed [", open);
	else
		jpath_error(cause, text, "expected ]", i);
	return -1;
}

/* Parse ".key", ".*", "..key", "..['key']" or "..*" at text[*at]. */
static int
jpath_dot(struct jpath *jp, const char *text, size_t *at, char **cause)
{
	size_t	 i = *at + 1;
	char	*key;

	if (text[i] != '.') {
		if ((key = jpath_bare(text, &i, cause)) == NULL)
			return -1;
		if (strcmp(key, "*") == 0) {
			free(key);
			jpath_add(jp, JPATH_ANY_KEY, NULL, 0);
		} else
			jpath_add(jp, JPATH_KEY, key, 0);
		*at = i;
		return 0;
	}

	i++;
	if (text[i] == '[') {
		if (text[i + 1] != '\'' && text[i + 1] != '"') {
			jpath_error(cause, text, "expected a quoted key after "
			    "..[", i + 1);
			return -1;
		}
		i++;
		if ((key = jpath_quoted(text, &i, cause)) == NULL)
			return -1;
		if (text[i] != ']') {
			free(key);
			jpath_error(cause, text, "expected ]", i);
			return -1;
		}
		i++;
	} else if ((key = jpath_bare(text, &i, cause)) == NULL)
		return -1;
	else if (strcmp(key, "*") == 0) {
		free(key);
		key = NULL;
	}
	jpath_add(jp, JPATH_DESCENDANT, key, 0);
	*at = i;
	return 0;
}

/*
 * Compile a pattern; NULL with *cause (if cause is not NULL) quoting it
 * and the offset where it goes wrong.
 */
struct jpath *
jpath_compile(const char *text, char **cause)
{
	struct jpath	*jp;
	size_t		 i = 1;
	int		 r;

	/* ".a", "..key", "[0]": the root is implied, as help writes steps. */
	if (text[0] == '.' || text[0] == '[')
		i = 0;
	else if (text[0] != '$') {
		if (cause != NULL)
			xasprintf(cause, "bad JSONPath '%s': must start with $ "
			    "(or with . or [ for a step from it)", text);
		return NULL;
	}
	jp = xcalloc(1, sizeof *jp);
	jp->text = xstrdup(text);
	while (text[i] != '\0') {
		switch (text[i]) {
		case '.':
			r = jpath_dot(jp, text, &i, cause);
			break;
		case '[':
			r = jpath_bracket(jp, text, &i, cause);
			break;
		case '{':
			r = 0;
			if (strncmp(text + i, JPATH_JSON_MARK,
			    strlen(JPATH_JSON_MARK)) != 0) {
				jpath_error(cause, text, "expected {json}", i);
				r = -1;
				break;
			}
			jpath_add(jp, JPATH_JSON, NULL, 0);
			i += strlen(JPATH_JSON_MARK);
			break;
		default:
			jpath_error(cause, text, "expected . or [ or {json}",
			    i);
			r = -1;
			break;
		}
		if (r != 0) {
			jpath_free(jp);
			return NULL;
		}
	}
	return jp;
}

/* Free a compiled pattern. */
void
jpath_free(struct jpath *jp)
{
	size_t	i;

	if (jp == NULL)
		return;
	for (i = 0; i < jp->nsteps; i++)
		free(jp->steps[i].key);
	free(jp->steps);
	free(jp->text);
	free(jp);
}

/* The text a pattern was compiled from. */
const char *
jpath_text(const struct jpath *jp)
{
	return jp->text;
}

/* Whether one segment of a path meets one step (not a ".." step). */
static int
jpath_step_meets(const struct jpath_step *st, const struct jseg *seg)
{
	switch (st->kind) {
	case JPATH_KEY:
		return seg->key != NULL && strcmp(seg->key, st->key) == 0;
	case JPATH_ANY_KEY:
		return seg->key != NULL;
	case JPATH_INDEX:
		return seg->key == NULL && !seg->json &&
		    seg->index == st->index;
	case JPATH_ANY_INDEX:
		return seg->key == NULL && !seg->json;
	case JPATH_JSON:
		return seg->json;
	case JPATH_DESCENDANT:
		return seg->key != NULL && (st->key == NULL ||
		    strcmp(st->key, seg->key) == 0);
	default:
		return 0;
	}
}

/* Whether steps from s on match the whole of path from p on. */
static int
jpath_match_from(const struct jpath *jp, size_t s, const struct jseg *path,
    size_t n, size_t p)
{
	const struct jpath_step	*st;
	size_t			 k;

	if (s == jp->nsteps)
		return p == n;
	st = &jp->steps[s];
	if (st->kind == JPATH_DESCENDANT) {
		for (k = p; k < n; k++) {
			if (jpath_step_meets(st, &path[k]) &&
			    jpath_match_from(jp, s + 1, path, n, k + 1))
				return 1;
		}
		return 0;
	}
	if (p == n || !jpath_step_meets(st, &path[p]))
		return 0;
	return jpath_match_from(jp, s + 1, path, n, p + 1);
}

/* Whether a pattern names exactly this path (n steps from the root). */
int
jpath_match(const struct jpath *jp, const struct jseg *path, size_t n)
{
	return jpath_match_from(jp, 0, path, n, 0);
}

/* Whether a key can be written after a dot: a C identifier. */
static int
jpath_simple_key(const char *key)
{
	const char	*p;

	if (!isalpha((unsigned char)key[0]) && key[0] != '_')
		return 0;
	for (p = key + 1; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	}
	return 1;
}

/*
 * The text of a concrete path, "$.result.content[0].text", with keys that
 * are not identifiers as ['key'].  The caller frees it.  jpath_compile
 * reads it back as a pattern matching this path.
 */
char *
jpath_format(const struct jseg *path, size_t n)
{
	char		*buf, num[32];
	const char	*k;
	size_t		 len = 1, size = 64, need, i;

	buf = xmalloc(size);
	buf[0] = '$';
	for (i = 0; i < n; i++) {
		/* Worst case: every key byte escaped, plus ['']. */
		need = path[i].key != NULL ? 2 * strlen(path[i].key) + 5 :
		    sizeof num + sizeof JPATH_JSON_MARK;
		if (len + need + 1 > size) {
			while (len + need + 1 > size)
				size *= 2;
			buf = xreallocarray(buf, size, 1);
		}
		if (path[i].json) {
			memcpy(buf + len, JPATH_JSON_MARK,
			    strlen(JPATH_JSON_MARK));
			len += strlen(JPATH_JSON_MARK);
		} else if (path[i].key == NULL) {
			need = (size_t)snprintf(num, sizeof num, "[%zu]",
			    path[i].index);
			memcpy(buf + len, num, need);
			len += need;
		} else if (jpath_simple_key(path[i].key)) {
			buf[len++] = '.';
			need = strlen(path[i].key);
			memcpy(buf + len, path[i].key, need);
			len += need;
		} else {
			buf[len++] = '[';
			buf[len++] = '\'';
			for (k = path[i].key; *k != '\0'; k++) {
				if (*k == '\'' || *k == '\\')
					buf[len++] = '\\';
				buf[len++] = *k;
			}
			buf[len++] = '\'';
			buf[len++] = ']';
		}
	}
	buf[len] = '\0';
	return buf;
}

/*
 * The key of a pattern's last step when it is a plain key (".key" or
 * "['key']"), else NULL: a place that may be added to an object.
 */
const char *
jpath_last_key(const struct jpath *jp)
{
	if (jp->nsteps == 0 || jp->steps[jp->nsteps - 1].kind != JPATH_KEY)
		return NULL;
	return jp->steps[jp->nsteps - 1].key;
}

/*
 * How many ".." steps a pattern has: matching costs up to (path length
 * choose this), so callers walking hostile messages bound it.
 */
size_t
jpath_descendants(const struct jpath *jp)
{
	size_t	i, n = 0;

	for (i = 0; i < jp->nsteps; i++) {
		if (jp->steps[i].kind == JPATH_DESCENDANT)
			n++;
	}
	return n;
}

/* Whether a pattern has a {json} step. */
int
jpath_has_json(const struct jpath *jp)
{
	size_t	i;

	for (i = 0; i < jp->nsteps; i++) {
		if (jp->steps[i].kind == JPATH_JSON)
			return 1;
	}
	return 0;
}

/*
 * How many bytes a match state takes: one per position in the pattern
 * (before each step, and after the last).
 */
size_t
jpath_nstates(const struct jpath *jp)
{
	return jp->nsteps + 1;
}

/* The match state at the root: only the first position is live. */
void
jpath_start(const struct jpath *jp, unsigned char *state)
{
	memset(state, 0, jp->nsteps + 1);
	state[0] = 1;
}

/*
 * The state after one more segment of a path, from the state before it:
 * a ".." step stays live over any segment and moves on over a key it
 * names; any other step moves on over a segment it meets.  Costs
 * O(steps).  Returns whether any position is still live (if none, no
 * path below can match).
 */
int
jpath_advance(const struct jpath *jp, const unsigned char *from,
    const struct jseg *seg, unsigned char *to)
{
	const struct jpath_step	*st;
	size_t			 s;
	int			 live = 0;

	memset(to, 0, jp->nsteps + 1);
	for (s = 0; s < jp->nsteps; s++) {
		if (!from[s])
			continue;
		st = &jp->steps[s];
		if (st->kind == JPATH_DESCENDANT)
			to[s] = 1;
		if (jpath_step_meets(st, seg))
			to[s + 1] = 1;
	}
	for (s = 0; s <= jp->nsteps; s++)
		live |= to[s];
	return live;
}

/* Whether a state is at the end of the pattern: the path matches. */
int
jpath_accepts(const struct jpath *jp, const unsigned char *state)
{
	return state[jp->nsteps];
}
