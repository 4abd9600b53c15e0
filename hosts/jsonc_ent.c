/*
 * The entries of a JSON or JSONC file, from the tree jsonc.c scanned:
 * each container the layout names (the last of a duplicated key, every
 * member for "*"), each entry in it, and the spans cfg.c edits.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

/* The nodes a container path names, last-wins per key; *nout of them. */
static long *
jsonc_resolve(struct jscan *js, const struct jcont *c, size_t *nout)
{
	long	*cur, *nxt, *mem, k, last;
	size_t	 ncur, nnxt, d, j, nm, i;

	cur = xmalloc(sizeof *cur);
	cur[0] = 0;
	ncur = 1;
	for (d = 0; d < c->n && ncur > 0; d++) {
		nxt = NULL;
		nnxt = 0;
		for (j = 0; j < ncur; j++) {
			if (js->n[cur[j]].type != J_OBJECT)
				continue;
			if (strcmp(c->comp[d], "*") == 0) {
				mem = jsonc_members(js, cur[j], &nm);
				for (i = 0; i < nm; i++) {
					nxt = hcfg_grow(nxt, nnxt, sizeof *nxt);
					nxt[nnxt++] = mem[i];
				}
				free(mem);
				continue;
			}
			last = -1;
			for (k = js->n[cur[j]].first; k >= 0;
			    k = js->n[k].next)
				if (js->n[k].key != NULL &&
				    strcmp(c->comp[d], js->n[k].key) == 0)
					last = k;
			if (last >= 0) {
				nxt = hcfg_grow(nxt, nnxt, sizeof *nxt);
				nxt[nnxt++] = last;
			}
		}
		free(cur);
		cur = nxt;
		ncur = nnxt;
	}
	*nout = ncur;
	return cur;
}

/* A member's key and node, sorted to find the last of each key. */
struct jkey {
	const char	*key;
	long		 idx;
};

/* Orders by key, then position (qsort). */
static int
jsonc_keycmp(const void *a, const void *b)
{
	const struct jkey	*x = a, *y = b;
	int			 r;

	if ((r = strcmp(x->key, y->key)) != 0)
		return r;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Orders longs (qsort). */
static int
jsonc_longcmp(const void *a, const void *b)
{
	long	x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/*
 * The members of object o that count (the last of each key, as
 * JSON.parse keeps), in order of position; *nout of them.
 */
long *
jsonc_members(struct jscan *js, long o, size_t *nout)
{
	struct jkey	*all;
	long		*keep, k;
	size_t		 n = 0, i, nk = 0;

	for (k = js->n[o].first; k >= 0; k = js->n[k].next)
		if (js->n[k].key != NULL)
			n++;
	all = xcalloc(n + 1, sizeof *all);
	keep = xcalloc(n + 1, sizeof *keep);
	i = 0;
	for (k = js->n[o].first; k >= 0; k = js->n[k].next)
		if (js->n[k].key != NULL) {
			all[i].key = js->n[k].key;
			all[i++].idx = k;
		}
	if (n > 0)
		qsort(all, n, sizeof *all, jsonc_keycmp);
	for (i = 0; i < n; i++)
		if (i + 1 == n || strcmp(all[i].key, all[i + 1].key) != 0)
			keep[nk++] = all[i].idx;
	if (nk > 0)
		qsort(keep, nk, sizeof *keep, jsonc_longcmp);
	free(all);
	*nout = nk;
	return keep;
}

/* The raw bytes [s, e) as a new string. */
static char *
jsonc_raw(struct jscan *js, size_t s, size_t e)
{
	return xstrndup(js->buf + s, e - s);
}

/* Whether only spaces or tabs come between at and the end of its line. */
static int
jsonc_line_ends(const struct jscan *js, size_t at)
{
	while (at < js->len && (js->buf[at] == ' ' || js->buf[at] == '\t'))
		at++;
	return at < js->len && (js->buf[at] == '\n' || js->buf[at] == '\r');
}

/* Fills m from member node k. */
static void
jsonc_mem(struct jscan *js, long k, struct hmem *m)
{
	struct jnode	*n = &js->n[k];

	m->present = 1;
	m->ks = n->ks;
	m->ke = n->ke;
	m->vs = n->s;
	m->ve = n->e;
	m->is_str = n->type == J_STRING;
	m->is_arr = n->type == J_ARRAY;
	m->is_obj = n->type == J_OBJECT;
	if (m->is_str)
		m->str = jsonc_decode(js->buf + n->s + 1, n->e - n->s - 2);
	/* deleting the member: up to the next key, or from the previous
	   value when it is the last */
	if (n->next >= 0 && !n->comments_after) {
		m->rm_s = n->ks;
		m->rm_e = js->n[n->next].ks;
	} else if (n->next >= 0) {
		m->rm_s = n->ks;
		m->rm_e = n->comma + 1;
	} else if (n->prev >= 0 && js->n[n->prev].comments_after &&
	    js->n[n->prev].comma != SIZE_MAX) {
		/* the comment after the previous value stays: its comma
		   goes, and this member from the start of its line */
		m->rm_s = js->n[n->prev].comma;
		m->rm_e = m->rm_s + 1;
		m->rm2_s = n->ks;
		while (m->rm2_s > m->rm_e && (js->buf[m->rm2_s - 1] == ' ' ||
		    js->buf[m->rm2_s - 1] == '\t'))
			m->rm2_s--;
		/* the line break before it goes only when one follows it:
		   the kept comment may be a line comment, and what comes
		   after the member must not join its line */
		if (jsonc_line_ends(js, n->e)) {
			if (m->rm2_s > m->rm_e && js->buf[m->rm2_s - 1] == '\n')
				m->rm2_s--;
			if (m->rm2_s > m->rm_e &&
			    js->buf[m->rm2_s - 1] == '\r')
				m->rm2_s--;
		}
		m->rm2_e = n->e;
	} else if (n->prev >= 0) {
		m->rm_s = js->n[n->prev].e;
		m->rm_e = n->e;
	} else {
		m->rm_s = n->ks;
		m->rm_e = n->comma != SIZE_MAX ? n->comma + 1 : n->e;
	}
}

/*
 * What goes after the comma before a member wrap adds next to the member
 * at ks: the white space before ks, or one space when there is none
 * ({"command": "x"}).
 */
static char *
jsonc_msep(struct jscan *js, size_t lo, size_t ks)
{
	char	*ws = hcfg_ws_before(js->buf, lo, ks);

	if (*ws == '\0') {
		free(ws);
		ws = xstrdup(" ");
	}
	return ws;
}

/* Whether a header name is an HTTP token (what --header can carry). */
static int
jsonc_token(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (strchr("!#$%&'*+-.^_`|~", *s) == NULL &&
		    !(*s >= '0' && *s <= '9') && !(*s >= 'a' && *s <= 'z') &&
		    !(*s >= 'A' && *s <= 'Z'))
			return 0;
	return 1;
}

/*
 * Fills what wrap and unwrap need of an entry's env object (one of the
 * entry's members mem): its members, its last, its MCPREEL_HEADERS.
 */
static void
jsonc_env(struct jscan *js, struct hent *h, const long *mem, size_t nm)
{
	long	*em, e = -1, last;
	size_t	 n, i;

	for (i = 0; i < nm; i++)
		if (strcmp(js->n[mem[i]].key, "env") == 0)
			e = mem[i];
	if (e < 0)
		return;
	em = jsonc_members(js, e, &n);
	h->env_n = n;
	for (i = 0; i < n; i++)
		if (strcmp(js->n[em[i]].key, "MCPREEL_HEADERS") == 0)
			jsonc_mem(js, em[i], &h->envh);
	free(em);
	if ((last = js->n[e].last) >= 0) {
		h->env_last_e = js->n[last].e;
		h->env_msep = jsonc_msep(js, js->n[e].s + 1, js->n[last].ks);
		h->env_colon = jsonc_raw(js, js->n[last].ke, js->n[last].s);
	}
}

/* Fills one struct hent from entry node k of container path cpath. */
static void
jsonc_entry(struct jscan *js, const struct hcfg_layout *layout,
    const char *cpath, long k, struct hdoc *doc)
{
	struct hent	*h;
	struct jnode	*n = &js->n[k];
	long		*mem, a = -1;
	size_t		 nm, i, j;
	const char	*key, *blk;
	char		*ws;
	struct hhdr	*hd;
	struct hbuf	 sb = { 0 };

	h = hdoc_add(doc);
	h->container = xstrdup(cpath);
	h->name = xstrdup(n->key);
	h->s = n->s;
	h->e = n->e;
	h->url_i = -1;
	h->can_bridge = 1;
	if (n->type != J_OBJECT)
		return;
	h->is_table = 1;
	mem = jsonc_members(js, k, &nm);
	for (i = 0; i < nm; i++) {
		key = js->n[mem[i]].key;
		if (strcmp(key, "command") == 0)
			jsonc_mem(js, mem[i], &h->cmd);
		else if (strcmp(key, "args") == 0)
			jsonc_mem(js, mem[i], &h->args);
		else if (strcmp(key, "type") == 0)
			jsonc_mem(js, mem[i], &h->type);
		else if (strcmp(key, "headers") == 0)
			jsonc_mem(js, mem[i], &h->headers);
		else if (strcmp(key, "env") == 0)
			jsonc_mem(js, mem[i], &h->env);
		else if ((blk = hcfg_blocker(key)) != NULL)
			h->block = blk;
		for (j = 0; layout->url_keys != NULL &&
		    layout->url_keys[j] != NULL; j++)
			if (strcmp(key, layout->url_keys[j]) == 0 &&
			    (h->url_i == -1 || (int)j < h->url_i)) {
				if (h->url.present)
					free(h->url.str);
				memset(&h->url, 0, sizeof h->url);
				jsonc_mem(js, mem[i], &h->url);
				h->url_i = (int)j;
			}
	}
	if (h->args.present && h->args.is_arr) {
		a = -1;
		for (i = 0; i < nm; i++)
			if (strcmp(js->n[mem[i]].key, "args") == 0)
				a = mem[i];
		h->arr_in = h->args.vs + 1;
		for (k = js->n[a].first; k >= 0; k = js->n[k].next) {
			h->el = hcfg_grow(h->el, h->nel, sizeof *h->el);
			h->el[h->nel].s = js->n[k].s;
			h->el[h->nel].e = js->n[k].e;
			h->el[h->nel].str = js->n[k].type == J_STRING ?
			    jsonc_decode(js->buf + js->n[k].s + 1,
			    js->n[k].e - js->n[k].s - 2) : NULL;
			h->nel++;
		}
		/* the separator the array uses */
		hbuf_addc(&sb, ',');
		ws = NULL;
		if (h->nel >= 2)
			ws = hcfg_ws_before(js->buf, h->arr_in, h->el[1].s);
		else if (h->nel == 1 && memchr(js->buf + h->arr_in, '\n',
		    h->el[0].s - h->arr_in) != NULL)
			ws = hcfg_ws_before(js->buf, h->arr_in, h->el[0].s);
		/* an empty array: "," alone, so that unwrap without the
		   ledger can tell it from the ", " of args wrap added */
		hbuf_adds(&sb, ws != NULL ? ws : h->nel == 0 ? "" : " ");
		free(ws);
		h->sep = hbuf_take(&sb, NULL);
	}
	if (h->cmd.present) {
		h->colon_cmd = jsonc_raw(js, h->cmd.ke, h->cmd.vs);
		h->msep_cmd = jsonc_msep(js, h->s + 1, h->cmd.ks);
		h->ins_at = h->cmd.ve;
		hbuf_addc(&sb, ',');
		hbuf_adds(&sb, h->msep_cmd);
		hbuf_adds(&sb, "\"args\"");
		hbuf_adds(&sb, h->colon_cmd);
		h->ins_pre = hbuf_take(&sb, NULL);
		h->ins_post = xstrdup("");
	}
	if (h->url.present) {
		h->colon_url = jsonc_raw(js, h->url.ke, h->url.vs);
		h->msep_url = jsonc_msep(js, h->s + 1, h->url.ks);
	}
	if (n->last >= 0) {
		h->last_e = js->n[n->last].e;
		h->msep_last = jsonc_msep(js, h->s + 1, js->n[n->last].ks);
		h->headers_last = h->headers.present &&
		    js->n[n->last].ks == h->headers.ks;
	}
	if (h->headers.present)
		h->colon_hdr = jsonc_raw(js, h->headers.ke, h->headers.vs);
	if (h->env.present) {
		h->colon_env = jsonc_raw(js, h->env.ke, h->env.vs);
		if (h->env.is_obj)
			jsonc_env(js, h, mem, nm);
	}
	if (h->headers.present && h->headers.is_obj) {
		for (i = 0; i < nm; i++)
			if (strcmp(js->n[mem[i]].key, "headers") == 0)
				a = mem[i];
		free(mem);
		mem = jsonc_members(js, a, &nm);
		for (i = 0; i < nm; i++) {
			struct jnode	*hn = &js->n[mem[i]];

			h->hd = hcfg_grow(h->hd, h->nhd, sizeof *h->hd);
			hd = &h->hd[h->nhd++];
			memset(hd, 0, sizeof *hd);
			hd->ks = hn->ks + 1;
			hd->ke = hn->ke - 1;
			hd->key = xstrdup(hn->key);
			if (hn->type == J_STRING) {
				hd->vs = hn->s + 1;
				hd->ve = hn->e - 1;
				hd->val = jsonc_decode(js->buf + hd->vs,
				    hd->ve - hd->vs);
			}
			if (hd->val == NULL || !jsonc_token(hd->key) ||
			    strpbrk(hd->val, "\r\n") != NULL)
				h->hd_bad = 1;
		}
	} else if (h->headers.present)
		h->hd_bad = 1;
	free(mem);
}

/* Fills doc with the entries of every container the layout names. */
void
jsonc_entries(struct jscan *js, const struct hcfg_layout *layout,
    struct hdoc *doc)
{
	long		*cont, k, *ents;
	size_t		 i, j, nc, ne, d;

	for (i = 0; i < js->nconts; i++) {
		cont = jsonc_resolve(js, &js->conts[i], &nc);
		for (j = 0; j < nc; j++) {
			struct hbuf	 pb = { 0 };
			char		*cpath;
			long		 m;
			int		 ok = 1;

			if (js->n[cont[j]].type != J_OBJECT)
				continue;
			/* a node two container paths name: once */
			if (js->n[cont[j]].done)
				continue;
			js->n[cont[j]].done = 1;
			/* the container's real path, from its ancestors */
			{
				long	 chain[HCFG_MAX_DEPTH + 1];
				size_t	 nch = 0;

				for (m = cont[j]; m > 0 && nch <
				    HCFG_MAX_DEPTH; m = js->n[m].parent)
					chain[nch++] = m;
				while (nch > 0) {
					k = chain[--nch];
					if (js->n[k].key == NULL ||
					    strchr(js->n[k].key, '\x1f') !=
					    NULL)
						ok = 0;
					else {
						if (pb.p != NULL)
							hbuf_addc(&pb, '\x1f');
						hbuf_adds(&pb, js->n[k].key);
					}
				}
			}
			cpath = hbuf_take(&pb, NULL);
			if (ok) {
				ents = jsonc_members(js, cont[j], &ne);
				for (d = 0; d < ne; d++)
					jsonc_entry(js, layout, cpath,
					    ents[d], doc);
				free(ents);
			}
			free(cpath);
		}
		free(cont);
	}
}
