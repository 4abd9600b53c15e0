/* toml.c: placeholder, filled in below. */
#include "cfg_int.h"

/* Scans a TOML file (not yet). */
int
toml_parse(const char *buf, size_t len, const struct hcfg_layout *layout,
    struct hdoc *doc, char **cause)
{
	(void)buf; (void)len; (void)layout; (void)doc;
	*cause = xstrdup("TOML is not supported yet");
	return -1;
}
