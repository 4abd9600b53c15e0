/* Base64 (RFC 4648, with padding), for bytes that must travel as text. */

#include "core.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The base64 of len bytes, NUL-terminated; *outlen gets its length. */
char *
b64_encode(const void *in, size_t len, size_t *outlen)
{
	const unsigned char	*p = in;
	char			*out = xmalloc(((len + 2) / 3) * 4 + 1);
	size_t			 i, o = 0;

	for (i = 0; i + 2 < len; i += 3) {
		out[o++] = b64_alphabet[p[i] >> 2];
		out[o++] = b64_alphabet[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		out[o++] = b64_alphabet[((p[i + 1] & 15) << 2) |
		    (p[i + 2] >> 6)];
		out[o++] = b64_alphabet[p[i + 2] & 63];
	}
	if (i < len) {
		out[o++] = b64_alphabet[p[i] >> 2];
		if (i + 1 < len) {
			out[o++] = b64_alphabet[((p[i] & 3) << 4) |
			    (p[i + 1] >> 4)];
			out[o++] = b64_alphabet[(p[i + 1] & 15) << 2];
		} else {
			out[o++] = b64_alphabet[(p[i] & 3) << 4];
			out[o++] = '=';
		}
		out[o++] = '=';
	}
	out[o] = '\0';
	if (outlen != NULL)
		*outlen = o;
	return out;
}
