/*
 * typexpr.c: type expressions in mcp.def's notation ("CallToolAnswer",
 * "(TextResourceContents | BlobResourceContents)[]", "string(uri)",
 * "{string}") read into type nodes; defs.c resolves their names.
 */
#include <ctype.h>
#include <string.h>

#include "shape_int.h"

/* Type expressions nest at most this deep (the deepest is 3). */
#define TYPEXPR_NEST_MAX	8

/* Skip blanks. */
static const char *
typexpr_skip(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return (p);
}

static int	typexpr_expr(const char **, struct stype **, char **, int);

/* One word, const, (expr) or {expr}, then any number of []. */
static int
typexpr_postfix(const char **pp, struct stype **out, char **cause, int depth)
{
	static const struct {
		const char	*word;
		enum st_kind	 kind;
	} plain[] = {
		{ "any", ST_ANY }, { "string", ST_STRING },
		{ "number", ST_NUMBER }, { "integer", ST_INTEGER },
		{ "boolean", ST_BOOLEAN }, { "null", ST_NULL },
		{ "object", ST_OBJECT }, { "array", ST_ARRAY },
	};
	const char	*p = typexpr_skip(*pp), *start;
	struct stype	*t = NULL, *arr;
	size_t		 i, len;
	char		 close;

	if (depth > TYPEXPR_NEST_MAX) {
		xasprintf(cause, "type nested too deep");
		return (-1);
	}
	if (*p == '(' || *p == '{') {
		close = *p == '(' ? ')' : '}';
		if (*p == '{')
			t = defs_type_new(ST_MAP);
		p++;
		if (typexpr_expr(&p, t != NULL ? &t->sub : &t, cause,
		    depth + 1) == -1)
			return (-1);
		p = typexpr_skip(p);
		if (*p != close) {
			xasprintf(cause, "'%c' expected", close);
			return (-1);
		}
		p++;
	} else if (*p == '"') {
		start = ++p;
		while (*p != '"' && *p != '\0')
			p++;
		if (*p != '"') {
			xasprintf(cause, "unterminated string");
			return (-1);
		}
		t = defs_type_new(ST_CONST);
		t->text = xmalloc((size_t)(p - start) + 1);
		memcpy(t->text, start, (size_t)(p - start));
		t->text[p - start] = '\0';
		p++;
	} else {
		start = p;
		while (isalnum((unsigned char)*p) || *p == '_' || *p == '.' ||
		    *p == '$')
			p++;
		len = (size_t)(p - start);
		if (len == 0) {
			xasprintf(cause, "a type expected");
			return (-1);
		}
		for (i = 0; i < sizeof plain / sizeof plain[0]; i++) {
			if (strlen(plain[i].word) == len &&
			    memcmp(plain[i].word, start, len) == 0)
				t = defs_type_new(plain[i].kind);
		}
		if (t == NULL) {
			t = defs_type_new(ST_REF);
			t->text = xmalloc(len + 1);
			memcpy(t->text, start, len);
			t->text[len] = '\0';
		} else if (t->kind == ST_STRING && *p == '(') {
			if (strncmp(p, "(uri)", 5) == 0)
				t->format = FMT_URI;
			else if (strncmp(p, "(byte)", 6) == 0)
				t->format = FMT_BYTE;
			else if (strncmp(p, "(file-uri)", 10) == 0)
				t->format = FMT_FILE_URI;
			else {
				xasprintf(cause, "unknown string format");
				return (-1);
			}
			p = strchr(p, ')') + 1;
		}
	}
	while (p[0] == '[' && p[1] == ']') {
		arr = defs_type_new(ST_ARRAYOF);
		arr->sub = t;
		t = arr;
		p += 2;
	}
	*out = t;
	*pp = p;
	return (0);
}

/* postfix ('|' postfix)* */
static int
typexpr_expr(const char **pp, struct stype **out, char **cause, int depth)
{
	struct stype	*first, *u, *alt;
	const char	*p = *pp;

	if (typexpr_postfix(&p, &first, cause, depth) == -1)
		return (-1);
	p = typexpr_skip(p);
	if (*p != '|') {
		*out = first;
		*pp = p;
		return (0);
	}
	u = defs_type_new(ST_UNION);
	u->alts = xreallocarray(NULL, 1, sizeof *u->alts);
	u->alts[u->nalts++] = first;
	while (*p == '|') {
		p++;
		if (typexpr_postfix(&p, &alt, cause, depth) == -1)
			return (-1);
		u->alts = xreallocarray(u->alts, u->nalts + 1,
		    sizeof *u->alts);
		u->alts[u->nalts++] = alt;
		p = typexpr_skip(p);
	}
	*out = u;
	*pp = p;
	return (0);
}

/*
 * Parse a type expression in mcp.def's notation ("CallToolAnswer",
 * "(A | B)[]").  References are resolved by defs_get() for types made
 * before it finishes; the method table's are made during it.
 */
int
typexpr_parse(const char *s, struct stype **out, char **cause)
{
	const char	*p = s;

	if (typexpr_expr(&p, out, cause, 0) == -1)
		return (-1);
	p = typexpr_skip(p);
	if (*p != '\0') {
		xasprintf(cause, "unexpected \"%s\"", p);
		return (-1);
	}
	return (0);
}

