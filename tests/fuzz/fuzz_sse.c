/*
 * The event-stream parser three ways over the same stream: fed whole, fed
 * in pieces (see fuzz.h), and a plain model of the rules transport/sse.c
 * states (the WHATWG interpretation with its two simplifications) that
 * splits the whole stream into lines at once.  All three must give the
 * same events: type, data, id and retry.  Whole and pieces must also
 * leave the same unfinished line behind, and nothing may leak.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fuzz.h"
#include "transport.h"

/* The most digits the parser takes in a retry value (sse.c). */
#define FUZZ_SSE_RETRY_DIGITS	18

/* One thing sse_next gave: an event, or -1 for an event dropped. */
struct fuzz_sse_ev {
	int		 rc;
	char		*type;
	char		*data;
	size_t		 data_len;
	char		*id;
	long		 retry;
};

/* The events of one run, in order. */
struct fuzz_sse_run {
	struct fuzz_sse_ev	*ev;
	size_t			 n;
	size_t			 cap;
	size_t			 left;	/* bytes left in the stream buffer */
};

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Append an event to run, taking what it owns. */
static void
fuzz_sse_push(struct fuzz_sse_run *run, int rc, struct sse_event *ev)
{
	struct fuzz_sse_ev	*e;

	if (run->n == run->cap) {
		run->cap = run->cap == 0 ? 8 : run->cap * 2;
		run->ev = realloc(run->ev, run->cap * sizeof *run->ev);
		if (run->ev == NULL)
			abort();
	}
	e = &run->ev[run->n++];
	e->rc = rc;
	e->type = ev->type;
	e->data = ev->data;
	e->data_len = ev->data_len;
	e->id = ev->id;
	e->retry = ev->retry;
	memset(ev, 0, sizeof *ev);
	ev->retry = -1;
}

/* Free the events of a run. */
static void
fuzz_sse_run_free(struct fuzz_sse_run *run)
{
	size_t	i;

	for (i = 0; i < run->n; i++) {
		free(run->ev[i].type);
		free(run->ev[i].data);
		free(run->ev[i].id);
	}
	free(run->ev);
	memset(run, 0, sizeof *run);
}

/* Take every event sse_next has for what src holds now. */
static void
fuzz_sse_drain(struct sse_parser *p, struct evbuffer *src,
    struct fuzz_sse_run *run)
{
	struct sse_event	ev;
	int			rc;

	while ((rc = sse_next(p, src, &ev)) != 0)
		fuzz_sse_push(run, rc, &ev);
}

/* Run the parser over the stream, whole or in the input's pieces. */
static void
fuzz_sse_parse(struct fuzz_input *in, int whole, struct fuzz_sse_run *run)
{
	struct sse_parser	 p;
	struct evbuffer		*src = fuzz_buffer_new();
	const uint8_t		*piece;
	size_t			 plen;

	sse_init(&p);
	if (whole) {
		fuzz_add(src, in->data, in->len);
		fuzz_sse_drain(&p, src, run);
	} else {
		fuzz_input_rewind(in);
		while (fuzz_piece(in, &piece, &plen)) {
			fuzz_add(src, piece, plen);
			fuzz_sse_drain(&p, src, run);
		}
	}
	run->left = evbuffer_get_length(src);
	sse_clear(&p);
	evbuffer_free(src);
}

/* A NUL-terminated copy of len bytes. */
static char *
fuzz_sse_strndup(const uint8_t *s, size_t len)
{
	char	*c;

	if ((c = malloc(len + 1)) == NULL)
		abort();
	memcpy(c, s, len);
	c[len] = '\0';
	return c;
}

/*
 * The model: apply one field line (len bytes, no line ending, not empty,
 * not a comment) to the event being gathered.
 */
static void
fuzz_sse_model_field(const uint8_t *line, size_t len, struct evbuffer *data,
    struct sse_event *ev)
{
	const uint8_t	*colon = memchr(line, ':', len);
	size_t		 nlen, vlen, i;
	const uint8_t	*v;
	long		 n = 0;

	if (colon == NULL) {
		nlen = len;
		v = line + len;
	} else {
		nlen = (size_t)(colon - line);
		v = colon + 1;
		if (v < line + len && *v == ' ')
			v++;
	}
	vlen = (size_t)(line + len - v);

	if (nlen == 4 && memcmp(line, "data", 4) == 0) {
		if (evbuffer_add(data, v, vlen) != 0 ||
		    evbuffer_add(data, "\n", 1) != 0)
			abort();
	} else if (nlen == 5 && memcmp(line, "event", 5) == 0) {
		free(ev->type);
		ev->type = fuzz_sse_strndup(v, vlen);
	} else if (nlen == 2 && memcmp(line, "id", 2) == 0) {
		if (memchr(v, '\0', vlen) == NULL) {
			free(ev->id);
			ev->id = fuzz_sse_strndup(v, vlen);
		}
	} else if (nlen == 5 && memcmp(line, "retry", 5) == 0 &&
	    vlen > 0 && vlen <= FUZZ_SSE_RETRY_DIGITS) {
		for (i = 0; i < vlen && v[i] >= '0' && v[i] <= '9'; i++)
			n = n * 10 + (v[i] - '0');
		if (i == vlen)
			ev->retry = n;
	}
}

/*
 * The model: the events of the whole stream.  Lines end in CRLF, LF or
 * CR; the unfinished last line is not a line.  A blank line dispatches
 * the data gathered (less its last '\n'), or nothing when no data line
 * came, and either way starts a new event.
 */
static void
fuzz_sse_model(const uint8_t *s, size_t len, struct fuzz_sse_run *run)
{
	struct evbuffer		*data = fuzz_buffer_new();
	struct sse_event	 ev;
	size_t			 i = 0, j, dlen;

	memset(&ev, 0, sizeof ev);
	ev.retry = -1;
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len) {
		for (j = i; j < len && s[j] != '\r' && s[j] != '\n'; j++)
			/* nothing */;
		if (j == len)
			break;
		if (j > i && s[i] != ':')
			fuzz_sse_model_field(s + i, j - i, data, &ev);
		else if (j == i) {
			if ((dlen = evbuffer_get_length(data)) > 0) {
				ev.data = malloc(dlen);
				if (ev.data == NULL)
					abort();
				evbuffer_remove(data, ev.data, dlen);
				ev.data[dlen - 1] = '\0';
				ev.data_len = dlen - 1;
				if (ev.type != NULL && ev.type[0] == '\0') {
					free(ev.type);
					ev.type = NULL;
				}
				fuzz_sse_push(run, 1, &ev);
			} else
				sse_event_clear(&ev);
		}
		i = j + 1;
		if (s[j] == '\r' && i < len && s[i] == '\n')
			i++;
	}
	sse_event_clear(&ev);
	evbuffer_free(data);
}

/* Whether two strings that may be NULL are the same. */
static int
fuzz_sse_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Require the same events of two runs, named a and b for the report. */
static void
fuzz_sse_compare(const uint8_t *input, size_t size, const char *a,
    const struct fuzz_sse_run *ra, const char *b,
    const struct fuzz_sse_run *rb)
{
	const struct fuzz_sse_ev	*ea, *eb;
	size_t				 i;

	for (i = 0; i < ra->n && i < rb->n; i++) {
		ea = &ra->ev[i];
		eb = &rb->ev[i];
		if (ea->rc != eb->rc)
			fuzz_fail(input, size, "sse: event %zu: %s gives %d, "
			    "%s %d", i, a, ea->rc, b, eb->rc);
		if (ea->rc != 1)
			continue;
		if (ea->data_len != eb->data_len ||
		    memcmp(ea->data, eb->data, ea->data_len) != 0)
			fuzz_fail(input, size, "sse: event %zu: %s has data "
			    "of %zu bytes, %s other data of %zu", i, a,
			    ea->data_len, b, eb->data_len);
		if (!fuzz_sse_same(ea->type, eb->type))
			fuzz_fail(input, size, "sse: event %zu: %s has type "
			    "\"%s\", %s \"%s\"", i, a, ea->type ? ea->type :
			    "(none)", b, eb->type ? eb->type : "(none)");
		if (!fuzz_sse_same(ea->id, eb->id))
			fuzz_fail(input, size, "sse: event %zu: %s has id "
			    "\"%s\", %s \"%s\"", i, a, ea->id ? ea->id :
			    "(none)", b, eb->id ? eb->id : "(none)");
		if (ea->retry != eb->retry)
			fuzz_fail(input, size, "sse: event %zu: %s has retry "
			    "%ld, %s %ld", i, a, ea->retry, b, eb->retry);
	}
	if (ra->n != rb->n)
		fuzz_fail(input, size, "sse: %s gives %zu events, %s %zu", a,
		    ra->n, b, rb->n);
}

/* Parse the stream whole and in pieces, model it, and compare. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input	in;
	struct fuzz_sse_run	whole, pieces, model;

	memset(&whole, 0, sizeof whole);
	memset(&pieces, 0, sizeof pieces);
	memset(&model, 0, sizeof model);
	fuzz_input_split(data, size, &in);

	fuzz_sse_parse(&in, 1, &whole);
	fuzz_sse_parse(&in, 0, &pieces);
	fuzz_sse_model(in.data, in.len, &model);

	fuzz_sse_compare(data, size, "whole", &whole, "pieces", &pieces);
	if (whole.left != pieces.left)
		fuzz_fail(data, size, "sse: %zu bytes left fed whole, %zu in "
		    "pieces", whole.left, pieces.left);
	fuzz_sse_compare(data, size, "the parser", &whole, "the model",
	    &model);

	fuzz_sse_run_free(&whole);
	fuzz_sse_run_free(&pieces);
	fuzz_sse_run_free(&model);
	return 0;
}
