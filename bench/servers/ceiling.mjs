// The ceiling: a bare node:http server answering a constant. No routing, parsing, auth or
// storage, so its requests/s on this machine is the most any Node HTTP service could reach.
// POST bodies are received in full (a real server cannot answer before it has the request),
// but never parsed.
import { createServer } from "node:http";

const body = Buffer.from('{"workBatchId":1,"workItemId":1}');
const headers = { "content-type": "application/json; charset=utf-8", "content-length": String(body.length) };

const server = createServer((request, response) => {
  if (request.method === "GET" || request.method === "HEAD") {
    response.writeHead(200, headers).end(body);
    return;
  }
  request.on("end", () => response.writeHead(200, headers).end(body));
  request.resume();
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
