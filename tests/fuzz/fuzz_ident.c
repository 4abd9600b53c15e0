/*
 * The streaming identity of a cut message (core/ident.c) against the
 * scanner: fed any input in pieces (their size from the first byte), it
 * must stay within its bounds, and on an input the scanner classifies it
 * must give the same kind, method and id, unless a method or id is longer
 * than it keeps (then it gives none).  The rest of the input is the
 * message.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ident	 id;
	struct scan	 whole, got;
	const uint8_t	*buf;
	size_t		 len, step, off, n, olen;
	char		*out, *m1, *m2;

	if (size < 1)
		return 0;
	step = (size_t)data[0] % 17 + 1;
	buf = data + 1;
	len = size - 1;
	ident_init(&id);
	for (off = 0; off < len; off += n) {
		n = len - off < step ? len - off : step;
		ident_feed(&id, buf + off, n);
	}
	out = ident_finish(&id, &olen);
	scan_message(buf, len, &whole);
	if (whole.kind == KIND_INVALID || memchr(buf, '\0', len) != NULL) {
		free(out);
		return 0;
	}
	if ((whole.has_method && whole.method_len + 2 > IDENT_VALUE_MAX) ||
	    (whole.has_id && whole.id_len > IDENT_VALUE_MAX)) {
		free(out);
		return 0;
	}
	if (out == NULL)
		fuzz_fail(buf, len, "ident: nothing for a message of kind %d",
		    whole.kind);
	scan_message(out, olen, &got);
	if (got.kind != whole.kind)
		fuzz_fail(buf, len, "ident: kind %d, the scanner's %d (%s)",
		    got.kind, whole.kind, out);
	if (got.has_id != whole.has_id || (got.has_id && (got.id_len !=
	    whole.id_len || memcmp(out + got.id_off, buf + whole.id_off,
	    got.id_len) != 0)))
		fuzz_fail(buf, len, "ident: another id (%s)", out);
	m1 = scan_method_dup(out, &got);
	m2 = scan_method_dup(buf, &whole);
	if ((m1 == NULL) != (m2 == NULL) || (m1 != NULL &&
	    strcmp(m1, m2) != 0))
		fuzz_fail(buf, len, "ident: another method (%s)", out);
	free(m1);
	free(m2);
	free(out);
	return 0;
}
