/*
 * JSON values as the validator sees them: numbers compared exactly (an
 * int64 and a double alike), equality where 1 equals 1.0 and member order
 * does not matter, a hash that agrees with that equality (for
 * uniqueItems), and values quoted short for a sentence.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonschema_int.h"

/* Values quoted in a sentence are cut to this many bytes. */
#define JSVALUE_QUOTE_MAX	40

/* A value, short, for a sentence: JSON text cut at a UTF-8 boundary. */
char *
jsvalue_quote(const json_t *v)
{
	json_t	*cut = NULL;
	char	*s, *out;
	size_t	 n;

	if (json_is_string(v) && json_string_length(v) > JSVALUE_QUOTE_MAX) {
		n = JSVALUE_QUOTE_MAX;
		while (n > 0 && (json_string_value(v)[n] & 0xc0) == 0x80)
			n--;
		cut = json_stringn(json_string_value(v), n);
		v = cut;
	}
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	json_decref(cut);
	if (s == NULL)
		return xstrdup("?");
	if (cut != NULL) {
		xasprintf(&out, "%s...", s);
		free(s);
		return out;
	}
	if (strlen(s) > JSVALUE_QUOTE_MAX) {
		n = JSVALUE_QUOTE_MAX;
		while (n > 0 && (s[n] & 0xc0) == 0x80)
			n--;
		xasprintf(&out, "%.*s...", (int)n, s);
		free(s);
		return out;
	}
	return s;
}

/*
 * A name or a pattern (len bytes) in double quotes for a sentence, as
 * written (a pattern's backslashes not doubled), cut as jsvalue_quote()
 * cuts a value: at JSVALUE_QUOTE_MAX bytes, a UTF-8 boundary, "...".
 */
char *
jsvalue_quote_str(const char *s, size_t len)
{
	char	*out;
	size_t	 n = len;

	if (n > JSVALUE_QUOTE_MAX) {
		n = JSVALUE_QUOTE_MAX;
		while (n > 0 && (s[n] & 0xc0) == 0x80)
			n--;
	}
	xasprintf(&out, "\"%.*s\"%s", (int)n, s, n < len ? "..." : "");
	return out;
}

/* "the string \"3\"", "the number 1.5", "an object", ... */
char *
jsvalue_describe(const json_t *v)
{
	char	*q, *out;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return xstrdup("an object");
	case JSON_ARRAY:
		return xstrdup("an array");
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return jsvalue_quote(v);
	default:
		break;
	}
	q = jsvalue_quote(v);
	xasprintf(&out, "the %s %s", json_is_string(v) ? "string" :
	    json_is_integer(v) ? "integer" : "number", q);
	free(q);
	return out;
}

/* Whether a number has no fraction (1.0 is an integer, as JSON Schema says). */
int
jsvalue_is_integer(const json_t *v)
{
	double	d;

	if (json_is_integer(v))
		return 1;
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	return isfinite(d) && floor(d) == d;
}

/* A number as a long double (exact for every int64). */
long double
jsvalue_ld(const json_t *v)
{
	return json_is_integer(v) ? (long double)json_integer_value(v) :
	    (long double)json_real_value(v);
}

/* Compare two numbers exactly (an int64 is exact in a long double). */
int
jsvalue_cmp(const json_t *a, const json_t *b)
{
	long double	x, y;

	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) < json_integer_value(b) ? -1 :
		    json_integer_value(a) > json_integer_value(b);
	x = jsvalue_ld(a);
	y = jsvalue_ld(b);
	return x < y ? -1 : x > y;
}

/*
 * JSON equality, 1 and 1.0 equal; each node compared is a step of *steps,
 * and past JSCHEMA_MAX_STEPS the answer is 0.
 */
int
jsvalue_equal(uint64_t *steps, const json_t *a, const json_t *b)
{
	const char	*k;
	const json_t	*va, *vb;
	size_t		 i;

	if (++*steps > JSCHEMA_MAX_STEPS)
		return 0;
	if (json_is_number(a) && json_is_number(b))
		return jsvalue_cmp(a, b) == 0;
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		    memcmp(json_string_value(a), json_string_value(b),
		    json_string_length(a)) == 0;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++) {
			if (!jsvalue_equal(steps, json_array_get(a, i),
			    json_array_get(b, i)))
				return 0;
		}
		return 1;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)a, k, va) {
			if ((vb = json_object_get(b, k)) == NULL ||
			    !jsvalue_equal(steps, va, vb))
				return 0;
		}
		return 1;
	default:
		return 1;	/* true, false, null */
	}
}

/* Mix 64 bits so that nearby values (1, 2, 3) spread over the hash. */
static uint64_t
jsvalue_mix(uint64_t h)
{
	/* 2^64 divided by the golden ratio: odd, its bits without pattern. */
	h ^= h >> 31;
	h *= 0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ULL;
	h ^= h >> 32;
	return h;
}

/* A hash equal values share (1 and 1.0 too); each node is a step. */
uint64_t
jsvalue_hash(uint64_t *steps, const json_t *v)
{
	const char	*k;
	const json_t	*e;
	uint64_t	 h;
	size_t		 i;
	double		 d;

	++*steps;
	switch (json_typeof(v)) {
	case JSON_INTEGER:
		return jsvalue_mix((uint64_t)json_integer_value(v));
	case JSON_REAL:
		d = json_real_value(v);
		/* A whole number an int64 holds hashes as that integer. */
		if (d == floor(d) && d >= -0x1p63 && d < 0x1p63)
			return jsvalue_mix((uint64_t)(int64_t)d);
		memcpy(&h, &d, sizeof h);
		return jsvalue_mix(h ^ 0x5555);
	case JSON_STRING:
		h = 1469598103934665603ULL;
		for (i = 0; i < json_string_length(v); i++)
			h = (h ^ (unsigned char)json_string_value(v)[i]) *
			    1099511628211ULL;
		return jsvalue_mix(h ^ 1);
	case JSON_ARRAY:
		h = 2;
		for (i = 0; i < json_array_size(v) && *steps <= JSCHEMA_MAX_STEPS; i++)
			h = jsvalue_mix(h * 31 + jsvalue_hash(steps,
			    json_array_get(v, i)));
		return h;
	case JSON_OBJECT:
		/* Key order must not matter: a sum of the members' hashes. */
		h = 3;
		json_object_foreach((json_t *)v, k, e) {
			uint64_t	kh = 1469598103934665603ULL;

			for (i = 0; k[i] != '\0'; i++)
				kh = (kh ^ (unsigned char)k[i]) *
				    1099511628211ULL;
			h += jsvalue_mix(kh ^ jsvalue_hash(steps, e));
			if (*steps > JSCHEMA_MAX_STEPS)
				break;
		}
		return jsvalue_mix(h);
	case JSON_TRUE:
		return 4;
	case JSON_FALSE:
		return 5;
	default:
		return 6;
	}
}

/* The type names for a sentence: "a string or null". */
void
jsvalue_types(unsigned int types, char *buf, size_t len)
{
	static const struct {
		unsigned int	 bit;
		const char	*name;
	} names[] = {
		{ JST_OBJECT, "an object" }, { JST_ARRAY, "an array" },
		{ JST_STRING, "a string" }, { JST_NUMBER, "a number" },
		{ JST_INTEGER, "an integer" }, { JST_BOOLEAN, "a boolean" },
		{ JST_NULL, "null" },
	};
	size_t	i, n = 0, total = 0, k;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		total += (types & names[i].bit) != 0;
	buf[0] = '\0';
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(types & names[i].bit))
			continue;
		k = strlen(buf);
		snprintf(buf + k, len - k, "%s%s", n == 0 ? "" : n + 1 == total ?
		    " or " : ", ", names[i].name);
		n++;
	}
}

/* Whether v is of one of the types (JST_* bits). */
int
jsvalue_type_ok(unsigned int t, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return (t & JST_OBJECT) != 0;
	case JSON_ARRAY: return (t & JST_ARRAY) != 0;
	case JSON_STRING: return (t & JST_STRING) != 0;
	case JSON_TRUE:
	case JSON_FALSE: return (t & JST_BOOLEAN) != 0;
	case JSON_NULL: return (t & JST_NULL) != 0;
	default:
		return (t & JST_NUMBER) || ((t & JST_INTEGER) &&
		    jsvalue_is_integer(v));
	}
}
