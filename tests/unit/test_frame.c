/*
 * Newline framing over evbuffers: lines arriving in pieces, many lines in
 * one read, and lines far bigger than any read, which must be searched in
 * linear time.
 */

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <event2/buffer.h>

#include "transport.h"
#include "unit.h"

/* 8 MB added in 4 KiB pieces, as a pipe would deliver it. */
#define FRAME_BIG	(8u * 1024 * 1024)
#define FRAME_PIECE	4096u

/*
 * Take the next line off buf into a NUL-terminated copy, or return NULL
 * when no complete line is there.  *len gets its length.
 */
static char *
frame_test_take(struct framer *f, struct evbuffer *buf, size_t *len)
{
	char	*line;

	if (!frame_next(f, buf, len))
		return NULL;
	line = malloc(*len + 1);
	cr_assert_not_null(line);
	cr_assert_eq(evbuffer_remove(buf, line, *len), (int)*len);
	line[*len] = '\0';
	cr_assert_eq(evbuffer_drain(buf, 1), 0);
	return line;
}

/* One line added a byte or a few at a time is framed only when whole. */
Test(frame, split_across_adds, .timeout = UNIT_TIMEOUT)
{
	const char	*text =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
	struct evbuffer	*buf = evbuffer_new();
	struct framer	 f;
	size_t		 i, n = strlen(text), len;
	char		*line;

	frame_init(&f);
	for (i = 0; i < n - 1; i++) {
		cr_assert_eq(evbuffer_add(buf, text + i, 1), 0);
		cr_assert_eq(frame_next(&f, buf, &len), 0,
		    "framed after %zu bytes", i + 1);
		cr_assert_eq(f.scanned, i + 1);
	}
	cr_assert_eq(evbuffer_add(buf, text + n - 1, 1), 0);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_eq(len, n - 1);
	cr_assert_eq(memcmp(line, text, n - 1), 0);
	cr_assert_eq(evbuffer_get_length(buf), 0);
	cr_assert_eq(frame_next(&f, buf, &len), 0);
	free(line);
	evbuffer_free(buf);
}

/* Several lines in one add come out one by one, in order. */
Test(frame, several_lines_one_add, .timeout = UNIT_TIMEOUT)
{
	const char	*text = "first\nsecond line\n{\"x\":3}\npartial";
	const char	*want[] = { "first", "second line", "{\"x\":3}" };
	struct evbuffer	*buf = evbuffer_new();
	struct framer	 f;
	size_t		 i, len;
	char		*line;

	frame_init(&f);
	cr_assert_eq(evbuffer_add(buf, text, strlen(text)), 0);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		line = frame_test_take(&f, buf, &len);
		cr_assert_not_null(line, "line %zu not framed", i);
		cr_assert_eq(len, strlen(want[i]));
		cr_assert_str_eq(line, want[i]);
		free(line);
	}
	cr_assert_eq(frame_next(&f, buf, &len), 0);
	cr_assert_eq(f.scanned, strlen("partial"));

	/* The rest of the partial line completes it. */
	cr_assert_eq(evbuffer_add(buf, " done\n", 6), 0);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_str_eq(line, "partial done");
	free(line);
	evbuffer_free(buf);
}

/* "\r\n" is not special: the '\r' stays in the line. */
Test(frame, crlf_keeps_cr, .timeout = UNIT_TIMEOUT)
{
	struct evbuffer	*buf = evbuffer_new();
	struct framer	 f;
	size_t		 len;
	char		*line;

	frame_init(&f);
	cr_assert_eq(evbuffer_add(buf, "{}\r\n", 4), 0);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_eq(len, 3);
	cr_assert_eq(memcmp(line, "{}\r", 3), 0);
	free(line);
	evbuffer_free(buf);
}

/* Empty lines are lines of length zero. */
Test(frame, empty_lines, .timeout = UNIT_TIMEOUT)
{
	struct evbuffer	*buf = evbuffer_new();
	struct framer	 f;
	size_t		 len = 99;
	char		*line;

	frame_init(&f);
	cr_assert_eq(evbuffer_add(buf, "\n\nx\n\n", 5), 0);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_eq(len, 0);
	free(line);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_eq(len, 0);
	free(line);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_str_eq(line, "x");
	free(line);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_eq(len, 0);
	free(line);
	cr_assert_eq(frame_next(&f, buf, &len), 0);
	cr_assert_eq(evbuffer_get_length(buf), 0);
	evbuffer_free(buf);
}

/* Without a newline nothing is framed, however often we ask. */
Test(frame, no_newline, .timeout = UNIT_TIMEOUT)
{
	struct evbuffer	*buf = evbuffer_new();
	struct framer	 f;
	size_t		 len;
	int		 i;

	frame_init(&f);
	cr_assert_eq(frame_next(&f, buf, &len), 0);
	cr_assert_eq(f.scanned, 0);
	cr_assert_eq(evbuffer_add(buf, "{\"no\":\"end\"}", 12), 0);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(frame_next(&f, buf, &len), 0);
		cr_assert_eq(f.scanned, 12);
	}
	cr_assert_eq(evbuffer_get_length(buf), 12);
	evbuffer_free(buf);
}

/*
 * An 8 MB line in 4 KiB pieces: every call but the last fails, and each
 * failed call has looked at everything so far, so the next one starts
 * where it stopped instead of at the front (no quadratic rescans).
 */
Test(frame, large_line_linear, .timeout = UNIT_TIMEOUT)
{
	struct evbuffer	*buf = evbuffer_new();
	struct framer	 f;
	char		*piece, *line;
	size_t		 added = 0, len = 0, calls = 0;

	piece = malloc(FRAME_PIECE);
	cr_assert_not_null(piece);
	memset(piece, 'a', FRAME_PIECE);
	frame_init(&f);
	while (added < FRAME_BIG) {
		if (added + FRAME_PIECE == FRAME_BIG)
			piece[FRAME_PIECE - 1] = '\n';
		cr_assert_eq(evbuffer_add(buf, piece, FRAME_PIECE), 0);
		added += FRAME_PIECE;
		calls++;
		if (added < FRAME_BIG) {
			cr_assert_eq(frame_next(&f, buf, &len), 0,
			    "framed after %zu bytes", added);
			cr_assert_eq(f.scanned, added,
			    "scanned %zu of %zu bytes", f.scanned, added);
			cr_assert_eq(evbuffer_get_length(buf), added);
		}
	}
	cr_assert_eq(calls, FRAME_BIG / FRAME_PIECE);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_eq(len, FRAME_BIG - 1);
	cr_assert_eq(line[0], 'a');
	cr_assert_eq(line[len - 1], 'a');
	cr_assert_eq(f.scanned, 0);
	cr_assert_eq(evbuffer_get_length(buf), 0);
	free(line);
	free(piece);
	evbuffer_free(buf);
}

/*
 * The line after a long one is found from the front again: the framer
 * forgets what it scanned once it hands a line out.
 */
Test(frame, resets_after_line, .timeout = UNIT_TIMEOUT)
{
	struct evbuffer	*buf = evbuffer_new();
	struct framer	 f;
	size_t		 len;
	char		*line;

	frame_init(&f);
	cr_assert_eq(evbuffer_add(buf, "abcdef", 6), 0);
	cr_assert_eq(frame_next(&f, buf, &len), 0);
	cr_assert_eq(evbuffer_add(buf, "\nxy\n", 4), 0);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_str_eq(line, "abcdef");
	free(line);
	line = frame_test_take(&f, buf, &len);
	cr_assert_not_null(line);
	cr_assert_str_eq(line, "xy");
	free(line);
	evbuffer_free(buf);
}
