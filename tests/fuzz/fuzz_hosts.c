/*
 * The host configuration editors (hosts/cfg.c, jsonc.c, toml.c) on any
 * bytes.  The first byte picks the format (JSON, JSONC, TOML, by its value
 * mod 3) and whether remote entries are bridged (bit 2); the rest is the
 * file.  Whatever the bytes, read, wrap and unwrap stay within their
 * bounds; when wrap succeeds, wrapping its output again changes nothing,
 * and (when the input held no wrapped entry already) unwrapping it with
 * the ledger gives the input back byte for byte.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hosts.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const json_containers[] = { "mcpServers",
	"projects\x1f*\x1fmcpServers", NULL };
static const char *const json_urls[] = { "url", "serverUrl", NULL };
static const char *const json_transports[] = { "sse", "http", NULL };
static const char *const toml_containers[] = { "mcp_servers", NULL };
static const char *const toml_urls[] = { "url", NULL };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hcfg_layout	 layout;
	struct hcfg_wrap	 w = { "/usr/local/bin/mcpreel", NULL, NULL, 0 };
	struct hcfg		 cfg;
	struct hcfg_changes	 ch = { 0 }, ch2 = { 0 }, ch3 = { 0 };
	const char		*buf;
	char			*out = NULL, *out2 = NULL, *back = NULL, *cause;
	size_t			 len, olen, olen2, blen, i;
	int			 pre_wrapped = 0;

	if (size < 1)
		return 0;
	memset(&layout, 0, sizeof layout);
	switch (data[0] % 3) {
	case 0: layout.format = HCFG_JSON; break;
	case 1: layout.format = HCFG_JSONC; break;
	default: layout.format = HCFG_TOML; break;
	}
	if (layout.format == HCFG_TOML) {
		layout.containers = toml_containers;
		layout.url_keys = toml_urls;
	} else {
		layout.containers = json_containers;
		layout.url_keys = json_urls;
		layout.can_bridge = 1;
		if (data[0] & 16)
			layout.url_transports = json_transports;
	}
	w.bridge = (data[0] & 4) != 0;
	if (data[0] & 8)
		w.db = "/tmp/a \"db\".sqlite";
	buf = (const char *)data + 1;
	len = size - 1;

	cause = NULL;
	if (hcfg_read(buf, len, &layout, &cfg, &cause) == -1) {
		if (cause == NULL)
			fuzz_fail(buf, len, "hcfg_read: -1 and no cause");
		free(cause);
		cause = NULL;
		if (hcfg_wrap(buf, len, &layout, &w, &out, &olen, &ch,
		    &cause) != -1)
			fuzz_fail(buf, len, "wrap parsed what read refused");
		free(cause);
		return 0;
	}
	for (i = 0; i < cfg.nentries; i++)
		if (cfg.entries[i].wrapped)
			pre_wrapped = 1;
	hcfg_clear(&cfg);

	if (hcfg_wrap(buf, len, &layout, &w, &out, &olen, &ch, &cause) == -1)
		fuzz_fail(buf, len, "wrap refused what read parsed: %s", cause);
	/* each change's texts are where they say */
	for (i = 0; i < ch.n; i++)
		if (memmem(buf, len, ch.v[i].before, strlen(ch.v[i].before)) ==
		    NULL || memmem(out, olen, ch.v[i].after,
		    strlen(ch.v[i].after)) == NULL)
			fuzz_fail(buf, len, "change %zu (%s): its texts are "
			    "not in the files", i, ch.v[i].name);
	/* wrapping the wrapped output changes nothing */
	if (hcfg_wrap(out, olen, &layout, &w, &out2, &olen2, &ch2,
	    &cause) == -1)
		fuzz_fail(buf, len, "wrap's output does not parse: %s (%.*s)",
		    cause, (int)(olen < FUZZ_QUOTE_MAX ? olen :
		    FUZZ_QUOTE_MAX), out);
	if (olen2 != olen || memcmp(out, out2, olen) != 0 || ch2.n != 0)
		fuzz_fail(buf, len, "wrap twice changed %zu entries (%.*s)",
		    ch2.n, (int)(olen2 < FUZZ_QUOTE_MAX ? olen2 :
		    FUZZ_QUOTE_MAX), out2);
	free(out2);
	hcfg_changes_clear(&ch2);
	if (hcfg_read(out, olen, &layout, &cfg, &cause) == -1)
		fuzz_fail(buf, len, "read refused wrap's output: %s", cause);
	hcfg_clear(&cfg);

	/* with the ledger, unwrap gives the input back */
	if (hcfg_unwrap(out, olen, &layout, NULL, &ch, &back, &blen, &ch3,
	    &cause) == -1)
		fuzz_fail(buf, len, "unwrap refused wrap's output: %s", cause);
	if (!pre_wrapped && (blen != len || memcmp(back, buf, len) != 0))
		fuzz_fail(buf, len, "unwrap with the ledger: not the input "
		    "(%.*s)", (int)(blen < FUZZ_QUOTE_MAX ? blen :
		    FUZZ_QUOTE_MAX), back);
	free(back);
	hcfg_changes_clear(&ch3);

	/* without it: no crash, and its output parses */
	if (hcfg_unwrap(out, olen, &layout, NULL, NULL, &back, &blen, &ch3,
	    &cause) == -1)
		fuzz_fail(buf, len, "unwrap refused wrap's output: %s", cause);
	if (hcfg_read(back, blen, &layout, &cfg, &cause) == -1)
		fuzz_fail(buf, len, "unwrap's output does not parse: %s (%.*s)",
		    cause, (int)(blen < FUZZ_QUOTE_MAX ? blen :
		    FUZZ_QUOTE_MAX), back);
	hcfg_clear(&cfg);
	free(back);
	hcfg_changes_clear(&ch3);
	free(out);
	hcfg_changes_clear(&ch);
	return 0;
}
