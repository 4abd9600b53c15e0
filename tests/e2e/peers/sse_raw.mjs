// The SSE body peers/http_peer.mjs serves at .../sse-raw, piece by piece.
export const SSE_RAW = [
  ': keep-alive comment\n\n',
  'retry: 5000\n\n',
  'id: 1\nevent: message\ndata: {"jsonrpc":"2.0","method":"a"}\n\n',
  'data: {"jsonrpc":"2.0",\r\ndata: "method":"b"}\r\n\r\n',
  'id: 3\rdata: {"jsonrpc":"2.0","id":9,"result":{}}\r\r',
];
