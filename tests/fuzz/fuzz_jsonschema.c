/*
 * The JSON Schema validator (check/jsonschema.c and the rest) on whatever
 * libFuzzer makes: any schema, any value, no crash, no leak, and bounded
 * time (the step budget).  Properties held: a refused schema says why;
 * validation's count is the number of errors it reported, each with a
 * JSONPath starting "$", a schema place starting "#" and a sentence; a
 * second run gives the same count.
 *
 * Input: byte 0, bit 0 reads a schema without $schema as draft-07, bit 1
 * asserts formats; then the schema's JSON, a NUL byte, the value's JSON.
 * When the schema is no JSON, its bytes are a "pattern" instead and the
 * value's bytes the string it is matched against.
 */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct fuzz_js {
	const uint8_t	*data;
	size_t		 size;
	int		 n;
};

static void
fuzz_js_cb(void *arg, const char *ipath, const char *spath, const char *text)
{
	struct fuzz_js	*f = arg;

	if (ipath == NULL || ipath[0] != '$' || spath == NULL ||
	    spath[0] != '#' || text == NULL || text[0] == '\0')
		fuzz_fail(f->data, f->size, "jsonschema: a bad error: %s %s %s",
		    ipath ? ipath : "(null)", spath ? spath : "(null)",
		    text ? text : "(null)");
	f->n++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_js	 f = { data, size, 0 };
	struct jschema	*s;
	struct jsre	*re;
	json_t		*sj, *vj;
	const uint8_t	*sep;
	char		*cause = NULL;
	uint64_t	 steps = 0;
	size_t		 slen;
	int		 flags, n, n2;

	if (size < 2)
		return 0;
	flags = (data[0] & 1 ? JSCHEMA_DRAFT07 : 0) |
	    (data[0] & 2 ? JSCHEMA_FORMAT_ASSERT : 0);
	data++;
	size--;
	sep = memchr(data, '\0', size);
	slen = sep != NULL ? (size_t)(sep - data) : size;
	sj = json_loadb((const char *)data, slen, JSON_DECODE_ANY, NULL);
	if (sj == NULL) {
		re = jsre_compile((const char *)data, slen, &cause);
		if (re == NULL && cause == NULL)
			fuzz_fail(f.data, f.size, "jsre: refused, no reason");
		free(cause);
		if (re != NULL && sep != NULL && jsre_match(re,
		    (const char *)sep + 1, size - slen - 1, &steps,
		    JSCHEMA_MAX_STEPS) > 1)
			fuzz_fail(f.data, f.size, "jsre: a bad result");
		jsre_free(re);
		return 0;
	}
	vj = sep != NULL ? json_loadb((const char *)sep + 1, size - slen - 1,
	    JSON_DECODE_ANY, NULL) : json_null();
	s = jschema_compile(sj, flags, &cause);
	if (s == NULL) {
		if (cause == NULL || cause[0] != '#')
			fuzz_fail(f.data, f.size, "jsonschema: refused without "
			    "a place: %s", cause ? cause : "(null)");
		free(cause);
	} else if (vj != NULL) {
		n = jschema_validate(s, vj, fuzz_js_cb, &f);
		if (n != f.n)
			fuzz_fail(f.data, f.size, "jsonschema: %d errors, %d "
			    "reported", n, f.n);
		n2 = jschema_validate(s, vj, NULL, NULL);
		if (n2 != n)
			fuzz_fail(f.data, f.size, "jsonschema: %d errors, then "
			    "%d", n, n2);
	}
	jschema_free(s);
	json_decref(sj);
	json_decref(vj);
	return 0;
}
