/**
 * Keeps the hidden class of Node's `process.nextTick` objects alive for the life of the process.
 *
 * Why: `nextTick` builds each tick as an object literal with two symbol keys. V8's optimized
 * code builds it fast only while that literal's feedback names one hidden class. Those classes
 * live only as long as some tick object uses them, so a full garbage collection at a quiet
 * moment (no tick pending: the server between requests, or at start-up) frees them, the next
 * tick gets new ones, and the feedback turns megamorphic for good. From then on each of the
 * dozen ticks of every HTTP request is built through the V8 runtime: valgrind counted 120,000
 * instructions per authenticated Ping instead of 85,000, in this build and in older ones alike
 * once such a collection had happened (docs/performance.md, "A V8 cliff under every request").
 *
 * Holding one tick object keeps its class, and the classes it was built through, reachable, so
 * every later tick is built with the same ones. The server imports this module first, and the
 * tick it queues is pending while every other module loads, so no collection can come between.
 */
import { executionAsyncResource } from "node:async_hooks";

let held: object | undefined;

process.nextTick(() => {
  // Inside a tick callback the current async resource is that tick's own object.
  held = executionAsyncResource();
});

/** The tick object held (for the test that checks later ticks share its hidden class). */
export function heldTickObject(): object | undefined {
  return held;
}
