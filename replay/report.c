/*
 * Replay reports: text for people (a summary line, then each difference;
 * coloured on a terminal), JSON for tools, JUnit XML for CI.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* A request this much slower than recorded is flagged. */
#define REPORT_SLOW_FACTOR	5
/* ... unless both are this quick: noise. */
#define REPORT_SLOW_MIN_NS	(5 * 1000000LL)
/*
 * Values longer than this (as JSON text) are not shown whole in the text
 * report: the neighbourhood of their first difference is, this many
 * characters either side, so a difference late in a long value shows.
 */
#define REPORT_VALUE_MAX	80
#define REPORT_CONTEXT		30
/* The same for JUnit (read in CI logs, where more fits). */
#define REPORT_JUNIT_MAX	4096
#define REPORT_JUNIT_CONTEXT	400

static const char *status_names[RSTATUS_MAX] = {
	"same", "different", "missing", "ignored", "truncated"
};

static int
slow(const struct rresult *r)
{
	return r->rec_latency_ns > 0 && r->live_latency_ns >
	    REPORT_SLOW_MIN_NS && r->live_latency_ns > REPORT_SLOW_FACTOR *
	    r->rec_latency_ns;
}

/* A JSON value on one line, cut to max characters. */
static char *
value_text(const json_t *v, size_t max)
{
	char	*s, *out;

	if (v == NULL)
		return xstrdup("(absent)");
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
	if (s == NULL)
		return xstrdup("?");
	if (strlen(s) <= max)
		return s;
	xasprintf(&out, "%.*s...", (int)max - 3, s);
	free(s);
	return out;
}

/* Whether byte c continues a UTF-8 sequence. */
static int
utf8_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/* Characters (UTF-8 sequences) in the first n bytes of s. */
static size_t
utf8_chars(const char *s, size_t n)
{
	size_t	i, k = 0;

	for (i = 0; i < n; i++)
		k += !utf8_cont((unsigned char)s[i]);
	return k;
}

/*
 * s[from..to): escaped as in a JSON string, without the quotes, when
 * escape is set (a string's characters); else as it is (JSON text).
 */
static char *
report_escaped(const char *s, size_t from, size_t to, int escape)
{
	json_t	*v;
	char	*d, *out;
	size_t	 n;

	if (!escape)
		return xstrndup(s + from, to - from);
	v = json_stringn_nocheck(s + from, to - from);
	d = json_dumps(v, JSON_ENCODE_ANY);
	json_decref(v);
	if (d == NULL || (n = strlen(d)) < 2) {
		free(d);
		return xstrdup("?");
	}
	out = xstrndup(d + 1, n - 2);
	free(d);
	return out;
}

/*
 * One side of a difference around byte off (the first that differs):
 * up to ctx characters before it, the differing character in brackets
 * ("[end]" if the text ends there), up to ctx after, "..." where cut.
 */
static char *
report_around(const char *s, size_t len, size_t off, size_t ctx, int escape)
{
	size_t	 from = off, at_end = off, to, k;
	char	*before, *at, *after, *out;

	for (k = 0; k < ctx && from > 0; k++) {
		from--;
		while (from > 0 && utf8_cont((unsigned char)s[from]))
			from--;
	}
	if (off < len) {
		at_end = off + 1;
		while (at_end < len && utf8_cont((unsigned char)s[at_end]))
			at_end++;
	}
	for (to = at_end, k = 0; k < ctx && to < len; k++) {
		to++;
		while (to < len && utf8_cont((unsigned char)s[to]))
			to++;
	}
	before = report_escaped(s, from, off, escape);
	at = off < len ? report_escaped(s, off, at_end, escape) :
	    xstrdup("end");
	after = report_escaped(s, at_end, to, escape);
	xasprintf(&out, "%s%s[%s]%s%s", from > 0 ? "..." : "", before, at,
	    after, to < len ? "..." : "");
	free(before);
	free(at);
	free(after);
	return out;
}

/*
 * How a difference reads: when both values are short, *line gets them as
 * "A -> B" (a and b set, what NULL).  Otherwise the first place where
 * they differ: strings by their characters, anything else by its JSON
 * text; what says where ("strings differ at character 500 of 1200 and
 * 1210"), a and b are the neighbourhood on each side.  The caller frees
 * what it gets.
 */
static void
report_pair(const json_t *ra, const json_t *rb, size_t max, size_t ctx,
    char **what, char **a, char **b)
{
	const char	*sa, *sb;
	char		*da, *db;
	size_t		 la, lb, off;
	int		 strings;

	*what = NULL;
	da = value_text(ra, SIZE_MAX);
	db = value_text(rb, SIZE_MAX);
	if ((strlen(da) <= max && strlen(db) <= max) || ra == NULL ||
	    rb == NULL) {
		/* Short, or one side absent: the values, cut to max. */
		free(da);
		free(db);
		*a = value_text(ra, max);
		*b = value_text(rb, max);
		return;
	}
	strings = json_is_string(ra) && json_is_string(rb);
	if (strings) {
		sa = json_string_value(ra);
		la = json_string_length(ra);
		sb = json_string_value(rb);
		lb = json_string_length(rb);
	} else {
		sa = da;
		la = strlen(da);
		sb = db;
		lb = strlen(db);
	}
	for (off = 0; off < la && off < lb && sa[off] == sb[off]; off++)
		;
	/* At the start of the character the difference is in. */
	while (off > 0 && utf8_cont((unsigned char)sa[off]))
		off--;
	xasprintf(what, "%s differ at character %zu (of %zu and %zu)",
	    strings ? "strings" : "values (as JSON text)",
	    utf8_chars(sa, off) + 1, utf8_chars(sa, la), utf8_chars(sb, lb));
	*a = report_around(sa, la, off, ctx, strings);
	*b = report_around(sb, lb, off, ctx, strings);
	free(da);
	free(db);
}

const struct report_sides report_replay_sides = { "recorded", "replayed" };

/*
 * The differences of one answer, a line each after a blank line: head
 * (which request), the path and both values, or where a long value
 * first differs and its neighbourhood on each side, named by sides.
 */
void
report_text_diff(FILE *f, const char *head, const struct diff *d,
    const struct report_sides *sides, int colour)
{
	const char	*red = colour ? "\033[31m" : "", *green = colour ?
			    "\033[32m" : "", *off = colour ? "\033[0m" : "";
	const struct diff_entry *e;
	char		*a, *b, *what;
	size_t		 j, wa = strlen(sides->a), wb = strlen(sides->b);
	int		 w = (int)(wa > wb ? wa : wb);

	for (j = 0; j < d->n; j++) {
		e = &d->v[j];
		report_pair(e->recorded, e->replayed, REPORT_VALUE_MAX,
		    REPORT_CONTEXT, &what, &a, &b);
		if (what == NULL)
			fprintf(f, "%s%s  %s: %s%s%s -> %s%s%s%s\n",
			    j == 0 ? "\n" : "", head, e->path, red, a, off,
			    green, b, off, e->redacted ?
			    "  (redacted when recorded)" : "");
		else
			fprintf(f, "%s%s  %s: %s%s\n"
			    "    %s:%*s %s%s%s\n"
			    "    %s:%*s %s%s%s\n",
			    j == 0 ? "\n" : "", head, e->path, what,
			    e->redacted ? "  (redacted when recorded)" : "",
			    sides->a, w - (int)wa, "", red, a, off,
			    sides->b, w - (int)wb, "", green, b, off);
		free(what);
		free(a);
		free(b);
	}
}

/* The text report; colour when writing to a terminal. */
void
report_text(FILE *f, const struct replay_report *rep, int colour)
{
	const char	*red = colour ? "\033[31m" : "", *bold = colour ?
			    "\033[1m" : "", *off = colour ? "\033[0m" : "", *k;
	const struct rresult *r;
	json_t		*v;
	char		*head;
	size_t		 i;

	fprintf(f, "%sreplay of session %lld%s%s%s against %s: %zu requests, "
	    "%zu same, %zu different, %zu missing", bold,
	    (long long)rep->session, rep->session_name ? " \"" : "",
	    rep->session_name ? rep->session_name : "",
	    rep->session_name ? "\"" : "", rep->target ? rep->target : "?",
	    rep->n + rep->unshown, rep->count[RSTATUS_SAME],
	    rep->count[RSTATUS_DIFFERENT], rep->count[RSTATUS_MISSING]);
	if (rep->count[RSTATUS_IGNORED] != 0)
		fprintf(f, ", %zu ignored", rep->count[RSTATUS_IGNORED]);
	if (rep->count[RSTATUS_TRUNCATED] != 0)
		fprintf(f, ", %zu not replayed (recorded cut at "
		    "--max-record-size)", rep->count[RSTATUS_TRUNCATED]);
	fprintf(f, "%s\n", off);
	fprintf(f, "server requests answered from the recording: %zu",
	    rep->srv_answered);
	if (json_array_size(rep->srv_unmatched) != 0)
		fprintf(f, ", %s%zu with no recorded answer%s", red,
		    json_array_size(rep->srv_unmatched), off);
	fprintf(f, "\n");
	if (rep->notif_differ != 0) {
		fprintf(f, "notifications (recorded -> replayed)%s:",
		    rep->notifications_strict ? "" : ", not compared");
		json_object_foreach(rep->notifications, k, v) {
			if (!json_equal(json_object_get(v, "recorded"),
			    json_object_get(v, "replayed")))
				fprintf(f, " %s %lld -> %lld", k, (long long)
				    json_integer_value(json_object_get(v,
				    "recorded")), (long long)
				    json_integer_value(json_object_get(v,
				    "replayed")));
		}
		fprintf(f, "\n");
	}
	if (rep->lost != NULL)
		fprintf(f, "%sthe replay stopped early: %s%s\n", red,
		    rep->lost, off);
	if (rep->replay_session != 0)
		fprintf(f, "the replay is recorded as session %lld\n",
		    (long long)rep->replay_session);

	for (i = 0; i < rep->n; i++) {
		r = &rep->r[i];
		if (r->status == RSTATUS_MISSING)
			fprintf(f, "\n%sseq %lld %s %s%s  no response\n", red,
			    (long long)r->seq, r->method ? r->method : "?",
			    r->params, off);
		if (r->diff.n > 0) {
			xasprintf(&head, "seq %lld %s %s", (long long)r->seq,
			    r->method ? r->method : "?", r->params);
			report_text_diff(f, head, &r->diff, &report_replay_sides,
			    colour);
			free(head);
		}
		if (slow(r))
			fprintf(f, "seq %lld %s  slower: %.1f ms recorded, "
			    "%.1f ms replayed\n", (long long)r->seq,
			    r->method ? r->method : "?",
			    (double)r->rec_latency_ns / 1e6,
			    (double)r->live_latency_ns / 1e6);
	}
	if (rep->unshown != 0)
		fprintf(f, "\n%zu more results not shown, %zu of them not the "
		    "same (the counts above include them)\n", rep->unshown,
		    rep->unshown_differ);
	for (i = 0; i < json_array_size(rep->notes); i++)
		fprintf(f, "%snote: %s\n", i == 0 ? "\n" : "",
		    json_string_value(json_array_get(rep->notes, i)));
	if (rep->notes_unshown != 0)
		fprintf(f, "note: %zu more notes not shown\n",
		    rep->notes_unshown);
	/* A rule that never matched is likely mistyped: say so, not fail. */
	for (i = 0; i < json_array_size(rep->unused_rules); i++)
		fprintf(f, "%srule %s matched nothing\n", i == 0 ? "\n" : "",
		    json_string_value(json_object_get(json_array_get(
		    rep->unused_rules, i), "rule")));
}

static json_t *
ms_or_null(int64_t ns)
{
	return ns < 0 ? json_null() : json_real((double)ns / 1e6);
}

/*
 * One difference into JSON object d: its path, the value on each side
 * under the sides' names (null: absent), and whether it was redacted.
 */
void
report_json_entry(json_t *d, const struct diff_entry *e,
    const struct report_sides *sides)
{
	json_object_set_new(d, "path", json_string(e->path));
	json_object_set(d, sides->a, e->recorded ? e->recorded : json_null());
	json_object_set(d, sides->b, e->replayed ? e->replayed : json_null());
	if (e->redacted)
		json_object_set_new(d, "redacted", json_true());
}

/* The JSON report. */
void
report_json(FILE *f, const struct replay_report *rep)
{
	const struct rresult *r;
	json_t		*o = json_object(), *diffs = json_array(),
			*results = json_array(), *d, *x;
	size_t		 i, j;

	json_object_set_new(o, "session", json_integer(rep->session));
	json_object_set_new(o, "session_name", rep->session_name ?
	    json_string(rep->session_name) : json_null());
	json_object_set_new(o, "target", json_string(rep->target ?
	    rep->target : ""));
	json_object_set_new(o, "requests", json_integer((json_int_t)(rep->n +
	    rep->unshown)));
	json_object_set_new(o, "same", json_integer((json_int_t)
	    rep->count[RSTATUS_SAME]));
	json_object_set_new(o, "different", json_integer((json_int_t)
	    rep->count[RSTATUS_DIFFERENT]));
	json_object_set_new(o, "missing", json_integer((json_int_t)
	    rep->count[RSTATUS_MISSING]));
	json_object_set_new(o, "ignored", json_integer((json_int_t)
	    rep->count[RSTATUS_IGNORED]));
	json_object_set_new(o, "truncated", json_integer((json_int_t)
	    rep->count[RSTATUS_TRUNCATED]));
	for (i = 0; i < rep->n; i++) {
		r = &rep->r[i];
		for (j = 0; j < r->diff.n; j++) {
			d = json_object();
			json_object_set_new(d, "seq", json_integer(r->seq));
			json_object_set_new(d, "method", json_string(r->method ?
			    r->method : "?"));
			report_json_entry(d, &r->diff.v[j], &report_replay_sides);
			json_array_append_new(diffs, d);
		}
		x = json_object();
		json_object_set_new(x, "seq", json_integer(r->seq));
		json_object_set_new(x, "method", json_string(r->method ?
		    r->method : "?"));
		json_object_set_new(x, "id", r->id ? json_loads(r->id,
		    JSON_DECODE_ANY, NULL) : json_null());
		json_object_set_new(x, "status",
		    json_string(status_names[r->status]));
		json_object_set_new(x, "recorded_ms",
		    ms_or_null(r->rec_latency_ns));
		json_object_set_new(x, "replayed_ms",
		    ms_or_null(r->live_latency_ns));
		json_object_set_new(x, "slow", json_boolean(slow(r)));
		if (r->diff.nredacted > 0) {
			d = json_array();
			for (j = 0; j < r->diff.nredacted; j++)
				json_array_append_new(d,
				    json_string(r->diff.redacted[j]));
			json_object_set_new(x, "not_compared_redacted", d);
		}
		json_array_append_new(results, x);
	}
	json_object_set_new(o, "differences", diffs);
	json_object_set_new(o, "results", results);
	/* Only a big replay has these: the results and notes not kept. */
	if (rep->unshown != 0) {
		json_object_set_new(o, "results_not_shown",
		    json_integer((json_int_t)rep->unshown));
		json_object_set_new(o, "results_not_shown_not_same",
		    json_integer((json_int_t)rep->unshown_differ));
	}
	if (rep->notes_unshown != 0)
		json_object_set_new(o, "notes_not_shown",
		    json_integer((json_int_t)rep->notes_unshown));
	json_object_set(o, "notifications", rep->notifications);
	json_object_set_new(o, "notifications_compared",
	    json_boolean(rep->notifications_strict));
	json_object_set_new(o, "server_requests", json_pack("{s:I, s:O}",
	    "answered", (json_int_t)rep->srv_answered, "unmatched",
	    rep->srv_unmatched));
	json_object_set(o, "notes", rep->notes);
	json_object_set_new(o, "unused_rules", rep->unused_rules != NULL ?
	    json_incref(rep->unused_rules) : json_array());
	json_object_set_new(o, "stopped_early", rep->lost != NULL ?
	    json_string(rep->lost) : json_null());
	json_object_set_new(o, "replay_session", rep->replay_session ?
	    json_integer(rep->replay_session) : json_null());
	json_object_set_new(o, "exit_status",
	    json_integer(replay_exit_status(rep)));
	json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(o);
}

/* Write s with XML's five characters escaped (and control bytes dropped). */
void
report_xml_escape(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' ||
			    *s == '\t')
				fputc(*s, f);
		}
	}
}

/* The differences of one answer as a JUnit failure's text, a line each. */
void
report_junit_diff(FILE *f, const struct diff *d)
{
	char	*a, *b, *what;
	size_t	 j;

	for (j = 0; j < d->n; j++) {
		report_pair(d->v[j].recorded, d->v[j].replayed,
		    REPORT_JUNIT_MAX, REPORT_JUNIT_CONTEXT, &what, &a, &b);
		report_xml_escape(f, d->v[j].path);
		fputs(": ", f);
		if (what != NULL) {
			report_xml_escape(f, what);
			fputs(": ", f);
		}
		report_xml_escape(f, a);
		fputs(" -&gt; ", f);
		report_xml_escape(f, b);
		free(what);
		if (d->v[j].redacted)
			fputs(" (redacted when recorded)", f);
		fputc('\n', f);
		free(a);
		free(b);
	}
}

/*
 * A result's JUnit verdict inside its testcase: skipped (ignored, or cut
 * when recorded: "recorded cut at --max-record-size: " cut_what), a
 * failure (missing: missing_what; different: the differences), or
 * nothing when the same.
 */
void
report_junit_verdict(FILE *f, const struct rresult *r, const char *cut_what,
    const char *missing_what)
{
	if (r->status == RSTATUS_IGNORED)
		fprintf(f, "<skipped/>");
	else if (r->status == RSTATUS_TRUNCATED)
		fprintf(f, "<skipped message=\"recorded cut at "
		    "--max-record-size: %s\"/>", cut_what);
	else if (r->status == RSTATUS_MISSING)
		fprintf(f, "<failure message=\"%s\"/>", missing_what);
	else if (r->status == RSTATUS_DIFFERENT) {
		fprintf(f, "<failure message=\"%zu difference%s\">",
		    r->diff.n, r->diff.n == 1 ? "" : "s");
		report_junit_diff(f, &r->diff);
		fprintf(f, "</failure>");
	}
}

/* JUnit XML: one testcase per request, a failure for each that differs. */
void
report_junit(FILE *f, const struct replay_report *rep)
{
	const struct rresult *r;
	char		*name;
	size_t		 i;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
	    "  <testsuite name=\"mcpreel replay of session %lld\" tests=\"%zu\" "
	    "failures=\"%zu\" skipped=\"%zu\">\n", (long long)rep->session,
	    rep->n + rep->unshown, rep->count[RSTATUS_DIFFERENT] +
	    rep->count[RSTATUS_MISSING], rep->count[RSTATUS_IGNORED] +
	    rep->count[RSTATUS_TRUNCATED]);
	if (json_array_size(rep->unused_rules) != 0 || rep->unshown != 0) {
		fprintf(f, "    <properties>\n");
		/* The counts above include the testcases not written. */
		if (rep->unshown != 0)
			fprintf(f, "      <property name=\"results_not_shown\" "
			    "value=\"%zu\"/>\n", rep->unshown);
		for (i = 0; i < json_array_size(rep->unused_rules); i++) {
			fprintf(f, "      <property name=\"unused_rule\" "
			    "value=\"");
			report_xml_escape(f, json_string_value(json_object_get(
			    json_array_get(rep->unused_rules, i), "rule")));
			fprintf(f, "\"/>\n");
		}
		fprintf(f, "    </properties>\n");
	}
	for (i = 0; i < rep->n; i++) {
		r = &rep->r[i];
		xasprintf(&name, "seq %lld %s %s", (long long)r->seq,
		    r->method ? r->method : "?", r->params);
		fprintf(f, "    <testcase classname=\"session%lld\" name=\"",
		    (long long)rep->session);
		report_xml_escape(f, name);
		fprintf(f, "\" time=\"%.6f\">", r->live_latency_ns < 0 ? 0 :
		    (double)r->live_latency_ns / 1e9);
		free(name);
		report_junit_verdict(f, r, "not replayed", "no response");
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}
