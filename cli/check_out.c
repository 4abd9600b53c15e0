/*
 * check_out.c: the findings of mcpreel check, written for people (text),
 * tools (JSON), code-scanning views (SARIF 2.1.0) and CI (JUnit XML).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "check_session.h"
#include "protocol.h"

/* Where SARIF's schema is published (its "$schema"). */
#define OUT_SARIF_SCHEMA \
	"https://json.schemastore.org/sarif-2.1.0.json"

static int
out_item_cmp(const void *a, const void *b)
{
	const struct check_item	*x = a, *y = b;

	if (x->seq != y->seq)
		return (x->seq > y->seq) - (x->seq < y->seq);
	return (x->order > y->order) - (x->order < y->order);
}

/* Each session's findings in seq order (the order reported within one). */
void
check_out_sort(struct check_out *o)
{
	size_t	i;

	for (i = 0; i < o->nsess; i++)
		if (o->sess[i].n > 1)
			qsort(o->items + o->sess[i].first,
			    o->sess[i].n, sizeof *o->items, out_item_cmp);
}

void
check_out_free(struct check_out *o)
{
	size_t	i;

	for (i = 0; i < o->n; i++) {
		free(o->items[i].method);
		free(o->items[i].id);
		free(o->items[i].path);
		free(o->items[i].text);
		free(o->items[i].spec);
	}
	for (i = 0; i < o->nsess; i++)
		free(o->sess[i].name);
	free(o->items);
	free(o->sess);
	memset(o, 0, sizeof *o);
}

/* Drop a UTF-8 sequence that snprintf's cut left incomplete at the end
   of buf (JSON and XML take only whole characters). */
static void
out_cut(char *buf)
{
	size_t	len = strlen(buf), i = len;

	while (i > 0 && ((unsigned char)buf[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || (unsigned char)buf[i - 1] < 0xc0)
		return;
	if (scan_utf8_len((const unsigned char *)buf + i - 1,
	    (const unsigned char *)buf + len) == 0)
		buf[i - 1] = '\0';
}

/* "seq 12 c2s tools/call id 4": which message a finding is about. */
static void
out_where(char *buf, size_t size, const struct check_item *it)
{
	snprintf(buf, size, "seq %lld %s%s%s%s%s", (long long)it->seq,
	    dir_name((enum dir)it->dir), it->method != NULL ? " " : "",
	    it->method != NULL ? it->method : "", it->id != NULL ? " id " : "",
	    it->id != NULL ? it->id : "");
	out_cut(buf);
}

/* The line of counts. */
static void
out_counts(FILE *f, const struct check_out *o)
{
	int64_t	msgs = 0;
	size_t	i;

	for (i = 0; i < o->nsess; i++)
		msgs += o->sess[i].messages;
	fprintf(f, "%zu error%s, %zu warning%s, %zu note%s in %zu session%s "
	    "(%lld messages checked)\n", o->counts[PROTO_ERROR],
	    o->counts[PROTO_ERROR] == 1 ? "" : "s", o->counts[PROTO_WARNING],
	    o->counts[PROTO_WARNING] == 1 ? "" : "s", o->counts[PROTO_NOTE],
	    o->counts[PROTO_NOTE] == 1 ? "" : "s", o->nsess,
	    o->nsess == 1 ? "" : "s", (long long)msgs);
	if (o->dropped > 0)
		fprintf(f, "(%zu findings past the first %d of a session were "
		    "counted, not listed)\n", o->dropped, CHECK_OUT_MAX);
}

/*
 * The findings about message seq of session: the index of the first in
 * o->items, their number in *n (0: none).  o must be sorted.
 */
size_t
check_out_find(const struct check_out *o, int64_t session, int64_t seq,
    size_t *n)
{
	const struct check_sess	*s;
	size_t			 i, lo, hi, mid;

	*n = 0;
	for (i = 0; i < o->nsess; i++) {
		s = &o->sess[i];
		if (s->id != session)
			continue;
		lo = s->first;
		hi = s->first + s->n;
		while (lo < hi) {	/* the first item with seq >= seq */
			mid = lo + (hi - lo) / 2;
			if (o->items[mid].seq < seq)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (i = lo; i < s->first + s->n && o->items[i].seq == seq;
		    i++)
			(*n)++;
		return lo;
	}
	return 0;
}

/* The most severe of n findings from first: 'E', 'W', 'n', or ' '. */
int
check_out_mark(const struct check_out *o, size_t first, size_t n)
{
	int	sev = 3;
	size_t	i;

	for (i = first; i < first + n; i++)
		if (o->items[i].severity < sev)
			sev = o->items[i].severity;
	switch (sev) {
	case PROTO_ERROR:
		return 'E';
	case PROTO_WARNING:
		return 'W';
	case PROTO_NOTE:
		return 'n';
	}
	return ' ';
}

/* One finding's line under its message. */
void
check_out_item_text(FILE *f, const struct check_item *it)
{
	fprintf(f, "  %-7s %-28s %s \xe2\x80\x94 %s  [%s]\n",
	    proto_severity_name(it->severity), it->rule, it->text, it->path,
	    it->spec);
}

/* Text: a header per session, a line per message, its findings under it. */
void
check_out_text(FILE *f, struct check_out *o)
{
	const struct check_sess	*s;
	const struct check_item	*it;
	size_t			 i, j;
	char			*name;
	int64_t			 last;

	for (i = 0; i < o->nsess; i++) {
		s = &o->sess[i];
		name = check_clean(s->name);	/* no raw terminal escapes */
		fprintf(f, "session %lld%s%s%s: %s, %lld messages\n",
		    (long long)s->id, name != NULL ? " (" : "",
		    name != NULL ? name : "", name != NULL ? ")" : "",
		    s->version != NULL ? s->version : "no protocol version "
		    "negotiated", (long long)s->messages);
		free(name);
		last = -1;
		for (j = s->first; j < s->first + s->n; j++) {
			char	where[256];

			it = &o->items[j];
			if (it->seq != last) {
				out_where(where, sizeof where, it);
				fprintf(f, "%s\n", it->seq == 0 ? "session" :
				    where);
				last = it->seq;
			}
			check_out_item_text(f, it);
		}
		if (s->dropped > 0)
			fprintf(f, "(%zu more findings of this session were "
			    "counted, not listed)\n", s->dropped);
		if (s->n == 0)
			fprintf(f, "no findings\n");
		fprintf(f, "\n");
	}
	out_counts(f, o);
}

static json_t *
out_str(const char *s)
{
	return (s != NULL ? json_string(s) : json_null());
}

/* The id as JSON (it is JSON text), or null. */
static json_t *
out_id(const char *id)
{
	json_t	*j;

	if (id == NULL)
		return (json_null());
	if ((j = json_loads(id, JSON_DECODE_ANY, NULL)) != NULL)
		return (j);
	return (json_string(id));
}

/* One finding as a JSON object. */
json_t *
check_out_item_json(const struct check_item *it)
{
	json_t	*x = json_object();

	json_object_set_new(x, "session", json_integer(it->session));
	json_object_set_new(x, "seq", it->seq > 0 ?
	    json_integer(it->seq) : json_null());
	json_object_set_new(x, "direction",
	    json_string(dir_name((enum dir)it->dir)));
	json_object_set_new(x, "method", out_str(it->method));
	json_object_set_new(x, "id", out_id(it->id));
	json_object_set_new(x, "version", out_str(it->version));
	json_object_set_new(x, "rule", json_string(it->rule));
	json_object_set_new(x, "severity",
	    json_string(proto_severity_name(it->severity)));
	json_object_set_new(x, "message", json_string(it->text));
	json_object_set_new(x, "path", json_string(it->path));
	json_object_set_new(x, "spec", json_string(it->spec));
	return x;
}

/* JSON: one object with the sessions, the findings and the counts. */
void
check_out_json(FILE *f, struct check_out *o)
{
	json_t			*root, *sa, *fa, *x, *counts;
	size_t			 i;

	root = json_object();
	sa = json_array();
	for (i = 0; i < o->nsess; i++) {
		x = json_object();
		json_object_set_new(x, "id", json_integer(o->sess[i].id));
		json_object_set_new(x, "name", out_str(o->sess[i].name));
		json_object_set_new(x, "version", out_str(o->sess[i].version));
		json_object_set_new(x, "messages",
		    json_integer(o->sess[i].messages));
		json_object_set_new(x, "findings",
		    json_integer((json_int_t)o->sess[i].n));
		json_object_set_new(x, "unlisted",
		    json_integer((json_int_t)o->sess[i].dropped));
		json_array_append_new(sa, x);
	}
	fa = json_array();
	for (i = 0; i < o->n; i++) {
		json_array_append_new(fa, check_out_item_json(&o->items[i]));
	}
	counts = json_object();
	json_object_set_new(counts, "error",
	    json_integer((json_int_t)o->counts[PROTO_ERROR]));
	json_object_set_new(counts, "warning",
	    json_integer((json_int_t)o->counts[PROTO_WARNING]));
	json_object_set_new(counts, "note",
	    json_integer((json_int_t)o->counts[PROTO_NOTE]));
	json_object_set_new(root, "sessions", sa);
	json_object_set_new(root, "findings", fa);
	json_object_set_new(root, "counts", counts);
	json_object_set_new(root, "unlisted",
	    json_integer((json_int_t)o->dropped));
	json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(root);
}

/* SARIF 2.1.0: the rules used in the driver, a result per finding. */
void
check_out_sarif(FILE *f, struct check_out *o)
{
	json_t			*root, *run, *driver, *rules, *results, *ruleix;
	json_t			*r, *loc, *ll;
	const struct check_item	*it;
	static const char *const levels[3] = { "error", "warning", "note" };
	char			 where[256], fq[320];
	size_t			 i;

	rules = json_array();
	ruleix = json_object();
	results = json_array();
	for (i = 0; i < o->n; i++) {
		it = &o->items[i];
		if (json_object_get(ruleix, it->rule) == NULL) {
			r = json_object();
			json_object_set_new(r, "id", json_string(it->rule));
			json_object_set_new(r, "shortDescription",
			    json_pack("{s:s}", "text", it->rule));
			json_object_set_new(r, "defaultConfiguration",
			    json_pack("{s:s}", "level", levels[it->severity %
			    3]));
			json_object_set_new(ruleix, it->rule,
			    json_integer((json_int_t)json_array_size(rules)));
			json_array_append_new(rules, r);
		}
		out_where(where, sizeof where, it);
		snprintf(fq, sizeof fq, "session %lld/%s",
		    (long long)it->session, it->seq == 0 ? "end" : where);
		out_cut(fq);
		ll = json_pack("{s:s, s:s, s:s}", "name", it->seq == 0 ?
		    "end" : where, "fullyQualifiedName", fq, "kind",
		    "object");
		loc = json_pack("{s:[o]}", "logicalLocations", ll);
		r = json_object();
		json_object_set_new(r, "ruleId", json_string(it->rule));
		json_object_set(r, "ruleIndex", json_object_get(ruleix,
		    it->rule));
		json_object_set_new(r, "level",
		    json_string(levels[it->severity % 3]));
		json_object_set_new(r, "message", json_pack("{s:s}", "text",
		    it->text));
		json_object_set_new(r, "locations", json_pack("[o]", loc));
		json_object_set_new(r, "properties", json_pack("{s:I, s:o, "
		    "s:s, s:s, s:o}", "session", (json_int_t)it->session,
		    "seq", it->seq > 0 ? json_integer(it->seq) : json_null(),
		    "path", it->path, "spec", it->spec, "version",
		    out_str(it->version)));
		json_array_append_new(results, r);
	}
	driver = json_pack("{s:s, s:s, s:s, s:o}", "name", "mcpreel",
	    "version", MCPREEL_VERSION, "informationUri",
	    "https://modelcontextprotocol.io/specification", "rules", rules);
	run = json_pack("{s:{s:o}, s:o}", "tool", "driver", driver,
	    "results", results);
	root = json_pack("{s:s, s:s, s:[o]}", "$schema", OUT_SARIF_SCHEMA,
	    "version", "2.1.0", "runs", run);
	json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(root);
	json_decref(ruleix);
}

/* Write s with XML's special characters escaped, and what XML 1.0 may
   not hold (controls, U+FFFE, bytes not UTF-8) escaped by check_clean. */
static void
out_xml(FILE *f, const char *raw)
{
	char	*clean = check_clean(raw), *s;

	for (s = clean; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' ||
			    *s == '\t')
				fputc(*s, f);
		}
	}
	free(clean);
}

/*
 * JUnit: a testsuite per session, a testcase per message with findings
 * (failing when one is an error; warnings and notes in its system-out),
 * and one passing testcase for a session without findings.
 */
void
check_out_junit(FILE *f, struct check_out *o)
{
	const struct check_sess	*s;
	const struct check_item	*it;
	char			 where[256];
	size_t			 i, j, k, cases, fails;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites name=\"mcpreel check\">\n");
	for (i = 0; i < o->nsess; i++) {
		s = &o->sess[i];
		cases = fails = 0;
		for (j = s->first; j < s->first + s->n; j = k) {
			int err = 0;

			for (k = j; k < s->first + s->n &&
			    o->items[k].seq == o->items[j].seq; k++)
				err |= o->items[k].severity == PROTO_ERROR;
			cases++;
			fails += err;
		}
		fprintf(f, "  <testsuite name=\"session %lld", (long long)s->id);
		if (s->name != NULL) {
			fputs(" (", f);
			out_xml(f, s->name);
			fputs(")", f);
		}
		fprintf(f, "\" tests=\"%zu\" failures=\"%zu\">\n",
		    cases == 0 ? 1 : cases, fails);
		if (cases == 0)
			fprintf(f, "    <testcase classname=\"mcpreel.check."
			    "session-%lld\" name=\"no findings\"/>\n",
			    (long long)s->id);
		for (j = s->first; j < s->first + s->n; j = k) {
			int err = 0;

			for (k = j; k < s->first + s->n &&
			    o->items[k].seq == o->items[j].seq; k++)
				err |= o->items[k].severity == PROTO_ERROR;
			it = &o->items[j];
			out_where(where, sizeof where, it);
			fprintf(f, "    <testcase classname=\"mcpreel.check."
			    "session-%lld\" name=\"", (long long)s->id);
			out_xml(f, it->seq == 0 ? "session" : where);
			fputs("\">\n", f);
			if (err) {
				fputs("      <failure message=\"", f);
				for (k = j; k < s->first + s->n &&
				    o->items[k].seq == it->seq; k++)
					if (o->items[k].severity ==
					    PROTO_ERROR) {
						out_xml(f, o->items[k].rule);
						break;
					}
				fputs("\">", f);
			} else
				fputs("      <system-out>", f);
			for (k = j; k < s->first + s->n &&
			    o->items[k].seq == it->seq; k++) {
				fprintf(f, "%s %s: ", proto_severity_name(
				    o->items[k].severity), o->items[k].rule);
				out_xml(f, o->items[k].text);
				fputs(" (", f);
				out_xml(f, o->items[k].path);
				fputs(") [", f);
				out_xml(f, o->items[k].spec);
				fputs("]\n", f);
			}
			fputs(err ? "</failure>\n" : "</system-out>\n", f);
			fputs("    </testcase>\n", f);
		}
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
}
