/**
 * `npm run copy-to-postgres -- --data-dir ./data --to postgres://…`: the embedded installation in
 * DATA_DIR copied into an empty PostgreSQL database (copy.ts), then what every gateway process on
 * PostgreSQL must be started with, printed as an environment file.
 *
 * Exit 0: copied. 1: refused or failed, with one line saying why; nothing was written to the target.
 * 2: bad arguments, with one line saying which.
 */
import { parseArgs } from 'node:util';
import type { CopyReport } from './copy.ts';

const usage = 'usage: npm run copy-to-postgres -- --data-dir <DATA_DIR, default $DATA_DIR or ./data> --to postgres://user@host:5432/database';

class BadArgument extends Error {}

function argumentsOf(argv: string[]): { dataDir: string; to: string } {
  let values: { 'data-dir'?: string; to?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { 'data-dir': { type: 'string' }, to: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (error) {
    throw new BadArgument(`${(error as Error).message.split('\n')[0]}; ${usage}`);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const to = values.to?.trim();
  if (!to) throw new BadArgument(`--to is required: the empty PostgreSQL database to copy into; ${usage}`);
  if (!/^postgres(ql)?:\/\/.+/.test(to)) throw new BadArgument(`--to must be a postgres:// URL, got "${to}"; ${usage}`);
  const dataDir = values['data-dir']?.trim() || process.env.DATA_DIR?.trim() || './data';
  return { dataDir, to };
}

/** The URL as printed: its password left out (PGPASSWORD or ~/.pgpass can give it instead). */
const withoutPassword = (url: string) => url.replace(/^(postgres(?:ql)?:\/\/[^:/?#@]*):[^@/?#]*@/, '$1@');

function printReport(report: CopyReport, dataDir: string, to: string): void {
  const rows = report.tables.reduce((sum, t) => sum + t.rows, 0);
  const width = Math.max(...report.tables.map((t) => t.table.length));
  console.log(`copied the embedded installation in ${dataDir} into ${withoutPassword(to)}, in one transaction:`);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  for (const t of [...report.tables].sort((x, y) => x.table.localeCompare(y.table)))
    if (t.rows > 0) console.log(`  ${t.table.padEnd(width)} ${plural(t.rows, 'row').padStart(14)}`);
  console.log(`  ${report.tables.length} tables (those not listed are empty), ${plural(rows, 'row')}: the same count on both sides`);
  console.log(`  ${plural(report.sequences, 'sequence')} set past the copied ids`);
  console.log(`  ledger verified on the copy: ok, ${plural(report.sellersChecked, 'seller')} checked`);
  console.log(`  installation id ${report.installationId} kept`);
  const { secrets, secretsFile } = report;
  console.log(
    report.pixReceiverKeyMoved
      ? `  the PIX receiver key of ${secretsFile} is now kept in the database: BR Codes carry the same key (PIX_RECEIVER_KEY, when set, still wins)`
      : `  PIX receiver key: none in ${secretsFile}; if the embedded gateway had PIX_RECEIVER_KEY set, set the same one`,
  );
  console.log('');
  console.log('# Start every gateway process on PostgreSQL with these (an EnvironmentFile as is: keep it mode 0600),');
  console.log(`# and every other variable as the embedded gateway had it; DATA_DIR is no longer read.`);
  console.log(`# ADMIN_TOKEN and POSTBACK_SECRET are the embedded installation's, from ${secretsFile}: the same operator`);
  console.log('# token, and the same postback signatures (X-Signature), callback paths and fingerprints.');
  console.log(`DATABASE_URL=${to}`);
  for (const [name, value] of [
    ['ADMIN_TOKEN', secrets.adminToken],
    ['POSTBACK_SECRET', secrets.postbackSecret],
  ] as const) {
    console.log(
      value ? `${name}=${value}` : `# ${name}: not in ${secretsFile} (the embedded gateway had it from its environment): set the same value`,
    );
  }
}

async function main(): Promise<number> {
  let args: { dataDir: string; to: string };
  try {
    args = argumentsOf(process.argv.slice(2));
  } catch (error) {
    console.error(`copy-to-postgres: ${(error as Error).message}`);
    return 2;
  }
  // Loaded once the arguments are known good: a bad one is answered at once.
  const { BadArgument: NothingThere, CommitUnconfirmed, CopyRefused, copyToPostgres } = await import('./copy.ts');
  try {
    printReport(await copyToPostgres(args.dataDir, args.to), args.dataDir, args.to);
    return 0;
  } catch (error) {
    if (error instanceof NothingThere) {
      console.error(`copy-to-postgres: ${error.message}; ${usage}`);
      return 2;
    }
    if (error instanceof CommitUnconfirmed) {
      console.error(`copy-to-postgres failed: ${error.message}`);
      return 1;
    }
    const why = error instanceof CopyRefused ? 'refused' : 'failed';
    console.error(`copy-to-postgres ${why}: ${(error as Error).message}; nothing was written to the target`);
    return 1;
  }
}

process.exitCode = await main();
