/*
 * The host configuration editors (hosts/cfg.c, jsonc.c, toml.c) as data:
 * each case is a layout, a file's bytes, the options of wrap, and the
 * exact bytes wrap must write; then every case must unwrap back to its
 * input byte for byte with the ledger, and without it (or to the bytes
 * the case says, where the computed inverse cannot know the original
 * spelling); wrapping the output again must change nothing.  Then
 * refusals with their line and column, reading, and NAME cleaning.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "hosts.h"
#include "unit.h"

static const char *const claude_conts[] = { "mcpServers",
	"projects\x1f*\x1fmcpServers", NULL };
static const char *const claude_urls[] = { "url", NULL };
static const char *const vscode_conts[] = { "servers", NULL };
static const char *const codex_conts[] = { "mcp_servers", NULL };

/* Claude Code (strict JSON), VS Code (JSONC), Codex (TOML, no bridge). */
static const struct hcfg_layout L_JSON = { HCFG_JSON, claude_conts,
	claude_urls, 1, NULL };
static const struct hcfg_layout L_JSONC = { HCFG_JSONC, vscode_conts,
	claude_urls, 1, NULL };
static const char *const gemini_urls[] = { "httpUrl", "url", NULL };
static const char *const gemini_transports[] = { "http", "sse", NULL };
/* Gemini CLI: httpUrl is Streamable HTTP, url the older HTTP+SSE. */
static const struct hcfg_layout L_GEMINI = { HCFG_JSONC, claude_conts,
	gemini_urls, 1, gemini_transports };
static const struct hcfg_layout L_TOML = { HCFG_TOML, codex_conts,
	claude_urls, 0, NULL };

#define M	"\"/opt/bin/mcpreel\""

struct wrap_case {
	const char			*name;
	const struct hcfg_layout	*layout;
	const char			*in;
	const char			*db;
	const char *const		*names;
	int				 bridge;
	const char			*want;		/* wrap's bytes */
	size_t				 nchanges;
	const char			*unwrapped;	/* unwrap without the
							   ledger, NULL: in */
};

static const char *const only_b[] = { "b", NULL };

static const struct wrap_case wrap_cases[] = {
	{ "json one-line args, ${VAR} and escapes moved raw", &L_JSON,
	  "{\"mcpServers\": {\"notes\": {\"command\": \"u\\u0076x\", "
	  "\"args\": [\"notes-mcp\", \"--root\", \"${HOME}/n\\\"q\"], "
	  "\"env\": {\"T\": \"${T}\"}}}}",
	  NULL, NULL, 0,
	  "{\"mcpServers\": {\"notes\": {\"command\": " M ", "
	  "\"args\": [\"record\", \"--name\", \"notes\", \"--\", "
	  "\"u\\u0076x\", \"notes-mcp\", \"--root\", \"${HOME}/n\\\"q\"], "
	  "\"env\": {\"T\": \"${T}\"}}}}", 1, NULL },
	{ "json multi-line args, CRLF and tabs", &L_JSON,
	  "{\r\n\t\"mcpServers\": {\r\n\t\t\"s\": {\r\n\t\t\t\"type\": "
	  "\"stdio\",\r\n\t\t\t\"command\": \"npx\",\r\n\t\t\t\"args\": [\r\n"
	  "\t\t\t\t\"-y\",\r\n\t\t\t\t\"x@1\"\r\n\t\t\t]\r\n\t\t}\r\n\t}\r\n}"
	  "\r\n",
	  NULL, NULL, 0,
	  "{\r\n\t\"mcpServers\": {\r\n\t\t\"s\": {\r\n\t\t\t\"type\": "
	  "\"stdio\",\r\n\t\t\t\"command\": " M ",\r\n\t\t\t\"args\": [\r\n"
	  "\t\t\t\t\"record\",\r\n\t\t\t\t\"--name\",\r\n\t\t\t\t\"s\",\r\n"
	  "\t\t\t\t\"--\",\r\n\t\t\t\t\"npx\",\r\n"
	  "\t\t\t\t\"-y\",\r\n\t\t\t\t\"x@1\"\r\n\t\t\t]\r\n\t\t}\r\n\t}\r\n}"
	  "\r\n", 1, NULL },
	{ "json no args: inserted after command, the object's spacing",
	  &L_JSON,
	  "{\"mcpServers\": {\n  \"a\": {\n    \"command\": \"x\",\n"
	  "    \"env\": {}\n  }\n}}",
	  "/var/db/m.db", NULL, 0,
	  "{\"mcpServers\": {\n  \"a\": {\n    \"command\": " M ",\n"
	  "    \"args\": [\"record\", \"--db\", \"/var/db/m.db\", \"--name\", "
	  "\"a\", \"--\", \"x\"],\n    \"env\": {}\n  }\n}}", 1, NULL },
	{ "json empty args, compact", &L_JSON,
	  "{\"mcpServers\":{\"e\":{\"command\":\"a\",\"args\":[]}}}",
	  NULL, NULL, 0,
	  "{\"mcpServers\":{\"e\":{\"command\":" M ",\"args\":[\"record\","
	  "\"--name\",\"e\",\"--\",\"a\"]}}}", 1, NULL },
	{ "json duplicate keys: the last wins, the first untouched",
	  &L_JSON,
	  "{\"mcpServers\": {\"d\": {\"command\": \"one\"}, "
	  "\"d\": {\"command\": \"two\", \"args\": [\"z\"]}}}",
	  NULL, NULL, 0,
	  "{\"mcpServers\": {\"d\": {\"command\": \"one\"}, "
	  "\"d\": {\"command\": " M ", \"args\": [\"record\", \"--name\", "
	  "\"d\", \"--\", \"two\", \"z\"]}}}", 1, NULL },
	{ "json nested projects, key with an escape, names cleaned",
	  &L_JSON,
	  "{\"projects\": {\"/home/me/app\": {\"mcpServers\": "
	  "{\"my server${X}\": {\"command\": \"p\"}}}}, \"mcpServers\": "
	  "{\"comm\\u0061nd\": {\"comm\\u0061nd\": \"c\", \"args\": [\"1\"]}}}",
	  NULL, NULL, 0,
	  "{\"projects\": {\"/home/me/app\": {\"mcpServers\": "
	  "{\"my server${X}\": {\"command\": " M ", \"args\": [\"record\", "
	  "\"--name\", \"my_server__X_\", \"--\", \"p\"]}}}}, \"mcpServers\": "
	  "{\"comm\\u0061nd\": {\"comm\\u0061nd\": " M ", \"args\": "
	  "[\"record\", \"--name\", \"command\", \"--\", \"c\", \"1\"]}}}",
	  2, NULL },
	{ "json chosen names only", &L_JSON,
	  "{\"mcpServers\": {\"a\": {\"command\": \"x\"}, "
	  "\"b\": {\"command\": \"y\", \"args\": []}}}",
	  NULL, only_b, 0,
	  "{\"mcpServers\": {\"a\": {\"command\": \"x\"}, "
	  "\"b\": {\"command\": " M ", \"args\": [\"record\",\"--name\","
	  "\"b\",\"--\",\"y\"]}}}", 1, NULL },
	{ "json remote bridged: url, type, headers", &L_JSON,
	  "{\"mcpServers\": {\"docs\": {\"type\": \"http\", \"url\": "
	  "\"https://d.example/mcp\", \"headers\": {\"Authorization\": "
	  "\"Bearer ${TOKEN}\"}, \"timeout\": 5}}}",
	  NULL, NULL, 1,
	  "{\"mcpServers\": {\"docs\": {\"type\": \"stdio\", \"command\": "
	  M ", \"args\": [\"record\", \"--name\", \"docs\", \"--connect\", "
	  "\"https://d.example/mcp\", \"--transport\", \"http\""
	  "], \"timeout\": 5, \"env\": {\"MCPREEL_HEADERS\": "
	  "\"Authorization: Bearer ${TOKEN}\"}}}}", 1,
	  "{\"mcpServers\": {\"docs\": {\"type\": \"http\", \"url\": "
	  "\"https://d.example/mcp\", \"timeout\": 5, \"headers\": "
	  "{\"Authorization\": \"Bearer ${TOKEN}\"}}}}" },
	{ "json remote, last member headers; computed inverse respaces",
	  &L_JSON,
	  "{\"mcpServers\": {\"r\": {\"url\": \"http://h/\", "
	  "\"headers\": { \"K\": \"v\" }}}}",
	  NULL, NULL, 1,
	  "{\"mcpServers\": {\"r\": {\"command\": " M ", \"args\": "
	  "[\"record\", \"--name\", \"r\", \"--connect\", \"http://h/\"], "
	  "\"env\": {\"MCPREEL_HEADERS\": \"K: v\"}}}}", 1,
	  "{\"mcpServers\": {\"r\": {\"url\": \"http://h/\", "
	  "\"headers\": {\"K\": \"v\"}}}}" },
	{ "jsonc headers into env: made after the last member, added to "
	  "one, filling an empty one; a comment before a last headers kept",
	  &L_JSONC,
	  "{\"servers\": {\n"
	  "  \"g\": {\n"
	  "    \"headers\": {\"A\": \"x\", \"B\": \"${input:tok}\"},\n"
	  "    \"url\": \"https://g/mcp\"\n"
	  "  },\n"
	  "  \"h\": {\n"
	  "    \"env\": {\"X\": \"y\"},\n"
	  "    \"url\": \"https://h/\", // the endpoint\n"
	  "    \"headers\": {\"A\": \"1\"}\n"
	  "  },\n"
	  "  \"f\": {\"url\": \"https://f/\", \"headers\": {\"A\": \"1\"}, "
	  "\"env\": {}}\n"
	  "}}\n",
	  NULL, NULL, 1,
	  "{\"servers\": {\n"
	  "  \"g\": {\n"
	  "    \"command\": " M ",\n"
	  "    \"args\": [\"record\", \"--name\", \"g\", \"--connect\", "
	  "\"https://g/mcp\"],\n"
	  "    \"env\": {\"MCPREEL_HEADERS\": \"A: x\\nB: ${input:tok}\"}\n"
	  "  },\n"
	  "  \"h\": {\n"
	  "    \"env\": {\"X\": \"y\", \"MCPREEL_HEADERS\": \"A: 1\"},\n"
	  "    \"command\": " M ",\n"
	  "    \"args\": [\"record\", \"--name\", \"h\", \"--connect\", "
	  "\"https://h/\"] // the endpoint\n"
	  "  },\n"
	  "  \"f\": {\"command\": " M ", \"args\": [\"record\", \"--name\", "
	  "\"f\", \"--connect\", \"https://f/\"], \"env\": "
	  "{\"MCPREEL_HEADERS\": \"A: 1\"}}\n"
	  "}}\n", 3,
	  "{\"servers\": {\n"
	  "  \"g\": {\n"
	  "    \"url\": \"https://g/mcp\",\n"
	  "    \"headers\": {\"A\": \"x\", \"B\": \"${input:tok}\"}\n"
	  "  },\n"
	  "  \"h\": {\n"
	  "    \"env\": {\"X\": \"y\"},\n"
	  "    \"url\": \"https://h/\",\n"
	  "    \"headers\": {\"A\": \"1\"} // the endpoint\n"
	  "  },\n"
	  "  \"f\": {\"url\": \"https://f/\", \"headers\": {\"A\": \"1\"}}\n"
	  "}}\n" },
	{ "jsonc a last headers deleted after a line comment: the line "
	  "break kept when the object closes on the member's line",
	  &L_JSONC,
	  "{\"servers\": {\n"
	  "  \"h\": {\n"
	  "    \"env\": {\"X\": \"y\"},\n"
	  "    \"url\": \"https://h/\", // the endpoint\n"
	  "    \"headers\": {\"A\": \"1\"}},\n"
	  "  \"i\": {\n"
	  "    \"env\": {},\n"
	  "    \"url\": \"https://i/\", // c\n"
	  "    \"headers\": {\"A\": \"2\"} /* d */ }\n"
	  "}}\n",
	  NULL, NULL, 1,
	  "{\"servers\": {\n"
	  "  \"h\": {\n"
	  "    \"env\": {\"X\": \"y\", \"MCPREEL_HEADERS\": \"A: 1\"},\n"
	  "    \"command\": " M ",\n"
	  "    \"args\": [\"record\", \"--name\", \"h\", \"--connect\", "
	  "\"https://h/\"] // the endpoint\n"
	  "},\n"
	  "  \"i\": {\n"
	  "    \"env\": {\"MCPREEL_HEADERS\": \"A: 2\"},\n"
	  "    \"command\": " M ",\n"
	  "    \"args\": [\"record\", \"--name\", \"i\", \"--connect\", "
	  "\"https://i/\"] // c\n"
	  " /* d */ }\n"
	  "}}\n", 2,
	  "{\"servers\": {\n"
	  "  \"h\": {\n"
	  "    \"env\": {\"X\": \"y\"},\n"
	  "    \"url\": \"https://h/\",\n"
	  "    \"headers\": {\"A\": \"1\"} // the endpoint\n"
	  "},\n"
	  "  \"i\": {\n"
	  "    \"headers\": {\"A\": \"2\"},\n"
	  "    \"url\": \"https://i/\" // c\n"
	  " /* d */ }\n"
	  "}}\n" },
	{ "gemini url is SSE, httpUrl Streamable HTTP: each kept", &L_GEMINI,
	  "{\"mcpServers\": {\"s\": {\"url\": \"https://x/sse\"}, "
	  "\"h\": {\"httpUrl\": \"https://x/mcp\"}}}",
	  NULL, NULL, 1,
	  "{\"mcpServers\": {\"s\": {\"command\": " M ", \"args\": "
	  "[\"record\", \"--name\", \"s\", \"--connect\", \"https://x/sse\", "
	  "\"--transport\", \"sse\"]}, \"h\": {\"command\": " M ", "
	  "\"args\": [\"record\", \"--name\", \"h\", \"--connect\", "
	  "\"https://x/mcp\", \"--transport\", \"http\"]}}}", 2, NULL },
	{ "json remote not bridged without bridge, nor with oauth", &L_JSON,
	  "{\"mcpServers\": {\"r\": {\"url\": \"http://h/\"}, "
	  "\"o\": {\"url\": \"http://o/\", \"oauth\": {}}}}",
	  NULL, NULL, 0,
	  "{\"mcpServers\": {\"r\": {\"url\": \"http://h/\"}, "
	  "\"o\": {\"url\": \"http://o/\", \"oauth\": {}}}}", 0, NULL },
	{ "json already wrapped: idempotent", &L_JSON,
	  "{\"mcpServers\": {\"w\": {\"command\": \"/usr/bin/mcpreel\", "
	  "\"args\": [\"record\", \"--name\", \"w\", \"--\", \"x\"]}}}",
	  NULL, NULL, 0,
	  "{\"mcpServers\": {\"w\": {\"command\": \"/usr/bin/mcpreel\", "
	  "\"args\": [\"record\", \"--name\", \"w\", \"--\", \"x\"]}}}", 0,
	  "{\"mcpServers\": {\"w\": {\"command\": \"x\"}}}" },
	{ "jsonc comments kept, trailing commas, one-element multi-line",
	  &L_JSONC,
	  "// VS Code\n{\n  \"servers\": {\n    /* jira */\n    \"jira\": {\n"
	  "      \"command\": \"node\", // the runtime\n      \"args\": [\n"
	  "        \"${workspaceFolder}/j.js\", // entry\n      ],\n    },\n"
	  "  },\n}\n",
	  NULL, NULL, 0,
	  "// VS Code\n{\n  \"servers\": {\n    /* jira */\n    \"jira\": {\n"
	  "      \"command\": " M ", // the runtime\n      \"args\": [\n"
	  "        \"record\",\n        \"--name\",\n        \"jira\",\n"
	  "        \"--\",\n        \"node\",\n"
	  "        \"${workspaceFolder}/j.js\", // entry\n      ],\n    },\n"
	  "  },\n}\n", 1, NULL },
	{ "jsonc no args, command last with a trailing comma", &L_JSONC,
	  "{\"servers\": {\"n\": {\n\t\"command\": \"n\",\n}}}",
	  NULL, NULL, 0,
	  "{\"servers\": {\"n\": {\n\t\"command\": " M ",\n\t\"args\": "
	  "[\"record\", \"--name\", \"n\", \"--\", \"n\"],\n}}}", 1, NULL },
	{ "toml table, literal string, inline env, sub-table", &L_TOML,
	  "model = \"o3\" # m\n\n[mcp_servers.issues]\ncommand = 'npx'\n"
	  "args = [\"-y\", 'issues-mcp']\nenv = { A = \"1\" }\n\n"
	  "[mcp_servers.issues.env]\nB = \"2\"\n",
	  NULL, NULL, 0,
	  "model = \"o3\" # m\n\n[mcp_servers.issues]\ncommand = " M "\n"
	  "args = [\"record\", \"--name\", \"issues\", \"--\", 'npx', \"-y\", "
	  "'issues-mcp']\nenv = { A = \"1\" }\n\n"
	  "[mcp_servers.issues.env]\nB = \"2\"\n", 1, NULL },
	{ "toml multi-line string command, multi-line array with comments",
	  &L_TOML,
	  "[mcp_servers.m]\r\ncommand = \"\"\"\r\npython\"\"\"\r\nargs = [\r\n"
	  "  \"-m\",  # module\r\n  \"srv\",\r\n]\r\n",
	  NULL, NULL, 0,
	  "[mcp_servers.m]\r\ncommand = " M "\r\nargs = [\r\n"
	  "  \"record\",\r\n  \"--name\",\r\n  \"m\",\r\n  \"--\",\r\n"
	  "  \"\"\"\r\npython\"\"\",\r\n"
	  "  \"-m\",  # module\r\n  \"srv\",\r\n]\r\n", 1, NULL },
	{ "toml no args, dotted under [mcp_servers], and top-level at EOF",
	  &L_TOML,
	  "mcp_servers.top.command = \"t\"\n[mcp_servers]\n  d.command = \"x\""
	  "  # c\n  d.cwd = \"/\"\n",
	  NULL, NULL, 0,
	  "mcp_servers.top.command = " M "\nmcp_servers.top.args = "
	  "[\"record\", \"--name\", \"top\", \"--\", \"t\"]\n[mcp_servers]\n"
	  "  d.command = " M "  # c\n  d.args = [\"record\", \"--name\", "
	  "\"d\", \"--\", \"x\"]\n  d.cwd = \"/\"\n", 2, NULL },
	{ "toml no line end at the end of the file", &L_TOML,
	  "[mcp_servers.e]\ncommand = \"e\"",
	  NULL, NULL, 0,
	  "[mcp_servers.e]\ncommand = " M "\nargs = [\"record\", \"--name\", "
	  "\"e\", \"--\", \"e\"]", 1, NULL },
	{ "jsonc CRLF, odd spacing, block comment in args, escapes",
	  &L_JSONC,
	  "{\r\n  \"servers\" :{ \"x\" : { \"command\"  :  \"C:\\\\bin\\\\s.exe\" ,"
	  "\r\n   \"args\":[ /* first */ \"${input:tok}\" ,\"\\u00e9\" ] } } }\r\n",
	  NULL, NULL, 0,
	  "{\r\n  \"servers\" :{ \"x\" : { \"command\"  :  " M " ,"
	  "\r\n   \"args\":[ /* first */ \"record\",\"--name\",\"x\","
	  "\"--\",\"C:\\\\bin\\\\s.exe\",\"${input:tok}\" ,\"\\u00e9\" ] } } }"
	  "\r\n", 1, NULL },
	{ "toml quoted name, escapes, ${VAR}, empty dotted args", &L_TOML,
	  "[mcp_servers]\n\"my server\".command = \"C:\\\\x\\u0041\"\n"
	  "\"my server\".args = []\n\n[mcp_servers.'v']\ncommand = 'c'\n"
	  "args = [\"${HOME}\"] # keep\n",
	  NULL, NULL, 0,
	  "[mcp_servers]\n\"my server\".command = " M "\n"
	  "\"my server\".args = [\"record\",\"--name\",\"my_server\",\"--\","
	  "\"C:\\\\x\\u0041\"]\n\n[mcp_servers.'v']\ncommand = " M "\n"
	  "args = [\"record\", \"--name\", \"v\", \"--\", 'c', \"${HOME}\"] # keep\n",
	  2, NULL },
	{ "toml already wrapped: left", &L_TOML,
	  "[mcp_servers.w]\ncommand = \"mcpreel\"\nargs = [\"record\", "
	  "\"--name\", \"w\", \"--\", \"x\", \"y\"]\n",
	  NULL, NULL, 0,
	  "[mcp_servers.w]\ncommand = \"mcpreel\"\nargs = [\"record\", "
	  "\"--name\", \"w\", \"--\", \"x\", \"y\"]\n", 0,
	  "[mcp_servers.w]\ncommand = \"x\"\nargs = [\"y\"]\n" },
	{ "jsonc empty args with a space, duplicate key, bridged sse",
	  &L_JSONC,
	  "{\"servers\": {\"a\": {\"command\": \"old\"},\n"
	  "  \"a\": {\"command\": \"x\", \"args\": [ ]},\n"
	  "  \"s\": {\"type\": \"sse\", \"url\": \"http://h/sse\"}, // legacy\n}}",
	  NULL, NULL, 1,
	  "{\"servers\": {\"a\": {\"command\": \"old\"},\n"
	  "  \"a\": {\"command\": " M ", \"args\": [\"record\",\"--name\","
	  "\"a\",\"--\",\"x\" ]},\n"
	  "  \"s\": {\"type\": \"stdio\", \"command\": " M ", \"args\": "
	  "[\"record\", \"--name\", \"s\", \"--connect\", \"http://h/sse\", "
	  "\"--transport\", \"sse\"]}, // legacy\n}}", 2, NULL },
	{ "toml tabs, no spaces around =, trailing comment after args",
	  &L_TOML,
	  "[mcp_servers.t]\n\tcommand=\"c\"\t# the command\n"
	  "\targs=[\"a\",\"b\"] # two\n",
	  NULL, NULL, 0,
	  "[mcp_servers.t]\n\tcommand=" M "\t# the command\n"
	  "\targs=[\"record\",\"--name\",\"t\",\"--\",\"c\",\"a\",\"b\"] # two\n",
	  1, NULL },
	{ "toml inline-table entries: args inserted, args extended", &L_TOML,
	  "[mcp_servers]\na = { command = \"x\", env = { K = \"v\" } }\n"
	  "b = {command='y',args=[ \"1\" ]}\n",
	  NULL, NULL, 0,
	  "[mcp_servers]\na = { command = " M ", args = [\"record\", "
	  "\"--name\", \"a\", \"--\", \"x\"], env = { K = \"v\" } }\n"
	  "b = {command=" M ",args=[ \"record\", \"--name\", \"b\", \"--\", "
	  "'y', \"1\" ]}\n", 2, NULL },
	{ "toml remote left (Codex cannot bridge)", &L_TOML,
	  "[mcp_servers.h]\nurl = \"https://h/mcp\"\n"
	  "bearer_token_env_var = \"T\"\n",
	  NULL, NULL, 1,
	  "[mcp_servers.h]\nurl = \"https://h/mcp\"\n"
	  "bearer_token_env_var = \"T\"\n", 0, NULL },
};

/* Runs wrap on a case's input: the bytes, and the changes. */
static char *
run_wrap(const struct wrap_case *c, const char *in, size_t len,
    size_t *olen, struct hcfg_changes *ch)
{
	struct hcfg_wrap	 w = { "/opt/bin/mcpreel", c->db, c->names,
	    c->bridge };
	char			*out = NULL, *cause = NULL;

	memset(ch, 0, sizeof *ch);
	cr_assert_eq(hcfg_wrap(in, len, c->layout, &w, &out, olen, ch,
	    &cause), 0, "%s: wrap: %s", c->name, cause);
	return out;
}

Test(hosts, wrap_unwrap_cases, .timeout = UNIT_TIMEOUT)
{
	const struct wrap_case	*c;
	struct hcfg_changes	 ch, ch2, ch3;
	char			*out, *out2, *back, *cause;
	const char		*want;
	size_t			 i, len, olen, olen2, blen;

	for (i = 0; i < sizeof wrap_cases / sizeof wrap_cases[0]; i++) {
		c = &wrap_cases[i];
		len = strlen(c->in);
		out = run_wrap(c, c->in, len, &olen, &ch);
		cr_expect_eq(olen, strlen(c->want), "%s: length", c->name);
		cr_expect_str_eq(out, c->want, "%s: wrap gave\n%s", c->name, out);
		cr_expect_eq(ch.n, c->nchanges, "%s: changes", c->name);

		/* idempotent */
		out2 = run_wrap(c, out, olen, &olen2, &ch2);
		cr_expect_str_eq(out2, out, "%s: wrap twice", c->name);
		cr_expect_eq(ch2.n, 0, "%s: changes of wrap twice", c->name);
		free(out2);
		hcfg_changes_clear(&ch2);

		/* with the ledger: byte-exact */
		cause = NULL;
		cr_assert_eq(hcfg_unwrap(out, olen, c->layout, NULL, &ch,
		    &back, &blen, &ch3, &cause), 0, "%s: %s", c->name, cause);
		want = c->nchanges == 0 && c->unwrapped != NULL ?
		    c->unwrapped : c->in;
		cr_expect_eq(blen, strlen(want), "%s: unwrap length", c->name);
		cr_expect_str_eq(back, want, "%s: unwrap with the ledger",
		    c->name);
		free(back);
		hcfg_changes_clear(&ch3);

		/* without it */
		want = c->unwrapped != NULL ? c->unwrapped : c->in;
		cr_assert_eq(hcfg_unwrap(out, olen, c->layout, NULL, NULL,
		    &back, &blen, &ch3, &cause), 0, "%s: %s", c->name, cause);
		cr_expect_str_eq(back, want, "%s: unwrap without the ledger "
		    "gave\n%s", c->name, back);
		free(back);
		hcfg_changes_clear(&ch3);
		free(out);
		hcfg_changes_clear(&ch);
	}
}

Test(hosts, ledger_after_an_edit_elsewhere, .timeout = UNIT_TIMEOUT)
{
	const char		*in = "{\"mcpServers\": {\"a\": {\"command\": "
	    "\"x\", \"args\": [\"1\"]}}, \"theme\": \"dark\"}";
	struct hcfg_wrap	 w = { "/m/mcpreel", NULL, NULL, 0 };
	struct hcfg_changes	 ch = { 0 }, ch2 = { 0 };
	char			*out, *edited, *back, *cause = NULL, *p;
	size_t			 olen, blen;

	cr_assert_eq(hcfg_wrap(in, strlen(in), &L_JSON, &w, &out, &olen, &ch,
	    &cause), 0);
	cr_assert_eq(ch.n, 1);
	cr_expect_str_eq(ch.v[0].container, "mcpServers");
	cr_expect_str_eq(ch.v[0].name, "a");
	cr_expect_str_eq(ch.v[0].before, "{\"command\": \"x\", \"args\": "
	    "[\"1\"]}");
	/* the user changes the theme: only our entry comes back */
	edited = xstrdup(out);
	p = strstr(edited, "dark");
	memcpy(p, "lite", 4);
	cr_assert_eq(hcfg_unwrap(edited, olen, &L_JSON, NULL, &ch, &back,
	    &blen, &ch2, &cause), 0);
	cr_expect_str_eq(back, "{\"mcpServers\": {\"a\": {\"command\": "
	    "\"x\", \"args\": [\"1\"]}}, \"theme\": \"lite\"}");
	cr_expect_eq(ch2.n, 1);
	free(back);
	hcfg_changes_clear(&ch2);
	free(edited);
	free(out);
	hcfg_changes_clear(&ch);
}

struct refuse_case {
	const struct hcfg_layout	*layout;
	const char			*in;
	const char			*cause;
};

static const struct refuse_case refuse_cases[] = {
	{ &L_JSON, "{\n  // no\n  \"mcpServers\": {}\n}",
	  "line 2 column 3: a comment, which JSON does not allow" },
	{ &L_JSON, "{\"mcpServers\": {},}",
	  "line 1 column 19: a trailing comma, which JSON does not allow" },
	{ &L_JSON, "{\"mcpServers\": {\n\"a\": {\"command\" \"x\"}}}",
	  "line 2 column 17: expected ':'" },
	{ &L_JSONC, "{\"servers\": {\"a\": 1 /* open", 
	  "line 1 column 21: a comment that never ends" },
	{ &L_JSON, "", "line 1 column 1: unexpected end of the file" },
	{ &L_JSON, "{} {}",
	  "line 1 column 4: more after the end of the JSON value" },
	{ &L_JSON, "{\"a\": \"\\x\"}",
	  "line 1 column 8: an unknown escape \\x" },
	{ &L_TOML, "[mcp_servers]\nfoo = \"x\"\n",
	  "line 2 column 1: mcp_servers.foo is written as a value, not a "
	  "table; mcpreel can only edit [mcp_servers.NAME] tables, dotted keys "
	  "and inline tables" },
	{ &L_TOML, "mcp_servers = { foo = { command = \"x\" } }\n",
	  "line 1 column 1: mcp_servers is written as an inline table or value; "
	  "mcpreel can only edit [mcp_servers.NAME] tables and dotted keys" },
	{ &L_TOML, "[[mcp_servers]]\ncommand = \"x\"\n",
	  "line 1 column 1: an array of tables where mcpreel expects "
	  "[mcp_servers.NAME] tables; it cannot edit this file" },
	{ &L_TOML, "[mcp_servers.a]\ncommand = \"x\"\ncommand = \"y\"\n",
	  "line 3 column 1: mcp_servers.a.command defined twice" },
	{ &L_TOML, "[mcp_servers]\na.command = \"x\"\nb.command = \"y\"\n"
	  "a.args = []\n",
	  "line 3 column 1: the keys of mcp_servers.a and mcp_servers.b "
	  "interleave; mcpreel cannot edit this file" },
	{ &L_TOML, "x = \"open\n",
	  "line 1 column 10: a line end in a one-line string" },
};

Test(hosts, refusals, .timeout = UNIT_TIMEOUT)
{
	struct hcfg		 cfg;
	struct hcfg_wrap	 w = { "/m", NULL, NULL, 1 };
	struct hcfg_changes	 ch = { 0 };
	char			*cause, *out;
	size_t			 i, olen;
	const struct refuse_case *c;

	for (i = 0; i < sizeof refuse_cases / sizeof refuse_cases[0]; i++) {
		c = &refuse_cases[i];
		cause = NULL;
		cr_expect_eq(hcfg_read(c->in, strlen(c->in), c->layout, &cfg,
		    &cause), -1, "%s", c->in);
		cr_expect_str_eq(cause, c->cause, "%s", c->in);
		free(cause);
		cause = NULL;
		cr_expect_eq(hcfg_wrap(c->in, strlen(c->in), c->layout, &w,
		    &out, &olen, &ch, &cause), -1);
		cr_expect_eq(ch.n, 0);
		free(cause);
	}
}

Test(hosts, nesting_bounded, .timeout = UNIT_TIMEOUT)
{
	size_t		 n = HCFG_MAX_DEPTH + 10, i;
	char		*in = xmalloc(2 * n + 1), *cause = NULL;
	struct hcfg	 cfg;

	for (i = 0; i < n; i++) {
		in[i] = '[';
		in[n + i] = ']';
	}
	in[2 * n] = '\0';
	cr_expect_eq(hcfg_read(in, 2 * n, &L_JSON, &cfg, &cause), -1);
	cr_expect(strstr(cause, "nested deeper than") != NULL, "%s", cause);
	free(cause);
	/* TOML: x = [[[...]]] */
	memcpy(in, "x =", 3);
	cause = NULL;
	cr_expect_eq(hcfg_read(in, 2 * n, &L_TOML, &cfg, &cause), -1);
	cr_expect(strstr(cause, "nested deeper than") != NULL, "%s", cause);
	free(cause);
	free(in);
}

Test(hosts, read_kinds_and_notes, .timeout = UNIT_TIMEOUT)
{
	const char	*in = "{\"mcpServers\": {"
	    "\"s\": {\"command\": \"x\", \"args\": [\"a\", 2]},"
	    "\"w\": {\"command\": \"mcpreel\", \"args\": [\"record\", "
	    "\"--name\", \"--\", \"--\", \"c\", \"d\"]},"
	    "\"b\": {\"command\": \"/x/mcpreel\", \"args\": [\"record\", "
	    "\"--connect\", \"http://u/\"]},"
	    "\"r\": {\"url\": \"http://r/\", \"headers\": {\"Bad Name\": "
	    "\"v\"}},"
	    "\"o\": {\"env\": {}},"
	    "\"n\": 5}}";
	struct hcfg	 cfg;
	char		*cause = NULL;

	cr_assert_eq(hcfg_read(in, strlen(in), &L_JSON, &cfg, &cause), 0);
	cr_assert_eq(cfg.nentries, 6);
	cr_expect_eq(cfg.entries[0].kind, HCFG_STDIO);
	cr_expect_str_eq(cfg.entries[0].command, "x");
	cr_expect_eq(cfg.entries[0].nargs, 2);
	cr_expect_str_eq(cfg.entries[0].args[1], "2");
	cr_expect_eq(cfg.entries[0].wrapped, 0);
	/* --name's value "--" is not the separator */
	cr_expect_eq(cfg.entries[1].wrapped, 1);
	cr_expect_str_eq(cfg.entries[1].command, "c");
	cr_expect_eq(cfg.entries[1].nargs, 1);
	cr_expect_eq(cfg.entries[2].bridged, 1);
	cr_expect_eq(cfg.entries[2].kind, HCFG_REMOTE);
	cr_expect_str_eq(cfg.entries[2].url, "http://u/");
	cr_expect_eq(cfg.entries[3].kind, HCFG_REMOTE);
	cr_expect_str_eq(cfg.entries[3].note,
	    "remote, can't carry its headers");
	cr_expect_str_eq(cfg.entries[3].url_key, "url");
	cr_expect_eq(cfg.entries[4].kind, HCFG_OTHER);
	cr_expect_str_eq(cfg.entries[4].note, "neither a command nor a url");
	cr_expect_eq(cfg.entries[5].kind, HCFG_OTHER);
	cr_expect_str_eq(cfg.entries[5].note, "not an object");
	hcfg_clear(&cfg);
}

Test(hosts, is_mcpreel, .timeout = UNIT_TIMEOUT)
{
	cr_expect(hcfg_is_mcpreel("mcpreel"));
	cr_expect(hcfg_is_mcpreel("/usr/local/bin/mcpreel"));
	cr_expect(!hcfg_is_mcpreel("/usr/local/bin/notmcpreel"));
	cr_expect(!hcfg_is_mcpreel("mcpreel2"));
	cr_expect(!hcfg_is_mcpreel("/mcpreel/x"));
	cr_expect(!hcfg_is_mcpreel(NULL));
}

Test(hosts, name_cleaning, .timeout = UNIT_TIMEOUT)
{
	static const struct {
		const char	*key, *name;
	} cases[] = {
		{ "ok.name-1_2", "ok.name-1_2" },
		{ "a b", "a_b" },
		{ "$HOME", "_HOME" },
		{ "", "_" },
		{ "\\u00e9", "__" },		/* two UTF-8 bytes */
		{ "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		  "xxxxxx", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		  "xxxxxxxxxxxxxx" },
	};
	struct hcfg_wrap	 w = { "m", NULL, NULL, 0 };
	struct hcfg_changes	 ch = { 0 };
	char			*in, *out, *want, *cause = NULL;
	size_t			 i, olen;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		xasprintf(&in, "{\"mcpServers\": {\"%s\": {\"command\": "
		    "\"c\"}}}", cases[i].key);
		xasprintf(&want, "{\"mcpServers\": {\"%s\": {\"command\": "
		    "\"m\", \"args\": [\"record\", \"--name\", \"%s\", \"--\", "
		    "\"c\"]}}}", cases[i].key, cases[i].name);
		cr_assert_eq(hcfg_wrap(in, strlen(in), &L_JSON, &w, &out,
		    &olen, &ch, &cause), 0);
		cr_expect_str_eq(out, want, "%s", cases[i].key);
		free(out);
		free(in);
		free(want);
		hcfg_changes_clear(&ch);
	}
}

Test(hosts, adjacent_toml_entries_changes, .timeout = UNIT_TIMEOUT)
{
	const char		*in = "[mcp_servers]\na.command = \"x\"\n"
	    "b.command = \"y\"\n";
	struct hcfg_wrap	 w = { "m", NULL, NULL, 0 };
	struct hcfg_changes	 ch = { 0 };
	char			*out, *cause = NULL;
	size_t			 olen;

	cr_assert_eq(hcfg_wrap(in, strlen(in), &L_TOML, &w, &out, &olen, &ch,
	    &cause), 0);
	cr_assert_eq(ch.n, 2);
	cr_expect_str_eq(ch.v[0].before, "a.command = \"x\"\n");
	cr_expect_str_eq(ch.v[0].after, "a.command = \"m\"\na.args = "
	    "[\"record\", \"--name\", \"a\", \"--\", \"x\"]\n");
	cr_expect_str_eq(ch.v[1].before, "b.command = \"y\"\n");
	cr_expect_str_eq(ch.v[1].after, "b.command = \"m\"\nb.args = "
	    "[\"record\", \"--name\", \"b\", \"--\", \"y\"]\n");
	free(out);
	hcfg_changes_clear(&ch);
}

/* Wraps and unwraps (with the ledger) a big file, in bounded time. */
static void
big_round_trip(const struct hcfg_layout *layout, const char *in, size_t len,
    size_t nwant)
{
	struct hcfg_wrap	 w = { "/m/mcpreel", NULL, NULL, 0 };
	struct hcfg_changes	 ch = { 0 }, ch2 = { 0 };
	char			*out, *back, *cause = NULL;
	size_t			 olen, blen;
	struct timespec		 t0, t1;
	double			 secs;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(hcfg_wrap(in, len, layout, &w, &out, &olen, &ch, &cause),
	    0, "%s", cause);
	cr_expect_eq(ch.n, nwant);
	cr_assert_eq(hcfg_unwrap(out, olen, layout, NULL, &ch, &back, &blen,
	    &ch2, &cause), 0, "%s", cause);
	cr_expect(blen == len && memcmp(back, in, len) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec -
	    t0.tv_nsec) / 1e9;
	/* linear: a few seconds even under the sanitizers */
	cr_expect(secs < 30.0, "%.1f s for %zu bytes", secs, len);
	free(out);
	free(back);
	hcfg_changes_clear(&ch);
	hcfg_changes_clear(&ch2);
}

Test(hosts, big_files_linear, .timeout = UNIT_TIMEOUT)
{
	size_t		 n = 50000, i, len = 0, cap = 64 * n + 64;
	char		*in = xmalloc(cap);

	len += (size_t)snprintf(in + len, cap - len, "{\"projects\": {");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(in + len, cap - len, "%s\"/p/%zu\": "
		    "{\"mcpServers\": {\"s\": {\"command\": \"c\"}}}",
		    i > 0 ? ", " : "", i);
	len += (size_t)snprintf(in + len, cap - len, "}}");
	big_round_trip(&L_JSON, in, len, n);
	len = 0;
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(in + len, cap - len,
		    "[mcp_servers.s%zu]\ncommand = \"c\"\n\n", i);
	big_round_trip(&L_TOML, in, len, n);
	free(in);
}

Test(hosts, unwrap_chosen_names_only, .timeout = UNIT_TIMEOUT)
{
	const char		*in = "{\"mcpServers\": {\"a\": {\"command\": "
	    "\"x\"}, \"b\": {\"command\": \"y\", \"args\": [\"1\"]}}}";
	static const char *const only_a[] = { "a", NULL };
	struct hcfg_wrap	 w = { "/m/mcpreel", NULL, NULL, 0 };
	struct hcfg_changes	 ch = { 0 }, ch2 = { 0 };
	char			*out, *back, *cause = NULL;
	size_t			 olen, blen;

	cr_assert_eq(hcfg_wrap(in, strlen(in), &L_JSON, &w, &out, &olen, &ch,
	    &cause), 0);
	cr_assert_eq(hcfg_unwrap(out, olen, &L_JSON, only_a, &ch, &back,
	    &blen, &ch2, &cause), 0);
	cr_expect_str_eq(back, "{\"mcpServers\": {\"a\": {\"command\": "
	    "\"x\"}, \"b\": {\"command\": \"/m/mcpreel\", \"args\": "
	    "[\"record\", \"--name\", \"b\", \"--\", \"y\", \"1\"]}}}");
	cr_assert_eq(ch2.n, 1);
	cr_expect_str_eq(ch2.v[0].name, "a");
	cr_expect_str_eq(ch2.v[0].before, "{\"command\": \"/m/mcpreel\", "
	    "\"args\": [\"record\", \"--name\", \"a\", \"--\", \"x\"]}");
	cr_expect_str_eq(ch2.v[0].after, "{\"command\": \"x\"}");
	free(back);
	free(out);
	hcfg_changes_clear(&ch);
	hcfg_changes_clear(&ch2);
}

Test(hosts, no_url_keys_no_bridge, .timeout = UNIT_TIMEOUT)
{
	/* Claude Desktop: no url keys in its file; a url entry is other */
	static const struct hcfg_layout	desktop = { HCFG_JSON, claude_conts,
	    NULL, 0, NULL };
	const char		*in = "{\"mcpServers\": {\"r\": {\"url\": "
	    "\"http://h/\"}}}";
	struct hcfg_wrap	 w = { "/m/mcpreel", NULL, NULL, 1 };
	struct hcfg_changes	 ch = { 0 };
	struct hcfg		 cfg;
	char			*out, *cause = NULL;
	size_t			 olen;

	cr_assert_eq(hcfg_read(in, strlen(in), &desktop, &cfg, &cause), 0);
	cr_assert_eq(cfg.nentries, 1);
	cr_expect_eq(cfg.entries[0].kind, HCFG_OTHER);
	hcfg_clear(&cfg);
	cr_assert_eq(hcfg_wrap(in, strlen(in), &desktop, &w, &out, &olen,
	    &ch, &cause), 0);
	cr_expect_str_eq(out, in);
	cr_expect_eq(ch.n, 0);
	free(out);
}

Test(hosts, nul_byte_entry_left, .timeout = UNIT_TIMEOUT)
{
	/* the ledger keeps texts as C strings: an entry holding a NUL is
	   left (its unwrap could not be byte-exact) */
	static const char	 in[] = "{\"servers\": {\"a\": {\"command\": "
	    "\"x\" // c\0d\n}, \"b\": {\"command\": \"y\"}}}";
	struct hcfg_wrap	 w = { "/m/mcpreel", NULL, NULL, 1 };
	struct hcfg_changes	 ch = { 0 };
	struct hcfg		 cfg;
	char			*out, *cause = NULL;
	size_t			 olen;

	cr_assert_eq(hcfg_wrap(in, sizeof in - 1, &L_JSONC, &w, &out, &olen,
	    &ch, &cause), 0, "%s", cause);
	cr_assert_eq(ch.n, 1);
	cr_expect_str_eq(ch.v[0].name, "b");
	cr_assert_eq(hcfg_read(in, sizeof in - 1, &L_JSONC, &cfg, &cause), 0);
	cr_assert_eq(cfg.nentries, 2);
	cr_expect_str_eq(cfg.entries[0].note, "holds a NUL byte");
	hcfg_clear(&cfg);
	free(out);
	hcfg_changes_clear(&ch);
}
