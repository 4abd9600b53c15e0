/*
 * Bytes and text as JSON members, losing nothing: what the files formats
 * write put in their lines, and what the commands that print recordings
 * as JSON use too.
 */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "formats.h"
#include "store.h"

/* A string, or null; text that is not UTF-8 has those bytes as '?'. */
json_t *
fjson_str(const char *s)
{
	json_t		*v;
	char		*copy;
	size_t		 i, n, len;

	if (s == NULL)
		return json_null();
	if ((v = json_string(s)) != NULL)
		return v;
	len = strlen(s);
	copy = xstrdup(s);
	for (i = 0; i < len; i += n) {
		if ((n = scan_utf8_len((unsigned char *)copy + i,
		    (unsigned char *)copy + len)) == 0) {
			copy[i] = '?';
			n = 1;
		}
	}
	v = json_string(copy);
	free(copy);
	return v != NULL ? v : json_string("?");
}

/*
 * Set key in obj to bytes that are not JSON: as a string when they are
 * UTF-8 (key_text), else base64 (key_b64).
 */
void
fjson_bytes(json_t *obj, const char *key_text, const char *key_b64,
    const void *raw, size_t len)
{
	json_t	*s;
	char	*out;
	size_t	 o;

	if ((s = json_stringn(raw != NULL ? raw : "", len)) != NULL) {
		json_object_set_new(obj, key_text, s);
		return;
	}
	out = b64_encode(raw, len, &o);
	json_object_set_new(obj, key_b64, json_stringn(out, o));
	free(out);
}

/*
 * Set key in obj to text s (null for NULL), always: text that is not
 * UTF-8 has those bytes as '?' there, and its bytes whole in base64 at
 * key_b64, so that nothing is lost.
 */
void
fjson_text(json_t *obj, const char *key, const char *key_b64,
    const char *s)
{
	char	*out;
	size_t	 o;

	json_object_set_new(obj, key, fjson_str(s));
	if (s == NULL || json_is_string(json_object_get(obj, key)) == 0 ||
	    strcmp(json_string_value(json_object_get(obj, key)), s) == 0)
		return;
	out = b64_encode(s, strlen(s), &o);
	json_object_set_new(obj, key_b64, json_stringn(out, o));
	free(out);
}

/*
 * The rule, action, direction and method of fault f as members of o, in
 * that order: what every file and listing of a fault says of it.
 */
void
fjson_fault_rule(json_t *o, const struct fault_row *f)
{
	fjson_text(o, "rule", "rule_base64", f->rule);
	fjson_text(o, "action", "action_base64", f->action);
	json_object_set_new(o, "direction", f->has_dir ?
	    json_string(dir_name(f->dir)) : json_null());
	fjson_text(o, "method", "method_base64", f->method);
}
