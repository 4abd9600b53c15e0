/*
 * The top-level scanner against jansson: on every input jansson accepts,
 * scan_message() must give the kind jansson's tree has, the same decoded
 * method and an id whose text jansson reads as the same value.  These are
 * the rules of the differential unit test (tests/unit/test_scan.c), run on
 * whatever libFuzzer makes instead of a fixed set of mutations.  On inputs
 * jansson rejects the scanner only has to survive, and keep its offsets
 * inside the input.  The whole input is the message: no head.
 * scan_members(), which import reads its lines with, is held to jansson
 * too: it takes every object jansson reads, with every member; and
 * scan_elements() likewise every array, with every element.
 *
 * One departure from the unit test, which never feeds jansson a raw NUL:
 * jansson skips a NUL byte that follows a number or a literal (its lexer
 * looks one byte ahead, and a NUL put back reads as the end of its own
 * buffer), so it takes "[2\0]" for [2].  No JSON text holds a raw NUL
 * (not between tokens, not in a string), so such an input is held to
 * "invalid" instead of to jansson.
 */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"

/* How jansson reads an input: any value, "\u0000" allowed in strings. */
#define FUZZ_SCAN_JSON_FLAGS	(JSON_DECODE_ANY | JSON_ALLOW_NUL)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/*
 * The kind jansson's tree has under the scanner's rules: an array is a
 * batch; an object with a string "method" is a request or a notification
 * by whether it has "id"; a "method" of another type makes it invalid;
 * otherwise exactly one of "result" and "error" decides.
 */
static enum msg_kind
fuzz_scan_ref_kind(json_t *v)
{
	json_t	*m;
	int	 r, e;

	if (json_is_array(v))
		return KIND_BATCH;
	if (!json_is_object(v))
		return KIND_INVALID;
	if ((m = json_object_get(v, "method")) != NULL) {
		if (!json_is_string(m))
			return KIND_INVALID;
		if (json_object_get(v, "id") != NULL)
			return KIND_REQUEST;
		return KIND_NOTIFICATION;
	}
	r = json_object_get(v, "result") != NULL;
	e = json_object_get(v, "error") != NULL;
	if (r && !e)
		return KIND_RESPONSE;
	if (e && !r)
		return KIND_ERROR;
	return KIND_INVALID;
}

/* Hold the scanner's method to jansson's "method" member (jm, or NULL). */
static void
fuzz_scan_check_method(const uint8_t *buf, size_t len, const struct scan *s,
    json_t *jm)
{
	char	*dec, *method;
	size_t	 n;

	if (jm == NULL || !json_is_string(jm)) {
		if (s->has_method)
			fuzz_fail(buf, len, "scan: a method where jansson "
			    "has no string method");
		return;
	}
	if (!s->has_method)
		fuzz_fail(buf, len, "scan: no method, jansson's is \"%s\"",
		    json_string_value(jm));
	dec = malloc(s->method_len + 1);
	if (dec == NULL)
		abort();
	if (scan_string_decode((const char *)buf + s->method_off,
	    s->method_len, dec, &n) != 0)
		fuzz_fail(buf, len, "scan: the method does not decode");
	if (n != json_string_length(jm) ||
	    memcmp(dec, json_string_value(jm), n) != 0)
		fuzz_fail(buf, len, "scan: method of %zu bytes, jansson's of "
		    "%zu differs", n, json_string_length(jm));
	/* The NUL-terminated copy the writer stores, when it can be one. */
	if (memchr(dec, '\0', n) == NULL) {
		method = scan_method_dup(buf, s);
		if (strcmp(method, json_string_value(jm)) != 0)
			fuzz_fail(buf, len, "scan: scan_method_dup gives "
			    "\"%s\", jansson \"%s\"", method,
			    json_string_value(jm));
		free(method);
	}
	free(dec);
}

/* Hold the scanner's id text to jansson's "id" member (jid, or NULL). */
static void
fuzz_scan_check_id(const uint8_t *buf, size_t len, const struct scan *s,
    json_t *jid)
{
	json_error_t	 jerr;
	json_t		*sid;
	char		*id;

	if (jid == NULL) {
		if (s->has_id)
			fuzz_fail(buf, len, "scan: an id where jansson has "
			    "none");
		return;
	}
	if (!s->has_id)
		fuzz_fail(buf, len, "scan: no id where jansson has one");
	id = scan_id_dup(buf, s);
	sid = json_loadb(id, s->id_len, FUZZ_SCAN_JSON_FLAGS, &jerr);
	if (sid == NULL)
		fuzz_fail(buf, len, "scan: id text '%s' is not JSON (%s)", id,
		    jerr.text);
	if (!json_equal(sid, jid))
		fuzz_fail(buf, len, "scan: id '%s' differs from jansson's",
		    id);
	json_decref(sid);
	free(id);
}

/* What fuzz_scan_member_cb checks each member against. */
struct fuzz_members {
	const uint8_t	*buf;
	size_t		 len;
	json_t		*tree;		/* jansson's object, or NULL */
	size_t		 n;
};

/*
 * A member scan_members() reports: inside the input, its key decodes, and
 * when jansson read the input as an object, its value's text is JSON and
 * the key is one of the object's.
 */
static int
fuzz_scan_member_cb(const struct scan_member *mb, void *arg)
{
	struct fuzz_members	*fm = arg;
	json_t			*v;
	char			*key;
	size_t			 n;

	fm->n++;
	if (mb->key_off > fm->len || mb->key_len > fm->len - mb->key_off ||
	    mb->val_off > fm->len || mb->val_len > fm->len - mb->val_off ||
	    mb->val_len == 0)
		fuzz_fail(fm->buf, fm->len, "scan_members: member %zu is past "
		    "the end", fm->n);
	if ((key = malloc(mb->key_len + 1)) == NULL)
		abort();
	if (scan_string_decode((const char *)fm->buf + mb->key_off,
	    mb->key_len, key, &n) != 0)
		fuzz_fail(fm->buf, fm->len, "scan_members: a key that does "
		    "not decode");
	if (fm->tree != NULL) {
		if (json_object_getn(fm->tree, key, n) == NULL)
			fuzz_fail(fm->buf, fm->len, "scan_members: a key "
			    "jansson's object has not");
		v = json_loadb((const char *)fm->buf + mb->val_off,
		    mb->val_len, FUZZ_SCAN_JSON_FLAGS, NULL);
		if (v == NULL)
			fuzz_fail(fm->buf, fm->len, "scan_members: value text "
			    "of member %zu is not JSON", fm->n);
		json_decref(v);
	}
	free(key);
	return 0;
}

/*
 * Hold scan_members() (what import reads lines with) to jansson: it takes
 * every object jansson reads (tree), and refuses what jansson reads as
 * another value and whatever holds a raw NUL (nul).  What jansson refuses
 * it may take: numbers beyond 64 bits, nesting past jansson's limit.
 */
static void
fuzz_scan_check_members(const uint8_t *buf, size_t len, json_t *tree,
    int nul)
{
	struct fuzz_members	 fm;
	int			 rc;

	memset(&fm, 0, sizeof fm);
	fm.buf = buf;
	fm.len = len;
	fm.tree = json_is_object(tree) ? tree : NULL;
	rc = scan_members(buf, len, fuzz_scan_member_cb, &fm);
	if (rc != 0 && fm.tree != NULL)
		fuzz_fail(buf, len, "scan_members: refused an object jansson "
		    "reads");
	if (rc == 0 && (nul || (tree != NULL && fm.tree == NULL)))
		fuzz_fail(buf, len, "scan_members: took %s", nul ? "a raw NUL" :
		    "a value that is no object");
	if (fm.tree != NULL && fm.n < json_object_size(fm.tree))
		fuzz_fail(buf, len, "scan_members: %zu members, jansson's "
		    "object has %zu", fm.n, json_object_size(fm.tree));
}

/* What fuzz_scan_element_cb checks against: the input and jansson's array. */
struct fuzz_elements {
	const uint8_t	*buf;
	size_t		 len;
	json_t		*tree;		/* jansson's array, or NULL */
	size_t		 n;		/* elements so far */
};

/* An element scan_elements() reports: inside the input, JSON to jansson. */
static int
fuzz_scan_element_cb(const char *p, size_t len, void *arg)
{
	struct fuzz_elements	*fe = arg;
	const char		*base = (const char *)fe->buf;
	json_t			*v;

	if (p < base || (size_t)(p - base) > fe->len ||
	    len > fe->len - (size_t)(p - base) || len == 0)
		fuzz_fail(fe->buf, fe->len, "scan_elements: element %zu is "
		    "past the end", fe->n);
	if (fe->tree != NULL) {
		v = json_loadb(p, len, FUZZ_SCAN_JSON_FLAGS, NULL);
		if (v == NULL)
			fuzz_fail(fe->buf, fe->len, "scan_elements: element "
			    "%zu is not JSON", fe->n);
		json_decref(v);
	}
	fe->n++;
	return 0;
}

/*
 * Hold scan_elements() (what a batch's requests and answers are counted
 * with) to jansson, as scan_members(): every array jansson reads, with
 * every element, and nothing that is another value or holds a raw NUL.
 */
static void
fuzz_scan_check_elements(const uint8_t *buf, size_t len, json_t *tree,
    int nul)
{
	struct fuzz_elements	 fe;
	int			 rc;

	memset(&fe, 0, sizeof fe);
	fe.buf = buf;
	fe.len = len;
	fe.tree = json_is_array(tree) ? tree : NULL;
	rc = scan_elements(buf, len, fuzz_scan_element_cb, &fe);
	if (rc != 0 && fe.tree != NULL)
		fuzz_fail(buf, len, "scan_elements: refused an array jansson "
		    "reads");
	if (rc == 0 && (nul || (tree != NULL && fe.tree == NULL)))
		fuzz_fail(buf, len, "scan_elements: took %s", nul ?
		    "a raw NUL" : "a value that is no array");
	if (fe.tree != NULL && fe.n != json_array_size(fe.tree))
		fuzz_fail(buf, len, "scan_elements: %zu elements, jansson's "
		    "array has %zu", fe.n, json_array_size(fe.tree));
}

/* Scan one input and compare it with jansson's reading, if it has one. */
int
LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
	struct scan	 s;
	json_error_t	 jerr;
	json_t		*tree, *jm = NULL, *jid = NULL;
	enum msg_kind	 want;
	char		*dec;
	size_t		 n;

	scan_message(buf, len, &s);
	if ((int)s.kind < 0 || (int)s.kind >= KIND_MAX)
		fuzz_fail(buf, len, "scan: kind %d out of range", s.kind);
	if (s.has_method && (s.method_off > len ||
	    s.method_len > len - s.method_off))
		fuzz_fail(buf, len, "scan: method at %zu+%zu is past the end",
		    s.method_off, s.method_len);
	if (s.has_id && (s.id_off > len || s.id_len > len - s.id_off))
		fuzz_fail(buf, len, "scan: id at %zu+%zu is past the end",
		    s.id_off, s.id_len);
	if (s.has_method) {
		/* The scanner validated it, so it must decode. */
		if ((dec = malloc(s.method_len + 1)) == NULL)
			abort();
		if (scan_string_decode((const char *)buf + s.method_off,
		    s.method_len, dec, &n) != 0 || n > s.method_len)
			fuzz_fail(buf, len, "scan: a method that does not "
			    "decode");
		free(dec);
	}

	if (memchr(buf, '\0', len) != NULL) {
		if (s.kind != KIND_INVALID || s.has_method || s.has_id)
			fuzz_fail(buf, len, "scan: kind %s for an input with "
			    "a raw NUL", kind_name(s.kind));
		fuzz_scan_check_members(buf, len, NULL, 1);
		fuzz_scan_check_elements(buf, len, NULL, 1);
		return 0;
	}
	tree = json_loadb((const char *)buf, len, FUZZ_SCAN_JSON_FLAGS, &jerr);
	fuzz_scan_check_members(buf, len, tree, 0);
	fuzz_scan_check_elements(buf, len, tree, 0);
	if (tree == NULL)
		return 0;
	want = fuzz_scan_ref_kind(tree);
	if (s.kind != want)
		fuzz_fail(buf, len, "scan: kind %s, jansson's %s",
		    kind_name(s.kind), kind_name(want));
	if (json_is_object(tree)) {
		jm = json_object_get(tree, "method");
		jid = json_object_get(tree, "id");
	}
	fuzz_scan_check_method(buf, len, &s, jm);
	fuzz_scan_check_id(buf, len, &s, jid);
	json_decref(tree);
	return 0;
}
