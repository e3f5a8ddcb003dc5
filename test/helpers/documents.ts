/**
 * The Markdown a reader meets, as paths from the repository's root: the README (the front door),
 * every page of docs/, and the SDK's README (which its package carries to the registry). The docs
 * tests read this one list, so a page added to docs/ is checked without being named anywhere.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./processes.ts";

export const DOCS_PAGES: string[] = readdirSync(join(REPO_ROOT, "docs"))
  .filter((name) => name.endsWith(".md"))
  .sort()
  .map((name) => `docs/${name}`);

export const DOCUMENTS: string[] = ["README.md", "packages/client/README.md", ...DOCS_PAGES];
