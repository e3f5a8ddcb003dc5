// The image's one command (SPEC §21): `serve [api|worker|all]`, the default, runs the service in
// that role (without one, the role ROLE names; `all` when unset); `authority-sim` runs the
// simulated authority; anything else is the admin CLI (`db migrate`, `db status`, `keys create
// --company-id 42`, `--help`). tini, PID 1, hands SIGTERM on, and each of them ends cleanly on it.
const [command = "serve", ...args] = process.argv.slice(2);

if (command === "serve") {
  // The role given to the command is the ROLE the configuration reads, and is judged there.
  // eslint-disable-next-line no-restricted-syntax -- the entry hands the configuration its input
  if (args[0] !== undefined) process.env.ROLE = args[0];
  await import("./dist/server.js");
} else if (command === "authority-sim") {
  process.argv.splice(2, process.argv.length, ...args);
  await import("./dist/authority-sim/main.js");
} else {
  // The CLI reads its arguments from process.argv, as it does when started on its own.
  process.argv.splice(2, process.argv.length, command, ...args);
  await import("./dist/cli/main.js");
}
