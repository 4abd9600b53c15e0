/*
 * The protocol module on arbitrary messages: any JSON jansson reads, under
 * any revision, as a request, a notification or the answer to any method,
 * must come out with well-formed findings (a rule, a JSONPath, a sentence,
 * the path and sentence valid UTF-8 however they were cut)
 * and no crash, leak or sanitizer report; the work is bounded by the
 * shapes (the walk never goes deeper than they do) and by the cap on
 * findings per message.  Input:
 *
 *	byte 0		the revision (mod 6; 0 is unknown)
 *	byte 1		the answered method: 0 none, else row (n-1) of the
 *			method table
 *	the rest	the message, as JSON text
 */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core.h"
#include "fuzz.h"
#include "protocol.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Whether a string is well-formed UTF-8 all through. */
static int
fuzz_protocol_utf8(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	const unsigned char	*end = p + strlen(s);
	size_t			 n;

	while (p < end) {
		if ((n = scan_utf8_len(p, end)) == 0)
			return (0);
		p += n;
	}
	return (1);
}

/* Hold each finding to its form. */
static void
fuzz_protocol_cb(const struct proto_finding *f, void *arg)
{
	size_t	*count = arg;

	if (f->rule == NULL || (strncmp(f->rule, "shape.", 6) != 0 &&
	    strncmp(f->rule, "jsonrpc.", 8) != 0))
		abort();
	if (f->path == NULL || f->path[0] != '$')
		abort();
	if (f->text == NULL || f->text[0] == '\0' || f->spec == NULL)
		abort();
	if (f->severity < 0 || f->severity >= PROTO_SEVERITY_MAX)
		abort();
	if (!fuzz_protocol_utf8(f->path) || !fuzz_protocol_utf8(f->text))
		abort();
	(*count)++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const struct proto_method	*table;
	const char			*method = NULL;
	enum proto_version		 v;
	json_t				*msg;
	size_t				 n, count = 0, got;

	if (len < 2)
		return (0);
	v = (enum proto_version)(data[0] % PROTO_V_MAX);
	table = proto_methods(&n);
	if (data[1] != 0)
		method = table[(data[1] - 1) % n].name;
	/* Methods by length, as the scanner hands them over. */
	(void)proto_method_n((const char *)data + 2, len - 2, v);
	/* NULs inside strings allowed: "text\u0000" must not pass for
	   "text". */
	msg = json_loadb((const char *)data + 2, len - 2, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, NULL);
	if (msg == NULL)
		return (0);
	got = proto_check_message(v, msg, method, fuzz_protocol_cb, &count);
	if (got != count)
		abort();
	/* The capabilities walk, on whatever object it is given. */
	(void)proto_caps_has(msg, "resources.subscribe");
	json_decref(msg);
	return (0);
}
