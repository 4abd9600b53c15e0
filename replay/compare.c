/*
 * One recorded exchange's answer against another answer to the same
 * request, into a report: replay compares the live server's answer,
 * diff the answer a second recording holds.  The one place that decides
 * whether two answers are the same, so both commands report alike.
 */

#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* Short params shown in reports. */
#define COMPARE_PARAMS_MAX	60

/* A short, one-line form of a request's params, for people. */
char *
compare_params(const json_t *msg)
{
	json_t	*params = json_object_get(msg, "params");
	char	*s, *out;
	size_t	 len;

	if (params == NULL)
		return xstrdup("");
	s = json_dumps(params, JSON_COMPACT | JSON_PRESERVE_ORDER |
	    JSON_ENCODE_ANY);
	if (s == NULL)
		return xstrdup("");
	len = strlen(s);
	if (len <= COMPARE_PARAMS_MAX)
		return s;
	/* Cut before a character, not inside one (UTF-8). */
	len = COMPARE_PARAMS_MAX - 3;
	while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
		len--;
	xasprintf(&out, "%.*s...", (int)len, s);
	free(s);
	return out;
}

/*
 * Fill res for recorded request req and its recorded answer ans (both in
 * a plan that must outlive res); its status is set by compare_answer().
 */
void
compare_fill(struct rresult *res, const struct rmsg *req,
    const struct rmsg *ans)
{
	memset(res, 0, sizeof *res);
	res->seq = req->seq;
	res->method = req->method;
	res->id = req->id;
	res->params = compare_params(plan_json(req));
	res->rec_latency_ns = clock_sub(ans->mono_ns, req->mono_ns);
	res->live_latency_ns = -1;
}

/* Move res (filled and compared) to the end of rep's results. */
struct rresult *
compare_append(struct replay_report *rep, struct rresult *res)
{
	rep->r = xreallocarray(rep->r, rep->n + 1, sizeof *rep->r);
	rep->r[rep->n] = *res;
	memset(res, 0, sizeof *res);
	return &rep->r[rep->n++];
}

/*
 * A new result in rep for recorded request req and its recorded answer
 * ans (both in rep's plan, which must outlive rep); its status is set by
 * compare_answer().
 */
struct rresult *
compare_add(struct replay_report *rep, const struct rmsg *req,
    const struct rmsg *ans)
{
	struct rresult	 res;

	compare_fill(&res, req, ans);
	return compare_append(rep, &res);
}

/*
 * Compare other (the answer to compare, NULL when none came;
 * other_truncated when it was recorded cut at the record cap) with the
 * recorded answer ans to req, under rules: res gets its status and
 * differences, rep its count, and rules the note of what they matched.
 */
void
compare_answer(struct replay_report *rep, struct rresult *res,
    const struct rmsg *req, const struct rmsg *ans, const json_t *other,
    int other_truncated, struct diff_rules *rules)
{
	if (req->truncated || ans->truncated || other_truncated)
		res->status = RSTATUS_TRUNCATED;
	else if (rules_skips(rules, plan_json(req)))
		res->status = RSTATUS_IGNORED;
	else if (other == NULL)
		res->status = RSTATUS_MISSING;
	else if (plan_json(ans) == NULL || diff_messages_for(plan_json(req),
	    plan_json(ans), other, rules, &res->diff) > 0)
		res->status = RSTATUS_DIFFERENT;
	else
		res->status = RSTATUS_SAME;
	if (res->status == RSTATUS_DIFFERENT || res->status == RSTATUS_SAME)
		rules_note_use(rules, plan_json(req), plan_json(ans), other);
	rep->count[res->status]++;
}
