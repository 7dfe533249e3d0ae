import pino from 'pino';

// A line is small and comes once per request. Written one by one, each line was a write on a libuv
// thread: two thread wake-ups per request, which on a busy two-core machine cost more than the line.
// Lines are gathered up to this many bytes, or for at most flush_every_ms, and written by the event
// loop's own I/O.
const gather_bytes = 4096;
const flush_every_ms = 250;

/**
 * The request log's destination (a file descriptor or a path). pino writes what is still gathered
 * when the process exits, however it exits; a SIGKILL loses at most the last quarter second of lines.
 * Money is in the journal, never only in the log.
 */
export function logStream(dest: number | string): pino.DestinationStream {
  return pino.destination({ dest, sync: false, minLength: gather_bytes, periodicFlush: flush_every_ms });
}
