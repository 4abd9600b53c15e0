/*
 * HTTP/1.1 message bodies (RFC 9112 section 7): decoding a body delimited
 * by length, by chunks or by the connection's close into its data, never
 * taking a byte past its end, and writing chunked framing.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "http_int.h"

/* Start decoding a body of the given kind (length for HTTP_BODY_LENGTH). */
void
http_body_init(struct http_body *body, enum http_body_kind kind,
    uint64_t length)
{
	memset(body, 0, sizeof *body);
	body->kind = kind;
	body->state = HTTP_CHUNK_SIZE;
	if (kind == HTTP_BODY_LENGTH)
		body->remaining = length;
}

/*
 * Move up to max bytes of body data from the front of src to dst, whole
 * chains where possible, and count them; return how many moved.
 */
static uint64_t
http_body_move(struct http_body *body, struct evbuffer *src,
    struct evbuffer *dst, uint64_t max)
{
	uint64_t	moved = 0;
	size_t		want;
	int		n;

	while (moved < max) {
		want = evbuffer_get_length(src);
		if (want == 0)
			break;
		if (want > max - moved)
			want = max - moved;
		if (want > HTTP_MOVE_MAX)
			want = HTTP_MOVE_MAX;
		n = evbuffer_remove_buffer(src, dst, want);
		if (n <= 0)
			fatalx("cannot move %zu bytes of HTTP body", want);
		moved += n;
	}
	body->total += moved;
	return moved;
}

/*
 * Find the framing line at the front of src, at most max bytes with its
 * '\n', searching on from body->scanned.  Return 1 with its length (less
 * any CR before the '\n') in *len and the bytes to drain in *used; 0 if
 * it has not all arrived; -1 if there is no '\n' within max bytes.
 */
static int
http_body_line(struct http_body *body, struct evbuffer *src, size_t max,
    size_t *len, size_t *used)
{
	struct evbuffer_ptr	pos, stop;
	size_t			avail = evbuffer_get_length(src), lim, p;
	unsigned char		c;

	lim = avail < max ? avail : max;
	if (body->scanned < lim) {
		if (evbuffer_ptr_set(src, &pos, body->scanned,
		    EVBUFFER_PTR_SET) != 0 ||
		    evbuffer_ptr_set(src, &stop, lim, EVBUFFER_PTR_SET) != 0)
			return 0;
		pos = evbuffer_search_range(src, "\n", 1, &pos, &stop);
		if (pos.pos >= 0) {
			p = (size_t)pos.pos;
			body->scanned = 0;
			*used = p + 1;
			*len = p;
			if (p > 0 && http_peek(src, p - 1, &c, 1) == 1 &&
			    c == '\r')
				(*len)--;
			return 1;
		}
		body->scanned = lim;
	}
	if (avail >= max)
		return -1;
	return 0;
}

/*
 * Parse a chunk-size line: hex digits, then optional white space and
 * chunk extensions (";name=value"), which are not used.
 */
static int
http_chunk_size(const char *line, size_t len, uint64_t *size, char **cause)
{
	size_t		i = 0;
	uint64_t	n = 0;
	int		d;
	char		q[HTTP_QUOTE_SIZE];

	for (i = 0; i < len; i++) {
		if ((d = scan_hex_value((unsigned char)line[i])) < 0)
			break;
		if (n > (HTTP_LENGTH_MAX >> 4) ||
		    (n << 4) + d > HTTP_LENGTH_MAX) {
			xasprintf(cause, "HTTP chunk size is larger than "
			    "2^62 bytes");
			return -1;
		}
		n = (n << 4) + d;
	}
	if (i == 0)
		goto bad;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i < len && line[i] != ';')
		goto bad;
	for (; i < len; i++) {
		if (!http_is_text((unsigned char)line[i]))
			goto bad;
	}
	*size = n;
	return 0;

bad:
	http_excerpt(q, sizeof q, line, len);
	xasprintf(cause, "malformed HTTP chunk-size line \"%s\"", q);
	return -1;
}

/* Take a chunk-size line off src and move to the data or the trailers. */
static int
http_chunked_size(struct http_body *body, struct evbuffer *src, char **cause)
{
	char		line[HTTP_CHUNK_LINE_MAX];
	size_t		len, used;
	uint64_t	size;
	int		rc;

	rc = http_body_line(body, src, sizeof line, &len, &used);
	if (rc == -1) {
		xasprintf(cause, "HTTP chunk-size line longer than %zu bytes",
		    sizeof line);
		return -1;
	}
	if (rc == 0)
		return 0;
	if (evbuffer_copyout(src, line, len) != (ev_ssize_t)len)
		fatalx("cannot read an HTTP chunk-size line");
	if (http_chunk_size(line, len, &size, cause) != 0)
		return -1;
	evbuffer_drain(src, used);
	if (size == 0) {
		body->state = HTTP_CHUNK_TRAILER;
		body->remaining = HTTP_TRAILER_MAX;
	} else {
		body->state = HTTP_CHUNK_DATA;
		body->remaining = size;
	}
	return 1;
}

/* Take a trailer field line off src; a blank one ends the body. */
static int
http_chunked_trailer(struct http_body *body, struct evbuffer *src,
    char **cause)
{
	char	*line;
	size_t	 len, used;
	int	 rc;

	rc = http_body_line(body, src, body->remaining, &len, &used);
	if (rc == -1) {
		xasprintf(cause, "HTTP trailer section larger than %d bytes",
		    HTTP_TRAILER_MAX);
		return -1;
	}
	if (rc == 0)
		return 0;
	if (len > 0) {
		line = xmalloc(len);
		if (evbuffer_copyout(src, line, len) != (ev_ssize_t)len)
			fatalx("cannot read an HTTP trailer line");
		rc = http_parse_field(line, len, NULL, "trailer", cause);
		if (rc == 0 && body->trailers != NULL &&
		    (evbuffer_add(body->trailers, line, len) != 0 ||
		    evbuffer_add(body->trailers, "\r\n", 2) != 0))
			fatalx("out of memory keeping an HTTP trailer field");
		free(line);
		if (rc != 0)
			return -1;
	} else
		body->state = HTTP_CHUNK_DONE;
	evbuffer_drain(src, used);
	body->remaining -= used;
	return 1;
}

/* Decode as much of a chunked body as src holds; see http_body_decode. */
static int
http_body_chunked(struct http_body *body, struct evbuffer *src,
    struct evbuffer *dst, char **cause)
{
	unsigned char	c[2];
	size_t		n;
	int		rc;

	for (;;) {
		switch (body->state) {
		case HTTP_CHUNK_SIZE:
			if ((rc = http_chunked_size(body, src, cause)) != 1)
				return rc;
			break;
		case HTTP_CHUNK_DATA:
			body->remaining -= http_body_move(body, src, dst,
			    body->remaining);
			if (body->remaining != 0)
				return 0;
			body->state = HTTP_CHUNK_DATA_END;
			break;
		case HTTP_CHUNK_DATA_END:
			n = http_peek(src, 0, c, 2);
			if (n == 0 || (n == 1 && c[0] == '\r'))
				return 0;
			if (c[0] == '\n')
				evbuffer_drain(src, 1);
			else if (c[0] == '\r' && c[1] == '\n')
				evbuffer_drain(src, 2);
			else {
				xasprintf(cause, "HTTP chunk data is not "
				    "followed by a line ending (wrong chunk "
				    "size?)");
				return -1;
			}
			body->state = HTTP_CHUNK_SIZE;
			break;
		case HTTP_CHUNK_TRAILER:
			if ((rc = http_chunked_trailer(body, src, cause)) != 1)
				return rc;
			break;
		case HTTP_CHUNK_DONE:
			return 1;
		default:
			fatalx("bad HTTP chunked decoder state %d",
			    body->state);
		}
	}
}

/*
 * Consume body bytes from the front of src, appending the body's data to
 * dst and dropping the chunked framing, and never reading past the body's
 * end.  eof says src will get no more.  Return 1 when the body is
 * complete, 0 when more is needed, -1 with cause if the framing is
 * malformed or src ended before the body did.
 */
int
http_body_decode(struct http_body *body, struct evbuffer *src,
    struct evbuffer *dst, int eof, char **cause)
{
	int	rc;

	switch (body->kind) {
	case HTTP_BODY_NONE:
		return 1;
	case HTTP_BODY_LENGTH:
		body->remaining -= http_body_move(body, src, dst,
		    body->remaining);
		if (body->remaining == 0)
			return 1;
		rc = 0;
		break;
	case HTTP_BODY_CLOSE:
		http_body_move(body, src, dst, UINT64_MAX);
		return eof ? 1 : 0;
	case HTTP_BODY_CHUNKED:
		rc = http_body_chunked(body, src, dst, cause);
		break;
	default:
		fatalx("bad HTTP body kind %d", body->kind);
	}
	if (rc == 0 && eof) {
		xasprintf(cause, "HTTP body truncated: the connection closed "
		    "after %llu bytes of a %s body", (unsigned long long)
		    body->total, http_kind_names[body->kind]);
		return -1;
	}
	return rc;
}

/* Move all of data into out as one chunk; nothing if data is empty. */
void
http_chunk_add(struct evbuffer *out, struct evbuffer *data)
{
	size_t	len = evbuffer_get_length(data);

	if (len == 0)
		return;
	if (evbuffer_add_printf(out, "%zx\r\n", len) == -1 ||
	    evbuffer_add_buffer(out, data) != 0 ||
	    evbuffer_add(out, "\r\n", 2) != 0)
		fatalx("out of memory adding an HTTP chunk");
}

/* Add the last chunk and the empty trailer section that end a body. */
void
http_chunk_end(struct evbuffer *out)
{
	http_chunk_end_trailers(out, NULL, NULL);
}

/*
 * Fields a sender must not put in a trailer section (RFC 9110 6.5.1):
 * framing, routing, hop-by-hop ones (RFC 9110 7.6.1), request modifiers,
 * authentication, and what says how to process the content.  A recipient
 * that merged them into the head would take them for the real thing.
 * Response control data (Expires, Retry-After, ...) is passed on: it
 * decides nothing about this message or its connection.
 */
static const char *const http_trailer_forbidden[] = {
	"Content-Length", "Transfer-Encoding", "Trailer", "Host",
	"Connection", "Keep-Alive", "Proxy-Connection", "TE", "Upgrade",
	"Content-Type", "Content-Encoding", "Content-Range",
	"Authorization", "Proxy-Authorization", "WWW-Authenticate",
	"Proxy-Authenticate", "Authentication-Info",
	"Proxy-Authentication-Info", "Cookie", "Set-Cookie",
	"Expect", "Max-Forwards", "Range", "If-Match", "If-None-Match",
	"If-Modified-Since", "If-Unmodified-Since", "If-Range",
};

/* Whether the field line at line (name ":" ...) may be a trailer. */
static int
http_trailer_allowed(const char *line, size_t namelen)
{
	size_t	i;

	for (i = 0; i < sizeof http_trailer_forbidden /
	    sizeof http_trailer_forbidden[0]; i++) {
		if (strlen(http_trailer_forbidden[i]) == namelen &&
		    strncasecmp(line, http_trailer_forbidden[i], namelen) == 0)
			return 0;
	}
	return 1;
}

/*
 * Add the last chunk, the trailer fields (lines each ending in CRLF, as
 * http_body_decode keeps them; NULL or empty for none) and the blank line
 * that end a body.  The trailers are copied, not taken, each byte for
 * byte, except those no trailer may be (see http_trailer_forbidden),
 * which are left out: if dropped is not NULL, *dropped is then their
 * names, ", " between (caller frees), else NULL.
 */
void
http_chunk_end_trailers(struct evbuffer *out, struct evbuffer *trailers,
    char **dropped)
{
	size_t		 len, linelen, namelen;
	const char	*p, *end, *eol, *colon;
	char		*names = NULL, *s;

	len = trailers != NULL ? evbuffer_get_length(trailers) : 0;
	if (dropped != NULL)
		*dropped = NULL;
	if (evbuffer_add(out, "0\r\n", 3) != 0)
		fatalx("out of memory ending an HTTP chunked body");
	p = len > 0 ? (const char *)evbuffer_pullup(trailers,
	    (ev_ssize_t)len) : NULL;
	end = p + len;
	for (; p != NULL && p < end; p = eol + 1) {
		if ((eol = memchr(p, '\n', end - p)) == NULL)
			eol = end - 1;
		linelen = eol + 1 - p;
		colon = memchr(p, ':', linelen);
		namelen = colon != NULL ? (size_t)(colon - p) : 0;
		if (colon == NULL || http_trailer_allowed(p, namelen)) {
			if (evbuffer_add(out, p, linelen) != 0)
				fatalx("out of memory adding HTTP trailers");
			continue;
		}
		if (names == NULL)
			names = xstrndup(p, namelen);
		else {
			xasprintf(&s, "%s, %.*s", names, (int)namelen, p);
			free(names);
			names = s;
		}
	}
	if (evbuffer_add(out, "\r\n", 2) != 0)
		fatalx("out of memory ending an HTTP chunked body");
	if (dropped != NULL)
		*dropped = names;
	else
		free(names);
}
