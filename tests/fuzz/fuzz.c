/*
 * Helpers for the libFuzzer targets (see fuzz.h for the input layout).
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fuzz.h"

/* Read the head of an input: its piece sizes, flags and stream. */
void
fuzz_input_split(const uint8_t *data, size_t size, struct fuzz_input *in)
{
	size_t	i;

	memset(in, 0, sizeof *in);
	if (size == 0) {
		/* libFuzzer may pass NULL for an empty input. */
		in->data = (const uint8_t *)"";
		return;
	}
	in->nsizes = data[0] & 0x0f;
	in->flags = data[0] >> 4;
	if (in->nsizes > size - 1)
		in->nsizes = size - 1;
	in->sizes = data + 1;
	for (i = 0; i < in->nsizes; i++)
		in->cycle += in->sizes[i];
	in->data = data + 1 + in->nsizes;
	in->len = size - 1 - in->nsizes;
}

/* Start handing out the pieces of the stream again from its start. */
void
fuzz_input_rewind(struct fuzz_input *in)
{
	in->next = 0;
	in->off = 0;
}

/*
 * Hand out the next piece of the stream in *p and *len; return 0 when the
 * stream has all gone out.  The last piece is cut to what is left.
 */
int
fuzz_piece(struct fuzz_input *in, const uint8_t **p, size_t *len)
{
	size_t	n;

	if (in->off >= in->len && (in->off > 0 || in->next > 0))
		return 0;
	if (in->cycle == 0)
		n = in->len;
	else
		n = in->sizes[in->next++ % in->nsizes];
	if (n > in->len - in->off)
		n = in->len - in->off;
	*p = in->data + in->off;
	*len = n;
	in->off += n;
	if (in->cycle == 0)
		in->next++;
	return 1;
}

/* An empty evbuffer; an allocation failure is a harness failure. */
struct evbuffer *
fuzz_buffer_new(void)
{
	struct evbuffer	*b;

	if ((b = evbuffer_new()) == NULL) {
		fprintf(stderr, "fuzz: out of memory for an evbuffer\n");
		abort();
	}
	return b;
}

/* Free a piece when the evbuffer is done with its chain. */
static void
fuzz_free_cb(const void *data, size_t len, void *arg)
{
	free(arg);
}

/*
 * Append len bytes to buf as a chain of their own, in memory exactly that
 * big: a parser reading past them, or assuming one chain, is caught.
 */
void
fuzz_add(struct evbuffer *buf, const void *p, size_t len)
{
	void	*copy;

	if (len == 0)
		return;
	if ((copy = malloc(len)) == NULL) {
		fprintf(stderr, "fuzz: out of memory for a piece\n");
		abort();
	}
	memcpy(copy, p, len);
	if (evbuffer_add_reference(buf, copy, len, fuzz_free_cb, copy) != 0) {
		fprintf(stderr, "fuzz: cannot add a piece to an evbuffer\n");
		abort();
	}
}

/*
 * Report a disagreement, quoting the start of the input (len bytes at p)
 * with anything unprintable escaped, and abort so that libFuzzer keeps
 * the input as a reproducer.
 */
void
fuzz_fail(const void *p, size_t len, const char *fmt, ...)
{
	const unsigned char	*s = p;
	va_list			 ap;
	size_t			 i;

	fprintf(stderr, "\nfuzz: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nfuzz: input (%zu bytes): \"", len);
	for (i = 0; i < len && i < FUZZ_QUOTE_MAX; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\' && s[i] != '"')
			fputc(s[i], stderr);
		else
			fprintf(stderr, "\\x%02x", s[i]);
	}
	fprintf(stderr, "%s\"\n", i < len ? "..." : "");
	abort();
}
