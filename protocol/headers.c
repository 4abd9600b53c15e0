/*
 * The HTTP headers a 2026-07-28 request carries beside its body, as the
 * Streamable HTTP transport of that revision asks: Mcp-Method, Mcp-Name
 * (a tool's or prompt's name, a resource's URI) and Mcp-Param-* for the
 * tool arguments whose schema marks them (x-mcp-header), learnt from the
 * session's tools/list.  Replay and the bridge (record --connect) send
 * them; a request of an older revision gets none.
 */

#include <stdlib.h>
#include <string.h>

#include "protocol.h"

/* What a session has learnt: tool name -> {argument: header name}. */
struct proto_headers {
	json_t	*marks;
};

struct proto_headers *
proto_headers_new(void)
{
	struct proto_headers	*ph = xcalloc(1, sizeof *ph);

	if ((ph->marks = json_object()) == NULL)
		fatalx("out of memory");
	return ph;
}

void
proto_headers_free(struct proto_headers *ph)
{
	if (ph == NULL)
		return;
	json_decref(ph->marks);
	free(ph);
}

/* Free a list proto_headers_for() made (NULL: nothing). */
void
proto_headers_list_free(char **h)
{
	size_t	i;

	for (i = 0; h != NULL && h[i] != NULL; i++)
		free(h[i]);
	free(h);
}

/*
 * A header value as 2026-07-28 wants it: plain visible ASCII as it is,
 * anything else as =?base64?...?= (caller frees).
 */
static char *
proto_header_value(const char *v)
{
	const unsigned char	*p;
	size_t			 len = strlen(v);
	char			*b, *s;
	int			 plain = len > 0 && v[0] != ' ' &&
				    v[len - 1] != ' ' &&
				    strncmp(v, "=?", 2) != 0;

	for (p = (const unsigned char *)v; plain && *p != '\0'; p++) {
		if (*p < 0x20 || *p > 0x7e)
			plain = 0;
	}
	if (plain)
		return xstrdup(v);
	b = b64_encode(v, len, NULL);
	xasprintf(&s, "=?base64?%s?=", b);
	free(b);
	return s;
}

/*
 * The headers request msg carries, as "Name: value" lines, NULL-ended
 * (free with proto_headers_list_free), or NULL for a request that names
 * no 2026-07-28 revision in its _meta.  *version (may be NULL) gets that
 * revision, a string of msg's, or NULL: the MCP-Protocol-Version to send.
 */
char **
proto_headers_for(struct proto_headers *ph, const json_t *msg,
    const char **version)
{
	const char	*method, *v, *name = NULL, *k;
	json_t		*params, *args, *marks, *m;
	char		**h = NULL, *val, *text;
	size_t		 n = 0;

	params = json_object_get(msg, "params");
	v = json_string_value(json_object_get(json_object_get(params,
	    "_meta"), "io.modelcontextprotocol/protocolVersion"));
	method = json_string_value(json_object_get(msg, "method"));
	if (version != NULL)
		*version = (method != NULL) ? v : NULL;
	if (v == NULL || method == NULL)
		return NULL;
	h = xreallocarray(NULL, 3, sizeof *h);
	val = proto_header_value(method);
	xasprintf(&h[n++], "Mcp-Method: %s", val);
	free(val);
	if (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0)
		name = json_string_value(json_object_get(params, "name"));
	else if (strcmp(method, "resources/read") == 0)
		name = json_string_value(json_object_get(params, "uri"));
	if (name != NULL) {
		val = proto_header_value(name);
		xasprintf(&h[n++], "Mcp-Name: %s", val);
		free(val);
	}
	args = json_object_get(params, "arguments");
	marks = (name != NULL && strcmp(method, "tools/call") == 0) ?
	    json_object_get(ph->marks, name) : NULL;
	json_object_foreach(marks, k, m) {
		json_t	*a = json_object_get(args, k);

		if (a == NULL || json_is_null(a))
			continue;
		if (json_is_string(a))
			val = proto_header_value(json_string_value(a));
		else if ((text = json_dumps(a, JSON_ENCODE_ANY |
		    JSON_COMPACT)) != NULL) {
			val = proto_header_value(text);
			free(text);
		} else
			continue;
		h = xreallocarray(h, n + 2, sizeof *h);
		xasprintf(&h[n++], "Mcp-Param-%s: %s", json_string_value(m),
		    val);
		free(val);
	}
	h[n] = NULL;
	return h;
}

/* Learn from a tools/list result which arguments travel as headers. */
void
proto_headers_learn(struct proto_headers *ph, const json_t *result)
{
	json_t		*tools = json_object_get(result, "tools"), *t, *props;
	json_t		*p, *hdr, *marks;
	const char	*name, *k;
	size_t		 i;

	json_array_foreach(tools, i, t) {
		if ((name = json_string_value(json_object_get(t, "name"))) ==
		    NULL)
			continue;
		props = json_object_get(json_object_get(t, "inputSchema"),
		    "properties");
		marks = json_object();
		json_object_foreach(props, k, p) {
			hdr = json_object_get(p, "x-mcp-header");
			if (json_is_string(hdr))
				json_object_set(marks, k, hdr);
		}
		if (json_object_size(marks) > 0)
			json_object_set(ph->marks, name, marks);
		json_decref(marks);
	}
}
