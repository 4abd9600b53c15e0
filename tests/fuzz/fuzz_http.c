/*
 * HTTP/1.1 framing fed whole and in pieces (see fuzz.h): heads parsed by
 * http_head_parse(), their body framing chosen by http_body_kind(), bodies
 * decoded by http_body_decode() (chunked above all), then the next
 * pipelined message, as the proxy reads a connection.  Each run writes a
 * transcript of everything it found (heads field by field, each body's
 * decoded bytes, every error with its reason, what was left unread); the
 * two transcripts must be identical.  The head's flags choose requests or
 * responses (bit 0) and, for responses, the method they answer (bits 1-2).
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fuzz.h"
#include "transport.h"

/* Messages read off one stream at most: enough to reach pipelining. */
#define FUZZ_HTTP_MESSAGES	8

/* Where a run is on its stream. */
enum fuzz_http_state {
	FUZZ_HTTP_HEAD,		/* waiting for a head */
	FUZZ_HTTP_BODY,		/* decoding a body */
	FUZZ_HTTP_STOP,		/* an error, or enough messages */
	FUZZ_HTTP_MAX
};

/* One run over the stream. */
struct fuzz_http_run {
	enum fuzz_http_state	 state;
	int			 is_request;
	const char		*req_method;	/* what responses answer */
	size_t			 scanned;
	size_t			 messages;
	struct http_body	 body;
	struct evbuffer		*src;
	struct evbuffer		*dst;		/* the body being decoded */
	struct evbuffer		*trailers;	/* its trailer field lines */
	struct evbuffer		*log;		/* the transcript */
};

/* The methods a response may answer, by bits 1-2 of the flags. */
static const char *fuzz_http_methods[4] = { "POST", "HEAD", NULL, "CONNECT" };

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Add a line to the transcript. */
static void
fuzz_http_note(struct fuzz_http_run *r, const char *fmt, ...)
    PRINTFLIKE(2, 3);

static void
fuzz_http_note(struct fuzz_http_run *r, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	if (evbuffer_add_vprintf(r->log, fmt, ap) < 0 ||
	    evbuffer_add(r->log, "\n", 1) != 0)
		abort();
	va_end(ap);
}

/* Note an error and stop reading the stream. */
static void
fuzz_http_error(struct fuzz_http_run *r, const char *what, char *cause)
{
	fuzz_http_note(r, "%s error: %s", what, cause != NULL ? cause :
	    "(no reason given)");
	free(cause);
	r->state = FUZZ_HTTP_STOP;
}

/*
 * A request's target under a prefix must stay under it, whatever it was
 * (http_target_parse, http_target_join): abort if not.
 */
static void
fuzz_http_target(struct fuzz_http_run *r, const struct http_head *h)
{
	struct http_target	 t;
	char			*cause = NULL, *out, *path, *tail;
	int			 status;

	if (http_target_parse(h->method, h->target, &t, &status, &cause) !=
	    0) {
		fuzz_http_note(r, "target refused %d: %s", status, cause);
		free(cause);
		return;
	}
	out = http_target_join("/p", "k", &t);
	/* The path alone: a query may hold anything. */
	path = xstrndup(out, strcspn(out, "?"));
	xasprintf(&tail, "%s/", path);
	if (strcmp(out, "/p?k") != 0 && (strncmp(path, "/p/", 3) != 0 ||
	    strstr(tail, "/../") != NULL || strstr(tail, "/./") != NULL ||
	    strstr(out, "?k") == NULL)) {
		fprintf(stderr, "http: target %s became %s\n", h->target, out);
		abort();
	}
	fuzz_http_note(r, "target %s", out);
	free(path);
	free(tail);
	free(out);
	http_target_clear(&t);
}

/* Note a head field by field, then choose how its body is framed. */
static void
fuzz_http_head(struct fuzz_http_run *r, struct http_head *h)
{
	enum http_body_kind	 kind;
	uint64_t		 length;
	char			*cause = NULL;
	size_t			 i;

	fuzz_http_note(r, "head len=%zu version=%d", h->len, h->version);
	if (h->is_request)
		fuzz_http_note(r, "request method=%s target=%s", h->method,
		    h->target);
	else
		fuzz_http_note(r, "response status=%d reason=%s", h->status,
		    h->reason);
	for (i = 0; i < h->nheaders; i++)
		fuzz_http_note(r, "field %s: %s", h->headers[i].name,
		    h->headers[i].value);
	if (h->is_request)
		fuzz_http_target(r, h);
	else if (http_head_needs_reframe(h)) {
		struct evbuffer	*out = fuzz_buffer_new();

		http_head_write_reframed(out, h);
		fuzz_http_note(r, "reframed %zu", evbuffer_get_length(out));
		evbuffer_free(out);
	}
	if (h->len > evbuffer_get_length(r->src))
		fuzz_http_note(r, "head longer than the buffer");
	evbuffer_drain(r->src, h->len);

	if (http_body_kind(h, r->req_method, &kind, &length, &cause) != 0) {
		http_head_clear(h);
		fuzz_http_error(r, "body kind", cause);
		return;
	}
	http_head_clear(h);
	fuzz_http_note(r, "body kind=%d length=%llu", (int)kind,
	    (unsigned long long)length);
	http_body_init(&r->body, kind, length);
	r->body.trailers = r->trailers;
	r->state = FUZZ_HTTP_BODY;
}

/* Note the body decoded so far, byte for byte. */
static void
fuzz_http_body_note(struct fuzz_http_run *r, const char *what)
{
	struct http_head	 h;
	char			*cause = NULL;

	fuzz_http_note(r, "%s body total=%llu bytes=%zu trailers=%zu", what,
	    (unsigned long long)r->body.total, evbuffer_get_length(r->dst),
	    evbuffer_get_length(r->trailers));
	/* Kept trailer lines were checked: they parse again. */
	if (http_fields_parse(r->trailers, &h, &cause) != 0) {
		fprintf(stderr, "http: kept trailers do not parse: %s\n",
		    cause);
		abort();
	}
	http_head_clear(&h);
	if (evbuffer_add_buffer(r->log, r->trailers) != 0)
		abort();
	if (evbuffer_add_buffer(r->log, r->dst) != 0 ||
	    evbuffer_add(r->log, "\n", 1) != 0)
		abort();
}

/* Read whatever the stream buffer now allows; eof: no more will come. */
static void
fuzz_http_step(struct fuzz_http_run *r, int eof)
{
	struct http_head	 h;
	char			*cause = NULL;
	int			 rc;

	for (;;) {
		switch (r->state) {
		case FUZZ_HTTP_HEAD:
			if (eof)
				return;
			rc = http_head_parse(r->src, r->is_request,
			    &r->scanned, &h, &cause);
			if (rc == 0)
				return;
			if (rc == -1) {
				fuzz_http_error(r, "head", cause);
				return;
			}
			fuzz_http_head(r, &h);
			break;
		case FUZZ_HTTP_BODY:
			rc = http_body_decode(&r->body, r->src, r->dst, eof,
			    &cause);
			if (rc == 0)
				return;
			if (rc == -1) {
				fuzz_http_body_note(r, "partial");
				fuzz_http_error(r, "body", cause);
				return;
			}
			fuzz_http_body_note(r, "whole");
			if (++r->messages == FUZZ_HTTP_MESSAGES) {
				r->state = FUZZ_HTTP_STOP;
				return;
			}
			r->state = FUZZ_HTTP_HEAD;
			break;
		default:
			return;
		}
	}
}

/*
 * Run over the stream, whole or in the input's pieces, and return the
 * transcript (the caller frees it).
 */
static struct evbuffer *
fuzz_http_run(struct fuzz_input *in, int whole)
{
	struct fuzz_http_run	 r;
	const uint8_t		*piece;
	size_t			 plen;

	memset(&r, 0, sizeof r);
	r.is_request = !(in->flags & 1);
	r.req_method = fuzz_http_methods[(in->flags >> 1) & 3];
	r.src = fuzz_buffer_new();
	r.dst = fuzz_buffer_new();
	r.trailers = fuzz_buffer_new();
	r.log = fuzz_buffer_new();
	if (whole) {
		fuzz_add(r.src, in->data, in->len);
		fuzz_http_step(&r, 0);
	} else {
		fuzz_input_rewind(in);
		while (fuzz_piece(in, &piece, &plen)) {
			fuzz_add(r.src, piece, plen);
			fuzz_http_step(&r, 0);
		}
	}
	fuzz_http_step(&r, 1);
	if (r.state == FUZZ_HTTP_BODY)
		fuzz_http_body_note(&r, "unfinished");
	fuzz_http_note(&r, "left %zu", evbuffer_get_length(r.src));
	if (evbuffer_add_buffer(r.log, r.src) != 0)
		abort();
	evbuffer_free(r.src);
	evbuffer_free(r.dst);
	evbuffer_free(r.trailers);
	return r.log;
}

/* Read the stream whole and in pieces; the transcripts must agree. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input	 in;
	struct evbuffer		*a, *b;
	size_t			 la, lb, n, i;
	const unsigned char	*pa, *pb;

	fuzz_input_split(data, size, &in);
	a = fuzz_http_run(&in, 1);
	b = fuzz_http_run(&in, 0);
	la = evbuffer_get_length(a);
	lb = evbuffer_get_length(b);
	pa = evbuffer_pullup(a, -1);
	pb = evbuffer_pullup(b, -1);
	n = la < lb ? la : lb;
	for (i = 0; i < n && pa[i] == pb[i]; i++)
		/* nothing */;
	if (i < n || la != lb) {
		/* Back to the start of the line where they part. */
		while (i > 0 && pa[i - 1] != '\n')
			i--;
		fuzz_fail(data, size, "http: fed whole and in pieces the "
		    "transcripts part at byte %zu:\nwhole:  %.*s\npieces: %.*s",
		    i, (int)(la - i > 300 ? 300 : la - i), pa + i,
		    (int)(lb - i > 300 ? 300 : lb - i), pb + i);
	}
	evbuffer_free(a);
	evbuffer_free(b);
	return 0;
}
