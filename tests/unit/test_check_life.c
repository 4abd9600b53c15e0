/* check/: the lifecycle and capabilities, a passing and a failing
   session per rule, per revision where the rule differs. */
#include <criterion/criterion.h>

#include "check_util.h"

#define T_CACHE "\"ttlMs\":0,\"cacheScope\":\"private\""
#define V1 "2024-11-05"
#define V3 "2025-06-18"
#define V4 "2025-11-25"
#define SAMPLE "{\"messages\":[],\"maxTokens\":10}"
#define ELICIT "{\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\"," \
	"\"properties\":{}}}"
#define COMPLETE "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"}," \
	"\"argument\":{\"name\":\"a\",\"value\":\"v\"}}"

static const struct check_case life_cases[] = {
	{ "a handshake, pings before it ends", "", 1, {
	    { T_INIT(V3, "{}"), NULL },
	    { T_REQ("C", "1", "ping", "{}"), NULL },
	    { T_RES("S", "1", "{}"), NULL },
	    { T_INITR(V3, "{\"logging\":{}}"), NULL },
	    { T_NOTE("S", "notifications/message",
	      "{\"level\":\"info\",\"data\":\"x\"}"), NULL },
	    { T_INITD, NULL } } },
	{ "a request before initialize", "lifecycle.before-initialize", 0, {
	    { T_REQ("C", "1", "tools/list", "{}"), NULL } } },
	{ "a request before initialize is answered",
	  "lifecycle.before-initialized", 0, {
	    { T_INIT(V3, "{}"), NULL },
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_INITR(V3, "{\"tools\":{}}"), NULL },
	    { T_INITD, NULL } } },
	{ "a request before notifications/initialized",
	  "lifecycle.before-initialized", 0, {
	    { T_INIT(V3, "{}"), NULL },
	    { T_INITR(V3, "{\"tools\":{}}"), NULL },
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_INITD, NULL } } },
	{ "a server request before notifications/initialized",
	  "lifecycle.before-initialized", 0, {
	    { T_INIT(V3, "{\"roots\":{}}"), NULL },
	    { T_INITR(V3, "{}"), NULL },
	    { T_REQ("S", "1", "roots/list", "{}"), NULL },
	    { T_INITD, NULL } } },
	{ "notifications/initialized before the result",
	  "lifecycle.initialized-early", 0, {
	    { T_INIT(V3, "{}"), NULL },
	    { T_INITD, NULL },
	    { T_INITR(V3, "{}"), NULL } } },
	{ "notifications/initialized twice", "lifecycle.initialized-twice", 0,
	  { T_HS(V3, "{}", "{}"), { T_INITD, NULL } } },
	{ "initialize twice", "lifecycle.initialize-twice",
	  0, {
	    T_HS(V3, "{}", "{}"),
	    { T_INIT(V3, "{}"), NULL } } },
	{ "the server offers an older revision", "lifecycle.version-differs",
	  0, {
	    { T_INIT(V4, "{}"), NULL },
	    { T_INITR(V3, "{}"), NULL },
	    { T_INITD, NULL } } },
	{ "the server answers a version that is none",
	  "lifecycle.version-unknown", 0, {
	    { T_INIT(V3, "{}"), NULL },
	    { T_INITR("2099-01-01", "{}"), NULL },
	    { T_INITD, NULL } } },
	{ "an initialize refused, then tried again", "", 1, {
	    { T_INIT(V3, "{}"), NULL },
	    { "S:{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32602,"
	      "\"message\":\"no\"}}", NULL },
	    T_HS(V3, "{}", "{}") } },
	{ "2026-07-28: no handshake, _meta on each request", "", 1, {
	    { T_REQ("C", "1", "server/discover", "{" T_META "}"), NULL },
	    { T_RES("S", "1", "{\"resultType\":\"complete\"," T_CACHE ","
	      "\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":"
	      "{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":"
	      "\"1\"}}"), NULL },
	    { T_REQ("C", "2", "tools/list", "{" T_META "}"), NULL },
	    { T_RES("S", "2", "{\"resultType\":\"complete\"," T_CACHE ",\"tools\":[]}"),
	      NULL } } },
};

static const struct check_case caps_cases[] = {
	{ "tools declared", "", 1, {
	    T_HS(V3, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL },
	    { T_RES("S", "1", T_TOOLS), NULL } } },
	{ "tools not declared", "caps.server", 0, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("C", "1", "tools/list", "{}"), NULL } } },
	{ "prompts not declared", "caps.server", 0, {
	    T_HS(V1, "{}", "{\"tools\":{}}"),
	    { T_REQ("C", "1", "prompts/list", "{}"), NULL } } },
	{ "resources/subscribe with subscribe", "", 1, {
	    T_HS(V3, "{}", "{\"resources\":{\"subscribe\":true}}"),
	    { T_REQ("C", "1", "resources/subscribe", "{\"uri\":\"a:b\"}"),
	      NULL },
	    { T_RES("S", "1", "{}"), NULL } } },
	{ "resources/subscribe without subscribe", "caps.server", 0, {
	    T_HS(V3, "{}", "{\"resources\":{}}"),
	    { T_REQ("C", "1", "resources/subscribe", "{\"uri\":\"a:b\"}"),
	      NULL } } },
	{ "logging/setLevel without logging", "caps.server", 0, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("C", "1", "logging/setLevel", "{\"level\":\"info\"}"),
	      NULL } } },
	{ "completion without completions (2025-06-18)", "caps.server", 0, {
	    T_HS(V3, "{}", "{\"prompts\":{}}"),
	    { T_REQ("C", "1", "completion/complete", COMPLETE), NULL } } },
	{ "completion needs no capability in 2024-11-05", "", 0, {
	    T_HS(V1, "{}", "{\"prompts\":{}}"),
	    { T_REQ("C", "1", "completion/complete", COMPLETE), NULL } } },
	{ "list_changed with listChanged", "", 0, {
	    T_HS(V3, "{}", "{\"tools\":{\"listChanged\":true}}"),
	    { T_NOTE("S", "notifications/tools/list_changed", "{}"), NULL } } },
	{ "list_changed without listChanged", "caps.server", 0, {
	    T_HS(V3, "{}", "{\"tools\":{}}"),
	    { T_NOTE("S", "notifications/tools/list_changed", "{}"), NULL } } },
	{ "sampling declared", "", 1, {
	    T_HS(V3, "{\"sampling\":{}}", "{}"),
	    { T_REQ("S", "1", "sampling/createMessage", SAMPLE), NULL },
	    { T_RES("C", "1", "{\"role\":\"assistant\",\"content\":{\"type\":"
	      "\"text\",\"text\":\"x\"},\"model\":\"m\"}"), NULL } } },
	{ "sampling not declared", "caps.client", 0, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("S", "1", "sampling/createMessage", SAMPLE), NULL } } },
	{ "roots/list not declared", "caps.client", 0, {
	    T_HS(V1, "{}", "{}"),
	    { T_REQ("S", "1", "roots/list", "{}"), NULL } } },
	{ "elicitation not declared", "caps.client", 0, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("S", "1", "elicitation/create", ELICIT), NULL } } },
	{ "a client sending what only a server sends", "jsonrpc.wrong-side",
	  0, {
	    T_HS(V3, "{}", "{}"),
	    { T_REQ("C", "1", "roots/list", "{}"), NULL } } },
	{ "2026-07-28: tools not in server/discover", "caps.server", 0, {
	    { T_REQ("C", "1", "server/discover", "{" T_META "}"), NULL },
	    { T_RES("S", "1", "{\"resultType\":\"complete\"," T_CACHE ","
	      "\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{},"
	      "\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}"), NULL },
	    { T_REQ("C", "2", "tools/list", "{" T_META "}"), NULL } } },
};

Test(check_life, table)
{
	check_run_table(life_cases, sizeof life_cases / sizeof life_cases[0]);
}

Test(check_caps, table)
{
	check_run_table(caps_cases, sizeof caps_cases / sizeof caps_cases[0]);
}
