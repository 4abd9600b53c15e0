/*
 * Values redacted when recorded, as replay and mock see them
 * (replay/redacted.c): which live values fit a recorded "[REDACTED]" or a
 * string with [REDACTED] in it, where a message holds them, the diff that
 * does not compare them, and the mock's matcher that takes them as
 * wildcards.  JSON in the cases is written with ' for ".
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "replay.h"
#include "unit.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

/* JSON text written with ' for ", parsed; the test fails if it is not. */
static json_t *
rj(const char *text)
{
	json_error_t	 err;
	json_t		*v;
	char		*s = xstrdup(text), *p;

	for (p = s; *p != '\0'; p++) {
		if (*p == '\'')
			*p = '"';
	}
	v = json_loads(s, JSON_DECODE_ANY, &err);
	cr_assert_not_null(v, "bad test JSON %s: %s", s, err.text);
	free(s);
	return v;
}

struct fit_case {
	const char	*rec;		/* a recorded value */
	const char	*live;		/* a live one, or NULL: absent */
	int		 fits;
};

static const struct fit_case fit_cases[] = {
	/* Redacted whole: any value of any type, but not an absent one. */
	{ "'[REDACTED]'", "'hunter2'", 1 },
	{ "'[REDACTED]'", "12", 1 },
	{ "'[REDACTED]'", "{'a':[1]}", 1 },
	{ "'[REDACTED]'", "null", 1 },
	{ "'[REDACTED]'", "''", 1 },
	{ "'[REDACTED]'", NULL, 0 },
	/* Part of a string: the same text around, 1+ characters a gap. */
	{ "'key [REDACTED] end'", "'key sk-abc end'", 1 },
	{ "'key [REDACTED] end'", "'key  end'", 0 },
	{ "'key [REDACTED] end'", "'key x end!'", 0 },
	{ "'key [REDACTED] end'", "'Key x end'", 0 },
	{ "'key [REDACTED] end'", "3", 0 },
	{ "'[REDACTED] and [REDACTED]'", "'a and b'", 1 },
	{ "'[REDACTED] and [REDACTED]'", "'a and b and c'", 1 },
	{ "'[REDACTED] and [REDACTED]'", "' and b'", 0 },
	{ "'[REDACTED] and [REDACTED]'", "'a and '", 0 },
	{ "'x[REDACTED][REDACTED]y'", "'xaby'", 1 },
	{ "'x[REDACTED][REDACTED]y'", "'xay'", 0 },
	{ "'Bearer [REDACTED]'", "'Bearer abc'", 1 },
	{ "'Bearer [REDACTED]'", "'Bearer '", 0 },
	{ "'postgres://u:[REDACTED]@h/db'", "'postgres://u:pw@h/db'", 1 },
	{ "'postgres://u:[REDACTED]@h/db'", "'postgres://u:pw@h/other'", 0 },
	/* Not redacted: nothing fits by this rule. */
	{ "'plain'", "'plain'", 0 },
	{ "{'a':'[REDACTED]'}", "{'a':1}", 0 },
};

Test(redacted, what_fits, .timeout = UNIT_TIMEOUT)
{
	json_t	*rec, *live;
	size_t	 i;

	for (i = 0; i < nitems(fit_cases); i++) {
		rec = rj(fit_cases[i].rec);
		live = fit_cases[i].live != NULL ? rj(fit_cases[i].live) :
		    NULL;
		cr_expect_eq(redacted_matches(rec, live), fit_cases[i].fits,
		    "%s against %s: want %d", fit_cases[i].rec,
		    fit_cases[i].live != NULL ? fit_cases[i].live : "(absent)",
		    fit_cases[i].fits);
		json_decref(rec);
		json_decref(live);
	}
}

Test(redacted, where, .timeout = UNIT_TIMEOUT)
{
	json_t	*v;
	char	*w;

	v = rj("{'params':{'arguments':{'password':'[REDACTED]','n':1,"
	    "'list':['a','key [REDACTED]'],'[REDACTED]':2}}}");
	cr_assert(redacted_in(v));
	w = redacted_where(v, 8);
	cr_assert_str_eq(w, "$.params.arguments.password, "
	    "$.params.arguments.list[1], $.params.arguments['[REDACTED]']");
	free(w);
	w = redacted_where(v, 1);
	cr_assert_str_eq(w, "$.params.arguments.password and 2 more");
	free(w);
	json_decref(v);

	v = rj("{'a':['REDACTED',{'b':'[redacted]'}]}");
	cr_assert(!redacted_in(v));
	cr_assert_null(redacted_where(v, 8));
	json_decref(v);
	cr_assert(!redacted_in(NULL));
	cr_assert_null(redacted_where(NULL, 8));
}

/* A live message filled in where the recording was redacted. */
Test(redacted, fill, .timeout = UNIT_TIMEOUT)
{
	json_t	*rec, *live, *f, *want;

	rec = rj("{'a':{'password':'[REDACTED]','note':'k [REDACTED]'},"
	    "'l':['[REDACTED]',2],'x':1}");
	live = rj("{'a':{'password':{'any':1},'note':'k sk-1','extra':3},"
	    "'l':[true,2,3],'x':2}");
	want = rj("{'a':{'password':'[REDACTED]','note':'k [REDACTED]',"
	    "'extra':3},'l':['[REDACTED]',2,3],'x':2}");
	f = redacted_fill(rec, live);
	cr_assert(json_equal(f, want));
	json_decref(f);
	json_decref(want);
	/* A part that does not fit stays live (and so differs). */
	json_decref(live);
	live = rj("{'a':{'note':'x sk-1'}}");
	f = redacted_fill(rec, live);
	cr_assert(json_equal(f, live));
	json_decref(f);
	json_decref(live);
	json_decref(rec);
}

/*
 * The diff: a place that fits the recorded redaction is listed apart and
 * is no difference; one that does not fit is a difference marked so.
 */
Test(redacted, diff, .timeout = UNIT_TIMEOUT)
{
	json_t		*rec, *live;
	struct diff	 d;
	size_t		 n;

	memset(&d, 0, sizeof d);
	rec = rj("{'jsonrpc':'2.0','id':1,'result':{'access_token':"
	    "'[REDACTED]','text':'key [REDACTED] ok','n':1}}");
	live = rj("{'jsonrpc':'2.0','id':1,'result':{'access_token':'abc',"
	    "'text':'key sk-zzz ok','n':1}}");
	n = diff_messages(rec, live, NULL, &d);
	cr_assert_eq(n, 0);
	cr_assert_eq(d.nredacted, 2);
	cr_assert_str_eq(d.redacted[0], "$.result.access_token");
	cr_assert_str_eq(d.redacted[1], "$.result.text");
	diff_clear(&d);
	json_decref(live);

	live = rj("{'jsonrpc':'2.0','id':1,'result':{'text':'other',"
	    "'n':2}}");
	n = diff_messages(rec, live, NULL, &d);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(d.v[0].path, "$.result.access_token");
	cr_assert(d.v[0].redacted);
	cr_assert_null(d.v[0].replayed);
	cr_assert_str_eq(d.v[1].path, "$.result.text");
	cr_assert(d.v[1].redacted);
	cr_assert_str_eq(d.v[2].path, "$.result.n");
	cr_assert(!d.v[2].redacted);
	cr_assert_eq(d.nredacted, 0);
	diff_clear(&d);
	json_decref(live);
	json_decref(rec);
}

/* A recorded message, for plans. */
struct rec {
	enum dir	 dir;
	const char	*text;
};

static void
plan_of(struct plan *p, const struct rec *recs, size_t n)
{
	json_t	*v;
	char	*s;
	size_t	 i;

	memset(p, 0, sizeof *p);
	for (i = 0; i < n; i++) {
		v = rj(recs[i].text);
		s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		plan_add(p, (int64_t)i + 1, recs[i].dir, (int64_t)i * 1000,
		    s, strlen(s));
		free(s);
		json_decref(v);
	}
	plan_build(p);
}

/*
 * The mock: a live login whose password was redacted when recorded
 * matches by wildcard; an exact recording is preferred; a request that
 * differs elsewhere does not match; strict order works the same.
 */
Test(redacted, mock_wildcards, .timeout = UNIT_TIMEOUT)
{
	static const struct rec recs[] = {
		{ DIR_C2S, "{'jsonrpc':'2.0','id':1,'method':'tools/call',"
		  "'params':{'name':'login','arguments':{'user':'bob',"
		  "'password':'[REDACTED]'}}}" },
		{ DIR_S2C, "{'jsonrpc':'2.0','id':1,'result':{'content':[]},"
		  "'_n':1}" },
		{ DIR_C2S, "{'jsonrpc':'2.0','id':2,'method':'tools/call',"
		  "'params':{'name':'login','arguments':{'user':'amy',"
		  "'password':'pw'}}}" },
		{ DIR_S2C, "{'jsonrpc':'2.0','id':2,'result':{'content':[]},"
		  "'_n':2}" },
	};
	struct plan		 p;
	struct matcher		 m;
	const struct mentry	*e;
	json_t			*q;
	int			 strict;

	plan_of(&p, recs, nitems(recs));
	for (strict = 0; strict <= 1; strict++) {
		matcher_build(&m, &p, strict, NULL);
		cr_assert(m.e[0].redacted);
		cr_assert(!m.e[1].redacted);
		q = rj("{'jsonrpc':'2.0','id':'a','method':'tools/call',"
		    "'params':{'name':'login','arguments':{'password':"
		    "'hunter2','user':'bob'}}}");
		e = matcher_find(&m, q);
		cr_assert_not_null(e, "strict %d", strict);
		cr_assert_eq(e->req, 0);
		json_decref(q);
		q = rj("{'jsonrpc':'2.0','id':'b','method':'tools/call',"
		    "'params':{'name':'login','arguments':{'password':"
		    "'pw','user':'amy'}}}");
		e = matcher_find(&m, q);
		cr_assert_not_null(e);
		cr_assert_eq(e->req, 2);
		json_decref(q);
		if (!strict) {
			/* Someone else: no wildcard for user. */
			q = rj("{'jsonrpc':'2.0','id':'c','method':"
			    "'tools/call','params':{'name':'login',"
			    "'arguments':{'password':'x','user':'eve'}}}");
			cr_assert_null(matcher_find(&m, q));
			json_decref(q);
			/* No password at all: no match either. */
			q = rj("{'jsonrpc':'2.0','id':'d','method':"
			    "'tools/call','params':{'name':'login',"
			    "'arguments':{'user':'bob'}}}");
			cr_assert_null(matcher_find(&m, q));
			json_decref(q);
		}
		matcher_clear(&m);
	}
	plan_clear(&p);
}
