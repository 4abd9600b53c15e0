/*
 * Matching rules against messages: the facts of a message (kind, method,
 * id, the tool, prompt or resource it names), the requests remembered so
 * that an answer is matched by its request's facts (bounded, the oldest
 * forgotten first), globs, counters and probability draws.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fault_int.h"

/*
 * The "]" closing the class that opens at p ("["), or NULL when none
 * does (the "[" is then itself): a "]" first is itself, and "\" quotes
 * the byte after it, as in fnmatch(3).
 */
static const char *
fault_match_class_end(const char *p)
{
	const char	*q = p + 1;

	if (*q == '!' || *q == '^')
		q++;
	if (*q == ']')
		q++;
	for (; *q != '\0'; q++) {
		if (*q == '\\' && q[1] != '\0')
			q++;
		else if (*q == ']')
			return q;
	}
	return NULL;
}

/* One byte of a class at *pp ("\x" is x), *pp moved past it. */
static unsigned char
fault_match_class_byte(const char **pp)
{
	const char	*p = *pp;

	if (*p == '\\' && p[1] != '\0')
		p++;
	*pp = p + 1;
	return (unsigned char)*p;
}

/*
 * Whether the glob element at *pp matches byte c: "?", "[...]" (ranges,
 * "!" or "^" to negate; a "[" with no "]" is itself), "\x" or a byte.
 * *pp moves past the element.
 */
static int
fault_match_elem(const char **pp, unsigned char c)
{
	const char	*p = *pp, *q;
	int		 neg = 0, ok = 0;
	unsigned char	 lo, hi;

	switch (*p) {
	case '?':
		*pp = p + 1;
		return 1;
	case '\\':
		if (p[1] == '\0') {	/* a trailing "\" matches nothing */
			*pp = p + 1;
			return 0;
		}
		*pp = p + 2;
		return (unsigned char)p[1] == c;
	case '[':
		if ((q = fault_match_class_end(p)) == NULL)
			break;
		p++;
		if (*p == '!' || *p == '^') {
			neg = 1;
			p++;
		}
		do {
			lo = hi = fault_match_class_byte(&p);
			if (*p == '-' && p + 1 < q) {
				p++;
				hi = fault_match_class_byte(&p);
			}
			if (c >= lo && c <= hi)
				ok = 1;
		} while (p < q);
		*pp = q + 1;
		return ok != neg;
	default:
		break;
	}
	*pp = p + 1;
	return (unsigned char)*p == c;
}

/*
 * Whether glob pat matches all n bytes of s: "*" any run, "?" one byte,
 * "[...]" a class, "\" quotes the next byte.  One pass that backs up only
 * to the last "*", so O(len(pat) * n) at worst whatever the pattern.
 */
int
fault_match_glob(const char *pat, const char *s, size_t n)
{
	const char	*p = pat, *star = NULL;
	size_t		 i = 0, star_i = 0;

	while (i < n) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			star = p;
			star_i = i;
			continue;
		}
		if (*p != '\0' && fault_match_elem(&p, (unsigned char)s[i])) {
			i++;
			continue;
		}
		if (star == NULL)
			return 0;
		p = star;
		i = ++star_i;
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

/* One member's value being looked for by scan_members. */
struct fault_match_find {
	const char	*buf;
	const char	*name;
	size_t		 off, len;
	int		 found;
};

/* scan_members callback: note the first member named f->name. */
static int
fault_match_find_cb(const struct scan_member *mb, void *arg)
{
	struct fault_match_find	*f = arg;

	if (!f->found && scan_key_is(f->buf, mb, f->name)) {
		f->found = 1;
		f->off = mb->val_off;
		f->len = mb->val_len;
	}
	return 0;
}

/* The string value of params.member in the message, decoded, or NULL. */
static char *
fault_match_param(const char *buf, size_t len, const char *member)
{
	struct fault_match_find	 f;
	const char		*params;
	size_t			 plen, n;
	char			*out;

	memset(&f, 0, sizeof f);
	f.buf = buf;
	f.name = "params";
	if (scan_members(buf, len, fault_match_find_cb, &f) != 0 || !f.found)
		return NULL;
	params = buf + f.off;
	plen = f.len;
	memset(&f, 0, sizeof f);
	f.buf = params;
	f.name = member;
	if (scan_members(params, plen, fault_match_find_cb, &f) != 0 ||
	    !f.found || f.len < 2 || params[f.off] != '"' ||
	    f.len - 2 > FAULT_NAME_MAX)
		return NULL;
	out = xmalloc(f.len - 1);
	if (scan_string_decode(params + f.off + 1, f.len - 2, out, &n) != 0) {
		free(out);
		return NULL;
	}
	out[n] = '\0';
	return out;
}

/* The key a request is remembered by: who sent it, and its id's text. */
static char *
fault_match_key(enum dir dir, const char *id, size_t idlen, size_t *keylen)
{
	char	*key;

	key = xmalloc(idlen + 2);
	key[0] = dir == DIR_C2S ? 'c' : 's';
	memcpy(key + 1, id, idlen);
	key[idlen + 1] = '\0';
	*keylen = idlen + 1;
	return key;
}

/* Free a remembered request (already out of the map and the list). */
static void
fault_match_pend_free(struct fault_pend *pe)
{
	size_t	i;

	free(pe->key);
	free(pe->method);
	for (i = 0; i < FAULT_NAMES; i++)
		free(pe->names[i]);
	free(pe);
}

/* Forget a remembered request. */
static void
fault_match_forget(struct fault_set *set, struct fault_pend *pe)
{
	int64_t	value;

	idmap_take(set->pending, pe->key, pe->keylen, &value, NULL);
	TAILQ_REMOVE(&set->pends, pe, entry);
	set->npending--;
	fault_match_pend_free(pe);
}

/* Forget every remembered request. */
void
fault_match_clear(struct fault_set *set)
{
	struct fault_pend	*pe;

	while ((pe = TAILQ_FIRST(&set->pends)) != NULL)
		fault_match_forget(set, pe);
}

/* New rules (SIGHUP): remembered timeouts name rules that are gone. */
void
fault_match_forget_timeouts(struct fault_set *set)
{
	struct fault_pend	*pe;

	TAILQ_FOREACH(pe, &set->pends, entry)
		pe->timeout_rule = 0;
}

/*
 * Remember a request (its facts, and the rule that put it under timeout,
 * or 0), so that its answer is matched by them; the oldest is forgotten
 * when FAULT_PENDING_MAX are remembered, and a request reusing an id
 * replaces the one before.
 */
void
fault_match_remember(struct fault_set *set, struct fault_msg *m,
    int timeout_rule)
{
	struct fault_pend	*pe;
	int64_t			 value;
	size_t			 i;

	pe = xcalloc(1, sizeof *pe);
	pe->key = fault_match_key(m->dir, m->id, m->idlen, &pe->keylen);
	if (idmap_get(set->pending, pe->key, pe->keylen, &value) == 0)
		fault_match_forget(set, (struct fault_pend *)(intptr_t)value);
	while (set->npending >= FAULT_PENDING_MAX)
		fault_match_forget(set, TAILQ_FIRST(&set->pends));
	pe->method = m->method;
	m->method = NULL;
	for (i = 0; i < FAULT_NAMES; i++) {
		pe->names[i] = m->names[i];
		m->names[i] = NULL;
	}
	pe->timeout_rule = timeout_rule;
	idmap_put(set->pending, pe->key, pe->keylen, (int64_t)(intptr_t)pe,
	    NULL);
	TAILQ_INSERT_TAIL(&set->pends, pe, entry);
	set->npending++;
}

/* An answer: take its request's facts into m, and forget the request. */
static void
fault_match_recall(struct fault_set *set, struct fault_msg *m)
{
	struct fault_pend	*pe;
	char			*key;
	size_t			 keylen, i;
	int64_t			 value;

	key = fault_match_key(m->dir == DIR_C2S ? DIR_S2C : DIR_C2S, m->id,
	    m->idlen, &keylen);
	if (idmap_get(set->pending, key, keylen, &value) == 0) {
		pe = (struct fault_pend *)(intptr_t)value;
		m->method = pe->method;
		pe->method = NULL;
		for (i = 0; i < FAULT_NAMES; i++) {
			m->names[i] = pe->names[i];
			pe->names[i] = NULL;
		}
		m->timeout_rule = pe->timeout_rule;
		fault_match_forget(set, pe);
	}
	free(key);
}

/*
 * The facts of one message; -1 when no rule can select it (not JSON-RPC,
 * a batch).  An answer's facts are its request's, which is forgotten.
 */
int
fault_match_facts(struct fault_set *set, enum dir dir, const char *buf,
    size_t len, int http, struct fault_msg *m)
{
	struct scan	 s;
	size_t		 i, j;

	memset(m, 0, sizeof *m);
	scan_message(buf, len, &s);
	switch (s.kind) {
	case KIND_REQUEST:
	case KIND_RESPONSE:
	case KIND_ERROR:
	case KIND_NOTIFICATION:
		break;
	default:
		return -1;
	}
	m->dir = dir;
	m->kind = s.kind;
	m->buf = buf;
	m->len = len;
	m->http = http;
	if (s.has_id) {
		m->id = buf + s.id_off;
		m->idlen = s.id_len;
	}
	if (s.kind == KIND_RESPONSE || s.kind == KIND_ERROR) {
		if (m->id != NULL && m->idlen <= FAULT_KEEP_MAX)
			fault_match_recall(set, m);
		return 0;
	}
	if (s.method_len <= FAULT_KEEP_MAX)
		m->method = scan_method_dup(buf, &s);
	if (s.kind != KIND_REQUEST || m->method == NULL)
		return 0;
	for (i = 0; i < FAULT_NAMES; i++) {
		for (j = 0; fault_names[i].methods[j] != NULL; j++) {
			if (strcmp(fault_names[i].methods[j], m->method) == 0)
				m->names[i] = fault_match_param(buf, len,
				    fault_names[i].member);
		}
	}
	return 0;
}

/* Free what m holds. */
void
fault_match_msg_clear(struct fault_msg *m)
{
	size_t	i;

	free(m->method);
	for (i = 0; i < FAULT_NAMES; i++)
		free(m->names[i]);
	memset(m, 0, sizeof *m);
}

/* Whether a string selector (a glob) matches s (NULL: absent). */
static int
fault_match_str(const struct fault_val *v, const char *s)
{
	if (!v->set)
		return 1;
	if (s == NULL)
		return 0;
	return fault_match_glob(v->s, s, strlen(s));
}

/*
 * Whether rule r selects message m: its selectors in order, then its
 * counter (which counts every message the selectors before it match),
 * then its probability (one draw per message that got that far).
 */
int
fault_match_rule(struct fault_set *set, struct fault_rule *r,
    const struct fault_msg *m)
{
	const struct fault_adef	*a = r->adef;
	const struct fault_val	*v = r->v;
	unsigned		 t;
	size_t			 i;

	if (!(r->dirs & FAULT_BIT(m->dir)) || !(r->kinds & FAULT_BIT(m->kind)))
		return 0;
	t = m->http ? FAULT_TRANSPORT_HTTP : FAULT_TRANSPORT_STDIO;
	if (!(a->transports & t) || (a->action == FAULT_CLOSE &&
	    v[FS_MODE].set && !(fault_close_transports[v[FS_MODE].i] & t)))
		return 0;
	/* A timeout needs its request remembered to hold the answer. */
	if (a->action == FAULT_TIMEOUT && (m->id == NULL ||
	    m->idlen > FAULT_KEEP_MAX))
		return 0;
	if (a->method != NULL && (m->method == NULL ||
	    strcmp(a->method, m->method) != 0))
		return 0;
	if (!fault_match_str(&v[FS_METHOD], m->method))
		return 0;
	for (i = 0; i < FAULT_NAMES; i++) {
		if (!fault_match_str(&v[fault_names[i].slot], m->names[i]))
			return 0;
	}
	if (v[FS_FIRST].set || v[FS_NTH].set || v[FS_AFTER].set) {
		if (r->seen < UINT64_MAX)
			r->seen++;
		if (v[FS_FIRST].set && r->seen > (uint64_t)v[FS_FIRST].i)
			return 0;
		if (v[FS_NTH].set && r->seen != (uint64_t)v[FS_NTH].i)
			return 0;
		if (v[FS_AFTER].set && r->seen <= (uint64_t)v[FS_AFTER].i)
			return 0;
	}
	if (v[FS_P].set && !(fault_prng_unit(&set->prng) < v[FS_P].d))
		return 0;
	return 1;
}
