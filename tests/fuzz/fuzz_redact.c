/*
 * Payload redaction (core/redact.c) on whatever libFuzzer makes: it must
 * survive any bytes, and hold three properties.  JSON stays JSON: when
 * the scanner takes the input as JSON it takes the redacted copy too.  A
 * JSON copy under the built-in rules is a fixed point: redacting it again
 * changes no byte (not so for text, where a string written anew with
 * escapes is more text for the patterns, nor for a user's regex, which may
 * match "[REDACTED]" itself).  And nothing is said to be replaced in a
 * copy that is the input unchanged (a value already "[REDACTED]" is left
 * alone).
 *
 * Input: byte 0, bit 0 set adds a --redact-regex ("[0-9]{6}"), bit 1
 * drops the built-in rules, bit 2 adds --redact-key "name"; the rest is
 * the message.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The rules for each of the 8 heads, built once. */
static struct redact	*fuzz_rules[8];

static struct redact *
fuzz_redact_rules(unsigned int head)
{
	char	*cause = NULL;

	head &= 7;
	if (fuzz_rules[head] != NULL)
		return fuzz_rules[head];
	fuzz_rules[head] = redact_new(!(head & 2));
	if ((head & 1) && redact_add_regex(fuzz_rules[head], "[0-9]{6}",
	    &cause) != 0)
		abort();
	if ((head & 4) && redact_add_key(fuzz_rules[head], "name",
	    &cause) != 0)
		abort();
	return fuzz_rules[head];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct redact	*r;
	const uint8_t	*msg;
	char		*out, *again;
	size_t		 len, n, outlen, n2, againlen;

	if (size == 0)
		return 0;
	r = fuzz_redact_rules(data[0]);
	msg = data + 1;
	len = size - 1;
	if ((n = redact_buf(r, msg, len, &out, &outlen)) == 0)
		return 0;
	if (outlen == len && memcmp(out, msg, len) == 0)
		fuzz_fail(data, size, "redact: %zu replaced, copy unchanged",
		    n);
	if (scan_is_json(msg, len) && !scan_is_json(out, outlen))
		fuzz_fail(data, size, "redact: JSON in, not JSON out: %.*s",
		    (int)(outlen < FUZZ_QUOTE_MAX ? outlen : FUZZ_QUOTE_MAX),
		    out);
	if (!(data[0] & 1) && scan_is_json(msg, len) &&
	    (n2 = redact_buf(r, out, outlen, &again, &againlen)) != 0) {
		if (againlen != outlen || memcmp(again, out, outlen) != 0)
			fuzz_fail(data, size, "redact: not a fixed point: %.*s "
			    "-> %.*s", (int)(outlen < FUZZ_QUOTE_MAX ? outlen :
			    FUZZ_QUOTE_MAX), out, (int)(againlen <
			    FUZZ_QUOTE_MAX ? againlen : FUZZ_QUOTE_MAX), again);
		free(again);
	}
	free(out);
	return 0;
}
