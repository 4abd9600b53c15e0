/*
 * The JSON Schema validator (check/jsonschema.c, jsvalid.c, jsre.c,
 * jsfmt.c) as data: per keyword a value that passes and one that fails,
 * in the draft-07 and the 2020-12 form where they differ, with the place
 * and the words of the error; then schemas it refuses, what it leaves out
 * with a note, $ref cycles, and the bounds on hostile schemas and values.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "check.h"
#include "unit.h"

struct js_case {
	const char	*schema;
	const char	*value;
	int		 flags;
	int		 valid;
	const char	*ipath;		/* the first error's: NULL, not checked */
	const char	*spath;
	const char	*text;		/* a part of its sentence */
};

#define D7	JSCHEMA_DRAFT07
#define FMT	JSCHEMA_FORMAT_ASSERT
#define S7	"\"$schema\":\"http://json-schema.org/draft-07/schema#\","
#define LONG60	"012345678901234567890123456789012345678901234567890123456789"
#define S20	"\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","

static const struct js_case cases[] = {
	/* type, with arrays of types and integer as a whole number */
	{ "{\"type\":\"string\"}", "\"a\"", 0, 1, NULL, NULL, NULL },
	{ "{\"type\":\"string\"}", "3", 0, 0, "$", "#/type",
	    "expected a string, got the integer 3" },
	{ "{\"type\":\"integer\"}", "1.0", 0, 1, NULL, NULL, NULL },
	{ "{\"type\":\"integer\"}", "1.5", 0, 0, "$", "#/type",
	    "expected an integer, got the number 1.5" },
	{ "{\"type\":\"number\"}", "7", 0, 1, NULL, NULL, NULL },
	{ "{\"type\":[\"string\",\"null\"]}", "null", 0, 1, NULL, NULL, NULL },
	{ "{\"type\":[\"string\",\"null\"]}", "true", 0, 0, "$", "#/type",
	    "expected a string or null, got true" },
	{ "{\"type\":\"object\",\"properties\":{\"count\":{\"type\":"
	    "\"integer\"}}}", "{\"count\":\"3\"}", 0, 0, "$.count",
	    "#/properties/count/type",
	    "expected an integer, got the string \"3\"" },
	{ "{\"type\":\"boolean\"}", "{}", 0, 0, "$", "#/type",
	    "got an object" },
	{ "{\"type\":\"array\"}", "[]", 0, 1, NULL, NULL, NULL },
	/* enum, const: 1 and 1.0 are the same number */
	{ "{\"enum\":[\"a\",\"b\",1]}", "1.0", 0, 1, NULL, NULL, NULL },
	{ "{\"enum\":[\"a\",\"b\"]}", "\"c\"", 0, 0, "$", "#/enum",
	    "expected one of \"a\", \"b\", got the string \"c\"" },
	{ "{\"enum\":[{\"a\":[1,2]}]}", "{\"a\":[1,2.0]}", 0, 1, NULL, NULL,
	    NULL },
	{ "{\"enum\":[]}", "null", 0, 0, "$", "#/enum", "the enum is empty" },
	{ "{\"const\":\"x\"}", "\"x\"", 0, 1, NULL, NULL, NULL },
	{ "{\"const\":\"x\"}", "\"y\"", 0, 0, "$", "#/const",
	    "expected \"x\", got the string \"y\"" },
	{ "{\"const\":null}", "false", 0, 0, "$", "#/const", NULL },
	/* properties, required, additionalProperties, patternProperties */
	{ "{\"required\":[\"city\"]}", "{\"city\":1}", 0, 1, NULL, NULL,
	    NULL },
	{ "{\"required\":[\"city\"]}", "{}", 0, 0, "$", "#/required",
	    "missing required property \"city\"" },
	{ "{\"required\":[\"city\"]}", "[]", 0, 1, NULL, NULL, NULL },
	{ "{\"properties\":{\"a\":true},\"additionalProperties\":false}",
	    "{\"a\":1}", 0, 1, NULL, NULL, NULL },
	{ "{\"properties\":{\"a\":true},\"additionalProperties\":false}",
	    "{\"a\":1,\"b\":2}", 0, 0, "$", "#/additionalProperties",
	    "unexpected property \"b\"" },
	{ "{\"additionalProperties\":{\"type\":\"integer\"}}",
	    "{\"b\":\"x\"}", 0, 0, "$.b", "#/additionalProperties/type",
	    NULL },
	{ "{\"patternProperties\":{\"^x-\":{\"type\":\"string\"}},"
	    "\"additionalProperties\":false}", "{\"x-a\":\"1\"}", 0, 1, NULL,
	    NULL, NULL },
	{ "{\"patternProperties\":{\"^x-\":{\"type\":\"string\"}}}",
	    "{\"x-a\":1}", 0, 0, "$['x-a']", "#/patternProperties/^x-/type",
	    NULL },
	{ "{\"propertyNames\":{\"maxLength\":3}}", "{\"abc\":1}", 0, 1,
	    NULL, NULL, NULL },
	{ "{\"propertyNames\":{\"maxLength\":3}}", "{\"abcd\":1}", 0, 0,
	    "$", NULL, "\"abcd\"" },
	{ "{\"minProperties\":1}", "{\"a\":1}", 0, 1, NULL, NULL, NULL },
	{ "{\"minProperties\":1}", "{}", 0, 0, "$", "#/minProperties",
	    NULL },
	{ "{\"maxProperties\":1}", "{\"a\":1,\"b\":2}", 0, 0, "$",
	    "#/maxProperties", "at most 1 properties, got 2" },
	/* the dependencies family, per draft */
	{ "{" S20 "\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"a\":1,"
	    "\"b\":2}", 0, 1, NULL, NULL, NULL },
	{ "{" S20 "\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"a\":1}", 0,
	    0, "$", "#/dependentRequired", "\"a\" requires property \"b\"" },
	{ "{" S7 "\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"a\":1}", 0, 1,
	    NULL, NULL, NULL },
	{ "{" S20 "\"dependentSchemas\":{\"a\":{\"required\":[\"c\"]}}}",
	    "{\"a\":1}", 0, 0, "$", "#/dependentSchemas/a/required", NULL },
	{ "{" S7 "\"dependencies\":{\"a\":[\"b\"]}}", "{\"a\":1}", 0, 0, "$",
	    "#/dependencies", NULL },
	{ "{" S7 "\"dependencies\":{\"a\":{\"maxProperties\":1}}}",
	    "{\"a\":1,\"b\":1}", 0, 0, "$",
	    "#/dependencies/a/maxProperties", NULL },
	{ "{" S7 "\"dependencies\":{\"a\":[\"b\"]}}", "{\"b\":1}", 0, 1,
	    NULL, NULL, NULL },
	/* items: draft-07's array form and additionalItems; 2020-12's
	   prefixItems and items */
	{ "{\"items\":{\"type\":\"string\"}}", "[\"a\",\"b\"]", 0, 1, NULL,
	    NULL, NULL },
	{ "{\"items\":{\"type\":\"string\"}}", "[\"a\",2]", 0, 0, "$[1]",
	    "#/items/type", NULL },
	{ "{" S7 "\"items\":[{\"type\":\"string\"}],\"additionalItems\":"
	    "false}", "[\"a\"]", 0, 1, NULL, NULL, NULL },
	{ "{" S7 "\"items\":[{\"type\":\"string\"}],\"additionalItems\":"
	    "false}", "[\"a\",1]", 0, 0, "$[1]", "#/additionalItems",
	    "no value is allowed here" },
	{ "{" S7 "\"items\":[{\"type\":\"string\"}]}", "[1]", 0, 0, "$[0]",
	    "#/items/0/type", NULL },
	{ "{" S20 "\"prefixItems\":[{\"type\":\"string\"}],\"items\":"
	    "{\"type\":\"integer\"}}", "[\"a\",1,2]", 0, 1, NULL, NULL, NULL },
	{ "{" S20 "\"prefixItems\":[{\"type\":\"string\"}],\"items\":"
	    "{\"type\":\"integer\"}}", "[\"a\",1,\"b\"]", 0, 0, "$[2]",
	    "#/items/type", NULL },
	{ "{" S20 "\"prefixItems\":[{\"type\":\"string\"}]}", "[1]", 0, 0,
	    "$[0]", "#/prefixItems/0/type", NULL },
	{ "{" S7 "\"prefixItems\":[{\"type\":\"string\"}]}", "[1]", 0, 1,
	    NULL, NULL, NULL },
	{ "{\"prefixItems\":[{\"type\":\"string\"}]}", "[1]", D7, 1, NULL,
	    NULL, NULL },
	{ "{\"minItems\":2}", "[1,2]", 0, 1, NULL, NULL, NULL },
	{ "{\"minItems\":2}", "[1]", 0, 0, "$", "#/minItems",
	    "at least 2 items, got 1" },
	{ "{\"maxItems\":1}", "[1,2]", 0, 0, "$", "#/maxItems", NULL },
	{ "{\"uniqueItems\":true}", "[1,\"1\",[1],{\"a\":1},{\"a\":2}]", 0,
	    1, NULL, NULL, NULL },
	{ "{\"uniqueItems\":true}", "[{\"a\":1,\"b\":2},3,{\"b\":2,\"a\":1.0}]",
	    0, 0, "$", "#/uniqueItems", "items 0 and 2 are equal" },
	{ "{\"uniqueItems\":false}", "[1,1]", 0, 1, NULL, NULL, NULL },
	/* a whole real near the int64 limit equals the integer */
	{ "{\"uniqueItems\":true}", "[9220000000000000000,9.22e18]", 0, 0,
	    "$", "#/uniqueItems", "items 0 and 1 are equal" },
	{ "{\"uniqueItems\":true}", "[-9223372036854775808,-9.223372036854775808e18]",
	    0, 0, "$", "#/uniqueItems", "items 0 and 1 are equal" },
	/* contains, and 2020-12's minContains and maxContains */
	{ "{\"contains\":{\"const\":2}}", "[1,2]", 0, 1, NULL, NULL, NULL },
	{ "{\"contains\":{\"const\":2}}", "[1,3]", 0, 0, "$", "#/contains",
	    "no item matches" },
	{ "{\"contains\":{\"const\":2}}", "[]", 0, 0, "$", "#/contains",
	    NULL },
	{ "{" S20 "\"contains\":{\"const\":2},\"minContains\":2}", "[2,2]",
	    0, 1, NULL, NULL, NULL },
	{ "{" S20 "\"contains\":{\"const\":2},\"minContains\":2}", "[2,1]",
	    0, 0, "$", "#/minContains", "at least 2 needed" },
	{ "{" S20 "\"contains\":{\"const\":2},\"maxContains\":1}", "[2,2]",
	    0, 0, "$", "#/maxContains", NULL },
	{ "{" S20 "\"contains\":{\"const\":2},\"minContains\":0}", "[]",
	    0, 1, NULL, NULL, NULL },
	{ "{" S7 "\"contains\":{\"const\":2},\"maxContains\":1}", "[2,2]",
	    0, 1, NULL, NULL, NULL },
	/* strings: lengths in code points, pattern, format */
	{ "{\"maxLength\":2}", "\"\xc3\xa9\xc3\xa9\"", 0, 1, NULL, NULL,
	    NULL },
	{ "{\"maxLength\":1}", "\"\xf0\x9f\x98\x80\"", 0, 1, NULL, NULL,
	    NULL },
	{ "{\"maxLength\":2}", "\"abc\"", 0, 0, "$", "#/maxLength",
	    "at most 2 characters, got 3" },
	{ "{\"minLength\":2}", "\"\xc3\xa9\"", 0, 0, "$", "#/minLength",
	    "got 1" },
	{ "{\"minLength\":2}", "5", 0, 1, NULL, NULL, NULL },
	{ "{\"pattern\":\"^[a-z]+$\"}", "\"abc\"", 0, 1, NULL, NULL, NULL },
	{ "{\"pattern\":\"^[a-z]+$\"}", "\"abC\"", 0, 0, "$", "#/pattern",
	    "does not match the pattern \"^[a-z]+$\"" },
	/* patterns quoted as written, long names and patterns cut */
	{ "{\"pattern\":\"^\\\\d+$\"}", "\"x\"", 0, 0, "$", "#/pattern",
	    "does not match the pattern \"^\\d+$\"" },
	{ "{\"additionalProperties\":false}", "{\"" LONG60 "\":1}", 0, 0, "$",
	    "#/additionalProperties", "unexpected property \"0123456789012345"
	    "678901234567890123456789\"... (the schema" },
	{ "{\"pattern\":\"b\"}", "\"abc\"", 0, 1, NULL, NULL, NULL },
	{ "{\"format\":\"email\"}", "\"nope\"", 0, 1, NULL, NULL, NULL },
	{ "{\"format\":\"email\"}", "\"nope\"", FMT, 0, "$", "#/format",
	    "no valid email" },
	{ "{\"format\":\"email\"}", "\"a.b@example.com\"", FMT, 1, NULL, NULL,
	    NULL },
	{ "{\"format\":\"date-time\"}", "\"2025-02-29T10:00:00Z\"", FMT, 0,
	    "$", "#/format", NULL },
	{ "{\"format\":\"date-time\"}", "\"2024-02-29T10:00:00.5+01:00\"",
	    FMT, 1, NULL, NULL, NULL },
	{ "{\"format\":\"date\"}", "\"2024-13-01\"", FMT, 0, NULL, NULL,
	    NULL },
	{ "{\"format\":\"time\"}", "\"23:59:60Z\"", FMT, 1, NULL, NULL,
	    NULL },
	{ "{\"format\":\"time\"}", "\"24:00:00Z\"", FMT, 0, NULL, NULL,
	    NULL },
	{ "{\"format\":\"time\"}", "\"15:59:60-08:00\"", FMT, 1, NULL, NULL,
	    NULL },
	{ "{\"format\":\"time\"}", "\"22:59:60Z\"", FMT, 0, NULL, NULL,
	    NULL },
	{ "{\"format\":\"date-time\"}", "\"2024-01-01 10:00:00Z\"", FMT, 1,
	    NULL, NULL, NULL },
	{ "{\"format\":\"date-time\"}", "\"2024-01-01T10:00:00+0100\"", FMT,
	    0, NULL, NULL, NULL },
	{ "{\"format\":\"uri\"}", "\"https://example.com/a?b=c#d\"", FMT, 1,
	    NULL, NULL, NULL },
	{ "{\"format\":\"uri\"}", "\"/relative\"", FMT, 0, NULL, NULL, NULL },
	{ "{\"format\":\"uuid\"}", "\"123e4567-e89b-12d3-a456-426614174000\"",
	    FMT, 1, NULL, NULL, NULL },
	{ "{\"format\":\"uuid\"}", "\"123e4567e89b12d3a456426614174000\"",
	    FMT, 0, NULL, NULL, NULL },
	{ "{\"format\":\"uuid\"}",
	    "\"urn:uuid:123e4567-e89b-12d3-a456-426614174000\"", FMT, 1, NULL,
	    NULL, NULL },
	{ "{\"format\":\"ipv4\"}", "\"192.168.0.1\"", FMT, 1, NULL, NULL,
	    NULL },
	{ "{\"format\":\"ipv4\"}", "\"256.1.1.1\"", FMT, 0, NULL, NULL,
	    NULL },
	{ "{\"format\":\"ipv6\"}", "\"::1\"", FMT, 1, NULL, NULL, NULL },
	{ "{\"format\":\"ipv6\"}", "\"1::2::3\"", FMT, 0, NULL, NULL, NULL },
	{ "{\"format\":\"color\"}", "\"??\"", FMT, 1, NULL, NULL, NULL },
	/* numbers: both forms of exclusive bounds, multipleOf */
	{ "{\"minimum\":1}", "1", 0, 1, NULL, NULL, NULL },
	{ "{\"minimum\":1}", "0.5", 0, 0, "$", "#/minimum",
	    "expected a number at least 1, got the number 0.5" },
	{ "{\"maximum\":1.5}", "2", 0, 0, "$", "#/maximum", NULL },
	{ "{\"exclusiveMinimum\":1}", "1", 0, 0, "$", "#/exclusiveMinimum",
	    "greater than 1" },
	{ "{\"exclusiveMinimum\":1}", "1.01", 0, 1, NULL, NULL, NULL },
	{ "{\"exclusiveMaximum\":1}", "1", 0, 0, "$", "#/exclusiveMaximum",
	    NULL },
	{ "{\"minimum\":1,\"exclusiveMinimum\":true}", "1", 0, 0, "$",
	    "#/exclusiveMinimum", NULL },
	{ "{\"maximum\":1,\"exclusiveMaximum\":true}", "0.9", 0, 1, NULL,
	    NULL, NULL },
	{ "{\"minimum\":1,\"exclusiveMinimum\":false}", "1", 0, 1, NULL,
	    NULL, NULL },
	{ "{\"maximum\":9007199254740993}", "9007199254740992", 0, 1, NULL,
	    NULL, NULL },
	{ "{\"maximum\":9007199254740992}", "9007199254740993", 0, 0, "$",
	    "#/maximum", NULL },
	{ "{\"minimum\":9223372036854775807}", "9.3e18", 0, 1, NULL, NULL,
	    NULL },
	{ "{\"multipleOf\":3}", "9", 0, 1, NULL, NULL, NULL },
	{ "{\"multipleOf\":3}", "10", 0, 0, "$", "#/multipleOf",
	    "expected a multiple of 3, got the integer 10" },
	{ "{\"multipleOf\":0.1}", "0.3", 0, 1, NULL, NULL, NULL },
	/* a quotient's error grows with it: ordinary prices are multiples */
	{ "{\"multipleOf\":0.01}", "999999.99", 0, 1, NULL, NULL, NULL },
	{ "{\"multipleOf\":0.01}", "45035996.27", 0, 1, NULL, NULL, NULL },
	{ "{\"multipleOf\":0.1}", "12345678.9", 0, 1, NULL, NULL, NULL },
	{ "{\"multipleOf\":0.05}", "4999999.95", 0, 1, NULL, NULL, NULL },
	{ "{\"multipleOf\":0.01}", "999999.995", 0, 0, "$", "#/multipleOf",
	    NULL },
	{ "{\"multipleOf\":0.01}", "0.015", 0, 0, NULL, NULL, NULL },
	{ "{\"multipleOf\":2}", "-9223372036854775808", 0, 1, NULL, NULL,
	    NULL },
	{ "{\"multipleOf\":1e-308}", "1e308", 0, 1, NULL, NULL, NULL },
	/* allOf, anyOf, oneOf, not, if/then/else */
	{ "{\"allOf\":[{\"type\":\"integer\"},{\"minimum\":2}]}", "3", 0, 1,
	    NULL, NULL, NULL },
	{ "{\"allOf\":[{\"type\":\"integer\"},{\"minimum\":2}]}", "1", 0, 0,
	    "$", "#/allOf/1/minimum", NULL },
	{ "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}", "null",
	    0, 1, NULL, NULL, NULL },
	{ "{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}", "1", 0,
	    0, "$", "#/anyOf", "matches none of the 2 schemas of anyOf" },
	{ "{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "1",
	    0, 1, NULL, NULL, NULL },
	{ "{\"oneOf\":[{\"type\":\"number\"},{\"type\":\"integer\"}]}", "1",
	    0, 0, "$", "#/oneOf", "matches schemas 0 and 1 of oneOf" },
	{ "{\"oneOf\":[{\"type\":\"number\"},{\"type\":\"integer\"}]}",
	    "\"a\"", 0, 0, "$", "#/oneOf", "none" },
	{ "{\"not\":{\"type\":\"null\"}}", "1", 0, 1, NULL, NULL, NULL },
	{ "{\"not\":{\"type\":\"null\"}}", "null", 0, 0, "$", "#/not", NULL },
	{ "{\"if\":{\"properties\":{\"k\":{\"const\":\"a\"}}},\"then\":"
	    "{\"required\":[\"x\"]},\"else\":{\"required\":[\"y\"]}}",
	    "{\"k\":\"a\",\"x\":1}", 0, 1, NULL, NULL, NULL },
	{ "{\"if\":{\"properties\":{\"k\":{\"const\":\"a\"}}},\"then\":"
	    "{\"required\":[\"x\"]},\"else\":{\"required\":[\"y\"]}}",
	    "{\"k\":\"a\"}", 0, 0, "$", "#/then/required", NULL },
	{ "{\"if\":{\"properties\":{\"k\":{\"const\":\"a\"}}},\"then\":"
	    "{\"required\":[\"x\"]},\"else\":{\"required\":[\"y\"]}}",
	    "{\"k\":\"b\"}", 0, 0, "$", "#/else/required", NULL },
	{ "{\"then\":false}", "1", 0, 1, NULL, NULL, NULL },
	/* $ref: definitions, $defs, the root, escapes, a cycle */
	{ "{\"$ref\":\"#/definitions/a\",\"definitions\":{\"a\":{\"type\":"
	    "\"string\"}}}", "1", 0, 0, "$", "#/definitions/a/type", NULL },
	{ "{\"properties\":{\"p\":{\"$ref\":\"#/$defs/a\"}},\"$defs\":{\"a\":"
	    "{\"type\":\"string\"}}}", "{\"p\":\"x\"}", 0, 1, NULL, NULL,
	    NULL },
	{ "{\"$defs\":{\"a/b\":{\"type\":\"string\"},\"c d\":{\"type\":"
	    "\"integer\"}},\"properties\":{\"p\":{\"$ref\":\"#/$defs/a~1b\"},"
	    "\"q\":{\"$ref\":\"#/$defs/c%20d\"}}}", "{\"p\":\"x\",\"q\":\"y\"}",
	    0, 0, "$.q", "#/$defs/c d/type", NULL },
	{ "{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#\"},"
	    "\"v\":{\"type\":\"integer\"}}}", "{\"next\":{\"next\":{\"v\":1}}}",
	    0, 1, NULL, NULL, NULL },
	{ "{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#\"},"
	    "\"v\":{\"type\":\"integer\"}}}", "{\"next\":{\"next\":{\"v\":"
	    "\"1\"}}}", 0, 0, "$.next.next.v", "#/properties/v/type", NULL },
	{ "{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"items\":"
	    "{\"$ref\":\"#/$defs/a\"},\"type\":\"array\"}},\"$ref\":"
	    "\"#/$defs/a\"}", "[[[]],[]]", 0, 1, NULL, NULL, NULL },
	{ "{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"items\":"
	    "{\"$ref\":\"#/$defs/a\"},\"type\":\"array\"}},\"$ref\":"
	    "\"#/$defs/a\"}", "[[[1]]]", 0, 0, "$[0][0][0]", "#/$defs/b/type",
	    NULL },
	/* a remote $ref is left out (with a note), never an error */
	{ "{\"$ref\":\"https://example.com/s.json\"}", "1", 0, 1, NULL, NULL,
	    NULL },
	/* booleans, empty schemas, unknown keywords, nullable */
	{ "true", "{}", 0, 1, NULL, NULL, NULL },
	{ "false", "{}", 0, 0, "$", "#", "no value is allowed" },
	{ "{}", "[1]", 0, 1, NULL, NULL, NULL },
	{ "{\"type\":\"string\",\"nullable\":true}", "null", 0, 0, "$",
	    "#/type", NULL },
	{ "{\"x-custom\":{\"type\":5},\"title\":1}", "1", 0, 1, NULL, NULL,
	    NULL },
	/* JSONPath of awkward names */
	{ "{\"properties\":{\"my key\":{\"properties\":{\"it's\":{\"type\":"
	    "\"null\"}}}}}", "{\"my key\":{\"it's\":1}}", 0, 0,
	    "$['my key']['it\\'s']", "#/properties/my key/properties/it's/type",
	    NULL },
	{ "{\"properties\":{\"a~b\":{\"type\":\"null\"}}}", "{\"a~b\":1}", 0,
	    0, "$['a~b']", "#/properties/a~0b/type", NULL },
};

struct js_errs {
	int	 n;
	char	*ipath, *spath, *text;
};

static void
js_err_cb(void *arg, const char *ipath, const char *spath, const char *text)
{
	struct js_errs	*e = arg;

	if (e->n++ > 0)
		return;
	e->ipath = strdup(ipath);
	e->spath = strdup(spath);
	e->text = strdup(text);
}

static json_t *
js_load(const char *s)
{
	json_error_t	 err;
	json_t		*v;

	v = json_loads(s, JSON_DECODE_ANY, &err);
	cr_assert_not_null(v, "%s: %s", s, err.text);
	return v;
}

/* Validate value against schema: the errors, the first one kept. */
static int
js_run(const char *schema, const char *value, int flags, struct js_errs *e)
{
	struct jschema	*s;
	json_t		*sj, *vj;
	char		*cause = NULL;
	int		 n;

	memset(e, 0, sizeof *e);
	sj = js_load(schema);
	vj = js_load(value);
	s = jschema_compile(sj, flags, &cause);
	cr_assert_not_null(s, "%s: refused: %s", schema, cause);
	n = jschema_validate(s, vj, js_err_cb, e);
	cr_expect_eq(n, e->n, "%s: %d errors, %d reported", schema, n, e->n);
	jschema_free(s);
	json_decref(sj);
	json_decref(vj);
	return n;
}

static void
js_errs_free(struct js_errs *e)
{
	free(e->ipath);
	free(e->spath);
	free(e->text);
}

Test(jsonschema, keywords, .timeout = UNIT_TIMEOUT)
{
	const struct js_case	*c;
	struct js_errs		 e;
	size_t			 i;
	int			 n;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		c = &cases[i];
		n = js_run(c->schema, c->value, c->flags, &e);
		cr_expect_eq(n == 0, c->valid, "case %zu: %s on %s: %d errors "
		    "(%s %s: %s)", i, c->schema, c->value, n, e.ipath, e.spath,
		    e.text);
		if (!c->valid && n > 0) {
			if (c->ipath != NULL)
				cr_expect_str_eq(e.ipath, c->ipath, "case %zu "
				    "(%s)", i, c->schema);
			if (c->spath != NULL)
				cr_expect_str_eq(e.spath, c->spath, "case %zu "
				    "(%s)", i, c->schema);
			if (c->text != NULL)
				cr_expect(strstr(e.text, c->text) != NULL,
				    "case %zu: \"%s\" lacks \"%s\"", i, e.text,
				    c->text);
		}
		js_errs_free(&e);
	}
}

/* The regex subset: pattern, subject, whether it matches (-1: refused). */
static const struct {
	const char	*re, *s;
	int		 match;
} re_cases[] = {
	{ "abc", "xxabcxx", 1 },
	{ "^abc$", "abc", 1 },
	{ "^abc$", "abc\n", 0 },
	{ "^$", "", 1 },
	{ "a|b|c", "zzc", 1 },
	{ "^(ab)+$", "ababab", 1 },
	{ "^(ab)+$", "ababa", 0 },
	{ "^(?:ab|cd)*e$", "abcdabe", 1 },
	{ "^a{2,3}$", "aaa", 1 },
	{ "^a{2,3}$", "aaaa", 0 },
	{ "^a{2}$", "aa", 1 },
	{ "^a{2,}$", "aaaaaa", 1 },
	{ "^a{2,}$", "a", 0 },
	{ "^a*?b+?$", "aabb", 1 },
	{ "^\\d+$", "0123", 1 },
	{ "^\\d+$", "12a", 0 },
	{ "^\\D$", "x", 1 },
	{ "^\\w+$", "a_Z9", 1 },
	{ "^\\w+$", "\xc3\xa9", 0 },
	{ "^\\W$", "\xc3\xa9", 1 },
	{ "^\\s$", "\xe3\x80\x80", 1 },	/* U+3000 */
	{ "^\\S+$", "a b", 0 },
	{ "^[a-c]+$", "abcab", 1 },
	{ "^[^a-c]+$", "xyz", 1 },
	{ "^[^a-c]+$", "xaz", 0 },
	{ "^[\\d.-]+$", "1.2-3", 1 },
	{ "^[\\w\\-\\.]+@", "a.b-c@x", 1 },
	{ "^[\\s\\S]$", "\n", 1 },
	{ "^[]$", "", 0 },
	{ "^.$", "\xf0\x9f\x98\x80", 1 },	/* one code point, 4 bytes */
	{ "^..$", "\xf0\x9f\x98\x80", 0 },
	{ "^.$", "\n", 0 },
	{ "^[\\u00e0-\\u00ff]$", "\xc3\xa9", 1 },
	{ "^\\u{1F600}$", "\xf0\x9f\x98\x80", 1 },
	{ "^\\uD83D\\uDE00$", "\xf0\x9f\x98\x80", 1 },
	{ "^\\x41$", "A", 1 },
	{ "\\bfoo\\b", "a foo b", 1 },
	{ "\\bfoo\\b", "afoob", 0 },
	{ "\\Boo", "foo", 1 },
	{ "^(?<year>\\d{4})-\\d{2}$", "2024-01", 1 },
	{ "^\\/api\\/", "/api/x", 1 },
	{ "^[a-z]", "", 0 },
	{ "(a*)*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", 0 },
	{ "x*", "", 1 },
	/* classes sorted and merged for the binary search */
	{ "^[x-zc-ea-bd-f]+$", "abcdefxyz", 1 },
	{ "^[x-zc-ea-bd-f]+$", "abcdefgxyz", 0 },
	{ "^[^x-zc-ea-bd-f]$", "g", 1 },
	{ "^[^x-zc-ea-bd-f]$", "e", 0 },
	{ "^[\\Wa]+$", "a-!", 1 },
	{ "^[\\Wa]+$", "ab", 0 },
	{ "[]", "a", 0 },
	{ "^[^]$", "a", 1 },
	/* empty groups, repeated or not, are nothing */
	{ "^a(?:)b(?:){1000}c$", "abc", 1 },
	{ "^(?:(?:(?:(?:){1000}){1000}){1000}){1000}$", "", 1 },
	{ "^(?:a{0}){1000}b$", "b", 1 },
	{ "^(?:a|b|(?:c|d)|e)+$", "abcde", 1 },
	{ "^(?:a|b|(?:c|d)|e)+$", "abcdef", 0 },
	{ "^(?:ab|)c$", "c", 1 },
	{ "^(?:|ab)c$", "abc", 1 },
	/* refused: what the matcher does not do, or what ECMA-262 refuses */
	{ "(?=a)", "a", -1 },
	{ "(?<!a)b", "b", -1 },
	{ "(a)\\1", "aa", -1 },
	{ "\\p{L}", "a", -1 },
	{ "\\k<x>", "a", -1 },
	{ "(ab", "ab", -1 },
	{ "ab)", "ab", -1 },
	{ "[ab", "ab", -1 },
	{ "*a", "a", -1 },
	{ "a{2,1}", "aa", -1 },
	{ "a{1001}", "a", -1 },
	{ "[z-a]", "a", -1 },
	{ "\\q", "q", -1 },
	{ "((a{30}){30}){30}", "a", -1 },	/* too large expanded */
	{ "(?:(?:(?:(?:a){1000}){1000}){1000}){1000}", "a", -1 },
	{ "^*", "a", -1 },
	{ "(?i)a", "A", -1 },
};

Test(jsonschema, regex, .timeout = UNIT_TIMEOUT)
{
	struct jsre	*re;
	char		*why = NULL;
	uint64_t	 steps;
	size_t		 i;
	int		 m;

	for (i = 0; i < sizeof re_cases / sizeof re_cases[0]; i++) {
		re = jsre_compile(re_cases[i].re, strlen(re_cases[i].re), &why);
		if (re_cases[i].match < 0) {
			cr_expect_null(re, "/%s/ compiled", re_cases[i].re);
			cr_expect(re != NULL || why != NULL, "/%s/: no reason",
			    re_cases[i].re);
			free(why);
			why = NULL;
			jsre_free(re);
			continue;
		}
		cr_assert_not_null(re, "/%s/ refused: %s", re_cases[i].re, why);
		steps = 0;
		m = jsre_match(re, re_cases[i].s, strlen(re_cases[i].s), &steps,
		    JSCHEMA_MAX_STEPS);
		cr_expect_eq(m, re_cases[i].match, "/%s/ on \"%s\": %d",
		    re_cases[i].re, re_cases[i].s, m);
		jsre_free(re);
	}
}

/* Schemas it cannot use: refused with the place and the fault. */
static const struct {
	const char	*schema, *cause;
} bad_schemas[] = {
	{ "5", "#: a schema must be an object or a boolean, not an integer" },
	{ "{\"type\":\"str\"}", "#/type: \"str\" is no JSON Schema type" },
	{ "{\"type\":[\"string\",1]}", "#/type" },
	{ "{\"type\":[]}", "#/type: \"type\" must name at least one type" },
	{ "{\"enum\":3}", "#/enum: \"enum\" must be an array" },
	{ "{\"required\":\"a\"}", "#/required: must be an array of strings" },
	{ "{\"required\":[\"a\",2]}", "#/required/1: must be a string" },
	{ "{\"properties\":[]}", "#/properties: \"properties\" must be an "
	    "object" },
	{ "{\"properties\":{\"a\":3}}", "#/properties/a: a schema must be" },
	{ "{\"items\":{\"items\":\"x\"}}", "#/items/items: a schema must be" },
	{ "{\"minLength\":-1}", "#/minLength: \"minLength\" must be a "
	    "non-negative integer" },
	{ "{\"maxItems\":1.5}", "#/maxItems" },
	{ "{\"minimum\":\"1\"}", "#/minimum: \"minimum\" must be a number, "
	    "not a string" },
	{ "{\"multipleOf\":0}", "#/multipleOf: must be greater than 0" },
	{ "{\"anyOf\":[]}", "#/anyOf: \"anyOf\" must be a non-empty array" },
	{ "{\"allOf\":{}}", "#/allOf" },
	{ "{\"pattern\":1}", "#/pattern: must be a string" },
	{ "{\"$ref\":\"#/definitions/none\"}", "#/$ref: \"#/definitions/none\" "
	    "points at nothing in the schema" },
	{ "{\"$ref\":\"#/definitions/a\",\"definitions\":{\"a\":{\"type\":"
	    "7}}}", "#/definitions/a/type" },
	{ "{\"$ref\":3}", "#/$ref: \"$ref\" must be a string" },
	{ "{\"$ref\":\"#/a%zz\"}", "bad %-escape" },
	{ "{\"uniqueItems\":1}", "#/uniqueItems: must be true or false" },
	{ "{\"dependencies\":{\"a\":[1]}}", "#/dependencies/a/0: must be a "
	    "string" },
};

Test(jsonschema, refused, .timeout = UNIT_TIMEOUT)
{
	struct jschema	*s;
	json_t		*sj;
	char		*cause;
	size_t		 i;

	for (i = 0; i < sizeof bad_schemas / sizeof bad_schemas[0]; i++) {
		cause = NULL;
		sj = js_load(bad_schemas[i].schema);
		s = jschema_compile(sj, 0, &cause);
		cr_expect_null(s, "%s was accepted", bad_schemas[i].schema);
		cr_expect(cause != NULL && strstr(cause, bad_schemas[i].cause) !=
		    NULL, "%s: \"%s\" lacks \"%s\"", bad_schemas[i].schema,
		    cause, bad_schemas[i].cause);
		free(cause);
		jschema_free(s);
		json_decref(sj);
	}
}

/* What is left out is said, with its place, and checks nothing. */
static const struct {
	const char	*schema, *value, *note;
} noted[] = {
	{ "{\"pattern\":\"(?=x)\"}", "\"a\"", "#/pattern: \"(?=x)\" uses a "
	    "lookahead" },
	{ "{\"properties\":{\"a\":{\"pattern\":\"\\\\p{L}\"}}}",
	    "{\"a\":\"1\"}", "#/properties/a/pattern" },
	{ "{\"patternProperties\":{\"(?!x)\":false},\"additionalProperties\":"
	    "false}", "{\"b\":1}", "nor is additionalProperties" },
	{ "{\"$ref\":\"other.json#/a\"}", "1", "#/$ref: \"other.json#/a\" is "
	    "not in this schema" },
	{ "{\"$ref\":\"#foo\"}", "1", "names an anchor" },
	{ "{\"unevaluatedProperties\":false}", "{\"a\":1}",
	    "#/unevaluatedProperties: \"unevaluatedProperties\" is not "
	    "supported" },
	{ "{\"$schema\":\"https://example.com/my-dialect\"}", "1",
	    "no dialect known here" },
};

Test(jsonschema, notes, .timeout = UNIT_TIMEOUT)
{
	struct jschema	*s;
	json_t		*sj, *vj;
	char		*cause = NULL;
	size_t		 i;

	for (i = 0; i < sizeof noted / sizeof noted[0]; i++) {
		sj = js_load(noted[i].schema);
		vj = js_load(noted[i].value);
		s = jschema_compile(sj, 0, &cause);
		cr_assert_not_null(s, "%s refused: %s", noted[i].schema, cause);
		cr_expect_eq(jschema_nnotes(s), 1, "%s: %zu notes",
		    noted[i].schema, jschema_nnotes(s));
		cr_expect(jschema_nnotes(s) > 0 && strstr(jschema_note(s, 0),
		    noted[i].note) != NULL, "%s: note \"%s\" lacks \"%s\"",
		    noted[i].schema, jschema_note(s, 0), noted[i].note);
		cr_expect_eq(jschema_validate(s, vj, NULL, NULL), 0, "%s",
		    noted[i].schema);
		jschema_free(s);
		json_decref(sj);
		json_decref(vj);
	}
}

/* No schema, no value: a reason, an error, never a crash. */
Test(jsonschema, nothing, .timeout = UNIT_TIMEOUT)
{
	struct jschema	*s;
	struct js_errs	 e;
	json_t		*sj;
	char		*cause = NULL;

	cr_expect_null(jschema_compile(NULL, 0, &cause));
	cr_expect_str_eq(cause, "#: there is no schema");
	free(cause);
	sj = js_load("{}");
	s = jschema_compile(sj, 0, NULL);
	memset(&e, 0, sizeof e);
	cr_expect_eq(jschema_validate(s, NULL, js_err_cb, &e), 1);
	cr_expect_str_eq(e.text, "there is no value to check");
	js_errs_free(&e);
	jschema_free(s);
	json_decref(sj);
}

Test(jsonschema, drafts, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char		*schema;
		int			 flags;
		enum jschema_draft	 draft;
	} d[] = {
		{ "{}", 0, JSCHEMA_D2020 },
		{ "{}", D7, JSCHEMA_D07 },
		{ "{" S7 "\"type\":\"string\"}", 0, JSCHEMA_D07 },
		{ "{\"$schema\":\"http://json-schema.org/draft-04/schema#\"}",
		    0, JSCHEMA_D07 },
		{ "{" S20 "\"type\":\"string\"}", D7, JSCHEMA_D2020 },
		{ "{\"$schema\":\"https://json-schema.org/draft/2019-09/"
		    "schema\"}", D7, JSCHEMA_D2020 },
	};
	struct jschema	*s;
	json_t		*sj;
	size_t		 i;

	for (i = 0; i < sizeof d / sizeof d[0]; i++) {
		sj = js_load(d[i].schema);
		s = jschema_compile(sj, d[i].flags, NULL);
		cr_assert_not_null(s);
		cr_expect_eq(jschema_draft(s), d[i].draft, "%s", d[i].schema);
		jschema_free(s);
		json_decref(sj);
	}
}

/* Every error is said, each with its own place. */
Test(jsonschema, all_errors, .timeout = UNIT_TIMEOUT)
{
	struct js_errs	e;
	int		n;

	n = js_run("{\"type\":\"object\",\"required\":[\"a\",\"b\"],"
	    "\"properties\":{\"c\":{\"type\":\"integer\"},\"d\":{\"items\":"
	    "{\"type\":\"string\"}}}}", "{\"c\":\"x\",\"d\":[1,\"y\",2]}", 0,
	    &e);
	cr_expect_eq(n, 5, "%d errors", n);
	js_errs_free(&e);
}

static double
js_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Build "{"anyOf":[X,X]}" nested depth times around a leaf. */
static char *
js_nested_any(int depth)
{
	char	*s = strdup("{\"type\":\"string\"}"), *t;
	int	 i;

	for (i = 0; i < depth; i++) {
		if (asprintf(&t, "{\"anyOf\":[{\"allOf\":[%s,{\"type\":"
		    "\"null\"}]},%s]}", s, s) == -1)
			cr_assert_fail("asprintf");
		free(s);
		s = t;
		if (strlen(s) > 4 * 1024 * 1024)
			break;
	}
	return s;
}

/* Every error counted, the last one kept, for the bound on errors. */
struct js_all {
	int	 n;
	char	*last;
};

static void
js_all_cb(void *arg, const char *ipath, const char *spath, const char *text)
{
	struct js_all	*a = arg;

	(void)ipath;
	(void)spath;
	a->n++;
	free(a->last);
	a->last = strdup(text);
}

/* Whether one of the schema's notes holds needle. */
static int
js_noted(const struct jschema *s, const char *needle)
{
	size_t	i;

	for (i = 0; i < jschema_nnotes(s); i++) {
		if (strstr(jschema_note(s, i), needle) != NULL)
			return 1;
	}
	return 0;
}

/* Compile schema text built by the caller (freed here). */
static struct jschema *
js_compile_text(char *text, json_t **sj)
{
	struct jschema	*s;
	char		*cause = NULL;

	*sj = js_load(text);
	free(text);
	s = jschema_compile(*sj, 0, &cause);
	cr_assert_not_null(s, "refused: %s", cause);
	return s;
}

/* A string builder for the big schemas below. */
struct js_buf {
	char	*s;
	size_t	 n, cap;
};

static void PRINTFLIKE(2, 3)
js_buf_add(struct js_buf *b, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	while (b->n + (size_t)n + 1 > b->cap) {
		b->cap = b->cap ? 2 * b->cap : 4096;
		b->s = realloc(b->s, b->cap);
		cr_assert_not_null(b->s);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/*
 * Hostile schemas and values stop at the bounds with one error saying so,
 * in bounded time: anyOf nested to make 2^40 paths, a $ref loop that never
 * goes into the value, a value nested deeper than the bound, a pattern
 * over a long string, uniqueItems on many equal-hash-free items.
 */
Test(jsonschema, hostile, .timeout = UNIT_TIMEOUT)
{
	struct js_errs	 e;
	struct jschema	*s;
	json_t		*sj, *vj;
	char		*schema, *big;
	double		 t0 = js_now(), t;
	size_t		 i;
	int		 n;

	/* 2^n alternatives through shared subschemas by $ref. */
	{
		char	buf[64 * 1024];
		size_t	o = 0;

		o += (size_t)snprintf(buf + o, sizeof buf - o,
		    "{\"$ref\":\"#/$defs/d0\",\"$defs\":{");
		for (i = 0; i < 40; i++)
			o += (size_t)snprintf(buf + o, sizeof buf - o,
			    "\"d%zu\":{\"anyOf\":[{\"$ref\":\"#/$defs/d%zu\"},"
			    "{\"$ref\":\"#/$defs/d%zu\"}]},", i, i + 1, i + 1);
		o += (size_t)snprintf(buf + o, sizeof buf - o,
		    "\"d40\":{\"type\":\"string\"}}}");
		n = js_run(buf, "1", 0, &e);
		cr_expect_geq(n, 1);
		cr_expect(e.text != NULL && strstr(e.text, "too costly") != NULL,
		    "%s", e.text);
		js_errs_free(&e);
	}
	schema = js_nested_any(12);
	n = js_run(schema, "1", 0, &e);
	cr_expect_geq(n, 1);
	js_errs_free(&e);
	free(schema);

	/* A $ref loop that does not go into the value. */
	n = js_run("{\"anyOf\":[{\"$ref\":\"#\"}]}", "1", 0, &e);
	cr_expect_eq(n, 1);
	cr_expect(strstr(e.text, "nests deeper than") != NULL, "%s", e.text);
	js_errs_free(&e);
	n = js_run("{\"$ref\":\"#\"}", "1", 0, &e);
	cr_expect_eq(n, 1);
	js_errs_free(&e);

	/* A value nested far deeper than the bound (jansson allows 2048). */
	big = malloc(2 * 2000 + 1);
	for (i = 0; i < 2000; i++) {
		big[i] = '[';
		big[2 * 2000 - 1 - i] = ']';
	}
	big[2 * 2000] = '\0';
	n = js_run("{\"items\":{\"$ref\":\"#\"}}", big, 0, &e);
	cr_expect_eq(n, 1);
	js_errs_free(&e);
	free(big);

	/* A pattern over 1 MB: stopped by the step budget, not a hang. */
	sj = js_load("{\"pattern\":\"(a|aa|aaa|aaaa)*(a{40}b|c)$\"}");
	big = malloc(1024 * 1024 + 1);
	memset(big, 'a', 1024 * 1024);
	big[1024 * 1024] = '\0';
	vj = json_string(big);
	s = jschema_compile(sj, 0, NULL);
	cr_assert_not_null(s);
	memset(&e, 0, sizeof e);
	n = jschema_validate(s, vj, js_err_cb, &e);
	cr_expect_eq(n, 1);
	cr_expect(e.text != NULL && strstr(e.text, "too costly") != NULL);
	js_errs_free(&e);
	jschema_free(s);
	json_decref(sj);
	json_decref(vj);
	free(big);

	/* uniqueItems over 100 000 distinct items: linear, not quadratic. */
	vj = json_array();
	for (i = 0; i < 100000; i++)
		json_array_append_new(vj, json_integer((json_int_t)i));
	json_array_append_new(vj, json_real(99999.0));
	sj = js_load("{\"uniqueItems\":true}");
	s = jschema_compile(sj, 0, NULL);
	memset(&e, 0, sizeof e);
	n = jschema_validate(s, vj, js_err_cb, &e);
	cr_expect_eq(n, 1);
	cr_expect(e.text != NULL && strstr(e.text, "items 99999 and 100000 "
	    "are equal") != NULL, "%s", e.text);
	js_errs_free(&e);
	jschema_free(s);
	json_decref(sj);
	json_decref(vj);

	/* A long pattern (a sequence, alternatives): noted, no deep stack. */
	for (i = 0; i < 2; i++) {
		struct js_buf	b = { 0 };
		size_t		k;

		js_buf_add(&b, "{\"pattern\":\"");
		for (k = 0; k < 200000; k++)
			js_buf_add(&b, i == 0 ? "a" : "a|");
		js_buf_add(&b, "b\"}");
		s = js_compile_text(b.s, &sj);
		cr_expect(js_noted(s, "too large"), "a long pattern: no note");
		jschema_free(s);
		json_decref(sj);
	}
	printf("jsonschema hostile: long patterns at %.2f s\n", js_now() - t0);

	/* Counted repeats of nothing, nested: nothing, at once. */
	n = js_run("{\"pattern\":\"^(?:(?:(?:(?:){1000}){1000}){1000}){1000}"
	    "x$\"}", "\"x\"", 0, &e);
	cr_expect_eq(n, 0);
	js_errs_free(&e);
	n = js_run("{\"pattern\":\"^(?:(?:(?:(?:a{0}){1000}){1000}){1000})"
	    "{1000}x$\"}", "\"y\"", 0, &e);
	cr_expect_eq(n, 1);
	js_errs_free(&e);
	printf("jsonschema hostile: empty repeats at %.2f s\n", js_now() - t0);

	/* Many patterns, each within its bound: past the schema's, noted. */
	{
		struct js_buf	b = { 0 };
		size_t		k;

		js_buf_add(&b, "{\"properties\":{");
		for (k = 0; k < 400; k++)
			js_buf_add(&b, "%s\"p%zu\":{\"pattern\":"
			    "\"(?:a{1000}){4}\"}", k ? "," : "", k);
		js_buf_add(&b, "}}");
		s = js_compile_text(b.s, &sj);
		cr_expect(js_noted(s, "matcher space"), "no note on the "
		    "patterns past the schema's budget");
		jschema_free(s);
		json_decref(sj);
	}
	printf("jsonschema hostile: many patterns at %.2f s\n", js_now() - t0);

	/* Patterns over short names, many times: each call is a step. */
	{
		struct js_buf	b = { 0 };
		size_t		k;

		js_buf_add(&b, "{\"patternProperties\":{");
		for (k = 0; k < 1500; k++)
			js_buf_add(&b, "%s\"^q%zu$\":true", k ? "," : "", k);
		js_buf_add(&b, "}}");
		s = js_compile_text(b.s, &sj);
		vj = json_object();
		for (k = 0; k < 1500; k++) {
			char	key[32];

			snprintf(key, sizeof key, "k%zu", k);
			json_object_set_new(vj, key, json_integer(0));
		}
		memset(&e, 0, sizeof e);
		n = jschema_validate(s, vj, js_err_cb, &e);
		cr_expect_eq(n, 1);
		cr_expect(e.text != NULL && strstr(e.text, "too costly") !=
		    NULL, "1500 x 1500 pattern matches: %s", e.text);
		js_errs_free(&e);
		jschema_free(s);
		json_decref(sj);
		json_decref(vj);
	}
	printf("jsonschema hostile: pattern calls at %.2f s\n", js_now() - t0);

	/* A class of 1001 ranges is billed by the ranges it looks at. */
	{
		struct js_buf	 b = { 0 };
		struct jsre	*re;
		uint64_t	 steps = 0;
		size_t		 k;

		js_buf_add(&b, "^[");
		for (k = 0; k < 1001; k++)
			js_buf_add(&b, "\\u%04zx", 0x1000 + 2 * (1000 - k));
		js_buf_add(&b, "]*$");
		re = jsre_compile(b.s, b.n, NULL);
		cr_assert_not_null(re);
		big = malloc(3 * 10000 + 1);
		for (k = 0; k < 10000; k++)
			memcpy(big + 3 * k, "\xe1\x80\x80", 3);	/* U+1000 */
		cr_expect_eq(jsre_match(re, big, 3 * 10000, &steps,
		    JSCHEMA_MAX_STEPS), 1);
		/* A linear scan would be 1001 looks, a binary search ~10. */
		cr_expect_geq(steps, 10000 * 8 / JSRE_STEPS_PER_UNIT,
		    "%llu steps", (unsigned long long)steps);
		jsre_free(re);
		free(big);
		free(b.s);
	}

	/* Keyword lists cost steps on each visit; errors are capped. */
	{
		struct js_buf	 b = { 0 };
		struct js_all	 all = { 0 };
		size_t		 k;

		js_buf_add(&b, "{\"$defs\":{\"p\":{\"properties\":{");
		for (k = 0; k < 1500; k++)
			js_buf_add(&b, "%s\"p%zu\":true", k ? "," : "", k);
		js_buf_add(&b, "}}},\"allOf\":[");
		for (k = 0; k < 1500; k++)
			js_buf_add(&b, "%s{\"$ref\":\"#/$defs/p\"}",
			    k ? "," : "");
		js_buf_add(&b, "]}");
		s = js_compile_text(b.s, &sj);
		vj = json_object();
		memset(&e, 0, sizeof e);
		n = jschema_validate(s, vj, js_err_cb, &e);
		cr_expect_eq(n, 1);
		cr_expect(e.text != NULL && strstr(e.text, "too costly") !=
		    NULL, "1500 x 1500 properties looked up: %s", e.text);
		js_errs_free(&e);
		jschema_free(s);
		json_decref(sj);
		json_decref(vj);

		memset(&b, 0, sizeof b);
		js_buf_add(&b, "{\"items\":{\"required\":[");
		for (k = 0; k < 300; k++)
			js_buf_add(&b, "%s\"r%zu\"", k ? "," : "", k);
		js_buf_add(&b, "]}}");
		s = js_compile_text(b.s, &sj);
		vj = js_load("[{},{},{},{},{},{},{},{},{},{}]");
		n = jschema_validate(s, vj, js_all_cb, &all);
		cr_expect_eq(n, 3000, "%d errors counted", n);
		cr_expect_eq(all.n, JSCHEMA_MAX_ERRORS + 1, "%d errors said",
		    all.n);
		cr_expect(all.last != NULL && strstr(all.last, "and 2900 more "
		    "errors") != NULL, "%s", all.last);
		free(all.last);
		jschema_free(s);
		json_decref(sj);
		json_decref(vj);
	}
	printf("jsonschema hostile: keyword lists at %.2f s\n", js_now() - t0);

	/* Deep schemas with long keys: each node's path is bounded. */
	{
		struct js_buf	 b = { 0 };
		char		*key = malloc(4001);
		size_t		 k;

		memset(key, '~', 4000);
		key[4000] = '\0';
		for (k = 0; k < 100; k++)
			js_buf_add(&b, "{\"properties\":{\"%s\":", key);
		js_buf_add(&b, "{\"type\":\"string\"}");
		for (k = 0; k < 100; k++)
			js_buf_add(&b, "}}");
		s = js_compile_text(b.s, &sj);
		vj = json_object();
		for (k = 0; k < 100; k++) {
			json_t	*o = json_object();

			json_object_set_new(o, key, vj);
			vj = o;
		}
		/* The innermost {} is no string: one error, its paths short. */
		memset(&e, 0, sizeof e);
		n = jschema_validate(s, vj, js_err_cb, &e);
		cr_expect_eq(n, 1);
		cr_expect(e.spath != NULL && strlen(e.spath) <= 600 &&
		    strstr(e.spath, "/...") != NULL, "%zu bytes: %.80s",
		    e.spath ? strlen(e.spath) : 0, e.spath);
		js_errs_free(&e);
		jschema_free(s);
		json_decref(sj);
		json_decref(vj);
		free(key);
	}
	printf("jsonschema hostile: long keys at %.2f s\n", js_now() - t0);

	/* Printed, not asserted: the step budget is what bounds it. */
	t = js_now() - t0;
	printf("jsonschema hostile: %.2f s\n", t);
}
