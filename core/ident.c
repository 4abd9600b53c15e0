/*
 * The identity of a message too long to keep whole: its kind, method and
 * id, gathered from all of its bytes as they stream past the record cap.
 * The kept prefix may hold none of them (an SDK writes "id" last), and
 * without them the row could not be paired with its answer.
 *
 * Fed the bytes in pieces of any size, it follows the JSON structure just
 * enough to see the top-level members (strings and their escapes, nesting
 * by a counter) and copies the values of "method" and "id" up to a bound;
 * everything else only passes through the state machine, so its memory is
 * constant whatever the size.  It does not validate: the message was
 * forwarded as it was, and the prefix in the row shows what it looked
 * like.  The result is a small JSON-RPC object of the same kind, method
 * and id, which the writer classifies with the ordinary scanner.
 */

#include <stdlib.h>
#include <string.h>

#include "core.h"

enum ident_state {
	IDENT_START,		/* before the first byte that is not space */
	IDENT_KEY_OR_END,	/* in the object: a key or '}' next */
	IDENT_KEY,		/* in a key's quotes */
	IDENT_COLON,		/* after a key */
	IDENT_VALUE,		/* a value next */
	IDENT_STRING,		/* in a top-level value's quotes */
	IDENT_SCALAR,		/* in a number or literal */
	IDENT_NESTED,		/* in an object or array value */
	IDENT_NEXT,		/* after a value: ',' or '}' next */
	IDENT_DONE,		/* the object closed */
	IDENT_ARRAY,		/* a batch: nothing more to learn */
	IDENT_BAD		/* not a JSON-RPC object */
};

enum ident_member {
	IDENT_OTHER, IDENT_METHOD, IDENT_ID, IDENT_RESULT, IDENT_ERROR
};

static int
ident_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Which member a key (its raw bytes between the quotes) names. */
static enum ident_member
ident_member_of(const struct ident *id)
{
	char	buf[IDENT_KEY_MAX];
	size_t	n;

	/* Decoded, a key is never longer than as written. */

	if (id->key_over)
		return IDENT_OTHER;
	if (scan_string_decode(id->key, id->key_len, buf, &n) != 0)
		return IDENT_OTHER;
	if (n == 6 && memcmp(buf, "method", 6) == 0)
		return IDENT_METHOD;
	if (n == 2 && memcmp(buf, "id", 2) == 0)
		return IDENT_ID;
	if (n == 6 && memcmp(buf, "result", 6) == 0)
		return IDENT_RESULT;
	if (n == 5 && memcmp(buf, "error", 5) == 0)
		return IDENT_ERROR;
	return IDENT_OTHER;
}

void
ident_init(struct ident *id)
{
	memset(id, 0, sizeof *id);
}

/* Copy c into the value being kept (method or id), up to the bound. */
static void
ident_keep(struct ident *id, int c)
{
	if (id->member != IDENT_METHOD && id->member != IDENT_ID)
		return;
	if (id->val_len < sizeof id->val)
		id->val[id->val_len++] = (char)c;
	else
		id->val_over = 1;
}

/* A member's value ended: take it if it is one we keep. */
static void
ident_value_end(struct ident *id)
{
	switch (id->member) {
	case IDENT_METHOD:
		/* Last one wins, as in the scanner; a long one is unusable. */
		id->has_method = !id->val_over && id->val_len >= 2 &&
		    id->val[0] == '"';
		id->method_bad = !id->has_method;
		if (id->has_method) {
			memcpy(id->method, id->val, id->val_len);
			id->method_len = id->val_len;
		}
		break;
	case IDENT_ID:
		id->has_id = !id->val_over;
		id->id_bad = id->val_over;
		if (id->has_id) {
			memcpy(id->id, id->val, id->val_len);
			id->id_len = id->val_len;
		}
		break;
	case IDENT_RESULT:
		id->has_result = 1;
		break;
	case IDENT_ERROR:
		id->has_error = 1;
		break;
	default:
		break;
	}
	id->state = IDENT_NEXT;
}

/* One byte, in the states where strings and nesting are not skipped. */
static void
ident_byte(struct ident *id, int c)
{
	switch (id->state) {
	case IDENT_START:
		if (ident_space(c))
			return;
		id->state = c == '{' ? IDENT_KEY_OR_END : c == '[' ?
		    IDENT_ARRAY : IDENT_BAD;
		return;
	case IDENT_KEY_OR_END:
		if (ident_space(c))
			return;
		if (c == '}')
			id->state = IDENT_DONE;
		else if (c == '"') {
			id->state = IDENT_KEY;
			id->key_len = 0;
			id->key_over = 0;
			id->esc = 0;
		} else
			id->state = IDENT_BAD;
		return;
	case IDENT_KEY:
		if (!id->esc && c == '"') {
			id->member = ident_member_of(id);
			id->state = IDENT_COLON;
			return;
		}
		id->esc = !id->esc && c == '\\';
		if (id->key_len < sizeof id->key)
			id->key[id->key_len++] = (char)c;
		else
			id->key_over = 1;
		return;
	case IDENT_COLON:
		if (ident_space(c))
			return;
		id->state = c == ':' ? IDENT_VALUE : IDENT_BAD;
		return;
	case IDENT_VALUE:
		if (ident_space(c))
			return;
		id->val_len = 0;
		id->val_over = 0;
		id->esc = 0;
		ident_keep(id, c);
		if (c == '"')
			id->state = IDENT_STRING;
		else if (c == '{' || c == '[') {
			id->state = IDENT_NESTED;
			id->depth = 1;
			id->in_str = 0;
		} else if (c == ',' || c == '}' || c == ']' || c == ':')
			id->state = IDENT_BAD;
		else
			id->state = IDENT_SCALAR;
		return;
	case IDENT_STRING:
		ident_keep(id, c);
		if (!id->esc && c == '"')
			ident_value_end(id);
		else
			id->esc = !id->esc && c == '\\';
		return;
	case IDENT_SCALAR:
		if (ident_space(c) || c == ',' || c == '}') {
			ident_value_end(id);
			ident_byte(id, c);
			return;
		}
		ident_keep(id, c);
		return;
	case IDENT_NESTED:
		ident_keep(id, c);
		if (id->in_str) {
			if (!id->esc && c == '"')
				id->in_str = 0;
			else
				id->esc = !id->esc && c == '\\';
		} else if (c == '"') {
			id->in_str = 1;
			id->esc = 0;
		} else if (c == '{' || c == '[')
			id->depth++;
		else if ((c == '}' || c == ']') && --id->depth == 0)
			ident_value_end(id);
		return;
	case IDENT_NEXT:
		if (ident_space(c))
			return;
		id->state = c == ',' ? IDENT_KEY_OR_END : c == '}' ?
		    IDENT_DONE : IDENT_BAD;
		return;
	case IDENT_DONE:
		if (!ident_space(c))
			id->state = IDENT_BAD;
		return;
	case IDENT_ARRAY:
	case IDENT_BAD:
		return;
	}
}

/* Whether the value being read is copied (method or id). */
static int
ident_kept(const struct ident *id)
{
	return id->member == IDENT_METHOD || id->member == IDENT_ID;
}

/*
 * Feed the next n bytes of the message.  Inside a value that is not kept
 * (any member but method and id: a huge result or error too, the usual
 * reason a message is cut), only quotes, backslashes and brackets
 * matter: the bytes between them are skipped a run at a time.
 */
void
ident_feed(struct ident *id, const void *buf, size_t n)
{
	const unsigned char	*p = buf, *end = p + n;

	while (p < end) {
		if (id->state == IDENT_ARRAY || id->state == IDENT_BAD)
			return;
		if (id->state == IDENT_NESTED && !ident_kept(id) &&
		    !id->esc) {
			while (p < end && *p != '"' && *p != '\\' &&
			    (id->in_str || (*p != '{' && *p != '[' &&
			    *p != '}' && *p != ']')))
				p++;
			if (p == end)
				return;
		} else if (id->state == IDENT_STRING && !ident_kept(id) &&
		    !id->esc) {
			while (p < end && *p != '"' && *p != '\\')
				p++;
			if (p == end)
				return;
		}
		ident_byte(id, *p++);
	}
}

/*
 * The message as far as its identity goes, as a small JSON-RPC object
 * (allocated, *len its length) that scan_message() classifies as the whole
 * message would be: a request, notification, response or error with its
 * method and id, or a batch.  NULL when the bytes were no JSON-RPC object
 * the scanner could classify.
 */
char *
ident_finish(struct ident *id, size_t *len)
{
	char	*out;

	if (id->state == IDENT_SCALAR)
		ident_value_end(id);
	if (id->state == IDENT_ARRAY) {
		*len = 2;
		return xstrdup("[]");
	}
	if (id->state != IDENT_DONE || id->method_bad || id->id_bad)
		return NULL;
	if (id->has_method)
		xasprintf(&out, "{\"method\":%.*s%s%.*s}",
		    (int)id->method_len, id->method, id->has_id ? ",\"id\":" :
		    "", id->has_id ? (int)id->id_len : 0, id->id);
	else if (id->has_result != id->has_error)
		xasprintf(&out, "{%s%.*s%s\"%s\":null}", id->has_id ?
		    "\"id\":" : "", id->has_id ? (int)id->id_len : 0, id->id,
		    id->has_id ? "," : "", id->has_result ? "result" :
		    "error");
	else
		return NULL;
	*len = strlen(out);
	return out;
}
