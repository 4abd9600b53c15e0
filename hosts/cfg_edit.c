/*
 * The edits of wrap: each a replacement of [offset, offset + length) of
 * the file's bytes, sorted and applied in one pass (cfg.c reads, and
 * cfg_unwrap.c builds the inverse edits).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

/* Adds an edit (text taken) of entry ent. */
void
hcfg_edit(struct hedits *ed, size_t ent, size_t off, size_t len, char *text,
    size_t tlen)
{
	struct hedit	*x;

	ed->v = hcfg_grow(ed->v, ed->n, sizeof *ed->v);
	x = &ed->v[ed->n];
	x->off = off;
	x->len = len;
	x->text = text;
	x->tlen = tlen;
	x->seq = ed->n;
	x->ent = ent;
	ed->n++;
}

/* Adds an edit whose text is a copy of [s, e) of buf. */
void
hcfg_edit_raw(struct hedits *ed, size_t ent, size_t off, size_t len,
    const char *buf, size_t s, size_t e)
{
	hcfg_edit(ed, ent, off, len, xstrndup(buf + s, e - s), e - s);
}

/* Adds an edit whose text is the hbuf's (taken). */
void
hcfg_edit_buf(struct hedits *ed, size_t ent, size_t off, size_t len,
    struct hbuf *b)
{
	size_t	 n;
	char	*t = hbuf_take(b, &n);

	hcfg_edit(ed, ent, off, len, t, n);
}

/* Adds the edits that delete member m (JSON) of entry ent. */
void
hcfg_edit_rm(struct hedits *ed, size_t ent, const struct hmem *m)
{
	hcfg_edit(ed, ent, m->rm_s, m->rm_e - m->rm_s, xstrdup(""), 0);
	if (m->rm2_e > m->rm2_s)
		hcfg_edit(ed, ent, m->rm2_s, m->rm2_e - m->rm2_s, xstrdup(""),
		    0);
}

/* Orders edits by offset, then by when they were made (qsort). */
static int
hcfg_editcmp(const void *a, const void *b)
{
	const struct hedit	*x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;	/* insertions first */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Frees the edits. */
void
hcfg_edits_clear(struct hedits *ed)
{
	size_t	i;

	for (i = 0; i < ed->n; i++)
		free(ed->v[i].text);
	free(ed->v);
	memset(ed, 0, sizeof *ed);
}

/*
 * Applies the sorted edits of entry ent (SIZE_MAX: all) that fall in
 * [s, e] to that part of buf: the new text, its length in *olen.
 */
static char *
hcfg_apply(const char *buf, size_t s, size_t e, const struct hedits *ed,
    size_t ent, size_t *olen)
{
	struct hbuf	 b = { 0 };
	size_t		 at = s, i, lo = 0, hi = ed->n, mid;

	/* the first edit at or after s (they are sorted) */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ed->v[mid].off < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < ed->n && ed->v[i].off <= e; i++) {
		const struct hedit	*x = &ed->v[i];

		if (x->off + x->len > e || (ent != SIZE_MAX && x->ent != ent))
			continue;
		hbuf_add(&b, buf + at, x->off - at);
		hbuf_add(&b, x->text, x->tlen);
		at = x->off + x->len;
	}
	hbuf_add(&b, buf + at, e - at);
	return hbuf_take(&b, olen);
}

/*
 * Sorts the edits; drops every edit of an entry whose edits overlap an
 * earlier one's (entries nested in entries: the outer one is edited).
 */
static void
hcfg_sort(struct hedits *ed, unsigned char *dropped)
{
	size_t	 i, j, end = 0;

	if (ed->n == 0)
		return;
	qsort(ed->v, ed->n, sizeof *ed->v, hcfg_editcmp);
	for (i = 0; i < ed->n; i++) {
		if (dropped[ed->v[i].ent])
			continue;
		if (i > 0 && ed->v[i].off < end) {
			dropped[ed->v[i].ent] = 1;
			continue;
		}
		end = ed->v[i].off + ed->v[i].len;
	}
	for (i = j = 0; i < ed->n; i++) {
		if (dropped[ed->v[i].ent]) {
			free(ed->v[i].text);
			continue;
		}
		ed->v[j++] = ed->v[i];
	}
	ed->n = j;
}

/* Appends the prefix args of a wrapped entry (record [--db D] --name N). */
static void
hcfg_prefix(struct hbuf *b, const struct hcfg_wrap *wrap, const char *name,
    const char *sep)
{
	char	*clean = hcfg_clean_name(name);

	hcfg_quote(b, "record");
	hbuf_adds(b, sep);
	if (wrap->db != NULL) {
		hcfg_quote(b, "--db");
		hbuf_adds(b, sep);
		hcfg_quote(b, wrap->db);
		hbuf_adds(b, sep);
	}
	hcfg_quote(b, "--name");
	hbuf_adds(b, sep);
	hcfg_quote(b, clean);
	hbuf_adds(b, sep);
	free(clean);
}

/* The edits that wrap stdio entry i. */
static void
hcfg_wrap_stdio(const char *buf, const struct hent *h, size_t i,
    const struct hcfg_wrap *wrap, struct hedits *ed)
{
	struct hbuf	 b = { 0 };

	hcfg_quote(&b, wrap->mcpreel);
	hcfg_edit_buf(ed, i, h->cmd.vs, h->cmd.ve - h->cmd.vs, &b);
	if (h->args.present && h->nel > 0) {
		hcfg_prefix(&b, wrap, h->name, h->sep);
		hcfg_quote(&b, "--");
		hbuf_adds(&b, h->sep);
		hbuf_add(&b, buf + h->cmd.vs, h->cmd.ve - h->cmd.vs);
		hbuf_adds(&b, h->sep);
		hcfg_edit_buf(ed, i, h->el[0].s, 0, &b);
	} else if (h->args.present) {
		hcfg_prefix(&b, wrap, h->name, h->sep);
		hcfg_quote(&b, "--");
		hbuf_adds(&b, h->sep);
		hbuf_add(&b, buf + h->cmd.vs, h->cmd.ve - h->cmd.vs);
		hcfg_edit_buf(ed, i, h->arr_in, 0, &b);
	} else {
		hbuf_adds(&b, h->ins_pre);
		hbuf_addc(&b, '[');
		hcfg_prefix(&b, wrap, h->name, ", ");
		hcfg_quote(&b, "--");
		hbuf_adds(&b, ", ");
		hbuf_add(&b, buf + h->cmd.vs, h->cmd.ve - h->cmd.vs);
		hbuf_addc(&b, ']');
		hbuf_adds(&b, h->ins_post);
		hcfg_edit_buf(ed, i, h->ins_at, 0, &b);
	}
}

/*
 * The value of MCPREEL_HEADERS for a bridged entry's headers: their raw
 * texts (placeholders such as ${TOKEN} kept), "Name: value" each, joined
 * by "\n" escapes, in quotes.
 */
static void
hcfg_headers_value(struct hbuf *b, const char *buf, const struct hent *h)
{
	size_t	j;

	hbuf_addc(b, '"');
	for (j = 0; j < h->nhd; j++) {
		if (j > 0)
			hbuf_adds(b, "\\n");
		hbuf_add(b, buf + h->hd[j].ks, h->hd[j].ke - h->hd[j].ks);
		hbuf_adds(b, ": ");
		hbuf_add(b, buf + h->hd[j].vs, h->hd[j].ve - h->hd[j].vs);
	}
	hbuf_addc(b, '"');
}

/*
 * The edits that move a bridged entry's headers into its env as
 * MCPREEL_HEADERS (argv is readable by every user; a process's
 * environment only by its owner): added after env's last member, or an
 * env made after the entry's last member (in place of headers when that
 * is the last), in the spacing around it.
 */
static void
hcfg_wrap_headers(const char *buf, const struct hent *h, size_t i,
    struct hedits *ed)
{
	struct hbuf	 b = { 0 };

	if (!h->env.present) {
		if (h->headers_last) {
			hcfg_quote(&b, "env");
			hbuf_adds(&b, h->colon_hdr);
			hbuf_addc(&b, '{');
			hcfg_quote(&b, "MCPREEL_HEADERS");
			hbuf_adds(&b, ": ");
			hcfg_headers_value(&b, buf, h);
			hbuf_addc(&b, '}');
			hcfg_edit_buf(ed, i, h->headers.ks, h->headers.ve -
			    h->headers.ks, &b);
			return;
		}
		hcfg_edit_rm(ed, i, &h->headers);
		hbuf_addc(&b, ',');
		hbuf_adds(&b, h->msep_last);
		hcfg_quote(&b, "env");
		hbuf_adds(&b, h->colon_url);
		hbuf_addc(&b, '{');
		hcfg_quote(&b, "MCPREEL_HEADERS");
		hbuf_adds(&b, ": ");
		hcfg_headers_value(&b, buf, h);
		hbuf_addc(&b, '}');
		hcfg_edit_buf(ed, i, h->last_e, 0, &b);
		return;
	}
	hcfg_edit_rm(ed, i, &h->headers);
	if (h->env_n == 0) {
		hbuf_addc(&b, '{');
		hcfg_quote(&b, "MCPREEL_HEADERS");
		hbuf_adds(&b, ": ");
		hcfg_headers_value(&b, buf, h);
		hbuf_addc(&b, '}');
		hcfg_edit_buf(ed, i, h->env.vs, h->env.ve - h->env.vs, &b);
		return;
	}
	hbuf_addc(&b, ',');
	hbuf_adds(&b, h->env_msep);
	hcfg_quote(&b, "MCPREEL_HEADERS");
	hbuf_adds(&b, h->env_colon);
	hcfg_headers_value(&b, buf, h);
	hcfg_edit_buf(ed, i, h->env_last_e, 0, &b);
}

/* The edits that bridge remote entry i (JSON): url -> command + args. */
static void
hcfg_wrap_remote(const char *buf, const struct hcfg_layout *layout,
    const struct hent *h, size_t i, const struct hcfg_wrap *wrap,
    struct hedits *ed)
{
	struct hbuf	 b = { 0 };
	const char	*transport;

	transport = h->type.present ? h->type.str :
	    hcfg_url_transport(layout, h->url_i);
	if (h->type.present) {
		hcfg_quote(&b, "stdio");
		hcfg_edit_buf(ed, i, h->type.vs, h->type.ve - h->type.vs, &b);
	}
	hcfg_quote(&b, "command");
	hbuf_adds(&b, h->colon_url);
	hcfg_quote(&b, wrap->mcpreel);
	hbuf_addc(&b, ',');
	hbuf_adds(&b, h->msep_url);
	hcfg_quote(&b, "args");
	hbuf_adds(&b, h->colon_url);
	hbuf_addc(&b, '[');
	hcfg_prefix(&b, wrap, h->name, ", ");
	hcfg_quote(&b, "--connect");
	hbuf_adds(&b, ", ");
	hbuf_add(&b, buf + h->url.vs, h->url.ve - h->url.vs);
	if (transport != NULL) {
		hbuf_adds(&b, ", ");
		hcfg_quote(&b, "--transport");
		hbuf_adds(&b, ", ");
		hcfg_quote(&b, transport);
	}
	hbuf_addc(&b, ']');
	hcfg_edit_buf(ed, i, h->url.ks, h->url.ve - h->url.ks, &b);
	if (h->nhd > 0)
		hcfg_wrap_headers(buf, h, i, ed);
	else if (h->headers.present)
		hcfg_edit_rm(ed, i, &h->headers);
}

/*
 * Makes the new buffer and the list of changes from the edits, one entry
 * per changed entry.
 */
void
hcfg_finish(const char *buf, size_t len, const struct hdoc *doc,
    struct hedits *ed, char **out, size_t *outlen, struct hcfg_changes *ch)
{
	unsigned char	*dropped, *has;
	struct hcfg_change *c;
	size_t		 i;

	dropped = xcalloc(doc->n + 1, 1);
	has = xcalloc(doc->n + 1, 1);
	hcfg_sort(ed, dropped);
	for (i = 0; i < ed->n; i++)
		has[ed->v[i].ent] = 1;
	for (i = 0; i < doc->n; i++) {
		if (!has[i])
			continue;
		ch->v = hcfg_grow(ch->v, ch->n, sizeof *ch->v);
		c = &ch->v[ch->n++];
		c->container = xstrdup(doc->v[i].container);
		c->name = xstrdup(doc->v[i].name);
		c->before = xstrndup(buf + doc->v[i].s, doc->v[i].e -
		    doc->v[i].s);
		c->after = hcfg_apply(buf, doc->v[i].s, doc->v[i].e, ed, i,
		    NULL);
	}
	*out = hcfg_apply(buf, 0, len, ed, SIZE_MAX, outlen);
	free(dropped);
	free(has);
}

/* Wraps the chosen entries (see hosts.h): new bytes and the changes. */
int
hcfg_wrap(const char *buf, size_t len, const struct hcfg_layout *layout,
    const struct hcfg_wrap *wrap, char **out, size_t *outlen,
    struct hcfg_changes *ch, char **cause)
{
	struct hdoc	 doc;
	struct hedits	 ed = { 0 };
	struct hwrapped	 w;
	struct hent	*h;
	const char	*note;
	size_t		 i;
	int		 br;
	enum hcfg_kind	 kind;

	*out = NULL;
	*outlen = 0;
	memset(ch, 0, sizeof *ch);
	if (hcfg_parse(buf, len, layout, &doc, cause) == -1)
		return -1;
	for (i = 0; i < doc.n; i++) {
		h = &doc.v[i];
		/* the ledger keeps an entry's text as a C string */
		if (!hcfg_chosen(wrap->names, h->name) ||
		    memchr(buf + h->s, '\0', h->e - h->s) != NULL)
			continue;
		kind = hcfg_classify(layout, h, &note, &br);
		if (kind == HCFG_STDIO) {
			if (hcfg_wrapped(h, &w)) {
				free(w.hdr);
				continue;
			}
			hcfg_wrap_stdio(buf, h, i, wrap, &ed);
		} else if (kind == HCFG_REMOTE && br && wrap->bridge)
			hcfg_wrap_remote(buf, layout, h, i, wrap, &ed);
	}
	hcfg_finish(buf, len, &doc, &ed, out, outlen, ch);
	hcfg_edits_clear(&ed);
	hdoc_clear(&doc);
	return 0;
}
