/*
 * The hosts mcpreel knows, as data: where each keeps its MCP servers on
 * disk, in which format, under which keys.  Read against each host's
 * documentation (the doc URL of each row; docs/hosts.md cites them all).
 * Paths are written for files.c to expand: "~" is $HOME, "$XDG_CONFIG_HOME"
 * and "$CODEX_HOME" have their defaults there, and a relative path is
 * under the project directory.  The macOS and Windows places are kept as
 * rows too (os "macos", "windows"), for the docs and for a port; on Linux
 * only the rows with os NULL are looked at.
 */

#include <string.h>

#include "hosts.h"

/* The container and url key lists the layouts share. */
static const char *const mcp_servers[] = { "mcpServers", NULL };
static const char *const claude_code_user[] = {
	"mcpServers", "projects\x1f*\x1fmcpServers", NULL
};
static const char *const vscode_servers[] = { "servers", NULL };
static const char *const codex_servers[] = { "mcp_servers", NULL };
static const char *const no_urls[] = { NULL };
static const char *const url_only[] = { "url", NULL };
static const char *const windsurf_urls[] = { "serverUrl", "url", NULL };
static const char *const gemini_urls[] = { "httpUrl", "url", NULL };
static const char *const gemini_transports[] = { "http", "sse", NULL };

/*
 * Claude Desktop: remote servers cannot be in its file ("Claude Desktop
 * will not connect to remote servers that are configured directly via
 * claude_desktop_config.json"), so it has no url key.
 */
static const struct hcfg_layout claude_desktop_layout = {
	HCFG_JSON, mcp_servers, no_urls, 0, NULL
};
/* Claude Code: strict JSON; remote entries are type http/sse with url. */
static const struct hcfg_layout claude_code_user_layout = {
	HCFG_JSON, claude_code_user, url_only, 1, NULL
};
static const struct hcfg_layout claude_code_project_layout = {
	HCFG_JSON, mcp_servers, url_only, 1, NULL
};
/* Cursor: JSON, read leniently (comments kept if a user wrote some). */
static const struct hcfg_layout cursor_layout = {
	HCFG_JSONC, mcp_servers, url_only, 1, NULL
};
/* VS Code: JSONC (comments, trailing commas), key "servers". */
static const struct hcfg_layout vscode_layout = {
	HCFG_JSONC, vscode_servers, url_only, 1, NULL
};
/* Windsurf: "requires a serverUrl or url field" for a remote server. */
static const struct hcfg_layout windsurf_layout = {
	HCFG_JSONC, mcp_servers, windsurf_urls, 1, NULL
};
/* Gemini CLI: httpUrl (Streamable HTTP) or url (SSE); // comments. */
static const struct hcfg_layout gemini_layout = {
	HCFG_JSONC, mcp_servers, gemini_urls, 1, gemini_transports
};
/*
 * Codex: TOML tables [mcp_servers.NAME].  No bridge: a table with
 * command keeps http-only keys (bearer_token_env_var, http_headers,
 * env_http_headers) that would then be invalid.
 */
static const struct hcfg_layout codex_layout = {
	HCFG_TOML, codex_servers, url_only, 0, NULL
};

static const struct host_file claude_desktop_files[] = {
	{ "user", "$XDG_CONFIG_HOME/Claude/claude_desktop_config.json",
	    &claude_desktop_layout, NULL },
	{ "user", "~/Library/Application Support/Claude/"
	    "claude_desktop_config.json", &claude_desktop_layout, "macos" },
	{ "user", "%APPDATA%\\Claude\\claude_desktop_config.json",
	    &claude_desktop_layout, "windows" },
	{ NULL, NULL, NULL, NULL }
};

static const struct host_file claude_code_files[] = {
	{ "user", "~/.claude.json", &claude_code_user_layout, NULL },
	{ "project", ".mcp.json", &claude_code_project_layout, NULL },
	{ "user", "%USERPROFILE%\\.claude.json", &claude_code_user_layout,
	    "windows" },
	{ NULL, NULL, NULL, NULL }
};

static const struct host_file cursor_files[] = {
	{ "user", "~/.cursor/mcp.json", &cursor_layout, NULL },
	{ "project", ".cursor/mcp.json", &cursor_layout, NULL },
	{ "user", "%USERPROFILE%\\.cursor\\mcp.json", &cursor_layout,
	    "windows" },
	{ NULL, NULL, NULL, NULL }
};

static const struct host_file vscode_files[] = {
	{ "project", ".vscode/mcp.json", &vscode_layout, NULL },
	{ "user", "$XDG_CONFIG_HOME/Code/User/mcp.json", &vscode_layout,
	    NULL },
	{ "user", "~/Library/Application Support/Code/User/mcp.json",
	    &vscode_layout, "macos" },
	{ "user", "%APPDATA%\\Code\\User\\mcp.json", &vscode_layout,
	    "windows" },
	{ NULL, NULL, NULL, NULL }
};

static const struct host_file windsurf_files[] = {
	{ "user", "~/.codeium/windsurf/mcp_config.json", &windsurf_layout,
	    NULL },
	{ "user", "%USERPROFILE%\\.codeium\\windsurf\\mcp_config.json",
	    &windsurf_layout, "windows" },
	{ NULL, NULL, NULL, NULL }
};

static const struct host_file gemini_files[] = {
	{ "user", "~/.gemini/settings.json", &gemini_layout, NULL },
	{ "project", ".gemini/settings.json", &gemini_layout, NULL },
	{ "user", "%USERPROFILE%\\.gemini\\settings.json", &gemini_layout,
	    "windows" },
	{ NULL, NULL, NULL, NULL }
};

static const struct host_file codex_files[] = {
	{ "user", "$CODEX_HOME/config.toml", &codex_layout, NULL },
	{ "project", ".codex/config.toml", &codex_layout, NULL },
	{ NULL, NULL, NULL, NULL }
};

const struct host hosts_table[] = {
	{ "claude-desktop", "Claude Desktop", claude_desktop_files,
	    "https://modelcontextprotocol.io/docs/develop/connect-local-servers" },
	{ "claude-code", "Claude Code", claude_code_files,
	    "https://code.claude.com/docs/en/mcp" },
	{ "cursor", "Cursor", cursor_files,
	    "https://cursor.com/docs/context/mcp" },
	{ "vscode", "VS Code", vscode_files,
	    "https://code.visualstudio.com/docs/copilot/reference/"
	    "mcp-configuration" },
	{ "windsurf", "Windsurf", windsurf_files,
	    "https://docs.windsurf.com/windsurf/cascade/mcp" },
	{ "gemini", "Gemini CLI", gemini_files,
	    "https://github.com/google-gemini/gemini-cli/blob/main/docs/"
	    "tools/mcp-server.md" },
	{ "codex", "Codex", codex_files,
	    "https://developers.openai.com/codex/mcp" },
	{ NULL, NULL, NULL, NULL }
};

/* The host of that id ("claude-code", ...), or NULL. */
const struct host *
hosts_find(const char *id)
{
	const struct host	*h;

	for (h = hosts_table; h->id != NULL; h++) {
		if (strcmp(h->id, id) == 0)
			return h;
	}
	return NULL;
}
