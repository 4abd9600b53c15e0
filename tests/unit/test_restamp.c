/*
 * Unit tests for the stable re-recording of a cassette: which old lines
 * new lines take, in order for repeats, the times of what changed moved
 * onto the old clock, and the numbering of appended lines.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "replay.h"

#define HDR(pid, t) \
	"{\"format\":\"mcpreel-jsonl\",\"version\":1,\"session\":" pid \
	",\"name\":\"c.jsonl\",\"started_ns\":" t ",\"ended_ns\":" t \
	",\"recorder_pid\":" pid ",\"mcpreel_version\":\"x\"}\n"
#define MSG(seq, ts, mono, body) \
	"{\"type\":\"message\",\"seq\":" seq ",\"direction\":\"c2s\"," \
	"\"ts_ns\":" ts ",\"mono_ns\":" mono ",\"reply_to\":null," \
	"\"message\":" body "}\n"

/* restamp_stable over two strings; the result (caller frees). */
static char *
stable(const char *old, const char *new)
{
	size_t	 len;
	char	*out;

	out = restamp_stable(old, old != NULL ? strlen(old) : 0, new,
	    strlen(new), &len);
	cr_assert_eq(strlen(out), len);
	return out;
}

Test(restamp, unchanged_gives_old_bytes)
{
	const char	*old = HDR("7", "100") MSG("1", "101", "5",
			    "{\"a\":1}") MSG("2", "102", "6", "{\"b\":2}");
	const char	*new = HDR("9", "900") MSG("1", "901", "55",
			    "{\"a\":1}") MSG("2", "902", "56", "{\"b\":2}");
	char		*out = stable(old, new);

	cr_assert_str_eq(out, old);
	free(out);
}

Test(restamp, no_old_file_keeps_new)
{
	const char	*new = HDR("9", "900") MSG("1", "901", "55", "{}");
	char		*out = stable(NULL, new);

	cr_assert_str_eq(out, new);
	free(out);
}

Test(restamp, changed_line_alone_differs_shifted)
{
	const char	*old = HDR("7", "100") MSG("1", "101", "5",
			    "{\"a\":1}") MSG("2", "102", "6", "{\"b\":2}")
			    MSG("3", "103", "7", "{\"c\":3}");
	const char	*new = HDR("9", "900") MSG("1", "901", "55",
			    "{\"a\":1}") MSG("2", "905", "59", "{\"b\":9}")
			    MSG("3", "906", "60", "{\"c\":3}");
	/* Line 2 changed: its times on the old clock (-800, -50). */
	const char	*want = HDR("7", "100") MSG("1", "101", "5",
			    "{\"a\":1}") MSG("2", "105", "9", "{\"b\":9}")
			    MSG("3", "103", "7", "{\"c\":3}");
	char		*out = stable(old, new);

	cr_assert_str_eq(out, want);
	free(out);
}

Test(restamp, repeats_keep_their_own_lines)
{
	/* The same message twice, numbered as an export numbers it. */
	const char	*old = MSG("1", "1", "1", "{\"r\":1}")
			    MSG("2", "2", "2", "{\"r\":1}")
			    MSG("3", "3", "3", "{\"r\":2}");
	const char	*new = MSG("1", "7", "7", "{\"r\":1}")
			    MSG("2", "8", "8", "{\"r\":1}")
			    MSG("3", "9", "9", "{\"r\":3}");
	/* The first two are the old ones; the third changed (shift -6). */
	const char	*want = MSG("1", "1", "1", "{\"r\":1}")
			    MSG("2", "2", "2", "{\"r\":1}")
			    MSG("3", "3", "3", "{\"r\":3}");
	char		*out = stable(old, new);

	cr_assert_str_eq(out, want);
	free(out);
}

Test(restamp, identical_lines_are_taken_in_order)
{
	/* Hand-made lines alike in everything: each old one taken once. */
	const char	*old = MSG("1", "1", "1", "{\"r\":1}")
			    MSG("1", "2", "2", "{\"r\":1}")
			    MSG("1", "3", "3", "{\"r\":1}");
	const char	*new = MSG("1", "7", "7", "{\"r\":1}")
			    MSG("1", "8", "8", "{\"r\":1}");
	const char	*want = MSG("1", "1", "1", "{\"r\":1}")
			    MSG("1", "2", "2", "{\"r\":1}");
	char		*out = stable(old, new);

	cr_assert_str_eq(out, want);
	free(out);
}

Test(restamp, inserted_exchange_renumbers_what_follows)
{
	/*
	 * A line inserted: the lines after it have other seq numbers, so
	 * they differ from the old ones (their seq), keep their new content
	 * and times moved by the last match's shift.
	 */
	const char	*old = MSG("1", "10", "1", "{\"a\":1}")
			    MSG("2", "20", "2", "{\"z\":1}");
	const char	*new = MSG("1", "110", "101", "{\"a\":1}")
			    MSG("2", "115", "105", "{\"new\":1}")
			    MSG("3", "120", "110", "{\"z\":1}");
	const char	*want = MSG("1", "10", "1", "{\"a\":1}")
			    MSG("2", "15", "5", "{\"new\":1}")
			    MSG("3", "20", "10", "{\"z\":1}");
	char		*out = stable(old, new);

	cr_assert_str_eq(out, want);
	free(out);
}

Test(restamp, appended_lines_follow_the_old_clock)
{
	/* Old: last line at wall 500, mono 50. */
	const char	*old = HDR("7", "100") MSG("1", "400", "40", "{\"a\":1}")
			    MSG("2", "500", "50", "{\"b\":1}");
	/* New run: started at 9000, first line 3 ns later. */
	const char	*new = HDR("9", "9000") MSG("1", "9003", "77003",
			    "{\"c\":1}") MSG("2", "9010", "77010", "{\"d\":1}");
	const char	*want = MSG("3", "503", "53", "{\"c\":1}")
			    MSG("4", "510", "60", "{\"d\":1}");
	size_t		 len;
	char		*out;

	out = restamp_append(old, strlen(old), new, strlen(new), &len);
	cr_assert_eq(strlen(out), len);
	cr_assert_str_eq(out, want);
	free(out);
}

Test(restamp, unmatched_before_any_match_takes_the_next_shift)
{
	const char	*old = MSG("2", "20", "2", "{\"z\":1}");
	const char	*new = MSG("1", "105", "1005", "{\"first\":1}")
			    MSG("2", "120", "1020", "{\"z\":1}");
	const char	*want = MSG("1", "5", "-13", "{\"first\":1}")
			    MSG("2", "20", "2", "{\"z\":1}");
	char		*out = stable(old, new);

	cr_assert_str_eq(out, want);
	free(out);
}

Test(restamp, message_bytes_are_content)
{
	/* Equal JSON, other bytes: not the same line. */
	const char	*old = MSG("1", "1", "1", "{\"a\": 1}");
	const char	*new = MSG("1", "1", "1", "{\"a\":1}");
	char		*out = stable(old, new);

	/* Same parse, but size and bytes differ in a real export. */
	cr_assert_str_eq(out, old);
	free(out);
	old = "{\"type\":\"message\",\"size\":8,\"message\":{\"a\": 1}}\n";
	new = "{\"type\":\"message\",\"size\":7,\"message\":{\"a\":1}}\n";
	out = stable(old, new);
	cr_assert_str_eq(out, new);
	free(out);
}

Test(restamp, bad_lines_never_match)
{
	const char	*old = "not json\n{\"a\":1}\n";
	const char	*new = "not json\n{\"a\":1}";
	char		*out = stable(old, new);

	cr_assert_str_eq(out, "not json\n{\"a\":1}\n");
	free(out);
}

Test(restamp, member_is_top_level_only)
{
	const char	*line = "{\"x\":{\"seq\":5},\"s\":\"\\\"seq\\\":4\","
			    "\"seq\":12,\"m\":[{\"seq\":1}]}";
	size_t		 off, len;

	cr_assert_eq(restamp_member(line, strlen(line), "seq", &off, &len), 0);
	cr_assert_eq(len, 2);
	cr_assert_eq(strncmp(line + off, "12", 2), 0);
	cr_assert_neq(restamp_member(line, strlen(line), "nope", &off, &len),
	    0);
	/* Cut short: not found, no overrun. */
	cr_assert_neq(restamp_member(line, 10, "seq", &off, &len), 0);
}

Test(restamp, renumber_and_last_seq)
{
	const char	*file = HDR("1", "1")
			    "{\"type\":\"message\",\"seq\":1,\"reply_to\":null}\n"
			    "{\"type\":\"message\",\"seq\":2,\"reply_to\":1}\n"
			    "{\"type\":\"event\",\"kind\":\"note\"}\n";
	size_t		 len;
	char		*out;

	cr_assert_eq(restamp_last_seq(file, strlen(file)), 2);
	out = restamp_renumber(file, strlen(file), 40, &len);
	cr_assert_str_eq(out,
	    "{\"type\":\"message\",\"seq\":41,\"reply_to\":null}\n"
	    "{\"type\":\"message\",\"seq\":42,\"reply_to\":41}\n"
	    "{\"type\":\"event\",\"kind\":\"note\"}\n");
	cr_assert_eq(len, strlen(out));
	free(out);
	out = restamp_renumber(HDR("1", "1"), strlen(HDR("1", "1")), 3, &len);
	cr_assert_eq(len, 0);
	free(out);
	cr_assert_eq(restamp_last_seq("", 0), 0);
}

Test(restamp, many_repeats_are_linear)
{
	/* 20000 equal lines each side: matched one to one, quickly. */
	const char	*one = MSG("1", "1", "1", "{\"r\":1}");
	size_t		 n = 20000, len = strlen(one), i, outlen;
	char		*buf = malloc(n * len + 1), *out;

	for (i = 0; i < n; i++)
		memcpy(buf + i * len, one, len);
	buf[n * len] = '\0';
	out = restamp_stable(buf, n * len, buf, n * len, &outlen);
	cr_assert_eq(outlen, n * len);
	cr_assert_eq(memcmp(out, buf, outlen), 0);
	free(out);
	free(buf);
}
