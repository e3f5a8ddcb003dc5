/**
 * The bench's side of its child processes (they are started by scripts/lib/processes.ts): which
 * cores the server and the load generator are pinned to, and a process's memory and CPU time
 * read from /proc.
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { hasCommand } from "../../scripts/lib/processes.ts";

/** Which cores the server and the load generator get; undefined when pinning is impossible. */
export interface Pinning {
  server: string;
  load: string;
}

export function choosePinning(): Pinning | undefined {
  if (!hasCommand("taskset")) return undefined;
  const cores = availableParallelism();
  if (cores < 2) return undefined;
  // Server on core 0; the load generator gets the rest (on 2 cores: core 1).
  return { server: "0", load: cores === 2 ? "1" : `1-${cores - 1}` };
}

/** Resident and peak resident memory of a process, in MB (from /proc/<pid>/status). */
export function memoryOf(pid: number): { rssMb: number; hwmMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rssMb: kb("VmRSS") / 1024, hwmMb: kb("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/** User + system CPU time of a process so far, in seconds (from /proc/<pid>/stat). */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the command name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Samples a process's memory every `everyMs` until stopped; returns the highest RSS seen. */
export function sampleMemory(pid: number, everyMs = 200): { stop(): { peakRssMb: number; hwmMb: number } } {
  let peak = memoryOf(pid)?.rssMb ?? 0;
  const timer = setInterval(() => {
    const now = memoryOf(pid);
    if (now && now.rssMb > peak) peak = now.rssMb;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const last = memoryOf(pid);
      return { peakRssMb: Math.max(peak, last?.rssMb ?? 0), hwmMb: last?.hwmMb ?? NaN };
    },
  };
}
