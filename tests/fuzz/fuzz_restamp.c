/*
 * The stable re-recording of a cassette (replay/restamp.c) on any bytes:
 * within its bounds, and re-recording a file over itself gives the file
 * back (each line newline-ended), whatever its lines are; renumbering,
 * appending and the last seq stay within their bounds too.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "replay.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*buf = (const char *)data;
	char		*want, *out;
	size_t		 wlen = 0, olen, i;

	/* The file as restamp writes it: every line ends in a newline. */
	want = malloc(size + 2);
	if (want == NULL)
		return 0;
	memcpy(want, buf, size);
	wlen = size;
	if (size > 0 && buf[size - 1] != '\n')
		want[wlen++] = '\n';
	want[wlen] = '\0';
	out = restamp_stable(buf, size, buf, size, &olen);
	if (olen != wlen || memcmp(out, want, wlen) != 0)
		fuzz_fail(data, size, "restamp: a file re-recorded over itself "
		    "is not itself (%zu bytes, %zu wanted)", olen, wlen);
	free(out);
	/* Over other bytes: the second half against the first. */
	i = size / 2;
	out = restamp_stable(buf, i, buf + i, size - i, &olen);
	free(out);
	out = restamp_renumber(buf, size, (int64_t)size, &olen);
	free(out);
	out = restamp_append(buf, i, buf + i, size - i, &olen);
	free(out);
	(void)restamp_last_seq(buf, size);
	free(want);
	return 0;
}
