/* check_util.c: the table runner of the check/ unit tests. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "check_util.h"

struct collected {
	char	*rules[256];
	size_t	 n;
	char	*texts;		/* every finding, for a failing assert */
};

static void
collect_cb(const struct check_finding *cf, void *arg)
{
	struct collected	*c = arg;
	char			*t;
	size_t			 i;

	if (xasprintf(&t, "%s  seq %lld %s: %s (%s)\n", c->texts != NULL ?
	    c->texts : "", (long long)cf->seq, cf->f->rule, cf->f->text,
	    cf->f->path) == -1)
		return;
	free(c->texts);
	c->texts = t;
	for (i = 0; i < c->n; i++)
		if (strcmp(c->rules[i], cf->f->rule) == 0)
			return;
	if (c->n < 256)
		c->rules[c->n++] = xstrdup(cf->f->rule);
}

void
check_feed(struct check *chk, int64_t seq, char dir, const char *json)
{
	check_feed_http(chk, seq, dir, json, NULL);
}

void
check_feed_http(struct check *chk, int64_t seq, char dir, const char *json,
    const struct check_http *h)
{
	struct check_msg	m;

	if ((json[0] == 'C' || json[0] == 'S') && json[1] == ':')
		json += 2;
	memset(&m, 0, sizeof m);
	m.seq = seq;
	m.dir = dir == 'C' ? DIR_C2S : DIR_S2C;
	m.raw = json;
	m.len = strlen(json);
	m.http = h;
	check_message(chk, &m);
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *
check_run_rules(const struct check_case *cc, char **texts)
{
	struct collected	 col;
	struct check		*chk;
	const struct tmsg	*t;
	char			*out, *o;
	size_t			 i, len = 1;

	memset(&col, 0, sizeof col);
	chk = check_new(collect_cb, &col);
	for (i = 0; i < 16 && cc->msgs[i].text != NULL; i++) {
		t = &cc->msgs[i];
		check_feed_http(chk, (int64_t)i + 1, t->text[0], t->text,
		    t->http);
	}
	if (cc->end)
		check_end(chk, CHECK_END_CLEAN);
	check_free(chk);
	qsort(col.rules, col.n, sizeof *col.rules, str_cmp);
	for (i = 0; i < col.n; i++)
		len += strlen(col.rules[i]) + 1;
	out = o = xcalloc(1, len);
	for (i = 0; i < col.n; i++) {
		o += sprintf(o, "%s%s", i == 0 ? "" : ",", col.rules[i]);
		free(col.rules[i]);
	}
	*texts = col.texts != NULL ? col.texts : xstrdup("");
	return out;
}

void
check_run_table(const struct check_case *cases, size_t n)
{
	char	*got, *texts;
	size_t	 i;

	for (i = 0; i < n; i++) {
		got = check_run_rules(&cases[i], &texts);
		cr_expect_str_eq(got, cases[i].expect, "%s: got [%s], want "
		    "[%s]; findings:\n%s", cases[i].name, got,
		    cases[i].expect, texts);
		free(got);
		free(texts);
	}
}
