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
 * The same bytes go through the redaction of text, form bodies, URLs and
 * command lines (core/redact_text.c): each must survive them, and a copy
 * said to be redacted must differ from its input.
 *
 * Input: byte 0, bit 0 set adds a --redact-regex ("[0-9]{6}"), bit 1
 * drops the built-in rules, bit 2 adds --redact-key "name"; the rest is
 * the message (for a command line: its arguments split at NUL bytes).
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

/* The redaction of text, form bodies, URLs and command lines. */
static void
fuzz_redact_text(const struct redact *r, const uint8_t *data, size_t size,
    const uint8_t *msg, size_t len)
{
	char	*out, *z, **argv, **red;
	size_t	 n, outlen, i, argc;

	if ((n = redact_text(r, msg, len, &out, &outlen)) != 0) {
		if (outlen == len && memcmp(out, msg, len) == 0)
			fuzz_fail(data, size, "redact_text: %zu replaced, copy "
			    "unchanged", n);
		/* JSON met as text is stored as JSON still. */
		if (scan_is_json(msg, len) && !scan_is_json(out, outlen))
			fuzz_fail(data, size, "redact_text: JSON in, not JSON "
			    "out");
		free(out);
	}
	if ((n = redact_form(r, msg, len, &out, &outlen)) != 0) {
		if (outlen == len && memcmp(out, msg, len) == 0)
			fuzz_fail(data, size, "redact_form: %zu replaced, copy "
			    "unchanged", n);
		free(out);
	}
	/* A URL and argv are C strings: NUL bytes end or split them. */
	z = xmalloc(len + 1);
	memcpy(z, msg, len);
	z[len] = '\0';
	free(redact_url(r, z));
	for (argc = 1, i = 0; i < len; i++)
		argc += z[i] == '\0';
	argv = xcalloc(argc + 1, sizeof *argv);
	for (argv[0] = z, argc = 1, i = 0; i < len; i++) {
		if (z[i] == '\0')
			argv[argc++] = z + i + 1;
	}
	red = redact_argv(r, argv);
	for (i = 0; i < argc; i++) {
		if (red[i] == NULL)
			fuzz_fail(data, size, "redact_argv: argument %zu lost",
			    i);
	}
	redact_argv_free(red);
	free(argv);
	free(z);
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
	fuzz_redact_text(r, data, size, msg, len);
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
