/* Base64 (RFC 4648, with padding), for bytes that must travel as text. */

#include <stdlib.h>

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

/* The value of a base64 digit (standard alphabet), or -1. */
int
b64_digit(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Decode len bytes of base64 (padded, as b64_encode writes it; no white
 * space) into a new buffer with a NUL after it; *outlen gets the length.
 * Returns NULL when the text is not such base64.
 */
void *
b64_decode(const char *in, size_t len, size_t *outlen)
{
	const unsigned char	*p = (const unsigned char *)in;
	unsigned char		*out;
	size_t			 i, o = 0, pad = 0;
	int			 v[4], j;

	if (len % 4 != 0)
		return NULL;
	if (len > 0 && p[len - 1] == '=')
		pad = (len > 1 && p[len - 2] == '=') ? 2 : 1;
	out = xmalloc(len / 4 * 3 + 1);
	for (i = 0; i < len; i += 4) {
		for (j = 0; j < 4; j++) {
			if (i + 4 == len && j >= 4 - (int)pad)
				v[j] = 0;
			else if ((v[j] = b64_digit(p[i + j])) < 0)
				goto bad;
		}
		out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (i + 4 < len || pad < 2)
			out[o++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (i + 4 < len || pad < 1)
			out[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	out[o] = '\0';
	*outlen = o;
	return out;
bad:
	free(out);
	return NULL;
}
