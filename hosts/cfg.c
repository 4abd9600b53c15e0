/*
 * Reading and editing one host configuration file's bytes (pure: no I/O,
 * no globals).  A format's scanner (jsonc.c, toml.c) finds each server
 * entry and the byte spans wrap needs; here those become a list of edits
 * (offset, length, replacement) applied in one pass, so every byte
 * outside the few values mcpreel changes stays as the user wrote it.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_int.h"

/* The longest NAME written after --name (then cut). */
#define HCFG_NAME_MAX	64

/* One replacement of [off, off + len) by text. */
struct hedit {
	size_t	 off, len;
	char	*text;
	size_t	 tlen;
	size_t	 seq;		/* order among edits at one offset */
	size_t	 ent;		/* the entry it belongs to */
};

struct hedits {
	struct hedit	*v;
	size_t		 n;
};

/* What the args of a wrapped entry say. */
struct hwrapped {
	long	 dash;		/* index of "--", or -1 */
	long	 connect;	/* index of "--connect", or -1 */
	long	 transport;	/* index of the --transport value, or -1 */
	long	*hdr;		/* indexes of --header values */
	size_t	 nhdr;
};

/* Appends len bytes. */
void
hbuf_add(struct hbuf *b, const void *p, size_t len)
{
	if (b->p == NULL || b->n + len + 1 > b->cap) {
		while (b->cap < b->n + len + 1)
			b->cap = b->cap == 0 ? 64 : b->cap * 2;
		b->p = xreallocarray(b->p, 1, b->cap);
	}
	memcpy(b->p + b->n, p, len);
	b->n += len;
	b->p[b->n] = '\0';
}

/*
 * Makes room for one more element in an array of n (its capacity is
 * kept implicit: the power of two at or above n), so that appending one
 * at a time costs amortised constant time.
 */
void *
hcfg_grow(void *p, size_t n, size_t size)
{
	if (n != 0 && (n & (n - 1)) != 0)
		return p;
	return xreallocarray(p, n == 0 ? 1 : 2 * n, size);
}

/* Appends a string. */
void
hbuf_adds(struct hbuf *b, const char *s)
{
	hbuf_add(b, s, strlen(s));
}

/* Appends one byte. */
void
hbuf_addc(struct hbuf *b, char c)
{
	hbuf_add(b, &c, 1);
}

/* Gives the buffer's string away (never NULL), its length in *len. */
char *
hbuf_take(struct hbuf *b, size_t *len)
{
	char	*p;

	if (b->p == NULL)
		hbuf_add(b, "", 0);
	p = b->p;
	if (len != NULL)
		*len = b->n;
	memset(b, 0, sizeof *b);
	return p;
}

/* "line L column C: " and a message, for a place in buf. */
char *
hcfg_errat(const char *buf, size_t pos, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg, *out;
	size_t	 i, line = 1, col = 1;

	for (i = 0; i < pos; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("out of memory");
	va_end(ap);
	xasprintf(&out, "line %zu column %zu: %s", line, col, msg);
	free(msg);
	return out;
}

/* The white space (spaces, tabs, line ends) just before pos, not below lo. */
char *
hcfg_ws_before(const char *buf, size_t lo, size_t pos)
{
	size_t	 s = pos;

	while (s > lo && strchr(" \t\r\n", buf[s - 1]) != NULL &&
	    buf[s - 1] != '\0')
		s--;
	return xstrndup(buf + s, pos - s);
}

/* Why a remote entry with this key cannot become a command, or NULL. */
const char *
hcfg_blocker(const char *key)
{
	static const struct {
		const char	*key;
		const char	*note;
	} blockers[] = {
		{ "oauth", "remote, can't carry OAuth" },
		{ "auth", "remote, can't carry OAuth" },
		{ "authProviderType", "remote, can't carry OAuth" },
		{ "headersHelper", "remote, can't carry headersHelper" },
		{ "bearer_token_env_var",
		    "remote, can't carry bearer_token_env_var" },
		{ "env_http_headers", "remote, can't carry env_http_headers" },
		{ "http_headers", "remote, can't carry http_headers" },
	};
	size_t	i;

	for (i = 0; i < sizeof blockers / sizeof blockers[0]; i++)
		if (strcmp(key, blockers[i].key) == 0)
			return blockers[i].note;
	return NULL;
}

/* Adds an empty entry to doc. */
struct hent *
hdoc_add(struct hdoc *doc)
{
	struct hent	*h;

	doc->v = hcfg_grow(doc->v, doc->n, sizeof *doc->v);
	h = &doc->v[doc->n++];
	memset(h, 0, sizeof *h);
	h->url_i = -1;
	return h;
}

/* Frees what doc holds. */
void
hdoc_clear(struct hdoc *doc)
{
	struct hent	*h;
	size_t		 i, j;

	for (i = 0; i < doc->n; i++) {
		h = &doc->v[i];
		free(h->container);
		free(h->name);
		free(h->cmd.str);
		free(h->args.str);
		free(h->url.str);
		free(h->type.str);
		free(h->headers.str);
		for (j = 0; j < h->nel; j++)
			free(h->el[j].str);
		free(h->el);
		free(h->sep);
		free(h->ins_pre);
		free(h->ins_post);
		free(h->ins2_pre);
		free(h->colon_url);
		free(h->colon_cmd);
		free(h->msep_url);
		free(h->msep_cmd);
		for (j = 0; j < h->nhd; j++) {
			free(h->hd[j].key);
			free(h->hd[j].val);
		}
		free(h->hd);
	}
	free(doc->v);
	memset(doc, 0, sizeof *doc);
}

/* Whether a command is mcpreel: "mcpreel" or a path ending "/mcpreel". */
int
hcfg_is_mcpreel(const char *cmd)
{
	size_t	n;

	if (cmd == NULL)
		return 0;
	if (strcmp(cmd, "mcpreel") == 0)
		return 1;
	n = strlen(cmd);
	return n > 8 && strcmp(cmd + n - 8, "/mcpreel") == 0;
}

/* Scans buf in the layout's format into doc. */
static int
hcfg_parse(const char *buf, size_t len, const struct hcfg_layout *layout,
    struct hdoc *doc, char **cause)
{
	memset(doc, 0, sizeof *doc);
	if (len > HCFG_MAX_BYTES) {
		*cause = xstrdup("the file is larger than 16 MiB, more than "
		    "any host's configuration");
		return -1;
	}
	switch (layout->format) {
	case HCFG_JSON:
	case HCFG_JSONC:
		if (jsonc_parse(buf, len, layout->format == HCFG_JSONC,
		    layout, doc, cause) == -1)
			goto fail;
		return 0;
	case HCFG_TOML:
		if (toml_parse(buf, len, layout, doc, cause) == -1)
			goto fail;
		return 0;
	default:
		*cause = xstrdup("unknown configuration format");
		return -1;
	}
fail:
	hdoc_clear(doc);
	return -1;
}

/*
 * The NAME written after --name: the key when it is 1-64 of
 * [A-Za-z0-9_.-] (no host expands those), else each other byte as '_'.
 */
static char *
hcfg_clean_name(const char *key)
{
	size_t	 n = strlen(key), i;
	char	*out;

	if (n > HCFG_NAME_MAX)
		n = HCFG_NAME_MAX;
	if (n == 0)
		return xstrdup("_");
	out = xstrndup(key, n);
	for (i = 0; i < n; i++)
		if (!((out[i] >= 'A' && out[i] <= 'Z') ||
		    (out[i] >= 'a' && out[i] <= 'z') ||
		    (out[i] >= '0' && out[i] <= '9') || out[i] == '_' ||
		    out[i] == '.' || out[i] == '-'))
			out[i] = '_';
	return out;
}

/* Appends s as a double-quoted string (valid JSON and TOML basic). */
static void
hcfg_quote(struct hbuf *b, const char *s)
{
	char	esc[8];

	hbuf_addc(b, '"');
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '"': hbuf_adds(b, "\\\""); break;
		case '\\': hbuf_adds(b, "\\\\"); break;
		case '\n': hbuf_adds(b, "\\n"); break;
		case '\r': hbuf_adds(b, "\\r"); break;
		case '\t': hbuf_adds(b, "\\t"); break;
		default:
			if ((unsigned char)*s < 0x20 || *s == 0x7f) {
				snprintf(esc, sizeof esc, "\\u%04x",
				    (unsigned char)*s);
				hbuf_adds(b, esc);
			} else
				hbuf_addc(b, *s);
		}
	}
	hbuf_addc(b, '"');
}

/* Whether entry h's args start with "record" after a mcpreel command. */
static int
hcfg_wrapped(const struct hent *h, struct hwrapped *w)
{
	size_t	i;

	memset(w, 0, sizeof *w);
	w->dash = w->connect = w->transport = -1;
	if (!h->cmd.present || h->cmd.str == NULL ||
	    !hcfg_is_mcpreel(h->cmd.str) || !h->args.present ||
	    !h->args.is_arr || h->nel == 0 || h->el[0].str == NULL ||
	    strcmp(h->el[0].str, "record") != 0)
		return 0;
	for (i = 1; i < h->nel; i++) {
		if (h->el[i].str == NULL)
			continue;
		if (strcmp(h->el[i].str, "--") == 0) {
			if (i + 1 < h->nel)
				w->dash = (long)i;
			break;
		}
		if (strcmp(h->el[i].str, "--connect") == 0) {
			if (i + 1 >= h->nel)
				break;
			w->connect = (long)i;
			for (i += 2; i + 1 < h->nel; i += 2) {
				if (h->el[i].str == NULL)
					continue;
				if (strcmp(h->el[i].str, "--transport") == 0)
					w->transport = (long)i + 1;
				else if (strcmp(h->el[i].str, "--header") ==
				    0) {
					w->hdr = hcfg_grow(w->hdr, w->nhdr,
					    sizeof *w->hdr);
					w->hdr[w->nhdr++] = (long)i + 1;
				}
			}
			break;
		}
		if (strcmp(h->el[i].str, "--db") == 0 ||
		    strcmp(h->el[i].str, "--name") == 0)
			i++;
	}
	return 1;
}

/*
 * What an entry is and why it is left: its kind, and a note (static) or
 * NULL.  *bridgeable: a remote entry wrap may turn into a command.
 */
static enum hcfg_kind
hcfg_classify(const struct hcfg_layout *layout, const struct hent *h,
    const char **note, int *bridgeable)
{
	*note = NULL;
	*bridgeable = 0;
	if (!h->is_table) {
		*note = layout->format == HCFG_TOML ? "not a table" :
		    "not an object";
		return HCFG_OTHER;
	}
	if (h->cmd.present) {
		if (!h->cmd.is_str || h->cmd.str == NULL) {
			*note = "command is not a string";
			return HCFG_OTHER;
		}
		if (h->args.present && !h->args.is_arr) {
			*note = "args is not an array";
			return HCFG_OTHER;
		}
		return HCFG_STDIO;
	}
	if (h->url_i < 0) {
		*note = "neither a command nor a url";
		return HCFG_OTHER;
	}
	if (!layout->can_bridge || !h->can_bridge)
		*note = "remote, and this host's entry cannot become a command";
	else if (!h->url.is_str || h->url.str == NULL)
		*note = "remote, but its url is not a string";
	else if (h->block != NULL)
		*note = h->block;
	else if (h->hd_bad)
		*note = "remote, can't carry its headers";
	else if (h->type.present && (h->type.str == NULL ||
	    (strcmp(h->type.str, "http") != 0 &&
	    strcmp(h->type.str, "sse") != 0)))
		*note = "remote, of a type mcpreel does not know";
	else if (h->args.present)
		*note = "remote, with args";
	else
		*bridgeable = 1;
	return HCFG_REMOTE;
}

/* Whether name is among names (NULL: all). */
static int
hcfg_chosen(const char *const *names, const char *name)
{
	size_t	i;

	if (names == NULL)
		return 1;
	for (i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

/* An element's value as the host would pass it (raw when not a string). */
static char *
hcfg_el_value(const char *buf, const struct hel *el)
{
	if (el->str != NULL)
		return xstrdup(el->str);
	return xstrndup(buf + el->s, el->e - el->s);
}

/* Reads the server entries of a configuration file (see hosts.h). */
int
hcfg_read(const char *buf, size_t len, const struct hcfg_layout *layout,
    struct hcfg *cfg, char **cause)
{
	struct hdoc		 doc;
	struct hent		*h;
	struct hcfg_entry	*e;
	struct hwrapped		 w;
	const char		*note;
	size_t			 i, j, from;
	int			 br;

	memset(cfg, 0, sizeof *cfg);
	if (hcfg_parse(buf, len, layout, &doc, cause) == -1)
		return -1;
	cfg->entries = xcalloc(doc.n + 1, sizeof *cfg->entries);
	for (i = 0; i < doc.n; i++) {
		h = &doc.v[i];
		e = &cfg->entries[cfg->nentries++];
		e->container = xstrdup(h->container);
		e->name = xstrdup(h->name);
		e->kind = hcfg_classify(layout, h, &note, &br);
		if (note != NULL)
			e->note = xstrdup(note);
		if (e->kind == HCFG_REMOTE) {
			e->url = h->url.str != NULL ? xstrdup(h->url.str) :
			    NULL;
			e->url_key = layout->url_keys[h->url_i];
			continue;
		}
		if (e->kind != HCFG_STDIO)
			continue;
		from = 0;
		if (hcfg_wrapped(h, &w)) {
			e->wrapped = 1;
			if (w.dash >= 0) {
				e->command = hcfg_el_value(buf,
				    &h->el[w.dash + 1]);
				from = (size_t)w.dash + 2;
			} else if (w.connect >= 0) {
				e->bridged = 1;
				e->kind = HCFG_REMOTE;
				e->url = hcfg_el_value(buf,
				    &h->el[w.connect + 1]);
				if (layout->url_keys != NULL &&
				    layout->url_keys[0] != NULL)
					e->url_key = layout->url_keys[0];
				free(w.hdr);
				continue;
			} else {
				e->note = xstrdup("wrapped, but its args name "
				    "no command (no -- or --connect)");
				free(w.hdr);
				continue;
			}
			free(w.hdr);
		} else
			e->command = xstrdup(h->cmd.str);
		if (from < h->nel && h->args.is_arr) {
			e->args = xcalloc(h->nel - from + 1, sizeof *e->args);
			for (j = from; j < h->nel; j++)
				e->args[e->nargs++] = hcfg_el_value(buf,
				    &h->el[j]);
		}
	}
	hdoc_clear(&doc);
	return 0;
}

/* Frees what hcfg_read filled. */
void
hcfg_clear(struct hcfg *cfg)
{
	struct hcfg_entry	*e;
	size_t			 i, j;

	for (i = 0; i < cfg->nentries; i++) {
		e = &cfg->entries[i];
		free(e->container);
		free(e->name);
		free(e->command);
		for (j = 0; j < e->nargs; j++)
			free(e->args[j]);
		free(e->args);
		free(e->url);
		free(e->note);
	}
	free(cfg->entries);
	memset(cfg, 0, sizeof *cfg);
}

/* Frees a list of changes. */
void
hcfg_changes_clear(struct hcfg_changes *ch)
{
	size_t	i;

	for (i = 0; i < ch->n; i++) {
		free(ch->v[i].container);
		free(ch->v[i].name);
		free(ch->v[i].before);
		free(ch->v[i].after);
	}
	free(ch->v);
	memset(ch, 0, sizeof *ch);
}

/* Adds an edit (text taken) of entry ent. */
static void
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
static void
hcfg_edit_raw(struct hedits *ed, size_t ent, size_t off, size_t len,
    const char *buf, size_t s, size_t e)
{
	hcfg_edit(ed, ent, off, len, xstrndup(buf + s, e - s), e - s);
}

/* Adds an edit whose text is the hbuf's (taken). */
static void
hcfg_edit_buf(struct hedits *ed, size_t ent, size_t off, size_t len,
    struct hbuf *b)
{
	size_t	 n;
	char	*t = hbuf_take(b, &n);

	hcfg_edit(ed, ent, off, len, t, n);
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
static void
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

/* The edits that bridge remote entry i (JSON): url -> command + args. */
static void
hcfg_wrap_remote(const char *buf, const struct hent *h, size_t i,
    const struct hcfg_wrap *wrap, struct hedits *ed)
{
	struct hbuf	 b = { 0 };
	size_t		 j;

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
	if (h->type.present) {
		hbuf_adds(&b, ", ");
		hcfg_quote(&b, "--transport");
		hbuf_adds(&b, ", ");
		hcfg_quote(&b, h->type.str);
	}
	for (j = 0; j < h->nhd; j++) {
		hbuf_adds(&b, ", ");
		hcfg_quote(&b, "--header");
		hbuf_adds(&b, ", \"");
		hbuf_add(&b, buf + h->hd[j].ks, h->hd[j].ke - h->hd[j].ks);
		hbuf_adds(&b, ": ");
		hbuf_add(&b, buf + h->hd[j].vs, h->hd[j].ve - h->hd[j].vs);
		hbuf_addc(&b, '"');
	}
	hbuf_addc(&b, ']');
	hcfg_edit_buf(ed, i, h->url.ks, h->url.ve - h->url.ks, &b);
	if (h->headers.present)
		hcfg_edit(ed, i, h->headers.rm_s, h->headers.rm_e -
		    h->headers.rm_s, xstrdup(""), 0);
}

/*
 * Makes the new buffer and the list of changes from the edits, one entry
 * per changed entry.
 */
static void
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
		if (!hcfg_chosen(wrap->names, h->name))
			continue;
		kind = hcfg_classify(layout, h, &note, &br);
		if (kind == HCFG_STDIO) {
			if (hcfg_wrapped(h, &w)) {
				free(w.hdr);
				continue;
			}
			hcfg_wrap_stdio(buf, h, i, wrap, &ed);
		} else if (kind == HCFG_REMOTE && br && wrap->bridge)
			hcfg_wrap_remote(buf, h, i, wrap, &ed);
	}
	hcfg_finish(buf, len, &doc, &ed, out, outlen, ch);
	hcfg_edits_clear(&ed);
	hdoc_clear(&doc);
	return 0;
}

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

/* The inverse edits of a bridged entry (JSON): command + args -> url. */
static void
hcfg_unwrap_remote(const char *buf, const struct hcfg_layout *layout,
    const struct hent *h, size_t i, const struct hwrapped *w,
    struct hedits *ed)
{
	struct hbuf	 b = { 0 };
	const struct hel *u = &h->el[w->connect + 1], *x;
	const char	*sp;
	size_t		 j;

	if (!h->can_bridge || layout->url_keys == NULL ||
	    layout->url_keys[0] == NULL)
		return;
	if (h->type.present && w->transport >= 0 &&
	    h->el[w->transport].str != NULL) {
		hcfg_quote(&b, h->el[w->transport].str);
		hcfg_edit_buf(ed, i, h->type.vs, h->type.ve - h->type.vs, &b);
	}
	hcfg_quote(&b, layout->url_keys[0]);
	hbuf_adds(&b, h->colon_cmd);
	hbuf_add(&b, buf + u->s, u->e - u->s);
	if (w->nhdr > 0) {
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
	hcfg_edit(ed, i, h->args.rm_s, h->args.rm_e - h->args.rm_s,
	    xstrdup(""), 0);
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
