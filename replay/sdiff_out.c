/*
 * mcpreel diff's reports: text for people, JSON for tools, JUnit XML for
 * CI.  The differences of an answer or a definition are printed by
 * report.c's helpers, as replay prints them, with the sides named a and
 * b (A and B in the text).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* The sides as the text report names them. */
static const struct report_sides sdiff_out_sides = { "A", "B" };

static const char *sdiff_out_status[RSTATUS_MAX] = {
	"same", "different", "missing", "ignored", "truncated"
};

static const char *sdiff_out_how[] = { "added", "removed", "changed" };

/* "session 3 "name"" into a new string. */
static char *
sdiff_out_session(int64_t id, const char *name)
{
	char	*s;

	xasprintf(&s, "session %lld%s%s%s", (long long)id, name ? " \"" : "",
	    name ? name : "", name ? "\"" : "");
	return s;
}

/* The fields of a change as "description, inputSchema". */
static char *
sdiff_out_fields(const json_t *fields)
{
	char	*s;
	size_t	 i, len = 0, size = 0, n;
	const char *f;

	for (i = 0; i < json_array_size(fields); i++)
		size += json_string_length(json_array_get(fields, i)) + 2;
	s = xmalloc(size + 1);
	for (i = 0; i < json_array_size(fields); i++) {
		f = json_string_value(json_array_get(fields, i));
		n = json_string_length(json_array_get(fields, i));
		if (i > 0) {
			memcpy(s + len, ", ", 2);
			len += 2;
		}
		memcpy(s + len, f, n);
		len += n;
	}
	s[len] = '\0';
	return s;
}

/* One line on a kind of definition: how many of each change. */
static void
sdiff_out_kind_line(FILE *f, int k, const struct defs_diff *dd)
{
	size_t	c[3] = { 0, 0, 0 }, i;

	fprintf(f, "%s: ", defs_kinds[k].plural);
	if (dd->listed != 3) {
		fprintf(f, "%s\n", dd->listed == 0 ? "listed by neither" :
		    dd->listed == 1 ? "listed in A only, not compared" :
		    "listed in B only, not compared");
		return;
	}
	if (dd->ignored) {
		fprintf(f, "ignored (a rule skips %s)\n", defs_kinds[k].method);
		return;
	}
	for (i = 0; i < dd->n; i++)
		c[dd->v[i].how]++;
	if (dd->n == 0)
		fprintf(f, "the same\n");
	else
		fprintf(f, "%zu added, %zu removed, %zu changed\n",
		    c[DEFS_ADDED], c[DEFS_REMOVED], c[DEFS_CHANGED]);
}

/* The text report; colour when writing to a terminal. */
void
sdiff_out_text(FILE *f, const struct sdiff_report *rep, int colour)
{
	const struct replay_report *ex = &rep->ex;
	const struct rresult	*r;
	const struct defs_change *c;
	const char		*bold = colour ? "\033[1m" : "",
				*red = colour ? "\033[31m" : "",
				*green = colour ? "\033[32m" : "",
				*off = colour ? "\033[0m" : "";
	char			*sa, *sb, *head, *fields;
	size_t			 i, j;
	int			 k;

	sa = sdiff_out_session(ex->session, ex->session_name);
	sb = sdiff_out_session(rep->session_b, rep->session_name_b);
	fprintf(f, "%sdiff of %s (A) and %s (B): %zu exchanges compared, "
	    "%zu same, %zu different, %zu missing in B", bold, sa, sb, ex->n,
	    ex->count[RSTATUS_SAME], ex->count[RSTATUS_DIFFERENT],
	    ex->count[RSTATUS_MISSING]);
	if (ex->count[RSTATUS_IGNORED] != 0)
		fprintf(f, ", %zu ignored", ex->count[RSTATUS_IGNORED]);
	if (ex->count[RSTATUS_TRUNCATED] != 0)
		fprintf(f, ", %zu not compared (recorded cut at "
		    "--max-record-size)", ex->count[RSTATUS_TRUNCATED]);
	fprintf(f, "%s\n", off);
	free(sa);
	free(sb);
	fprintf(f, "requests: %zu answered in A, %zu in B (%zu list answers "
	    "compared as definitions); %s%zu only in A%s, %s%zu only in "
	    "B%s\n", rep->requests_a, rep->requests_b, rep->lists,
	    rep->nonly_a ? red : "", rep->nonly_a, rep->nonly_a ? off : "",
	    rep->nonly_b ? green : "", rep->nonly_b, rep->nonly_b ? off : "");
	for (k = 0; k < DEFS_MAX; k++)
		sdiff_out_kind_line(f, k, &rep->defs[k]);

	for (k = 0; k < DEFS_MAX; k++) {
		for (i = 0; i < rep->defs[k].n; i++) {
			c = &rep->defs[k].v[i];
			if (c->how != DEFS_CHANGED) {
				fprintf(f, "\n%s%s %s: %s%s\n",
				    c->how == DEFS_ADDED ? green : red,
				    defs_kinds[k].one, sdiff_out_how[c->how],
				    c->name, off);
				continue;
			}
			/* The differences follow, indented, on the next lines. */
			fields = sdiff_out_fields(c->fields);
			fprintf(f, "\n%s %s changed: %s", defs_kinds[k].one,
			    c->name, fields);
			free(fields);
			report_text_diff(f, "", &c->diff, &sdiff_out_sides,
			    colour);
		}
	}
	for (i = 0; i < rep->nonly_a; i++)
		fprintf(f, "%s%sonly in A: seq %lld %s %s%s\n",
		    i == 0 ? "\n" : "", red, (long long)rep->only_a[i].seq,
		    rep->only_a[i].method, rep->only_a[i].params, off);
	for (i = 0; i < rep->nonly_b; i++)
		fprintf(f, "%s%sonly in B: seq %lld %s %s%s\n",
		    i == 0 ? "\n" : "", green, (long long)rep->only_b[i].seq,
		    rep->only_b[i].method, rep->only_b[i].params, off);
	for (i = 0; i < ex->n; i++) {
		r = &ex->r[i];
		if (r->status == RSTATUS_MISSING)
			fprintf(f, "\n%sseq %lld/%lld %s %s  no answer in B%s\n",
			    red, (long long)r->seq, (long long)r->seq_b,
			    r->method ? r->method : "?", r->params, off);
		if (r->diff.n == 0)
			continue;
		xasprintf(&head, "seq %lld/%lld %s %s", (long long)r->seq,
		    (long long)r->seq_b, r->method ? r->method : "?",
		    r->params);
		report_text_diff(f, head, &r->diff, &sdiff_out_sides, colour);
		free(head);
	}
	for (j = 0; j < json_array_size(ex->notes); j++)
		fprintf(f, "%snote: %s\n", j == 0 ? "\n" : "",
		    json_string_value(json_array_get(ex->notes, j)));
	for (j = 0; j < json_array_size(ex->unused_rules); j++)
		fprintf(f, "%srule %s matched nothing\n", j == 0 ? "\n" : "",
		    json_string_value(json_object_get(json_array_get(
		    ex->unused_rules, j), "rule")));
}

/* Append v to array a, where a NULL v (not made) is fatal, not left out. */
static void
sdiff_out_append(json_t *a, json_t *v)
{
	if (v == NULL || json_array_append_new(a, v) != 0)
		fatalx("diff: a report entry could not be made");
}

/* A list of requests only one side has, as JSON. */
static json_t *
sdiff_out_only_json(const struct sdiff_only *v, size_t n)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < n; i++)
		sdiff_out_append(a, json_pack("{s:I, s:s, s:s}", "seq",
		    (json_int_t)v[i].seq, "method", v[i].method, "params",
		    v[i].params));
	return a;
}

/* One kind of definition's comparison as JSON. */
static json_t *
sdiff_out_defs_json(const struct defs_diff *dd)
{
	json_t		*o = json_object(), *lists[3], *x, *d;
	const struct defs_change *c;
	size_t		 i, j;
	int		 h;

	json_object_set_new(o, "compared", json_boolean(dd->listed == 3 &&
	    !dd->ignored));
	json_object_set_new(o, "listed_in_a", json_boolean(dd->listed & 1));
	json_object_set_new(o, "listed_in_b", json_boolean(dd->listed & 2));
	for (h = 0; h < 3; h++)
		lists[h] = json_array();
	for (i = 0; i < dd->n; i++) {
		c = &dd->v[i];
		if (c->how != DEFS_CHANGED) {
			sdiff_out_append(lists[c->how],
			    json_string(c->name));
			continue;
		}
		x = json_pack("{s:s, s:O}", "name", c->name, "fields",
		    c->fields);
		if (x == NULL)
			fatalx("diff: a report entry could not be made");
		d = json_array();
		for (j = 0; j < c->diff.n; j++) {
			json_t	*e = json_object();

			report_json_entry(e, &c->diff.v[j], &sdiff_sides);
			json_array_append_new(d, e);
		}
		json_object_set_new(x, "differences", d);
		json_array_append_new(lists[DEFS_CHANGED], x);
	}
	for (h = 0; h < 3; h++)
		json_object_set_new(o, sdiff_out_how[h], lists[h]);
	return o;
}

/* The JSON report. */
void
sdiff_out_json(FILE *f, const struct sdiff_report *rep)
{
	const struct replay_report *ex = &rep->ex;
	const struct rresult	*r;
	json_t			*o = json_object(), *diffs = json_array();
	json_t			*results = json_array(), *defs, *d;
	size_t			 i, j;
	int			 k;

	json_object_set_new(o, "a", json_pack("{s:I, s:o}", "session",
	    (json_int_t)ex->session, "name", ex->session_name ?
	    json_string(ex->session_name) : json_null()));
	json_object_set_new(o, "b", json_pack("{s:I, s:o}", "session",
	    (json_int_t)rep->session_b, "name", rep->session_name_b ?
	    json_string(rep->session_name_b) : json_null()));
	json_object_set_new(o, "requests_a", json_integer((json_int_t)
	    rep->requests_a));
	json_object_set_new(o, "requests_b", json_integer((json_int_t)
	    rep->requests_b));
	json_object_set_new(o, "exchanges", json_integer((json_int_t)ex->n));
	json_object_set_new(o, "list_answers", json_integer((json_int_t)
	    rep->lists));
	for (k = 0; k < RSTATUS_MAX; k++)
		json_object_set_new(o, sdiff_out_status[k], json_integer(
		    (json_int_t)ex->count[k]));
	json_object_set_new(o, "only_in_a", sdiff_out_only_json(rep->only_a,
	    rep->nonly_a));
	json_object_set_new(o, "only_in_b", sdiff_out_only_json(rep->only_b,
	    rep->nonly_b));
	for (i = 0; i < ex->n; i++) {
		r = &ex->r[i];
		for (j = 0; j < r->diff.n; j++) {
			d = json_pack("{s:I, s:I, s:s}", "seq_a",
			    (json_int_t)r->seq, "seq_b", (json_int_t)r->seq_b,
			    "method", r->method ? r->method : "?");
			if (d == NULL)
				fatalx("diff: a report entry could not be made");
			report_json_entry(d, &r->diff.v[j], &sdiff_sides);
			sdiff_out_append(diffs, d);
		}
		sdiff_out_append(results, json_pack("{s:I, s:I, s:s, "
		    "s:s}", "seq_a", (json_int_t)r->seq, "seq_b",
		    (json_int_t)r->seq_b, "method", r->method ? r->method : "?",
		    "status", sdiff_out_status[r->status]));
	}
	json_object_set_new(o, "differences", diffs);
	json_object_set_new(o, "results", results);
	defs = json_object();
	for (k = 0; k < DEFS_MAX; k++)
		json_object_set_new(defs, defs_kinds[k].key,
		    sdiff_out_defs_json(&rep->defs[k]));
	json_object_set_new(o, "definitions", defs);
	json_object_set(o, "notes", ex->notes);
	json_object_set_new(o, "unused_rules", ex->unused_rules != NULL ?
	    json_incref(ex->unused_rules) : json_array());
	json_object_set_new(o, "exit_status",
	    json_integer(sdiff_exit_status(rep)));
	json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(o);
}

/* A testcase's opening, its name escaped. */
static void
sdiff_out_case(FILE *f, const char *classname, const char *name)
{
	fprintf(f, "    <testcase classname=\"%s\" name=\"", classname);
	report_xml_escape(f, name);
	fprintf(f, "\">");
}

/*
 * JUnit XML: a testcase per exchange (failing when it differs), per
 * request only one side has, and per changed definition.
 */
void
sdiff_out_junit(FILE *f, const struct sdiff_report *rep)
{
	const struct replay_report *ex = &rep->ex;
	const struct rresult	*r;
	const struct defs_change *c;
	char			*name, *fields;
	size_t			 i, tests, failures;
	int			 k;

	tests = ex->n + rep->nonly_a + rep->nonly_b + rep->defs_changes +
	    sdiff_defs_one_sided(rep);
	failures = ex->count[RSTATUS_DIFFERENT] + ex->count[RSTATUS_MISSING] +
	    rep->nonly_a + rep->nonly_b + rep->defs_changes +
	    sdiff_defs_one_sided(rep);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
	    "  <testsuite name=\"mcpreel diff of session %lld and session "
	    "%lld\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
	    (long long)ex->session, (long long)rep->session_b, tests,
	    failures, ex->count[RSTATUS_IGNORED] +
	    ex->count[RSTATUS_TRUNCATED]);
	for (k = 0; k < DEFS_MAX; k++) {
		if (rep->defs[k].listed == 1 || rep->defs[k].listed == 2) {
			sdiff_out_case(f, "definitions", defs_kinds[k].plural);
			fprintf(f, "<failure message=\"listed in %s only, not "
			    "compared\"/></testcase>\n",
			    rep->defs[k].listed == 1 ? "A" : "B");
		}
		for (i = 0; i < rep->defs[k].n; i++) {
			c = &rep->defs[k].v[i];
			xasprintf(&name, "%s %s", defs_kinds[k].one, c->name);
			sdiff_out_case(f, "definitions", name);
			free(name);
			if (c->how != DEFS_CHANGED)
				fprintf(f, "<failure message=\"%s in B\"/>",
				    sdiff_out_how[c->how]);
			else {
				fields = sdiff_out_fields(c->fields);
				fprintf(f, "<failure message=\"changed: ");
				report_xml_escape(f, fields);
				fprintf(f, "\">");
				free(fields);
				report_junit_diff(f, &c->diff);
				fprintf(f, "</failure>");
			}
			fprintf(f, "</testcase>\n");
		}
	}
	for (i = 0; i < rep->nonly_a + rep->nonly_b; i++) {
		const struct sdiff_only *o = i < rep->nonly_a ?
		    &rep->only_a[i] : &rep->only_b[i - rep->nonly_a];

		xasprintf(&name, "seq %lld %s %s", (long long)o->seq,
		    o->method, o->params);
		sdiff_out_case(f, "requests", name);
		free(name);
		fprintf(f, "<failure message=\"only in %s\"/></testcase>\n",
		    i < rep->nonly_a ? "A" : "B");
	}
	for (i = 0; i < ex->n; i++) {
		r = &ex->r[i];
		xasprintf(&name, "seq %lld/%lld %s %s", (long long)r->seq,
		    (long long)r->seq_b, r->method ? r->method : "?",
		    r->params);
		sdiff_out_case(f, "exchanges", name);
		free(name);
		report_junit_verdict(f, r, "not compared", "no answer in B");
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}
