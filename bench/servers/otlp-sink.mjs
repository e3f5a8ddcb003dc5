// An OTLP/HTTP collector that keeps nothing: it takes every export the traced server sends to
// /v1/traces, counts the bytes, and answers 200, as a collector on the same host would.
import { createServer } from "node:http";

let bytes = 0;
let exports = 0;
const server = createServer((request, response) => {
  request.on("data", (chunk) => (bytes += chunk.length));
  request.on("end", () => {
    exports += 1;
    response.writeHead(200, { "content-type": request.headers["content-type"] ?? "application/x-protobuf" }).end();
  });
});
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on("SIGTERM", () => {
  process.stdout.write(`received ${exports} exports, ${bytes} bytes\n`);
  server.close(() => process.exit(0));
});
