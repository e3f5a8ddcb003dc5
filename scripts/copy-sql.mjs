// Post-build step: tsc emits only JavaScript, but the stores read their numbered .sql migrations
// from beside their compiled code, so every .sql file under src/ is copied to the same place
// under dist/.
import { cpSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function sqlFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sqlFiles(path);
    return name.endsWith(".sql") ? [path] : [];
  });
}

for (const file of sqlFiles("src")) cpSync(file, join("dist", relative("src", file)));
