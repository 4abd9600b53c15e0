/*
 * obuf.c: a growable byte buffer, what the encoders of formats/ write
 * into (a protobuf request, an OTLP/JSON line) before it is sent or
 * written whole.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

void
obuf_init(struct obuf *b)
{
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
}

void
obuf_free(struct obuf *b)
{
	free(b->p);
	obuf_init(b);
}

/* Empty b, keeping its memory for the next request. */
void
obuf_reset(struct obuf *b)
{
	b->len = 0;
}

/* Append n bytes at p, growing by doubling. */
void
obuf_add(struct obuf *b, const void *p, size_t n)
{
	size_t	 cap;

	if (n == 0)
		return;
	if (n > SIZE_MAX / 2 - b->len)
		fatalx("obuf: %zu bytes more than a buffer can hold", n);
	if (b->len + n > b->cap) {
		cap = b->cap == 0 ? 256 : b->cap;
		while (cap < b->len + n)
			cap *= 2;
		b->p = xreallocarray(b->p, cap, 1);
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void
obuf_byte(struct obuf *b, uint8_t c)
{
	obuf_add(b, &c, 1);
}

void
obuf_str(struct obuf *b, const char *s)
{
	obuf_add(b, s, strlen(s));
}
