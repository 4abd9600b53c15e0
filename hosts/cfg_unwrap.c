/*
 * The edits of unwrap: an entry still as wrap left it gets the ledger's
 * text back byte for byte; any other wrapped entry the inverse computed
 * from its arguments.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

/* The key of an entry in the ledger's index: container, '\x1e', name. */
static char *
hcfg_ledger_key(const char *container, const char *name, size_t *len)
{
	char	*k;

	*len = (size_t)xasprintf(&k, "%s\x1e%s", container, name);
	return k;
}

/* An index of the ledger's changes (the last of each entry wins). */
static struct idmap *
hcfg_ledger_index(const struct hcfg_changes *ledger)
{
	struct idmap	*m = idmap_new();
	char		*k;
	size_t		 i, n;

	for (i = 0; ledger != NULL && i < ledger->n; i++) {
		k = hcfg_ledger_key(ledger->v[i].container, ledger->v[i].name,
		    &n);
		idmap_put(m, k, n, (int64_t)i, NULL);
		free(k);
	}
	return m;
}

/* The ledger's change for an entry, or NULL. */
static const struct hcfg_change *
hcfg_ledger(const struct hcfg_changes *ledger, struct idmap *index,
    const struct hent *h)
{
	char	*k;
	size_t	 n;
	int64_t	 at;
	int	 found;

	if (ledger == NULL)
		return NULL;
	k = hcfg_ledger_key(h->container, h->name, &n);
	found = idmap_get(index, k, n, &at) == 0;
	free(k);
	return found ? &ledger->v[at] : NULL;
}

/* The inverse edits of a wrapped stdio entry, computed from its args. */
static void
hcfg_unwrap_stdio(const char *buf, size_t len, const struct hent *h,
    size_t i, long dash, struct hedits *ed)
{
	struct hbuf	 b = { 0 };
	const struct hel *c = &h->el[dash + 1];
	size_t		 j, n;
	char		*want;

	hcfg_edit_raw(ed, i, h->cmd.vs, h->cmd.ve - h->cmd.vs, buf, c->s,
	    c->e);
	if ((size_t)dash + 2 < h->nel) {
		hcfg_edit(ed, i, h->el[0].s, h->el[dash + 2].s - h->el[0].s,
		    xstrdup(""), 0);
		return;
	}
	/* args exactly as wrap inserts them where there were none? */
	if (h->ins_pre != NULL && h->args.present) {
		hbuf_adds(&b, h->ins_pre);
		hbuf_addc(&b, '[');
		for (j = 0; j < h->nel; j++) {
			if (j > 0)
				hbuf_adds(&b, ", ");
			hbuf_add(&b, buf + h->el[j].s, h->el[j].e -
			    h->el[j].s);
		}
		hbuf_addc(&b, ']');
		hbuf_adds(&b, h->ins_post);
		want = hbuf_take(&b, &n);
		if (h->ins_at + n <= len && memcmp(buf + h->ins_at, want, n) ==
		    0) {
			free(want);
			hcfg_edit(ed, i, h->ins_at, n, xstrdup(""), 0);
			return;
		}
		free(want);
	}
	if (h->ins2_pre != NULL && h->args.present) {
		hbuf_adds(&b, h->ins2_pre);
		hbuf_addc(&b, '[');
		for (j = 0; j < h->nel; j++) {
			if (j > 0)
				hbuf_adds(&b, ", ");
			hbuf_add(&b, buf + h->el[j].s, h->el[j].e -
			    h->el[j].s);
		}
		hbuf_addc(&b, ']');
		want = hbuf_take(&b, &n);
		if (h->ins2_at + n == len && memcmp(buf + h->ins2_at, want,
		    n) == 0) {
			free(want);
			hcfg_edit(ed, i, h->ins2_at, n, xstrdup(""), 0);
			return;
		}
		free(want);
	}
	hcfg_edit(ed, i, h->el[0].s, c->e - h->el[0].s, xstrdup(""), 0);
}

/*
 * Appends the headers object made from MCPREEL_HEADERS's raw text
 * [s, e): "Name: value" lines joined by "\n" escapes, each a member
 * "Name": "value" (raw texts kept).
 */
static void
hcfg_env_headers(struct hbuf *b, const char *buf, size_t s, size_t e)
{
	size_t	 ls = s, i, k;
	int	 first = 1;
	const char *sp;

	hbuf_addc(b, '{');
	for (i = s; i <= e; i++) {
		if (i < e && buf[i] == '\\' && i + 1 < e && buf[i + 1] != 'n') {
			i++;	/* an escape other than \n: skip it whole */
			continue;
		}
		if (i < e && !(buf[i] == '\\' && i + 1 < e))
			continue;
		/* a line [ls, i) ends here */
		if (!first)
			hbuf_adds(b, ", ");
		first = 0;
		hbuf_addc(b, '"');
		sp = memmem(buf + ls, i - ls, ": ", 2);
		k = sp != NULL ? (size_t)(sp - buf) : i;
		hbuf_add(b, buf + ls, k - ls);
		hbuf_adds(b, "\": \"");
		if (sp != NULL)
			hbuf_add(b, sp + 2, i - (k + 2));
		hbuf_addc(b, '"');
		ls = i + 2;
		i++;
	}
	hbuf_addc(b, '}');
}

/*
 * The inverse edits of a bridged entry (JSON): command + args -> url,
 * and the headers back from env's MCPREEL_HEADERS (env gone when that
 * was all it held: the shape wrap makes) or from --header arguments.
 */
static void
hcfg_unwrap_remote(const char *buf, const struct hcfg_layout *layout,
    const struct hent *h, size_t i, const struct hwrapped *w,
    struct hedits *ed)
{
	struct hbuf	 b = { 0 };
	const struct hel *u = &h->el[w->connect + 1], *x;
	const char	*sp, *key;
	size_t		 j;
	int		 envh;

	key = hcfg_url_key_for(layout, w->transport >= 0 ?
	    h->el[w->transport].str : NULL);
	if (!h->can_bridge || key == NULL)
		return;
	envh = h->env.is_obj && h->envh.present && h->envh.is_str;
	if (h->type.present && w->transport >= 0 &&
	    h->el[w->transport].str != NULL) {
		hcfg_quote(&b, h->el[w->transport].str);
		hcfg_edit_buf(ed, i, h->type.vs, h->type.ve - h->type.vs, &b);
	}
	hcfg_quote(&b, key);
	hbuf_adds(&b, h->colon_cmd);
	hbuf_add(&b, buf + u->s, u->e - u->s);
	if (envh && h->env_n > 1) {
		hbuf_addc(&b, ',');
		hbuf_adds(&b, h->msep_cmd);
		hcfg_quote(&b, "headers");
		hbuf_adds(&b, h->colon_cmd);
		hcfg_env_headers(&b, buf, h->envh.vs + 1, h->envh.ve - 1);
	} else if (!envh && w->nhdr > 0) {
		hbuf_addc(&b, ',');
		hbuf_adds(&b, h->msep_cmd);
		hcfg_quote(&b, "headers");
		hbuf_adds(&b, h->colon_cmd);
		hbuf_addc(&b, '{');
		for (j = 0; j < w->nhdr; j++) {
			x = &h->el[w->hdr[j]];
			if (j > 0)
				hbuf_adds(&b, ", ");
			sp = x->str == NULL ? NULL : memmem(buf + x->s + 1,
			    x->e - x->s - 2, ": ", 2);
			if (sp == NULL) {
				hbuf_add(&b, buf + x->s, x->e - x->s);
				hbuf_adds(&b, ": \"\"");
				continue;
			}
			hbuf_add(&b, buf + x->s, (size_t)(sp - buf) - x->s);
			hbuf_adds(&b, "\": \"");
			hbuf_add(&b, sp + 2, x->e - (size_t)(sp + 2 - buf));
		}
		hbuf_addc(&b, '}');
	}
	hcfg_edit_buf(ed, i, h->cmd.ks, h->cmd.ve - h->cmd.ks, &b);
	hcfg_edit_rm(ed, i, &h->args);
	if (envh && h->env_n > 1)
		hcfg_edit_rm(ed, i, &h->envh);
	else if (envh) {
		/* env held only the headers: headers in its place */
		hcfg_quote(&b, "headers");
		hbuf_adds(&b, h->colon_env);
		hcfg_env_headers(&b, buf, h->envh.vs + 1, h->envh.ve - 1);
		hcfg_edit_buf(ed, i, h->env.ks, h->env.ve - h->env.ks, &b);
	}
}

/* Puts the chosen wrapped entries back (see hosts.h). */
int
hcfg_unwrap(const char *buf, size_t len, const struct hcfg_layout *layout,
    const char *const *names, const struct hcfg_changes *ledger, char **out,
    size_t *outlen, struct hcfg_changes *ch, char **cause)
{
	struct hdoc		 doc;
	struct hedits		 ed = { 0 };
	struct hwrapped		 w;
	struct hent		*h;
	const struct hcfg_change *lc;
	struct idmap		*index;
	size_t			 i;

	*out = NULL;
	*outlen = 0;
	memset(ch, 0, sizeof *ch);
	if (hcfg_parse(buf, len, layout, &doc, cause) == -1)
		return -1;
	index = hcfg_ledger_index(ledger);
	for (i = 0; i < doc.n; i++) {
		h = &doc.v[i];
		if (!hcfg_chosen(names, h->name) || !h->is_table ||
		    !h->cmd.is_str || !hcfg_wrapped(h, &w))
			continue;
		lc = hcfg_ledger(ledger, index, h);
		if (lc != NULL && strlen(lc->after) == h->e - h->s &&
		    memcmp(lc->after, buf + h->s, h->e - h->s) == 0)
			hcfg_edit(&ed, i, h->s, h->e - h->s,
			    xstrdup(lc->before), strlen(lc->before));
		else if (w.dash >= 0)
			hcfg_unwrap_stdio(buf, len, h, i, w.dash, &ed);
		else if (w.connect >= 0)
			hcfg_unwrap_remote(buf, layout, h, i, &w, &ed);
		free(w.hdr);
	}
	idmap_free(index);
	hcfg_finish(buf, len, &doc, &ed, out, outlen, ch);
	hcfg_edits_clear(&ed);
	hdoc_clear(&doc);
	return 0;
}
