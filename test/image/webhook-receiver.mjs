// A webhook receiver for the compose test, run by the service image's Node (no dependency): it
// answers every POST with 204 and keeps it; GET /received lists what came, for the test to read.
import { createServer } from "node:http";

const received = [];
const server = createServer((request, response) => {
  if (request.method === "GET" && request.url === "/received") {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(received));
    return;
  }
  let body = "";
  request.setEncoding("utf8");
  request.on("data", (chunk) => (body += chunk));
  request.on("end", () => {
    received.push({ method: request.method, path: request.url, headers: request.headers, body });
    response.writeHead(204).end();
  });
});
server.listen(8080, "0.0.0.0");
process.on("SIGTERM", () => server.close(() => process.exit(0)));
