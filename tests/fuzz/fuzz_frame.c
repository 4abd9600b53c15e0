/*
 * The newline framer against memchr: the stream is fed in pieces (see
 * fuzz.h), every line frame_next() reports is taken off as the stdio relay
 * takes it, and the lines must be exactly those a plain memchr split of
 * the whole stream gives, each as soon as its newline has arrived, with
 * what follows the last newline left in the buffer.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fuzz.h"
#include "transport.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Feed the stream in pieces and check each line as it is framed. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input	 in;
	struct framer		 f;
	struct evbuffer		*buf;
	const uint8_t		*piece, *nl;
	unsigned char		*line;
	size_t			 plen, fed = 0, taken = 0, len, want;

	fuzz_input_split(data, size, &in);
	buf = fuzz_buffer_new();
	frame_init(&f);
	while (fuzz_piece(&in, &piece, &plen)) {
		fuzz_add(buf, piece, plen);
		fed += plen;
		while (frame_next(&f, buf, &len)) {
			/* The next line of the memchr split. */
			nl = memchr(in.data + taken, '\n', fed - taken);
			if (nl == NULL)
				fuzz_fail(data, size, "frame: a line of %zu "
				    "bytes where no newline has arrived", len);
			want = (size_t)(nl - (in.data + taken));
			if (len != want)
				fuzz_fail(data, size, "frame: a line of %zu "
				    "bytes at offset %zu, want %zu", len,
				    taken, want);
			if ((line = malloc(len + 1)) == NULL)
				abort();
			if (evbuffer_remove(buf, line, len + 1) != (int)len + 1)
				fuzz_fail(data, size, "frame: the line of %zu "
				    "bytes is not in the buffer", len);
			if (memcmp(line, in.data + taken, len + 1) != 0)
				fuzz_fail(data, size, "frame: the line at "
				    "offset %zu has other bytes", taken);
			free(line);
			taken += len + 1;
		}
		/* Nothing framed: no newline may be waiting. */
		if (memchr(in.data + taken, '\n', fed - taken) != NULL)
			fuzz_fail(data, size, "frame: a newline at offset %zu "
			    "was not framed", (size_t)((const uint8_t *)
			    memchr(in.data + taken, '\n', fed - taken) -
			    in.data));
		if (evbuffer_get_length(buf) != fed - taken)
			fuzz_fail(data, size, "frame: %zu bytes left in the "
			    "buffer, want %zu", evbuffer_get_length(buf),
			    fed - taken);
		if (f.scanned > fed - taken)
			fuzz_fail(data, size, "frame: scanned %zu of %zu bytes",
			    f.scanned, fed - taken);
	}

	/* What is left is the tail after the last newline, intact. */
	len = evbuffer_get_length(buf);
	if ((line = malloc(len + 1)) == NULL)
		abort();
	if (evbuffer_remove(buf, line, len) != (int)len ||
	    memcmp(line, in.data + taken, len) != 0)
		fuzz_fail(data, size, "frame: the unfinished line is not "
		    "what was sent");
	free(line);
	evbuffer_free(buf);
	return 0;
}
