/*
 * version.c: the revisions of the specification by name.
 */
#include <string.h>

#include "protocol.h"

/* Each revision's name as it appears in protocolVersion, in enum order. */
static const char *const version_names[PROTO_V_MAX] = {
	[PROTO_V_UNKNOWN] = "unknown",
	[PROTO_V_2024_11_05] = "2024-11-05",
	[PROTO_V_2025_03_26] = "2025-03-26",
	[PROTO_V_2025_06_18] = "2025-06-18",
	[PROTO_V_2025_11_25] = "2025-11-25",
	[PROTO_V_2026_07_28] = "2026-07-28",
};

/* The revision a protocolVersion string names, or PROTO_V_UNKNOWN. */
enum proto_version
proto_version_parse_n(const char *s, size_t len)
{
	int	v;

	if (s == NULL)
		return (PROTO_V_UNKNOWN);
	for (v = PROTO_V_UNKNOWN + 1; v < PROTO_V_MAX; v++) {
		if (strlen(version_names[v]) == len &&
		    memcmp(version_names[v], s, len) == 0)
			return ((enum proto_version)v);
	}
	return (PROTO_V_UNKNOWN);
}

/* The revision a NUL-terminated protocolVersion names, or PROTO_V_UNKNOWN. */
enum proto_version
proto_version_parse(const char *s)
{
	if (s == NULL)
		return (PROTO_V_UNKNOWN);
	return (proto_version_parse_n(s, strlen(s)));
}

/* A revision's name ("2025-06-18"), "unknown" for anything else. */
const char *
proto_version_name(enum proto_version v)
{
	if ((int)v <= PROTO_V_UNKNOWN || v >= PROTO_V_MAX)
		return (version_names[PROTO_V_UNKNOWN]);
	return (version_names[v]);
}

/*
 * Whether a revision opens with the initialize handshake (2025-11-25 and
 * earlier); 0 for 2026-07-28 and for an unknown revision.
 */
int
proto_version_is_legacy(enum proto_version v)
{
	if ((int)v <= PROTO_V_UNKNOWN || v >= PROTO_V_MAX)
		return (0);
	return ((PROTO_VLEGACY & PROTO_VBIT(v)) != 0);
}

/* The newest revision we know. */
enum proto_version
proto_version_latest(void)
{
	return ((enum proto_version)(PROTO_V_MAX - 1));
}
