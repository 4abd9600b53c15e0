/* Unit tests for replay reports: how a difference in a long value reads. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "replay.h"
#include "unit.h"

/* The text (and JUnit) report of one request whose answers were a and b. */
static char *
report_of(const char *a, const char *b, int junit)
{
	struct replay_report	 rep;
	struct rresult		 r;
	json_t			*ja, *jb;
	json_error_t		 err;
	char			*out = NULL;
	size_t			 len = 0;
	FILE			*f;

	memset(&rep, 0, sizeof rep);
	memset(&r, 0, sizeof r);
	ja = json_loads(a, 0, &err);
	jb = json_loads(b, 0, &err);
	cr_assert_not_null(ja);
	cr_assert_not_null(jb);
	r.seq = 3;
	r.method = "tools/call";
	r.params = "{}";
	r.status = RSTATUS_DIFFERENT;
	diff_messages(ja, jb, NULL, &r.diff);
	rep.r = &r;
	rep.n = 1;
	rep.count[RSTATUS_DIFFERENT] = 1;
	f = open_memstream(&out, &len);
	if (junit)
		report_junit(f, &rep);
	else
		report_text(f, &rep, 0);
	fclose(f);
	diff_clear(&r.diff);
	json_decref(ja);
	json_decref(jb);
	return out;
}

/* {"result":{"text": s}} with s n copies of c, then at, then m of d. */
static char *
message(size_t n, const char *c, const char *at, size_t m, const char *d)
{
	char	*s = NULL, *out;
	size_t	 len = 0, i;
	FILE	*f = open_memstream(&s, &len);

	for (i = 0; i < n; i++)
		fputs(c, f);
	fputs(at, f);
	for (i = 0; i < m; i++)
		fputs(d, f);
	fclose(f);
	if (asprintf(&out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"text\":\"%s\"}}", s) == -1)
		abort();
	free(s);
	return out;
}

Test(report, long_strings_show_where_they_differ, .timeout = UNIT_TIMEOUT)
{
	char	*a = message(499, "a", "X", 500, "b");
	char	*b = message(499, "a", "Y", 500, "b");
	char	*t = report_of(a, b, 0);

	cr_assert_not_null(strstr(t, "$.result.text: strings differ at "
	    "character 500 (of 1000 and 1000)"), "%s", t);
	cr_assert_not_null(strstr(t, "    recorded: ...aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa[X]"
	    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...\n"), "%s", t);
	cr_assert_not_null(strstr(t, "    replayed: ...aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa[Y]"
	    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...\n"), "%s", t);
	free(t);
	free(a);
	free(b);
	/* The JUnit report too, for values past its larger limit. */
	a = message(4999, "a", "X", 500, "b");
	b = message(4999, "a", "Y", 500, "b");
	t = report_of(a, b, 1);
	cr_assert_not_null(strstr(t, "strings differ at character 5000"), "%s",
	    t);
	cr_assert_not_null(strstr(t, "[X]"), "%s", t);
	cr_assert_not_null(strstr(t, "[Y]"), "%s", t);
	free(t);
	free(a);
	free(b);
}

/* Characters, not bytes; a character is never cut; a prefix ends "[end]". */
Test(report, long_strings_utf8_and_prefix, .timeout = UNIT_TIMEOUT)
{
	char	*a = message(200, "\xc3\xa9", "\xe2\x82\xac", 100, "z");
	char	*b = message(200, "\xc3\xa9", "\xe2\x82\xa4", 100, "z");
	char	*t = report_of(a, b, 0);

	cr_assert_not_null(strstr(t, "strings differ at character 201 (of "
	    "301 and 301)"), "%s", t);
	cr_assert_not_null(strstr(t, "\xc3\xa9[\xe2\x82\xac]z"), "%s", t);
	cr_assert_not_null(strstr(t, "\xc3\xa9[\xe2\x82\xa4]z"), "%s", t);
	free(t);
	free(a);
	free(b);

	a = message(300, "q", "", 0, "");
	b = message(300, "q", "tail", 0, "");
	t = report_of(a, b, 0);
	cr_assert_not_null(strstr(t, "strings differ at character 301 (of "
	    "300 and 304)"), "%s", t);
	cr_assert_not_null(strstr(t, "qqq[end]\n"), "%s", t);
	cr_assert_not_null(strstr(t, "qqq[t]ail\n"), "%s", t);
	free(t);
	free(a);
	free(b);
}

/* Short values are shown whole, on one line, as before. */
Test(report, short_values_whole, .timeout = UNIT_TIMEOUT)
{
	char	*t = report_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
		    "{\"n\":1}}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
		    "{\"n\":2}}", 0);

	cr_assert_not_null(strstr(t, "seq 3 tools/call {}  $.result.n: 1 -> "
	    "2\n"), "%s", t);
	free(t);
}

/*
 * Long arrays: the path names the first element that differs; a value
 * whose type changed is shown around its first difference as JSON text.
 */
Test(report, long_arrays_path_and_json_text, .timeout = UNIT_TIMEOUT)
{
	char	*a = message(0, "", "", 0, ""), *b, *t;
	char	*s = NULL, *u = NULL;
	size_t	 len, i;
	FILE	*f = open_memstream(&s, &len), *g;

	free(a);
	g = open_memstream(&u, &len);
	fputs("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"items\":[", f);
	fputs("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"items\":[", g);
	for (i = 0; i < 400; i++) {
		fprintf(f, "%s%zu", i ? "," : "", i);
		fprintf(g, "%s%zu", i ? "," : "", i == 300 ? 9999 : i);
	}
	fputs("],\"obj\":{", f);
	fputs("],\"obj\":\"", g);
	for (i = 0; i < 40; i++)
		fprintf(f, "%s\"key%zu\":%zu", i ? "," : "", i, i);
	fputs("}}}", f);
	fputs("a string now\"}}", g);
	fclose(f);
	fclose(g);
	a = s;
	b = u;
	t = report_of(a, b, 0);
	cr_assert_not_null(strstr(t, "$.result.items[300]: 300 -> 9999\n"),
	    "%s", t);
	cr_assert_not_null(strstr(t, "$.result.obj: values (as JSON text) "
	    "differ at character 1 "), "%s", t);
	cr_assert_not_null(strstr(t, "    recorded: [{]\"key0\":0,"), "%s", t);
	cr_assert_not_null(strstr(t, "    replayed: [\"]a string now\"\n"),
	    "%s", t);
	free(t);
	free(a);
	free(b);
}
