/*
 * The bridge's pending requests (a client request waiting for the
 * server's answer: by id, with its progress token and reply channel), and
 * the answers mcpreel makes in the server's place when that answer cannot
 * come: JSON-RPC errors to the client, recorded as notes, never as the
 * server's messages.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bridge_int.h"

/*
 * The JSON text of the value at params._meta.progressToken (with meta
 * "_meta") or params.progressToken (without), or NULL.  Parsed only
 * when the bytes hold the word.
 */
char *
bridge_pend_token(const char *bytes, size_t len, int meta)
{
	json_t	*j, *p;
	char	*s = NULL;

	if (memmem(bytes, len, "progressToken", 13) == NULL)
		return NULL;
	if ((j = json_loadb(bytes, len, 0, NULL)) == NULL)
		return NULL;
	p = json_object_get(j, "params");
	if (meta)
		p = json_object_get(p, "_meta");
	p = json_object_get(p, "progressToken");
	if (json_is_string(p) || json_is_integer(p))
		s = json_dumps(p, JSON_ENCODE_ANY | JSON_COMPACT);
	json_decref(j);
	return s;
}

/*
 * An id's JSON text as a key: as written, unless it may be written in
 * more than one way (an escape, a fraction or an exponent, -0), when it
 * is parsed and written compact, a whole number as an integer (a server that re-encodes JSON answers
 * "a\u0062" as "ab").  The caller frees it.
 */
char *
bridge_pend_canon(const char *text)
{
	json_t	*j, *v;
	char	*s;

	if (strpbrk(text, "\\.eE") == NULL && strncmp(text, "-0", 2) != 0)
		return xstrdup(text);
	if ((j = json_loads(text, JSON_DECODE_ANY, NULL)) == NULL)
		return xstrdup(text);
	/* 1.0, 1e0 and 1 are one number (JavaScript writes them all 1). */
	if (json_is_real(j) && json_real_value(j) == floor(json_real_value(j))
	    && fabs(json_real_value(j)) < 9007199254740992.0) {
		v = json_integer((json_int_t)json_real_value(j));
		json_decref(j);
		j = v;
	}
	s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(j);
	return s != NULL ? s : xstrdup(text);
}

/* The key (bridge_pend_canon) of the id of the message scanned in sc. */
char *
bridge_pend_key(const char *bytes, const struct scan *sc)
{
	char	*id = scan_id_dup(bytes, sc), *key;

	key = bridge_pend_canon(id);
	free(id);
	return key;
}

/*
 * The one request in flight whose client is still there, or NULL when
 * none or more than one is (a request whose client went away and that
 * the server never answers does not count).
 */
struct bpend *
bridge_pend_only(struct bridge *b)
{
	struct bpend	*p, *only = NULL;

	TAILQ_FOREACH(p, &b->pend, entry) {
		if (ereq_gone(p->er))
			continue;
		if (only != NULL)
			return NULL;
		only = p;
	}
	return only;
}

void
bridge_pend_free(struct bpend *p)
{
	free(p->id);
	free(p->token);
	free(p);
}

/* Take p out of the maps and the list (the caller frees it). */
void
bridge_pend_take(struct bridge *b, struct bpend *p)
{
	int64_t	v;

	idmap_take(b->byid, p->id, strlen(p->id), &v, NULL);
	if (p->token != NULL && idmap_get(b->bytoken, p->token,
	    strlen(p->token), &v) == 0 && (struct bpend *)(intptr_t)v == p)
		idmap_take(b->bytoken, p->token, strlen(p->token), &v, NULL);
	TAILQ_REMOVE(&b->pend, p, entry);
	b->npend--;
}

/*
 * Answer the request with id (its JSON text) on er (NULL: our stdout) in
 * the server's place, with a JSON-RPC error saying why.  Not a message
 * from the server: recorded as a note, with the answer's bytes.
 */
void
bridge_pend_answer(struct bridge *b, struct ereq *er, const char *id,
    const char *why)
{
	json_t	*idv, *out;
	char	*s, *note;

	if ((idv = json_loads(id, JSON_DECODE_ANY, NULL)) == NULL)
		idv = json_null();
	out = json_pack("{s:s, s:o, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	    idv, "error", "code", -32000, "message", why);
	s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	if (s == NULL)
		fatalx("out of memory");
	if (er != NULL)
		ereq_end(b->ep, er, s, strlen(s));
	else
		endpoint_send(b->ep, s, strlen(s));
	xasprintf(&note, "mcpreel answered request %s itself (not the "
	    "server): %s", id, s);
	bridge_note(b, note);
	free(note);
	free(s);
}

/*
 * The text of the error a request gets when the server cannot answer
 * it: "mcpreel: the server at URL ...: why".
 */
char *
bridge_pend_why(struct bridge *b, const char *why)
{
	char	*s;

	if (b->opt->connect != NULL && strncmp(why, "the server at ", 14) == 0)
		xasprintf(&s, "mcpreel: %s", why);
	else if (b->opt->connect != NULL)
		xasprintf(&s, "mcpreel: the server at %s: %s", b->opt->server,
		    why);
	else
		xasprintf(&s, "mcpreel: the server (%s) is gone: %s",
		    b->opt->server, why);
	return tap_redact_text(s);
}

/* The first failure is said on stderr too; the next only at debug level. */
void
bridge_pend_say(struct bridge *b, const char *text)
{
	/* The log line has its own "mcpreel: " in front. */
	if (strncmp(text, "mcpreel: ", 9) == 0)
		text += 9;
	if (!b->failed)
		log_warnx("%s", text);
	else
		log_debug("%s", text);
	b->failed = 1;
}

/* Every pending request gets an error saying why (the server is gone). */
void
bridge_pend_fail_all(struct bridge *b, const char *why)
{
	struct bpend	*p;
	char		*text = bridge_pend_why(b, why);

	while ((p = TAILQ_FIRST(&b->pend)) != NULL) {
		bridge_pend_take(b, p);
		bridge_pend_answer(b, p->er, p->id, text);
		bridge_pend_free(p);
	}
	free(text);
}

/*
 * A message the transport could not deliver or get answered (a refused
 * connection, a 401, a 5xx, a stream cut before the answer): a request
 * gets the error in the server's place; anything else is noted.
 */
void
bridge_pend_failed_cb(const char *bytes, size_t len, const char *why, void *arg)
{
	struct bridge	*b = arg;
	struct scan	 sc;
	struct bpend	*p;
	char		*id, *text, *note;
	int64_t		 v;

	text = bridge_pend_why(b, why);
	bridge_pend_say(b, text);
	scan_message(bytes, len, &sc);
	if (sc.kind != KIND_REQUEST || !sc.has_id) {
		xasprintf(&note, "a client message did not reach the server: "
		    "%s", text);
		bridge_note(b, note);
		free(note);
		free(text);
		return;
	}
	id = bridge_pend_key(bytes, &sc);
	if (idmap_get(b->byid, id, strlen(id), &v) == 0) {
		p = (struct bpend *)(intptr_t)v;
		bridge_pend_take(b, p);
		bridge_pend_answer(b, p->er, p->id, text);
		bridge_pend_free(p);
	}
	free(id);
	free(text);
}
