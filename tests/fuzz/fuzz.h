/*
 * What the libFuzzer targets share: cutting an input into the pieces a
 * parser is fed (as reads would bring them), adding bytes to an evbuffer
 * so that reading past them traps, and failing loudly.
 *
 * Inputs of the incremental targets (frame, sse, http) start with a head:
 *
 *	byte 0		low 4 bits: how many piece-size bytes follow (0-15);
 *			high 4 bits: flags the target reads (fuzz_http)
 *	bytes 1..n	piece sizes, used in turn, over and over
 *	the rest	the stream itself
 *
 * With no size bytes, or sizes that are all 0, the stream is one piece.
 * A size of 0 is a call to the parser with nothing new.  The seeds in
 * corpus/frame, corpus/sse and corpus/http start with such a head.
 */
#ifndef MCPREEL_FUZZ_H
#define MCPREEL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "core.h"

/* Most piece-size bytes a head can name (its low 4 bits). */
#define FUZZ_SIZES_MAX	15
/* How much of an input a failure message quotes. */
#define FUZZ_QUOTE_MAX	200

struct fuzz_input {
	const uint8_t	*sizes;
	size_t		 nsizes;
	size_t		 cycle;		/* the sum of the sizes */
	unsigned int	 flags;		/* the head's high 4 bits */
	const uint8_t	*data;		/* the stream */
	size_t		 len;
	size_t		 next;		/* fuzz_piece: which size is next */
	size_t		 off;		/* fuzz_piece: how much went out */
};

/* fuzz.c */
void		 fuzz_input_split(const uint8_t *, size_t,
		     struct fuzz_input *);
void		 fuzz_input_rewind(struct fuzz_input *);
int		 fuzz_piece(struct fuzz_input *, const uint8_t **, size_t *);
struct evbuffer	*fuzz_buffer_new(void);
void		 fuzz_add(struct evbuffer *, const void *, size_t);
__dead void	 fuzz_fail(const void *, size_t, const char *, ...)
		     PRINTFLIKE(3, 4);

#endif
