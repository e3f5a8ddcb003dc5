/** Whether `root`/`builtEntry` (under dist/) is at least as new as everything under `root`/src. */
export function buildIsCurrent(root: string, builtEntry: string): boolean;
