"""mitmdump addon for bench/scen_peers.sh: stream the long-lived SSE
answers to GET (an MCP session's stream), which mitmdump would otherwise
hold until they end, that is never.  Everything else, the SSE answers to
POSTs included, is buffered and written to the flow file as usual."""


def responseheaders(flow):
    ctype = flow.response.headers.get("content-type", "")
    if flow.request.method == "GET" and ctype.startswith("text/event-stream"):
        flow.response.stream = True
