// The database's own limit for a figure: pgbench running the bare SQL of the same writes (a sale and
// its item in one statement; a balance read) at the same number of connections, and PostgreSQL's CPU
// time read from /proc (every postgres process, plus what the postmaster reaped from backends that
// ended), so a figure's cost at the database is measured the same way for the gateway and for pgbench.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { br_code, fee_schedule } from './bare-sql.ts';

export type PgbenchScript = 'sale' | 'balance';

const clock_ticks_per_second = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU time of every PostgreSQL process on this machine, in µs (user + system, children reaped included). */
export function postgresCpuUs(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const close = stat.lastIndexOf(')');
    if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
    // Fields after "(comm)": state is 3rd; utime, stime, cutime, cstime are the 14th to 17th.
    const f = stat
      .slice(close + 2)
      .split(' ')
      .map(Number);
    ticks += f[11]! + f[12]! + f[13]! + f[14]!;
  }
  return (ticks * 1_000_000) / clock_ticks_per_second;
}

/**
 * The whole machine's CPU time from /proc/stat, in µs: `busy` (every process, the kernel's interrupts
 * included) and `all` (busy + idle + waiting for I/O), summed over the cores. Busy per request served
 * says what one request costs the machine, load generator included; the idle share, what was left unused.
 */
export function machineCpuUs(): { busy: number; all: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is inside user already)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: (busy * 1_000_000) / clock_ticks_per_second, all: ((busy + idle + iowait) * 1_000_000) / clock_ticks_per_second };
}

/** Per request over a span of machine CPU readings: the machine's busy µs, and the share of its cores left idle. */
export function machineShare(before: { busy: number; all: number }, after: { busy: number; all: number }, served: number) {
  const busy = after.busy - before.busy;
  const all = Math.max(1, after.all - before.all);
  return { machineUsPerRequest: busy / Math.max(1, served), idleShare: 1 - busy / all };
}

/** pgbench on PATH, installed from Debian's packages when missing (CI and this machine run as root). */
export function ensurePgbench(): boolean {
  if (spawnSync('pgbench', ['--version']).status === 0) return true;
  console.log('  (installing pgbench: apt-get install postgresql-client)');
  spawnSync('apt-get', ['install', '-y', '-qq', 'postgresql-client'], {
    stdio: 'ignore',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return spawnSync('pgbench', ['--version']).status === 0;
}

const scripts: Record<PgbenchScript, string> = {
  sale: `WITH t AS (
  INSERT INTO transactions (seller_id, status, payment_method, amount, fee_schedule, customer_name, customer_email,
    pix_code, pix_txid, pix_expires_at, external_transaction_id, provider, created_at, updated_at)
  VALUES (:seller, 'PENDENTE', 'PIX', 15000, '${fee_schedule}'::jsonb, 'Maria Silva', 'maria@example.com',
    '${br_code}', md5(random()::text), now() + interval '1 hour', md5(random()::text), 'api-pix', now(), now())
  RETURNING id)
INSERT INTO sale_items (transaction_id, title, unit_price, quantity, tangible) SELECT id, 'Curso', 15000, 1, false FROM t;
`,
  balance: 'SELECT available, blocked FROM balances WHERE seller_id = :seller;\n',
};

/**
 * Runs `script` for `seconds` over `connections` connections: transactions per second, PostgreSQL µs
 * per transaction, and the machine's (pgbench's own client included) with the idle share.
 */
export function pgbench(url: string, script: PgbenchScript, sellerId: number, connections: number, seconds: number) {
  const dir = mkdtempSync(join(tmpdir(), 'gw-pgbench-'));
  const file = join(dir, `${script}.sql`);
  writeFileSync(file, scripts[script]);
  const before = postgresCpuUs();
  const machineBefore = machineCpuUs();
  const run = spawnSync(
    'pgbench',
    ['-n', '-M', 'prepared', '-c', String(connections), '-j', '2', '-T', String(seconds), '-D', `seller=${sellerId}`, '-f', file, url],
    { encoding: 'utf8', timeout: (seconds + 60) * 1000 },
  );
  const pgUs = postgresCpuUs() - before;
  const machineAfter = machineCpuUs();
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(run.stdout)?.[1]);
  const total = Number(/number of transactions actually processed: (\d+)/.exec(run.stdout)?.[1]);
  if (!Number.isFinite(tps) || !total) throw new Error(`pgbench ${script} failed: ${run.stderr || run.stdout}`);
  // pgbench's connection set-up is inside the span but not in its tps: its cost per op is a little high.
  return { tps, pgCpuUsPerOp: pgUs / total, ...machineShare(machineBefore, machineAfter, total) };
}
