/*
 * The legacy SSE endpoint URL's resolution (xport_sse_endpoint): the input
 * is the stream's URL, a newline, then the endpoint event's data (what a
 * hostile server chooses).  Whatever it is, a target taken must be one a
 * request line can carry, on the stream's own server: it starts with '/',
 * has no byte below 0x21 or above 0x7e, no dot segment left in its path,
 * and is not longer than the base and the endpoint together.  A refusal
 * gives a reason; nothing leaks.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "transport.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Whether the path part of target holds a "." or ".." segment. */
static int
fuzz_endpoint_has_dots(const char *target)
{
	size_t	plen = strcspn(target, "?"), i, n;

	for (i = 0; i < plen; i += n + 1) {
		n = strcspn(target + i + 1, "/?");
		if (i + 1 + n > plen)
			n = plen - i - 1;
		if ((n == 1 && target[i + 1] == '.') || (n == 2 &&
		    target[i + 1] == '.' && target[i + 2] == '.'))
			return 1;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char		*buf, *nl, *target = NULL, *cause = NULL;
	const char	*p;
	int		 rc;

	if (len > 64 * 1024 || memchr(data, '\0', len) != NULL)
		return 0;
	buf = malloc(len + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, len);
	buf[len] = '\0';
	if ((nl = strchr(buf, '\n')) == NULL) {
		free(buf);
		return 0;
	}
	*nl = '\0';
	rc = xport_sse_endpoint(buf, nl + 1, &target, &cause);
	if (rc == 0) {
		if (target == NULL || *target != '/')
			fuzz_fail(data, len, "a target not starting with '/': "
			    "%s", target != NULL ? target : "(null)");
		for (p = target; *p != '\0'; p++) {
			if ((unsigned char)*p <= 0x20 ||
			    (unsigned char)*p >= 0x7f)
				fuzz_fail(data, len, "byte 0x%02x in the "
				    "target", (unsigned char)*p);
		}
		if (fuzz_endpoint_has_dots(target))
			fuzz_fail(data, len, "a dot segment left: %s", target);
		if (strlen(target) > len + 2)
			fuzz_fail(data, len, "a target longer than its input");
	} else if (rc != -1 || cause == NULL || target != NULL)
		fuzz_fail(data, len, "refused with rc %d and no reason", rc);
	free(target);
	free(cause);
	free(buf);
	return 0;
}
