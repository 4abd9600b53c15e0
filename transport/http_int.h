/*
 * Internals shared by transport/http.c (heads) and transport/http_body.c
 * (bodies); nothing outside them includes it.
 */
#ifndef MCPREEL_HTTP_INT_H
#define MCPREEL_HTTP_INT_H

#include "transport.h"

/*
 * A chunk-size line ("1a2b;name=value") longer than this is refused: real
 * ones are a few bytes, and chunk extensions are next to unused.
 */
#define HTTP_CHUNK_LINE_MAX	4096
/* All trailer fields after the last chunk, with their line endings. */
#define HTTP_TRAILER_MAX	(16 * 1024)
/*
 * The largest Content-Length or chunk size taken: 2^62 bytes, beyond any
 * real body and far enough from 2^64 that sums cannot overflow.
 */
#define HTTP_LENGTH_MAX		((uint64_t)1 << 62)
/* Most bytes moved by one evbuffer_remove_buffer, which counts in an int. */
#define HTTP_MOVE_MAX		(1024 * 1024 * 1024)
/* How much of an offending line an error message quotes. */
#define HTTP_EXCERPT_MAX	64
/* Room for such a quote with every byte escaped as \xHH, and "...". */
#define HTTP_QUOTE_SIZE		(HTTP_EXCERPT_MAX * 4 + 8)

/* Where a chunked body's decoder is (struct http_body's state). */
enum http_chunk_state {
	HTTP_CHUNK_SIZE,	/* reading a chunk-size line */
	HTTP_CHUNK_DATA,	/* moving chunk data; remaining is left */
	HTTP_CHUNK_DATA_END,	/* expecting the line ending after the data */
	HTTP_CHUNK_TRAILER,	/* reading trailer fields; remaining is the
				   trailer budget left */
	HTTP_CHUNK_DONE,	/* the blank line after the trailers is gone */
	HTTP_CHUNK_MAX
};

extern const char *http_kind_names[HTTP_BODY_MAX];

void		 http_excerpt(char *, size_t, const char *, size_t);
int		 http_is_text(unsigned char);
int		 http_parse_field(const char *, size_t, struct http_header *,
		     const char *, char **);
size_t		 http_peek(struct evbuffer *, size_t, unsigned char *, size_t);

#endif
