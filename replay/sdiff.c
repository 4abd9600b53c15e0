/*
 * Two recorded sessions compared exchange by exchange, with no server:
 * the same client script against two versions of a server, or
 * yesterday's run against today's (mcpreel diff A B).
 *
 * B's requests are aligned with A's by the matcher mock uses (method and
 * canonical params, _meta aside, repeats in order): built from A's
 * recording, asked for each of B's requests in B's order.  A request A
 * made fewer times than B is only in B from its extra times on (where
 * mock would answer the last again).  The answers of each aligned pair
 * are compared by compare.c, as replay compares a live answer, under the
 * same rules.  The answers to the list methods (tools/list and the like)
 * are compared as definitions instead (defs.c): which tools were added,
 * removed or changed says more than a diff of two list pages.
 *
 * An exchange is a request with its answer: a request B did not answer
 * and A has not either is left out, one A answered and B did not is
 * counted missing.  B's answered requests are paired before those it
 * did not answer, so a request B's client gave up and sent again is
 * paired with its answered time.  The opaque values a server issues
 * (cursors, task ids) are learnt from each pair's answers and B's put as
 * A's in B's later requests before they are paired, as replay does.
 * Paired answers are compared as recorded (a differing cursor in them
 * is left to the default ignores and the rules).
 */

#include <stdlib.h>
#include <string.h>

#include "replay.h"

const struct report_sides sdiff_sides = { "a", "b" };

/* Whether method is a list method whose answers are compared as defs. */
static int
sdiff_is_list(const char *method)
{
	int	k;

	for (k = 0; k < DEFS_MAX && method != NULL; k++) {
		if (strcmp(method, defs_kinds[k].method) == 0)
			return 1;
	}
	return 0;
}

/* Add a request that only one side has. */
static void
sdiff_only_add(struct sdiff_only **v, size_t *n, const struct rmsg *m)
{
	*v = xreallocarray(*v, *n + 1, sizeof **v);
	(*v)[*n].seq = m->seq;
	(*v)[*n].method = m->method;
	(*v)[*n].params = compare_params(plan_json(m));
	(*n)++;
}

/*
 * The entry of A that B's request bq pairs with, its opaque values (a
 * cursor, a task id B's server issued) put as A's where remap has
 * learnt them.
 */
static const struct mentry *
sdiff_find(struct matcher *m, const json_t *remap, const struct rmsg *bq)
{
	const struct mentry	*e;
	json_t			*copy;

	if (json_object_size(remap) == 0)
		return matcher_find(m, plan_json(bq));
	copy = json_deep_copy(plan_json(bq));
	remap_apply(remap, copy);
	e = matcher_find(m, copy);
	json_decref(copy);
	return e;
}

/* The definitions of each kind, compared. */
static void
sdiff_defs(const struct plan *a, const struct plan *b,
    struct diff_rules *rules, struct sdiff_report *rep)
{
	struct defs_diff	*dd;
	json_t			*da, *db, *req;
	int			 k;

	for (k = 0; k < DEFS_MAX; k++) {
		dd = &rep->defs[k];
		da = defs_collect(a, k);
		db = defs_collect(b, k);
		dd->listed = (da != NULL ? 1 : 0) | (db != NULL ? 2 : 0);
		req = json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 1,
		    "method", defs_kinds[k].method);
		if (dd->listed == 3 && rules_skips(rules, req))
			dd->ignored = 1;
		else if (dd->listed == 3) {
			defs_compare(k, da, db, rules, dd);
			rep->defs_changes += dd->n;
		}
		json_decref(req);
		json_decref(da);
		json_decref(db);
	}
}

/*
 * Compare recording b with recording a (both plans built) under rules,
 * which the comparison takes over (they are left empty), into rep.
 */
void
sdiff_run(const struct plan *a, const struct plan *b,
    struct diff_rules *rules, struct sdiff_report *rep)
{
	struct matcher		 m;
	const struct mentry	*e;
	const struct rmsg	*rq, *ra, *bq, *ba;
	struct rresult		*res;
	ssize_t			*pair;
	json_t			*remap = json_object();
	size_t			 i, k;
	int			 pass;

	rep->ex.notes = json_array();
	matcher_build(&m, a, 0, rules);
	rep->requests_a = m.n;
	pair = xreallocarray(NULL, m.n + 1, sizeof *pair);
	for (k = 0; k < m.n; k++)
		pair[k] = -1;
	/*
	 * The answered requests of B first, then those B did not answer:
	 * a request B's client gave up on and sent again takes A's entry
	 * with its answered time, not the one it gave up.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < b->n; i++) {
			bq = &b->m[i];
			if (bq->dir != DIR_C2S || bq->kind != KIND_REQUEST ||
			    plan_json(bq) == NULL || bq->method == NULL ||
			    (bq->answer >= 0) != (pass == 0))
				continue;
			if (bq->answer >= 0)
				rep->requests_b++;
			e = sdiff_find(&m, remap, bq);
			if (e != NULL && pair[e - m.e] < 0) {
				pair[e - m.e] = (ssize_t)i;
				/* B's cursors and task ids as A's from here. */
				if (bq->answer >= 0)
					remap_learn(remap, plan_json(&b->m[bq->answer]),
					    plan_json(&a->m[e->resp]));
			} else if (bq->answer >= 0)
				sdiff_only_add(&rep->only_b, &rep->nonly_b,
				    bq);
		}
	}
	for (k = 0; k < m.n; k++) {
		rq = &a->m[m.e[k].req];
		ra = &a->m[m.e[k].resp];
		if (pair[k] < 0) {
			sdiff_only_add(&rep->only_a, &rep->nonly_a, rq);
			continue;
		}
		bq = &b->m[pair[k]];
		ba = bq->answer >= 0 ? &b->m[bq->answer] : NULL;
		/*
		 * A list answer both sides have whole is compared as
		 * definitions; one B did not give, or either side recorded
		 * cut or not as JSON, is reported as an exchange (missing,
		 * truncated, different).
		 */
		if (sdiff_is_list(rq->method) && ba != NULL &&
		    plan_json(ba) != NULL && !ba->truncated && plan_json(ra) != NULL &&
		    !ra->truncated && !rq->truncated) {
			rep->lists++;
			continue;
		}
		res = compare_add(&rep->ex, rq, ra);
		res->seq_b = bq->seq;
		if (ba != NULL)
			res->live_latency_ns = clock_sub(ba->mono_ns,
			    bq->mono_ns);
		compare_answer(&rep->ex, res, rq, ra, ba != NULL ? plan_json(ba) :
		    NULL, ba != NULL && ba->truncated, &m.rules);
	}
	sdiff_defs(a, b, &m.rules, rep);
	rep->ex.unused_rules = rules_unused(&m.rules);
	free(pair);
	json_decref(remap);
	matcher_clear(&m);
}

/* How many kinds of definition one side listed and the other did not. */
size_t
sdiff_defs_one_sided(const struct sdiff_report *rep)
{
	size_t	n = 0;
	int	k;

	for (k = 0; k < DEFS_MAX; k++) {
		if (rep->defs[k].listed == 1 || rep->defs[k].listed == 2)
			n++;
	}
	return n;
}

/* 0 the same, 1 any difference (an exchange, a request, a definition). */
int
sdiff_exit_status(const struct sdiff_report *rep)
{
	if (rep->ex.count[RSTATUS_DIFFERENT] != 0 ||
	    rep->ex.count[RSTATUS_MISSING] != 0 || rep->nonly_a != 0 ||
	    rep->nonly_b != 0 || rep->defs_changes != 0 ||
	    sdiff_defs_one_sided(rep) != 0)
		return 1;
	return 0;
}

/* Free what a report holds (not the plans it points into). */
void
sdiff_clear(struct sdiff_report *rep)
{
	size_t	i;

	replay_report_clear(&rep->ex);
	free(rep->session_name_b);
	for (i = 0; i < rep->nonly_a; i++)
		free(rep->only_a[i].params);
	for (i = 0; i < rep->nonly_b; i++)
		free(rep->only_b[i].params);
	free(rep->only_a);
	free(rep->only_b);
	for (i = 0; i < DEFS_MAX; i++)
		defs_clear(&rep->defs[i]);
	memset(rep, 0, sizeof *rep);
}
