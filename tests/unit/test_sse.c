/*
 * text/event-stream parsing: the WHATWG examples, every kind of line
 * ending split across reads at every byte, a byte-order mark, blocks that
 * dispatch nothing, and events of many megabytes arriving in small pieces.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <event2/buffer.h>

#include "transport.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])
/* A string literal that may hold NULs, with its length. */
#define SSE_TEXT(s)	s, sizeof (s) - 1

/* Most events one case dispatches. */
#define SSE_TEST_EVENTS	4

struct sse_want {
	const char	*type;		/* NULL for a plain message */
	const char	*data;
	const char	*id;		/* NULL for none */
	long		 retry;
};

struct sse_case {
	const char	*stream;
	size_t		 len;
	size_t		 nwant;
	struct sse_want	 want[SSE_TEST_EVENTS];
};

static const struct sse_case sse_cases[] = {
	/* The WHATWG examples. */
	{ SSE_TEXT("data: YHOO\ndata: +2\ndata: 10\n\n"), 1, {
	    { NULL, "YHOO\n+2\n10", NULL, -1 } } },
	{ SSE_TEXT(": test stream\n\ndata: first event\nid: 1\n\n"
	    "data:second event\nid\n\ndata:  third event\n\n"), 3, {
	    { NULL, "first event", "1", -1 },
	    { NULL, "second event", "", -1 },
	    { NULL, " third event", NULL, -1 } } },
	{ SSE_TEXT("data\n\ndata\ndata\n\ndata:"), 2, {
	    { NULL, "", NULL, -1 },
	    { NULL, "\n", NULL, -1 } } },
	{ SSE_TEXT("data:test\n\ndata: test\n\n"), 2, {
	    { NULL, "test", NULL, -1 },
	    { NULL, "test", NULL, -1 } } },
	{ SSE_TEXT("event: add\ndata: 73857293\n\nevent: remove\n"
	    "data: 2153\n\nevent: add\ndata: 113411\n\n"), 3, {
	    { "add", "73857293", NULL, -1 },
	    { "remove", "2153", NULL, -1 },
	    { "add", "113411", NULL, -1 } } },
	/* Retry takes ASCII digits only. */
	{ SSE_TEXT("retry: 1000\ndata: x\n\nretry: 10a\ndata: y\n\n"
	    "retry\ndata: z\n\nretry: 12345678901234567890\ndata: w\n\n"), 4, {
	    { NULL, "x", NULL, 1000 },
	    { NULL, "y", NULL, -1 },
	    { NULL, "z", NULL, -1 },
	    { NULL, "w", NULL, -1 } } },
	/* Unknown fields are ignored; so is an id holding a NUL. */
	{ SSE_TEXT("foo: bar\nid: a\0b\ndata: q\nDATA: no\ndata : no\n\n"), 1, {
	    { NULL, "q", NULL, -1 } } },
	/*
	 * A name with a NUL in it is no field we know, even when what comes
	 * before the NUL is (found by tests/fuzz/fuzz_sse.c).
	 */
	{ SSE_TEXT("data\0: a\nevent\0: b\nid\0: 1\nretry\0: 2\ndata: q\n"
	    "\ndata\0x\n\n"), 1, {
	    { NULL, "q", NULL, -1 } } },
	/* The last of several fields wins; an empty event is a message. */
	{ SSE_TEXT("event: a\nevent:\nid: 1\nid: 2\ndata: m\n\n"), 1, {
	    { NULL, "m", "2", -1 } } },
	/* Blocks with no data dispatch nothing and leave nothing behind. */
	{ SSE_TEXT("data: a\n\n\n\n: c\n\nid: 5\n\nevent: x\nretry: 7\n\n"
	    "data: b\n\n"), 2, {
	    { NULL, "a", NULL, -1 },
	    { NULL, "b", NULL, -1 } } },
	{ SSE_TEXT("\n\r\n\r: only comments\n\n"), 0, { { 0 } } },
	/* Line endings: CRLF, LF, CR, and all three mixed. */
	{ SSE_TEXT("data: a\r\ndata: b\r\n\r\n"), 1, {
	    { NULL, "a\nb", NULL, -1 } } },
	{ SSE_TEXT("data: a\rdata: b\r\rdata: c\r\r"), 2, {
	    { NULL, "a\nb", NULL, -1 },
	    { NULL, "c", NULL, -1 } } },
	{ SSE_TEXT("event: e\rdata: a\r\ndata: b\n\r\ndata:c\r\r\n"), 2, {
	    { "e", "a\nb", NULL, -1 },
	    { NULL, "c", NULL, -1 } } },
	{ SSE_TEXT("data: a\r\r\ndata: b\r\n\r\n"), 2, {
	    { NULL, "a", NULL, -1 },
	    { NULL, "b", NULL, -1 } } },
	{ SSE_TEXT("data: a\n\rdata: b\r\n\n"), 2, {
	    { NULL, "a", NULL, -1 },
	    { NULL, "b", NULL, -1 } } },
	/* A byte-order mark opening the stream, and only there. */
	{ SSE_TEXT("\xef\xbb\xbf" "data: bom\n\n"), 1, {
	    { NULL, "bom", NULL, -1 } } },
	{ SSE_TEXT("\xef\xbb\xbf\xef\xbb\xbf" "data: x\n\ndata: y\n\n"), 1, {
	    { NULL, "y", NULL, -1 } } },
	{ SSE_TEXT("\xef\xbb" "data: x\n\ndata: \xef\xbb\xbfy\n\n"), 1, {
	    { NULL, "\xef\xbb\xbfy", NULL, -1 } } },
	{ SSE_TEXT("\xef\xbb\xbf\r\ndata: z\n\n"), 1, {
	    { NULL, "z", NULL, -1 } } },
	/* An MCP message, as a server sends it. */
	{ SSE_TEXT("id: 0_1\nevent: message\ndata: {\"jsonrpc\":\"2.0\","
	    "\"id\":1,\"result\":{}}\n\n"), 1, {
	    { "message", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	      "0_1", -1 } } },
};

/*
 * Take every complete event off src into evs, which holds *n already and
 * room for max; the parser must not fail.
 */
static void
sse_test_pump(struct sse_parser *p, struct evbuffer *src,
    struct sse_event *evs, size_t *n, size_t max)
{
	struct sse_event	ev;
	int			rc;

	for (;;) {
		rc = sse_next(p, src, &ev);
		cr_assert_neq(rc, -1, "parser failed");
		if (rc == 0) {
			cr_assert_null(ev.data);
			return;
		}
		cr_assert_lt(*n, max, "too many events");
		evs[(*n)++] = ev;
	}
}

/* Check the events of case sc, freeing them; what says how it was fed. */
static void
sse_test_check(const struct sse_case *sc, struct sse_event *evs, size_t n,
    const char *what, size_t arg)
{
	const struct sse_want	*w;
	size_t			 i;

	cr_assert_eq(n, sc->nwant, "case \"%s\" %s %zu: %zu events",
	    sc->stream, what, arg, n);
	for (i = 0; i < n; i++) {
		w = &sc->want[i];
		cr_assert_eq(evs[i].data_len, strlen(w->data),
		    "case \"%s\" %s %zu: event %zu data \"%s\"", sc->stream,
		    what, arg, i, evs[i].data);
		cr_assert_str_eq(evs[i].data, w->data);
		if (w->type == NULL)
			cr_assert_null(evs[i].type, "type \"%s\"",
			    evs[i].type);
		else
			cr_assert_str_eq(evs[i].type, w->type);
		if (w->id == NULL)
			cr_assert_null(evs[i].id, "id \"%s\"", evs[i].id);
		else
			cr_assert_str_eq(evs[i].id, w->id);
		cr_assert_eq(evs[i].retry, w->retry);
		sse_event_clear(&evs[i]);
		cr_assert_null(evs[i].data);
	}
}

/* Each case parsed in one piece. */
Test(sse, whole, .timeout = UNIT_TIMEOUT)
{
	struct sse_parser	 p;
	struct sse_event	 evs[SSE_TEST_EVENTS];
	struct evbuffer		*src;
	size_t			 i, n;

	for (i = 0; i < nitems(sse_cases); i++) {
		sse_init(&p);
		src = evbuffer_new();
		cr_assert_eq(evbuffer_add(src, sse_cases[i].stream,
		    sse_cases[i].len), 0);
		n = 0;
		sse_test_pump(&p, src, evs, &n, nitems(evs));
		sse_test_check(&sse_cases[i], evs, n, "whole", i);
		sse_clear(&p);
		evbuffer_free(src);
	}
}

/* Each case split in two at every byte gives the same events. */
Test(sse, every_split, .timeout = UNIT_TIMEOUT)
{
	struct sse_parser	 p;
	struct sse_event	 evs[SSE_TEST_EVENTS];
	struct evbuffer		*src;
	size_t			 i, k, n;

	for (i = 0; i < nitems(sse_cases); i++) {
		for (k = 0; k <= sse_cases[i].len; k++) {
			sse_init(&p);
			src = evbuffer_new();
			n = 0;
			cr_assert_eq(evbuffer_add(src, sse_cases[i].stream,
			    k), 0);
			sse_test_pump(&p, src, evs, &n, nitems(evs));
			cr_assert_eq(evbuffer_add(src, sse_cases[i].stream + k,
			    sse_cases[i].len - k), 0);
			sse_test_pump(&p, src, evs, &n, nitems(evs));
			sse_test_check(&sse_cases[i], evs, n, "split", k);
			sse_clear(&p);
			evbuffer_free(src);
		}
	}
}

/* Each case added a byte at a time gives the same events. */
Test(sse, byte_at_a_time, .timeout = UNIT_TIMEOUT)
{
	struct sse_parser	 p;
	struct sse_event	 evs[SSE_TEST_EVENTS];
	struct evbuffer		*src;
	size_t			 i, k, n;

	for (i = 0; i < nitems(sse_cases); i++) {
		sse_init(&p);
		src = evbuffer_new();
		n = 0;
		for (k = 0; k < sse_cases[i].len; k++) {
			cr_assert_eq(evbuffer_add(src, sse_cases[i].stream + k,
			    1), 0);
			sse_test_pump(&p, src, evs, &n, nitems(evs));
		}
		sse_test_check(&sse_cases[i], evs, n, "bytes", i);
		sse_clear(&p);
		evbuffer_free(src);
	}
}

/*
 * A CR that ends the available bytes dispatches at once; the LF that may
 * follow in the next read is swallowed, not taken for a blank line.
 */
Test(sse, cr_at_end_of_read, .timeout = UNIT_TIMEOUT)
{
	struct sse_parser	 p;
	struct sse_event	 ev;
	struct evbuffer		*src = evbuffer_new();

	sse_init(&p);
	cr_assert_eq(evbuffer_add(src, "data: a\r\r", 9), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 1, "not dispatched at once");
	cr_assert_str_eq(ev.data, "a");
	sse_event_clear(&ev);
	cr_assert_eq(sse_next(&p, src, &ev), 0);
	cr_assert_eq(evbuffer_get_length(src), 0);

	/* The LF of that CRLF, then a line and a CR split from its LF. */
	cr_assert_eq(evbuffer_add(src, "\ndata: b\r", 9), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 0);
	cr_assert_eq(evbuffer_add(src, "\n", 1), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 0, "LF taken for a blank line");
	cr_assert_eq(evbuffer_add(src, "data: c\r", 8), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 0);
	cr_assert_eq(evbuffer_add(src, "\n\r", 2), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 1);
	cr_assert_str_eq(ev.data, "b\nc");
	sse_event_clear(&ev);
	cr_assert_eq(evbuffer_add(src, "\n", 1), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 0);
	cr_assert_eq(evbuffer_get_length(src), 0);
	sse_clear(&p);
	evbuffer_free(src);
}

/* Run a big stream through in piece-byte adds; return its one event. */
static void
sse_test_big(const char *stream, size_t len, size_t piece,
    struct sse_event *ev)
{
	struct sse_parser	 p;
	struct sse_event	 one;
	struct evbuffer		*src = evbuffer_new();
	size_t			 off, n, got = 0;
	int			 rc;

	sse_init(&p);
	for (off = 0; off < len; off += n) {
		n = len - off < piece ? len - off : piece;
		cr_assert_eq(evbuffer_add(src, stream + off, n), 0);
		while ((rc = sse_next(&p, src, &one)) == 1) {
			cr_assert_eq(got++, 0, "more than one event");
			cr_assert_eq(off + n, len, "dispatched early");
			*ev = one;
		}
		cr_assert_eq(rc, 0);
	}
	cr_assert_eq(got, 1);
	cr_assert_eq(evbuffer_get_length(src), 0);
	sse_clear(&p);
	evbuffer_free(src);
}

/* A 4 MB data line in 1 KiB reads is one event, in linear time. */
Test(sse, big_line, .timeout = UNIT_TIMEOUT)
{
	const size_t		 big = 4u * 1024 * 1024;
	struct sse_event	 ev;
	char			*stream;
	size_t			 i, len = 6 + big + 2;

	stream = malloc(len);
	cr_assert_not_null(stream);
	memcpy(stream, "data: ", 6);
	for (i = 0; i < big; i++)
		stream[6 + i] = 'a' + i % 26;
	memcpy(stream + 6 + big, "\n\n", 2);
	sse_test_big(stream, len, 1024, &ev);
	cr_assert_eq(ev.data_len, big);
	cr_assert_eq(strlen(ev.data), big);
	cr_assert_eq(memcmp(ev.data, stream + 6, big), 0);
	sse_event_clear(&ev);
	free(stream);
}

/* 2048 data lines of 2 KiB join into one event of 4 MB. */
Test(sse, many_lines, .timeout = UNIT_TIMEOUT)
{
	const size_t		 nlines = 2048, width = 2048;
	struct sse_event	 ev;
	char			*stream, *s;
	size_t			 i, len = nlines * (6 + width + 2) + 2;

	stream = malloc(len);
	cr_assert_not_null(stream);
	s = stream;
	for (i = 0; i < nlines; i++) {
		memcpy(s, "data: ", 6);
		memset(s + 6, 'A' + i % 26, width);
		memcpy(s + 6 + width, "\r\n", 2);
		s += 6 + width + 2;
	}
	memcpy(s, "\r\n", 2);
	sse_test_big(stream, len, 1000, &ev);
	cr_assert_eq(ev.data_len, nlines * (width + 1) - 1);
	for (i = 0; i < nlines; i++) {
		cr_assert_eq(ev.data[i * (width + 1)], 'A' + i % 26);
		if (i + 1 < nlines)
			cr_assert_eq(ev.data[i * (width + 1) + width], '\n');
	}
	cr_assert_eq(ev.data[ev.data_len], '\0');
	sse_event_clear(&ev);
	free(stream);
}

/* An unfinished event and a partial line are freed by sse_clear. */
Test(sse, clear_unfinished, .timeout = UNIT_TIMEOUT)
{
	struct sse_parser	 p;
	struct sse_event	 ev;
	struct evbuffer		*src = evbuffer_new();
	const char		*text = "event: x\nid: 7\nretry: 5\ndata: one\n"
				    "data: tw";

	sse_init(&p);
	cr_assert_eq(evbuffer_add(src, text, strlen(text)), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 0);
	cr_assert_eq(p.pending, 1);
	cr_assert_eq(evbuffer_get_length(src), 8, "partial line consumed");
	cr_assert_str_eq(p.ev.type, "x");
	cr_assert_str_eq(p.ev.id, "7");
	cr_assert_eq(p.ev.retry, 5);
	sse_clear(&p);
	cr_assert_null(p.data);
	cr_assert_null(p.ev.type);
	evbuffer_free(src);
}

/*
 * Add len bytes of filler to src in 1 MiB pieces, calling sse_next after
 * each; return how many calls failed.  No event may come out.
 */
static int
sse_test_flood(struct sse_parser *p, struct evbuffer *src, size_t len)
{
	const size_t		 piece = 1024 * 1024;
	static char		 fill[1024 * 1024];
	struct sse_event	 ev;
	size_t			 off, n;
	int			 rc, fails = 0;

	memset(fill, 'x', sizeof fill);
	for (off = 0; off < len; off += n) {
		n = len - off < piece ? len - off : piece;
		cr_assert_eq(evbuffer_add(src, fill, n), 0);
		rc = sse_next(p, src, &ev);
		cr_assert_neq(rc, 1, "event from a flood");
		if (rc == -1)
			fails++;
		cr_assert_leq(evbuffer_get_length(src), SSE_LINE_MAX + piece,
		    "an oversized line is kept");
	}
	return fails;
}

/* Events with a line or data past SSE_LINE_MAX are dropped, once each. */
Test(sse, oversized_dropped, .timeout = UNIT_TIMEOUT)
{
	struct sse_parser	 p;
	struct sse_event	 ev;
	struct evbuffer		*src = evbuffer_new();
	const char		*next = "data: after\n\n";

	sse_init(&p);

	/* One line too long, with more of it after the failure. */
	cr_assert_eq(evbuffer_add(src, "event: big\ndata: ", 17), 0);
	cr_assert_eq(sse_test_flood(&p, src, SSE_LINE_MAX + 3 * 1024 * 1024),
	    1);
	cr_assert_lt(evbuffer_get_length(src), 1024 * 1024);
	cr_assert_eq(evbuffer_add(src, "\ndata: rest of it\r\n\r\n", 21), 0);
	cr_assert_eq(evbuffer_add(src, next, strlen(next)), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 1);
	cr_assert_str_eq(ev.data, "after");
	cr_assert_null(ev.type, "type of the dropped event kept");
	sse_event_clear(&ev);

	/* Lines each short enough that add up to too much data. */
	cr_assert_eq(evbuffer_add(src, "data: ", 6), 0);
	cr_assert_eq(sse_test_flood(&p, src, SSE_LINE_MAX / 2), 0);
	cr_assert_eq(evbuffer_add(src, "\ndata: ", 7), 0);
	cr_assert_eq(sse_test_flood(&p, src, SSE_LINE_MAX / 2), 0);
	cr_assert_eq(evbuffer_add(src, "\n", 1), 0);
	cr_assert_eq(sse_next(&p, src, &ev), -1);
	cr_assert_eq(evbuffer_add(src, "data: tail\n\n", 12), 0);
	cr_assert_eq(evbuffer_add(src, next, strlen(next)), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 1);
	cr_assert_str_eq(ev.data, "after");
	sse_event_clear(&ev);
	cr_assert_eq(sse_next(&p, src, &ev), 0);
	cr_assert_eq(evbuffer_get_length(src), 0);

	sse_clear(&p);
	evbuffer_free(src);
}

/*
 * A long line in many small reads (each its own piece of src, as reads
 * come) comes out whole, and src stays a few pieces long while it grows
 * past 64 KiB:
 * finding where the last search stopped is then a step, not a walk over
 * every read so far (which made such a line cost the square of its reads).
 */
Test(sse, long_line_in_pieces, .timeout = UNIT_TIMEOUT)
{
	const size_t		 piece = 1000, pieces = 8192;
	static char		 fill[1000];
	struct sse_parser	 p;
	struct sse_event	 ev;
	struct evbuffer		*src = evbuffer_new(), *one;
	size_t			 i, j;
	int			 most = 0, n;

	sse_init(&p);
	memset(fill, 'a', sizeof fill);
	cr_assert_eq(evbuffer_add(src, "event: message\ndata: ", 21), 0);
	for (i = 0; i < pieces; i++) {
		one = evbuffer_new();
		cr_assert_eq(evbuffer_add(one, fill, piece), 0);
		cr_assert_eq(evbuffer_add_buffer(src, one), 0);
		evbuffer_free(one);
		cr_assert_eq(sse_next(&p, src, &ev), 0, "piece %zu", i);
		/* Past the first 64 KiB (sse.c's SSE_PULLUP_MIN). */
		n = evbuffer_peek(src, -1, NULL, NULL, 0);
		if (i >= 128 && n > most)
			most = n;
	}
	cr_assert_leq(most, 4, "src grew to %d pieces", most);
	cr_assert_eq(evbuffer_add(src, "\r\n\r\n", 4), 0);
	cr_assert_eq(sse_next(&p, src, &ev), 1);
	cr_assert_str_eq(ev.type, "message");
	cr_assert_eq(ev.data_len, piece * pieces);
	for (j = 0; j < ev.data_len; j++)
		if (ev.data[j] != 'a')
			break;
	cr_assert_eq(j, ev.data_len, "byte %zu changed", j);
	sse_event_clear(&ev);
	cr_assert_eq(sse_next(&p, src, &ev), 0);
	cr_assert_eq(evbuffer_get_length(src), 0);
	sse_clear(&p);
	evbuffer_free(src);
}
