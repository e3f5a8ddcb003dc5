// Post-build step: tsc emits only JavaScript, but the stores read their numbered .sql migrations
// and the console its stylesheet and script (src/console/assets/) from beside their compiled
// code, so those files are copied to the same place under dist/.
import { cpSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const CONSOLE_ASSETS = join("src", "console", "assets");

function filesToCopy(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesToCopy(path);
    return name.endsWith(".sql") || dir === CONSOLE_ASSETS ? [path] : [];
  });
}

for (const file of filesToCopy("src")) cpSync(file, join("dist", relative("src", file)));
