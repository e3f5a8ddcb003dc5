/**
 * A timeout that always fires (SPEC §20). The timer of `AbortSignal.timeout()` holds its signal
 * only weakly, so that signal, kept alive by nothing but an `AbortSignal.any()` or the request it
 * limits, can be garbage-collected before it fires; the call then waits for ever (Node issue
 * 57736). A plain timer is held by the event loop until it fires or is cleared, and it holds the
 * controller it aborts. (The SDK, which imports nothing of the server, has its own few lines.)
 */
export interface HardTimeout {
  /** Aborts with a TimeoutError after the time, or with `parent`'s reason when that aborts first. */
  readonly signal: AbortSignal;
  /** Stops the timer and lets go of `parent`; call it once the call has ended. */
  clear(): void;
}

export function hardTimeout(timeoutMs: number, parent?: AbortSignal): HardTimeout {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`The operation was aborted due to timeout (${timeoutMs} ms)`, "TimeoutError")), timeoutMs);
  const onParentAbort = () => {
    clearTimeout(timer);
    controller.abort(parent!.reason);
  };
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onParentAbort);
    },
  };
}
