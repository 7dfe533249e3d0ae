/**
 * One gateway per DATA_DIR. Two processes on one embedded database each keep their own copy of it in
 * memory and overwrite each other's writes (rows acknowledged with 201 vanish at the next restart), so the
 * process that opens it first holds DATA_DIR/gateway.lock and any other refuses to start.
 *
 * Node has no flock(), so the lock is a file created atomically that names its holder: pid, host, and the
 * process's start time (Linux), so that a pid reused after a crash (a restarted container numbers its
 * processes alike) is not mistaken for the holder. A lock whose holder is gone is taken over, so a
 * crashed gateway (kill -9, power loss) needs no manual clean-up.
 *
 * Residual races, both needing a crash at a precise instant: a starter killed in the microseconds between
 * taking and dropping the takeover guard leaves a guard that two later starters may both judge stale; and
 * a holder on another host is judged by its heartbeat, which assumes clocks within FOREIGN_STALE_MS of each
 * other and an event loop never blocked that long. Same host, the decision is exact, provided processes
 * that share a host name share a pid namespace (two containers given one host name and one volume do not).
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config.ts';

export interface DataDirLock {
  /** Drops the lock if it is still ours; idempotent. */
  release(): void;
}

interface Holder {
  raw: string;
  pid: number;
  host: string;
  start: string | null;
}

const LOCK_FILE = 'gateway.lock';
// A holder on another host cannot be asked whether it lives: it touches its lock this often instead...
const HEARTBEAT_MS = 5_000;
// ...and a lock untouched this long is stale (six missed beats: a busy event loop is not a dead process).
const FOREIGN_STALE_MS = 30_000;
// A lock file that cannot be parsed may be one being written (the non-link fallback); older than this it is junk.
const UNREADABLE_GRACE_MS = 2_000;
// Another starter may hold the takeover guard for a moment: wait for it, 50 ms at a time, up to 2 s.
const ATTEMPTS = 40;
const RETRY_MS = 50;

/** The lock contents this process holds, to tell "held here" from "a dead process that had our pid". */
const heldHere = new Set<string>();

/** Takes DATA_DIR's lock or throws a ConfigError naming the process that holds it. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const mine = JSON.stringify({ pid: process.pid, host: hostname(), start: startTime(process.pid), token: randomBytes(8).toString('hex') });
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (createExclusive(path, mine)) return held(path, mine);
    const holder = readHolder(path);
    if (holder === 'gone') continue; // released between our attempt and our read
    if (holder !== 'unreadable' && isAlive(holder, path)) {
      const where = holder.host === hostname() ? '' : ` on host ${holder.host}`;
      throw new ConfigError(`DATA_DIR ${dataDir} is in use by another gateway process (pid ${holder.pid}${where})`);
    }
    const stale = holder === 'unreadable' ? (ageMs(path) > UNREADABLE_GRACE_MS ? readRaw(path) : null) : holder.raw;
    if (stale === null || !removeStale(path, stale, mine)) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
  throw new ConfigError(`DATA_DIR ${dataDir}: could not take ${path} (other gateways starting at the same time?); try again`);
}

/**
 * Creates `path` holding `content` only if it does not exist. Through a hard link of a complete temporary
 * file, so that the lock never exists without its contents (and link is atomic on NFS too); on file
 * systems without hard links, an O_EXCL create, whose brief empty state readers tolerate.
 */
function createExclusive(path: string, content: string): boolean {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, content);
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw error;
    try {
      writeFileSync(path, content, { flag: 'wx' });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
  } finally {
    unlinkSync(temp);
  }
}

/** The lock is ours: keep its heartbeat, and drop it on release or, at the latest, when the process exits. */
function held(path: string, mine: string): DataDirLock {
  heldHere.add(mine);
  const beat = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // gone (DATA_DIR removed under us): nothing to keep alive
    }
  }, HEARTBEAT_MS);
  beat.unref();
  const release = () => {
    if (!heldHere.delete(mine)) return;
    clearInterval(beat);
    process.off('exit', release);
    try {
      if (readRaw(path) === mine) unlinkIfPresent(path);
    } catch {
      // unreadable now (permissions changed under us): the next starter judges it by our dead pid
    }
  };
  process.on('exit', release);
  return { release };
}

/** Whether the process that wrote this lock still runs. */
function isAlive(holder: Holder, path: string): boolean {
  if (holder.host !== hostname()) return ageMs(path) < FOREIGN_STALE_MS;
  if (holder.pid === process.pid) return heldHere.has(holder.raw);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = startTime(holder.pid);
  // Without /proc (macOS) only the pid is known: a live pid counts as the holder.
  return start === null || holder.start === null || start === holder.start;
}

/**
 * Removes a stale lock under a takeover guard, so that two starters who both found it stale cannot both
 * remove it (the second would remove the first one's new lock). False when another starter holds the guard.
 */
function removeStale(path: string, stale: string, mine: string): boolean {
  const guard = `${path}.takeover`;
  if (!createExclusive(guard, mine)) {
    const other = readHolder(guard);
    // A guard is held for microseconds; one whose holder is gone was left by a crash mid-takeover.
    if (other !== 'gone' && (other === 'unreadable' ? ageMs(guard) > UNREADABLE_GRACE_MS : !isAlive(other, guard))) unlinkIfPresent(guard);
    return false;
  }
  try {
    if (readRaw(path) === stale) unlinkIfPresent(path);
    return true;
  } finally {
    unlinkIfPresent(guard);
  }
}

function readHolder(path: string): Holder | 'gone' | 'unreadable' {
  const raw = readRaw(path);
  if (raw === null) return 'gone';
  try {
    const parsed = JSON.parse(raw) as Partial<Holder>;
    if (!Number.isSafeInteger(parsed.pid) || typeof parsed.host !== 'string') return 'unreadable';
    return { raw, pid: parsed.pid as number, host: parsed.host, start: typeof parsed.start === 'string' ? parsed.start : null };
  } catch {
    return 'unreadable';
  }
}

function readRaw(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat); null without /proc. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
