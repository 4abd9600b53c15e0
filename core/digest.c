/*
 * SHA-256 over bytes that come in pieces (OpenSSL's EVP), for messages
 * recorded as a prefix: their full size and digest still say what was
 * forwarded.
 */

#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>

#include "core.h"

struct digest {
	EVP_MD_CTX	*ctx;
};

/* A new SHA-256 digest; exits with a message if OpenSSL cannot give one. */
struct digest *
digest_new(void)
{
	struct digest	*d = xcalloc(1, sizeof *d);

	if ((d->ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(d->ctx, EVP_sha256(), NULL) != 1)
		fatalx("cannot start a SHA-256 digest (OpenSSL)");
	return d;
}

void
digest_update(struct digest *d, const void *p, size_t len)
{
	if (len > 0 && EVP_DigestUpdate(d->ctx, p, len) != 1)
		fatalx("SHA-256 digest update failed (OpenSSL)");
}

/* The digest of everything given, in lower-case hex; frees d. */
char *
digest_hex_free(struct digest *d)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 len = 0, i;
	char		*hex;

	if (EVP_DigestFinal_ex(d->ctx, md, &len) != 1)
		fatalx("SHA-256 digest failed (OpenSSL)");
	hex = xmalloc(2 * (size_t)len + 1);
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	digest_free(d);
	return hex;
}

void
digest_free(struct digest *d)
{
	if (d == NULL)
		return;
	EVP_MD_CTX_free(d->ctx);
	free(d);
}
