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
		free(h->env.str);
		free(h->envh.str);
		free(h->env_msep);
		free(h->env_colon);
		free(h->colon_env);
		free(h->colon_hdr);
		free(h->msep_last);
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
int
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
char *
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
void
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
int
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
enum hcfg_kind
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
	else if (h->nhd > 0 && h->env.present && (!h->env.is_obj ||
	    h->envh.present))
		*note = "remote, and its env cannot take its headers "
		    "(MCPREEL_HEADERS)";
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

/* The transport url key i of the layout means ("http", "sse"), or NULL. */
const char *
hcfg_url_transport(const struct hcfg_layout *layout, int i)
{
	if (i < 0 || layout->url_transports == NULL)
		return NULL;
	return layout->url_transports[i];
}

/*
 * The url key a bridged entry goes back to: the layout's key meaning
 * transport t, else its first (NULL when it has none).
 */
const char *
hcfg_url_key_for(const struct hcfg_layout *layout, const char *t)
{
	size_t	i;

	if (layout->url_keys == NULL || layout->url_keys[0] == NULL)
		return NULL;
	for (i = 0; t != NULL && layout->url_transports != NULL &&
	    layout->url_keys[i] != NULL; i++)
		if (layout->url_transports[i] != NULL &&
		    strcmp(layout->url_transports[i], t) == 0)
			return layout->url_keys[i];
	return layout->url_keys[0];
}

/* Whether name is among names (NULL: all). */
int
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
		if (note == NULL && memchr(buf + h->s, '\0', h->e - h->s) !=
		    NULL)
			note = "holds a NUL byte";
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
			free(e->note);	/* wrapped: not left */
			e->note = NULL;
			if (w.dash >= 0) {
				e->command = hcfg_el_value(buf,
				    &h->el[w.dash + 1]);
				from = (size_t)w.dash + 2;
			} else if (w.connect >= 0) {
				e->bridged = 1;
				e->kind = HCFG_REMOTE;
				e->url = hcfg_el_value(buf,
				    &h->el[w.connect + 1]);
				e->url_key = hcfg_url_key_for(layout,
				    w.transport >= 0 ? h->el[w.transport].str :
				    NULL);
				free(w.hdr);
				continue;
			} else {
				free(e->note);
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
