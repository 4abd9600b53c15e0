/*
 * A TOML scanner precise enough for Codex's server tables: not a TOML
 * implementation, but one that walks every line of a TOML file (tables,
 * dotted keys, basic, literal and multi-line strings, arrays over many
 * lines with comments, inline tables), knows which key/value lines
 * belong to which [mcp_servers.NAME] (or dotted mcp_servers.NAME.KEY,
 * or NAME = { inline table }) entry, and keeps the byte spans of
 * command, args and the url.  What it cannot follow (the servers as one
 * inline table, an entry that is no table, an array of tables, a key
 * defined twice, entries whose lines interleave) refuses the file with a
 * clear error: never a guess.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"


/* Whether the first n components of k are the container's. */
static int
toml_under(struct tscan *ts, char *const *v, size_t n)
{
	size_t	i;

	if (n < ts->ncont)
		return 0;
	for (i = 0; i < ts->ncont; i++)
		if (strcmp(v[i], ts->cont[i]) != 0)
			return 0;
	return 1;
}

/* Whether the n components are a proper prefix of the container path. */
static int
toml_above(struct tscan *ts, char *const *v, size_t n)
{
	size_t	i;

	if (n >= ts->ncont)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(v[i], ts->cont[i]) != 0)
			return 0;
	return 1;
}

/* The entry of that name, made if new. */
static struct tent *
toml_entry(struct tscan *ts, const char *name)
{
	struct tent	*t;
	struct hent	*h;
	int64_t		 at;

	if (idmap_get(ts->names, name, strlen(name), &at) == 0)
		return &ts->te[at];
	idmap_put(ts->names, name, strlen(name), (int64_t)ts->nte, NULL);
	/* te[i] is doc->v[i] (hdoc_add may move those: no pointers) */
	h = hdoc_add(ts->doc);
	h->name = xstrdup(name);
	h->container = xstrdup(ts->layout->containers[0]);
	h->is_table = 1;
	h->can_bridge = 0;
	ts->te = hcfg_grow(ts->te, ts->nte, sizeof *ts->te);
	t = &ts->te[ts->nte++];
	t->section = -1;
	t->header = 0;
	t->hasline = 0;
	return t;
}

/* Skips the rest of a line: blanks, a comment, the line end. */
static int
toml_eol(struct tscan *ts, size_t *eol)
{
	toml_sp(ts);
	if (ts->pos < ts->len && ts->buf[ts->pos] == '#')
		while (ts->pos < ts->len && ts->buf[ts->pos] != '\n' &&
		    ts->buf[ts->pos] != '\r')
			ts->pos++;
	*eol = ts->pos;
	if (ts->pos >= ts->len)
		return 0;
	if (ts->buf[ts->pos] == '\n') {
		ts->pos++;
		return 0;
	}
	if (ts->buf[ts->pos] == '\r' && ts->pos + 1 < ts->len &&
	    ts->buf[ts->pos + 1] == '\n') {
		ts->pos += 2;
		return 0;
	}
	toml_error(ts, ts->pos, "expected the end of the line");
	return -1;
}

/* A table header line at pos ('['). */
static int
toml_header(struct tscan *ts)
{
	struct tkey	 k = { 0 };
	struct tent	*t;
	size_t		 start = ts->pos, eol;
	int		 arr = 0;

	ts->pos++;
	if (ts->pos < ts->len && ts->buf[ts->pos] == '[') {
		arr = 1;
		ts->pos++;
	}
	if (toml_key(ts, &k) == -1)
		goto fail;
	if (ts->pos >= ts->len || ts->buf[ts->pos] != ']' || (arr &&
	    (ts->pos + 1 >= ts->len || ts->buf[ts->pos + 1] != ']'))) {
		toml_error(ts, ts->pos, "expected '%s'", arr ? "]]" : "]");
		goto fail;
	}
	ts->pos += arr ? 2 : 1;
	if (toml_eol(ts, &eol) == -1)
		goto fail;
	ts->section++;
	if (arr && (toml_under(ts, k.v, k.n) || toml_above(ts, k.v, k.n) ||
	    (k.n == ts->ncont && toml_under(ts, k.v, k.n)))) {
		toml_error(ts, start, "an array of tables where mcpreel "
		    "expects [%s.NAME] tables; it cannot edit this file",
		    ts->layout->containers[0]);
		goto fail;
	}
	if (!arr && toml_under(ts, k.v, k.n) && k.n == ts->ncont + 1) {
		t = toml_entry(ts, k.v[ts->ncont]);
		if (t->header || t->hasline) {
			toml_error(ts, start, "[%s.%s] defined twice",
			    ts->layout->containers[0], k.v[ts->ncont]);
			goto fail;
		}
		t->header = 1;
		t->section = ts->section;
		while (start > 0 && ts->buf[start - 1] != '\n')
			start--;
		ts->doc->v[t - ts->te].s = start;
		ts->doc->v[t - ts->te].e = ts->pos;
	}
	toml_key_clear(&ts->table);
	ts->table = k;
	return 0;
fail:
	toml_key_clear(&k);
	return -1;
}

/* Fills one member of an entry from a key/value line. */
static void
toml_member(struct tscan *ts, struct hmem *m, size_t ks, size_t ke,
    size_t vs, size_t ve, int type)
{
	m->present = 1;
	m->ks = ks;
	m->ke = ke;
	m->vs = vs;
	m->ve = ve;
	m->is_str = type == 's';
	m->is_arr = type == 'a';
	m->is_obj = type == 't';
	if (m->is_str) {
		size_t	save = ts->pos;

		ts->pos = vs;
		(void)toml_string(ts, &m->str);
		ts->pos = save;
	}
}

/*
 * Takes the args array's elements (scanned at vs) into h, with the
 * separator the array uses between them (for an empty one, "," alone:
 * unwrap without the ledger tells it from the ", " of an args it added).
 */
static void
toml_args(struct tscan *ts, struct hent *h, size_t vs)
{
	char	*ws = NULL;

	h->el = ts->el;
	h->nel = ts->nel;
	ts->el = NULL;
	ts->nel = 0;
	h->arr_in = vs + 1;
	if (h->nel >= 2)
		ws = hcfg_ws_before(ts->buf, h->arr_in, h->el[1].s);
	else if (h->nel == 1 && memchr(ts->buf + h->arr_in, '\n',
	    h->el[0].s - h->arr_in) != NULL)
		ws = hcfg_ws_before(ts->buf, h->arr_in, h->el[0].s);
	xasprintf(&h->sep, ",%s", ws != NULL ? ws : h->nel == 0 ? "" : " ");
	free(ws);
}

/*
 * One member of the inline table that is entry cap (NAME = { ... }): its
 * command, args or url, spans kept as for a table's lines, and where an
 * absent args goes (", args = [...]" after the command, as in JSON).
 */
int
toml_inline_member(struct tscan *ts, long cap, const char *key, size_t ks,
    size_t ke, size_t vs, size_t ve, int type)
{
	struct hent	*h = &ts->doc->v[cap];
	struct hbuf	 b = { 0 };
	char		*ws;
	size_t		 i;

	if (strcmp(key, "command") == 0) {
		if (h->cmd.present)
			goto twice;
		toml_member(ts, &h->cmd, ks, ke, vs, ve, type);
		ws = hcfg_ws_before(ts->buf, 0, ks);
		hbuf_addc(&b, ',');
		hbuf_adds(&b, *ws != '\0' ? ws : " ");
		free(ws);
		hbuf_adds(&b, "args");
		hbuf_add(&b, ts->buf + ke, vs - ke);
		h->ins_pre = hbuf_take(&b, NULL);
		h->ins_post = xstrdup("");
		h->ins_at = ve;
	} else if (strcmp(key, "args") == 0) {
		if (h->args.present)
			goto twice;
		toml_member(ts, &h->args, ks, ke, vs, ve, type);
		if (type == 'a')
			toml_args(ts, h, vs);
	} else {
		for (i = 0; ts->layout->url_keys != NULL &&
		    ts->layout->url_keys[i] != NULL; i++)
			if (strcmp(key, ts->layout->url_keys[i]) == 0 &&
			    (h->url_i == -1 || (int)i < h->url_i)) {
				free(h->url.str);
				memset(&h->url, 0, sizeof h->url);
				toml_member(ts, &h->url, ks, ke, vs, ve, type);
				h->url_i = (int)i;
			}
	}
	return 0;
twice:
	toml_error(ts, ks, "%s.%s.%s defined twice", ts->layout->containers[0],
	    h->name, key);
	return -1;
}

/* A key/value line at pos. */
static int
toml_keyval(struct tscan *ts)
{
	struct tkey	 k = { 0 };
	char		*full[TOML_MAX_KEYS * 2];
	size_t		 nfull = 0, i, linestart, ks, ke, vs, ve, eol;
	struct tent	*t;
	struct hent	*h;
	const char	*what;
	int		 type, inl;

	linestart = ts->pos;
	while (linestart > 0 && ts->buf[linestart - 1] != '\n')
		linestart--;
	ks = ts->pos;
	if (toml_key(ts, &k) == -1)
		goto fail;
	ke = ts->pos;
	while (ke > ks && (ts->buf[ke - 1] == ' ' || ts->buf[ke - 1] == '\t'))
		ke--;
	if (ts->pos >= ts->len || ts->buf[ts->pos] != '=') {
		toml_error(ts, ts->pos, "expected '='");
		goto fail;
	}
	ts->pos++;
	toml_sp(ts);
	vs = ts->pos;
	for (i = 0; i < ts->table.n; i++)
		full[nfull++] = ts->table.v[i];
	for (i = 0; i < k.n; i++)
		full[nfull++] = k.v[i];
	ts->want_el = toml_under(ts, full, nfull) && nfull == ts->ncont + 2 &&
	    strcmp(full[nfull - 1], "args") == 0;
	if (ts->want_el) {
		ts->el = NULL;
		ts->nel = 0;
	}
	/* NAME = { command = ..., args = [...] }: read as it is scanned */
	inl = toml_under(ts, full, nfull) && nfull == ts->ncont + 1 &&
	    ts->table.n <= ts->ncont + 1 && vs < ts->len && ts->buf[vs] == '{';
	if (inl) {
		t = toml_entry(ts, full[ts->ncont]);
		if (t->header || t->hasline) {
			toml_error(ts, ks, "%s.%s defined twice",
			    ts->layout->containers[0], full[ts->ncont]);
			goto fail;
		}
		ts->inl = t - ts->te;
	}
	if (toml_value(ts, 0, &type) == -1) {
		ts->inl = -1;
		goto fail;
	}
	ts->inl = -1;
	ve = ts->pos;
	if (toml_eol(ts, &eol) == -1)
		goto fail;
	if (toml_above(ts, full, nfull) || (toml_under(ts, full, nfull) &&
	    nfull == ts->ncont)) {
		toml_error(ts, ks, "%s is written as an inline table or value; "
		    "mcpreel can only edit [%s.NAME] tables and dotted keys",
		    ts->layout->containers[0], ts->layout->containers[0]);
		goto fail;
	}
	/* keys of sub-tables ([container.NAME.env]) are not edited */
	if (!toml_under(ts, full, nfull) || ts->table.n > ts->ncont + 1)
		goto done;
	t = toml_entry(ts, full[ts->ncont]);
	h = &ts->doc->v[t - ts->te];
	if (nfull == ts->ncont + 1 && !inl) {
		toml_error(ts, ks, "%s.%s is written as a value, not a table; "
		    "mcpreel can only edit [%s.NAME] tables, dotted keys and "
		    "inline tables", ts->layout->containers[0],
		    full[ts->ncont], ts->layout->containers[0]);
		goto fail;
	}
	if (t->section != -1 && t->section != ts->section) {
		toml_error(ts, ks, "the keys of %s.%s are in more than one "
		    "table; mcpreel cannot edit this file",
		    ts->layout->containers[0], full[ts->ncont]);
		goto fail;
	}
	t->section = ts->section;
	if (!t->header && !t->hasline)
		h->s = linestart;
	t->hasline = 1;
	h->e = ts->pos;
	if (nfull != ts->ncont + 2)
		goto done;
	what = full[ts->ncont + 1];
	if (strcmp(what, "command") == 0) {
		if (h->cmd.present)
			goto twice;
		toml_member(ts, &h->cmd, ks, ke, vs, ve, type);
		/* args absent: a line "args = [...]" right after this one */
		{
			struct hbuf	 b = { 0 };
			const char	*nl = "\n";

			if (eol < ts->len && ts->buf[eol] == '\r')
				nl = "\r\n";
			if (eol >= ts->len)
				hbuf_adds(&b, memmem(ts->buf, ts->len, "\r\n",
				    2) != NULL ? "\r\n" : "\n");
			hbuf_add(&b, ts->buf + linestart, ks - linestart);
			hbuf_add(&b, ts->buf + ks, k.last - ks);
			hbuf_adds(&b, "args");
			hbuf_add(&b, ts->buf + ke, vs - ke);
			h->ins_pre = hbuf_take(&b, NULL);
			h->ins_post = xstrdup(eol >= ts->len ? "" : nl);
			h->ins_at = ts->pos;
			/* or, when that line is the last without a line end,
			   before this line's end */
			if (eol < ts->len) {
				hbuf_adds(&b, nl);
				hbuf_add(&b, ts->buf + linestart, ks -
				    linestart);
				hbuf_add(&b, ts->buf + ks, k.last - ks);
				hbuf_adds(&b, "args");
				hbuf_add(&b, ts->buf + ke, vs - ke);
				h->ins2_pre = hbuf_take(&b, NULL);
				h->ins2_at = eol;
			}
		}
	} else if (strcmp(what, "args") == 0) {
		if (h->args.present)
			goto twice;
		toml_member(ts, &h->args, ks, ke, vs, ve, type);
		if (type == 'a')
			toml_args(ts, h, vs);
	} else {
		for (i = 0; ts->layout->url_keys != NULL &&
		    ts->layout->url_keys[i] != NULL; i++)
			if (strcmp(what, ts->layout->url_keys[i]) == 0 &&
			    (h->url_i == -1 || (int)i < h->url_i)) {
				free(h->url.str);
				memset(&h->url, 0, sizeof h->url);
				toml_member(ts, &h->url, ks, ke, vs, ve, type);
				h->url_i = (int)i;
			}
	}
done:
	for (i = 0; i < ts->nel; i++)
		free(ts->el[i].str);
	free(ts->el);
	ts->el = NULL;
	ts->nel = 0;
	toml_key_clear(&k);
	return 0;
twice:
	toml_error(ts, ks, "%s.%s.%s defined twice", ts->layout->containers[0],
	    full[ts->ncont], what);
fail:
	for (i = 0; i < ts->nel; i++)
		free(ts->el[i].str);
	free(ts->el);
	ts->el = NULL;
	ts->nel = 0;
	toml_key_clear(&k);
	return -1;
}

/* Orders entries by their first byte (qsort). */
static int
toml_poscmp(const void *a, const void *b)
{
	const struct hent	*x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/*
 * Scans buf as TOML and fills doc with the entries of the layout's first
 * container (a '\x1f'-separated path of table names).  Returns 0, or -1
 * with *cause "line L column C: what".
 */
int
toml_parse(const char *buf, size_t len, const struct hcfg_layout *layout,
    struct hdoc *doc, char **cause)
{
	struct tscan	 ts;
	const char	*p, *q;
	size_t		 i;
	int		 rc = -1;

	memset(&ts, 0, sizeof ts);
	ts.buf = buf;
	ts.len = len;
	ts.doc = doc;
	ts.layout = layout;
	ts.inl = -1;
	ts.names = idmap_new();
	if (layout->containers == NULL || layout->containers[0] == NULL) {
		*cause = xstrdup("no container");
		return -1;
	}
	for (p = layout->containers[0]; ; p = q + 1) {
		q = strchr(p, '\x1f');
		ts.cont = xreallocarray(ts.cont, ts.ncont + 1, sizeof *ts.cont);
		ts.cont[ts.ncont++] = q == NULL ? xstrdup(p) :
		    xstrndup(p, (size_t)(q - p));
		if (q == NULL)
			break;
	}
	if (memchr(buf, '\0', len) != NULL) {
		toml_error(&ts, (size_t)((const char *)memchr(buf, '\0', len) -
		    buf), "a NUL byte");
		goto out;
	}
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		ts.pos = 3;
	for (;;) {
		if (toml_ws_nl(&ts) == -1)
			goto out;
		if (ts.pos >= ts.len)
			break;
		if (ts.buf[ts.pos] == '[') {
			if (toml_header(&ts) == -1)
				goto out;
		} else if (toml_keyval(&ts) == -1)
			goto out;
	}
	/* entries whose lines interleave cannot be edited apart */
	if (doc->n > 1) {
		struct hent	*v = xcalloc(doc->n, sizeof *v);

		memcpy(v, doc->v, doc->n * sizeof *v);
		qsort(v, doc->n, sizeof *v, toml_poscmp);
		for (i = 1; i < doc->n; i++)
			if (v[i].s < v[i - 1].e) {
				toml_error(&ts, v[i].s, "the keys of %s.%s and "
				    "%s.%s interleave; mcpreel cannot edit "
				    "this file", layout->containers[0],
				    v[i - 1].name, layout->containers[0],
				    v[i].name);
				free(v);
				goto out;
			}
		free(v);
	}
	rc = 0;
out:
	if (rc == -1)
		*cause = ts.err != NULL ? ts.err : xstrdup("cannot parse");
	else
		free(ts.err);
	toml_key_clear(&ts.table);
	for (i = 0; i < ts.ncont; i++)
		free(ts.cont[i]);
	free(ts.cont);
	free(ts.te);
	idmap_free(ts.names);
	return rc;
}
