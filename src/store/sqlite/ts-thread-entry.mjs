// Node 20 does not apply tsx's loader hooks to worker threads, so a thread started from source
// (npm start, tests) begins here and loads its TypeScript module through tsx's own tsImport.
// The production build starts the compiled .js module directly and never uses this file.
import { workerData } from "node:worker_threads";
import { tsImport } from "tsx/esm/api";

await tsImport(workerData.module, import.meta.url);
